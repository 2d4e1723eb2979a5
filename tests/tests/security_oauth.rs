//! OAuth 2.1 resource server: a test authorization server (RFC 8414
//! metadata, a JWKS it can rotate, counting how often the key set is read)
//! issues RS256 tokens; the catalog accepts only tokens of that issuer, for
//! its audience, in time, with the required scope, signed by a published
//! key in a pinned algorithm, on `/rpc` and on MCP in both eras, and
//! answers everything else with the bearer challenge RFC 6750 and the MCP
//! authorization spec ask for. With introspection on, opaque tokens are
//! checked at the test server's RFC 7662 endpoint (client authentication,
//! answers kept, bounded concurrency, 503 when it cannot answer).

use std::time::{Duration, Instant};

use crate::oauth_fixture::*;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use e2e_tests::modern_mcp::Modern;
use jsonwebtoken::{Algorithm, EncodingKey};
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use rpc::security::oauth::{OAuthPolicy, OAuthSettings};
use serde_json::{Value, json};

#[tokio::test]
async fn tokens_of_the_issuer_for_this_resource_and_nothing_else() {
    let (key1, key2) = (rsa(RSA1), rsa(RSA2));
    let issuer = Issuer::start(json!({"keys": [jwk(&key1, Algorithm::RS256, "k1")]})).await;
    let audience = "http://127.0.0.1:1/"; // an identifier: the catalog's URL is not known before it starts
    let policy = OAuthSettings::new(issuer.url(), audience)
        .unwrap()
        .require_scope(SCOPE)
        .unwrap()
        .resource_name("Catalog")
        .discover()
        .await
        .expect("the issuer is read");
    assert_eq!(issuer.reads(), 1, "the key set is read at start-up");
    let server = catalog(policy).await;
    let rpc = server.url("/rpc");
    let good = claims(issuer.url(), audience);

    // No token: 401 and the challenge clients start from.
    let (status, headers, body) = post(&rpc, CALL, HeaderMap::new()).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(
        challenge(&headers),
        r#"Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource", scope="catalog:read""#
    );
    let (status, headers, _) = post(&server.url("/mcp/v1"), CALL, HeaderMap::new()).await;
    assert_eq!(status, 401);
    assert!(challenge(&headers).contains("resource_metadata="));

    // The protected-resource metadata, at the bare path and under the resource.
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp/v1"] {
        let response = reqwest::get(server.url(path)).await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(response.headers()["access-control-allow-origin"], "*");
        let document: Value = response.json().await.unwrap();
        assert_eq!(
            document,
            json!({"resource": audience, "authorization_servers": [issuer.url()], "bearer_methods_supported": ["header"],
                   "scopes_supported": [SCOPE, "catalog:admin", "catalog:write"], "resource_name": "Catalog"})
        );
    }

    // A good token: the call runs, over JSON-RPC and MCP in both eras.
    let token = sign(&key1, Algorithm::RS256, Some("k1"), &good);
    let (status, _, body) = post(&rpc, CALL, bearer(&token)).await;
    assert_eq!((status, &body["result"]["id"]), (200, &json!(7)), "{body}");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, headers, body) = post(&server.url("/mcp/v1"), &initialize.to_string(), bearer(&token)).await;
    assert_eq!(status, 200, "{body}");
    assert!(headers.contains_key("mcp-session-id") && body["result"]["protocolVersion"] == "2025-11-25", "{body}");
    let authorization = format!("Bearer {token}");
    let reply = Modern::new(server.url("/mcp/v1"))
        .tool_with("Catalog.get", json!({"id": 7}), &[("authorization", authorization.as_str())])
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json["result"]["structuredContent"]["result"]["id"], 7, "{}", reply.text);
    let refused = Modern::new(server.url("/mcp/v1")).tool_with("Catalog.get", json!({"id": 7}), &[]).await;
    assert_eq!(refused.status, 401);

    // `aud` as a list naming this resource; `exp` a little past, within the leeway.
    let listed = sign(&key1, Algorithm::RS256, Some("k1"), &with(good.clone(), json!({"aud": ["other", audience]})));
    assert_eq!(post(&rpc, CALL, bearer(&listed)).await.0, 200);
    let late = sign(&key1, Algorithm::RS256, Some("k1"), &with(good.clone(), json!({"exp": now() - 5})));
    assert_eq!(post(&rpc, CALL, bearer(&late)).await.0, 200);

    // Everything else is refused, each with its reason.
    let k1 = |claims: Value| sign(&key1, Algorithm::RS256, Some("k1"), &claims);
    assert_refused(
        &rpc,
        &k1(with(good.clone(), json!({"aud": "https://other.example/"}))),
        401,
        "invalid_token",
        "not for this resource",
    )
    .await;
    assert_refused(&rpc, &k1(with(good.clone(), json!({"aud": null}))), 401, "invalid_token", "no `aud` claim").await;
    assert_refused(&rpc, &k1(with(good.clone(), json!({"exp": now() - 120}))), 401, "invalid_token", "expired").await;
    assert_refused(&rpc, &k1(with(good.clone(), json!({"exp": null}))), 401, "invalid_token", "no `exp` claim").await;
    assert_refused(&rpc, &k1(with(good.clone(), json!({"nbf": now() + 600}))), 401, "invalid_token", "not valid yet")
        .await;
    assert_refused(
        &rpc,
        &k1(with(good.clone(), json!({"iss": "http://127.0.0.1:2"}))),
        401,
        "invalid_token",
        "another issuer",
    )
    .await;
    assert_refused(
        &rpc,
        &k1(with(good.clone(), json!({"sub": null, "client_id": null}))),
        401,
        "invalid_token",
        "no subject",
    )
    .await;
    let (status, headers, body) =
        post(&rpc, CALL, bearer(&k1(with(good.clone(), json!({"scope": "catalog:write"}))))).await;
    assert_eq!(status, 403, "{body}");
    assert!(challenge(&headers).contains(r#"error="insufficient_scope""#), "{}", challenge(&headers));
    assert!(challenge(&headers).contains(r#"scope="catalog:read""#), "{}", challenge(&headers));
    // `scp` as a list grants scopes too.
    let scp = k1(with(good.clone(), json!({"scope": null, "scp": [SCOPE]})));
    assert_eq!(post(&rpc, CALL, bearer(&scp)).await.0, 200);

    // Signatures: a key id that lies, an unknown key, a tampered payload.
    let lying = sign(&key2, Algorithm::RS256, Some("k1"), &good);
    assert_refused(&rpc, &lying, 401, "invalid_token", "signature does not verify").await;
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    parts[1] = URL_SAFE_NO_PAD.encode(with(good.clone(), json!({"sub": "admin"})).to_string());
    assert_refused(&rpc, &parts.join("."), 401, "invalid_token", "signature does not verify").await;
    let reads = issuer.reads();
    let unknown = sign(&key2, Algorithm::RS256, Some("k-unknown"), &good);
    assert_refused(&rpc, &unknown, 401, "invalid_token", "a key the issuer does not publish").await;
    // A flood of made-up key ids reads the key set at most once a minute.
    for i in 0..20 {
        let made_up = sign(&key2, Algorithm::RS256, Some(&format!("made-up-{i}")), &good);
        assert_eq!(post(&rpc, CALL, bearer(&made_up)).await.0, 401);
    }
    assert!(issuer.reads() <= reads + 1, "{} reads of the key set for 21 unknown key ids", issuer.reads() - reads);

    // Algorithms: `none`, a shared secret made of the public key, one not pinned.
    let none = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT","kid":"k1"}"#),
        URL_SAFE_NO_PAD.encode(good.to_string())
    );
    assert_refused(&rpc, &none, 401, "invalid_token", "not a JWT signed with an algorithm this resource accepts").await;
    let confused =
        sign(&EncodingKey::from_secret(RSA1_PUBLIC.as_bytes()).unwrap(), Algorithm::HS256, Some("k1"), &good);
    assert_refused(&rpc, &confused, 401, "invalid_token", "HS256, which this resource does not accept").await;
    let ec = sign(&EncodingKey::from_ec_pem(EC1.as_bytes()).unwrap(), Algorithm::ES256, Some("k1"), &good);
    assert_refused(&rpc, &ec, 401, "invalid_token", "ES256, which this resource does not accept").await;
    let ps = sign(&key1, Algorithm::PS256, Some("k1"), &good);
    assert_refused(&rpc, &ps, 401, "invalid_token", "PS256, which this resource does not accept").await;

    // Malformed and hostile: garbage, a huge token, two Authorization headers, another scheme.
    assert_refused(&rpc, "not-a-jwt", 401, "invalid_token", "not a JWT").await;
    let started = Instant::now();
    let huge = format!("{}.{}.x", URL_SAFE_NO_PAD.encode(r#"{"alg":"RS256"}"#), "A".repeat(20_000));
    assert_refused(&rpc, &huge, 401, "invalid_token", "longer than 16 KiB").await;
    assert!(started.elapsed() < Duration::from_secs(2));
    let mut two = bearer(&token);
    two.append(AUTHORIZATION, HeaderValue::from_str(&format!("Bearer {token}")).unwrap());
    let (status, headers, _) = post(&rpc, CALL, two).await;
    assert_eq!(status, 400);
    assert!(challenge(&headers).contains(r#"error="invalid_request""#));
    let mut basic = HeaderMap::new();
    basic.insert(AUTHORIZATION, HeaderValue::from_static("Basic dXNlcjpwYXNz"));
    let (status, headers, _) = post(&rpc, CALL, basic).await;
    assert_eq!(status, 401);
    assert!(!challenge(&headers).contains("error="), "no credentials: no error code (RFC 6750 §3.1)");
    // A static token header is not a credential here.
    let mut static_token = HeaderMap::new();
    static_token.insert("ufo-rpc-token", HeaderValue::from_str(&token).unwrap());
    assert_eq!(post(&rpc, CALL, static_token).await.0, 401);

    // Documents stay public (OpenRPC), the API does not; those telling
    // clients how to connect name no header but the metadata (clients find
    // the authorization server from there).
    assert_eq!(reqwest::get(server.url("/rpc")).await.unwrap().status(), 200);
    let listing: Value = reqwest::get(server.url("/mcp/v1/server.json")).await.unwrap().json().await.unwrap();
    assert!(listing["remotes"][0].get("headers").is_none(), "{listing}");
    assert_eq!(
        listing["_meta"]["io.modelcontextprotocol.registry/publisher-provided"]["authorization"]["protectedResourceMetadata"],
        "http://127.0.0.1:1/.well-known/oauth-protected-resource"
    );
    let manifest = reqwest::get(server.url("/mcp/v1/manifests/claude-code")).await.unwrap().text().await.unwrap();
    assert!(manifest.contains("/mcp/v1") && !manifest.contains("headers") && !manifest.contains("TOKEN"), "{manifest}");
}

#[tokio::test]
async fn a_rotated_key_is_fetched_and_a_retired_one_refused() {
    let (key1, key2) = (rsa(RSA1), rsa(RSA2));
    let issuer = Issuer::start(json!({"keys": [jwk(&key1, Algorithm::RS256, "k1")]})).await;
    let audience = "https://catalog.example/mcp";
    let policy = OAuthSettings::new(issuer.url(), audience)
        .unwrap()
        .key_refresh(Duration::ZERO, Duration::from_secs(3600))
        .discover()
        .await
        .unwrap();
    let server = catalog(policy).await;
    let rpc = server.url("/rpc");
    let good = claims(issuer.url(), audience);
    assert_eq!(post(&rpc, CALL, bearer(&sign(&key1, Algorithm::RS256, Some("k1"), &good))).await.0, 200);
    // The issuer rotates: k2 in, k1 out.
    *issuer.jwks.lock().unwrap() = json!({"keys": [jwk(&key2, Algorithm::RS256, "k2")]});
    let (status, _, body) = post(&rpc, CALL, bearer(&sign(&key2, Algorithm::RS256, Some("k2"), &good))).await;
    assert_eq!(status, 200, "a new key id makes the set be read again: {body}");
    assert_refused(&rpc, &sign(&key1, Algorithm::RS256, Some("k1"), &good), 401, "invalid_token", "does not publish")
        .await;
    // A token without `kid` is checked with the only key there is.
    assert_eq!(post(&rpc, CALL, bearer(&sign(&key2, Algorithm::RS256, None, &good))).await.0, 200);
    // The metadata of a resource with a path: under that path only.
    let document = reqwest::get(server.url("/.well-known/oauth-protected-resource/mcp")).await.unwrap();
    assert_eq!(document.status(), 200);
    let elsewhere = reqwest::get(server.url("/.well-known/oauth-protected-resource/rpc")).await.unwrap();
    assert_eq!(elsewhere.status(), 404);
    let (_, headers, _) = post(&rpc, CALL, HeaderMap::new()).await;
    assert_eq!(
        challenge(&headers),
        r#"Bearer resource_metadata="https://catalog.example/.well-known/oauth-protected-resource/mcp""#
    );
}

#[tokio::test]
async fn settings_and_authorization_servers_that_cannot_be_used() {
    let key1 = rsa(RSA1);
    let keys = json!({"keys": [jwk(&key1, Algorithm::RS256, "k1")]});
    let audience = "https://catalog.example/";
    let fails = |result: Result<OAuthPolicy, rpc::security::oauth::OAuthError>, expected: &str| {
        let message = result.expect_err(expected).to_string();
        assert!(message.contains(expected), "`{expected}` expected in: {message}");
    };
    // An issuer naming itself otherwise (RFC 8414 §3.3), one without `jwks_uri`.
    let liar = Issuer::start_naming(keys.clone(), Some("https://auth.example"), true).await;
    fails(
        OAuthSettings::new(liar.url(), audience).unwrap().discover().await,
        "names the issuer `https://auth.example`",
    );
    let keyless = Issuer::start_naming(keys.clone(), None, false).await;
    fails(OAuthSettings::new(keyless.url(), audience).unwrap().discover().await, "has no `jwks_uri`");
    // A key set with a shared secret only: nothing to check signatures with.
    let secret = Issuer::start(json!({"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "s", "alg": "HS256"}]})).await;
    fails(OAuthSettings::new(secret.url(), audience).unwrap().discover().await, "no usable signing key");
    // Nobody listening.
    let gone = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let started = Instant::now();
    fails(OAuthSettings::new(&gone, audience).unwrap().discover().await, "cannot connect");
    assert!(started.elapsed() < Duration::from_secs(5));
    // Settings refused before anything is read.
    let refused = |result: Result<OAuthSettings, rpc::security::oauth::OAuthError>, expected: &str| {
        let message = result.expect_err(expected).to_string();
        assert!(message.contains(expected), "`{expected}` expected in: {message}");
    };
    refused(OAuthSettings::new("http://auth.example", audience), "plain http on a host that is not loopback");
    refused(OAuthSettings::new("https://auth.example?tenant=1", audience), "query or fragment");
    refused(OAuthSettings::new("https://auth.example", "urn:x"), "https URL");
    refused(OAuthSettings::new("https://auth.example", "https://api.example/#f"), "without a fragment");
    let settings = OAuthSettings::new("https://auth.example", audience).unwrap();
    refused(settings.clone().algorithm("HS256"), "shared-secret algorithm");
    refused(settings.clone().algorithm("none"), "not a JWS algorithm");
    refused(settings.clone().require_scope("two words"), "not a scope");
    refused(settings.clone().jwks_uri("http://keys.example/jwks"), "plain http");
    // An explicit key-set address needs no metadata; ES256 pinned instead of RS256.
    let ec = EncodingKey::from_ec_pem(EC1.as_bytes()).unwrap();
    let ec_issuer = Issuer::start_naming(json!({"keys": [jwk(&ec, Algorithm::ES256, "e1")]}), None, false).await;
    let policy = OAuthSettings::new(ec_issuer.url(), audience)
        .unwrap()
        .algorithm("ES256")
        .unwrap()
        .jwks_uri(&format!("{}/jwks", ec_issuer.url()))
        .unwrap()
        .discover()
        .await
        .unwrap();
    let server = catalog(policy).await;
    let good = claims(ec_issuer.url(), audience);
    assert_eq!(post(&server.url("/rpc"), CALL, bearer(&sign(&ec, Algorithm::ES256, Some("e1"), &good))).await.0, 200);
    let rs = sign(&key1, Algorithm::RS256, Some("e1"), &good);
    assert_refused(&server.url("/rpc"), &rs, 401, "invalid_token", "RS256, which this resource does not accept").await;
}
