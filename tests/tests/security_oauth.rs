//! OAuth 2.1 resource server: a test authorization server (RFC 8414
//! metadata, a JWKS it can rotate, counting how often the key set is read)
//! issues RS256 tokens; the catalog accepts only tokens of that issuer, for
//! its audience, in time, with the required scope, signed by a published
//! key in a pinned algorithm, on `/rpc` and on MCP in both eras, and
//! answers everything else with the bearer challenge RFC 6750 and the MCP
//! authorization spec ask for.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use e2e_tests::TestServer;
use e2e_tests::modern_mcp::Modern;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use rpc::security::oauth::{OAuthPolicy, OAuthSettings};
use rpc::{Environment, Security};
use serde_json::{Value, json};

const RSA1: &str = include_str!("../fixtures/oauth/rsa1.pem");
const RSA1_PUBLIC: &str = include_str!("../fixtures/oauth/rsa1.pub.pem");
const RSA2: &str = include_str!("../fixtures/oauth/rsa2.pem");
const EC1: &str = include_str!("../fixtures/oauth/ec1.pem");
const SCOPE: &str = "catalog:read";
const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":7}}"#;

fn rsa(pem: &str) -> EncodingKey {
    EncodingKey::from_rsa_pem(pem.as_bytes()).expect("test RSA key")
}

/// The public JWK of `key` for `algorithm`, named `kid`.
fn jwk(key: &EncodingKey, algorithm: Algorithm, kid: &str) -> Value {
    let mut jwk = Jwk::from_encoding_key(key, algorithm).expect("public JWK");
    jwk.common.key_id = Some(kid.to_owned());
    serde_json::to_value(jwk).expect("JWK as JSON")
}

/// The test authorization server: its metadata names `issuer` (normally
/// its own URL) and its key set is whatever `jwks` holds now.
struct Issuer {
    server: TestServer,
    jwks: Arc<Mutex<Value>>,
    jwks_reads: Arc<AtomicUsize>,
}

impl Issuer {
    async fn start(keys: Value) -> Issuer {
        Issuer::start_naming(keys, None, true).await
    }

    /// With `named` as the metadata's `issuer` (default: its URL) and, when
    /// `with_jwks_uri` is false, no `jwks_uri`.
    async fn start_naming(keys: Value, named: Option<&str>, with_jwks_uri: bool) -> Issuer {
        let jwks = Arc::new(Mutex::new(keys));
        let jwks_reads = Arc::new(AtomicUsize::new(0));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let base = format!("http://{addr}");
        let mut metadata = json!({
            "issuer": named.unwrap_or(&base),
            "authorization_endpoint": format!("{base}/authorize"),
            "token_endpoint": format!("{base}/token"),
            "response_types_supported": ["code"],
        });
        if with_jwks_uri {
            metadata["jwks_uri"] = json!(format!("{base}/jwks"));
        }
        let metadata = metadata.to_string();
        let (keys, reads) = (jwks.clone(), jwks_reads.clone());
        let app = axum::Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                axum::routing::get(move || {
                    let metadata = metadata.clone();
                    async move { ([("content-type", "application/json")], metadata) }
                }),
            )
            .route(
                "/jwks",
                axum::routing::get(move || {
                    reads.fetch_add(1, Ordering::SeqCst);
                    let body = keys.lock().unwrap().to_string();
                    async move { ([("content-type", "application/json")], body) }
                }),
            );
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        Issuer { server: TestServer::external(base, addr, tx), jwks, jwks_reads }
    }

    fn url(&self) -> &str {
        &self.server.base
    }

    fn reads(&self) -> usize {
        self.jwks_reads.load(Ordering::SeqCst)
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// A token signed with `key` (`kid`, `algorithm`) carrying `claims`.
fn sign(key: &EncodingKey, algorithm: Algorithm, kid: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(algorithm);
    header.kid = kid.map(str::to_owned);
    encode(&header, claims, key).expect("signed")
}

/// The claims of a good token of `issuer` for `audience`.
fn claims(issuer: &str, audience: &str) -> Value {
    json!({
        "iss": issuer, "aud": audience, "sub": "user-1", "client_id": "client-9",
        "scope": format!("{SCOPE} catalog:write"), "iat": now(), "exp": now() + 600,
    })
}

/// `claims` with `changes` merged in (a `null` removes a claim).
fn with(mut claims: Value, changes: Value) -> Value {
    for (k, v) in changes.as_object().unwrap() {
        if v.is_null() {
            claims.as_object_mut().unwrap().remove(k);
        } else {
            claims[k] = v.clone();
        }
    }
    claims
}

/// The catalog behind `policy`; its audience is `audience`.
async fn catalog(policy: OAuthPolicy) -> TestServer {
    let security = Security::new().oauth(policy);
    TestServer::start(catalog::app_with(Environment::Prod, security).expect("catalog")).await
}

async fn post(url: &str, body: &str, headers: HeaderMap) -> (u16, HeaderMap, Value) {
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .headers(headers)
        .body(body.to_owned())
        .send()
        .await
        .expect("sent");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("body");
    let json = serde_json::from_str(&text).unwrap_or_else(|_| e2e_tests::modern_mcp::last_message(&text));
    (status, headers, json)
}

fn bearer(token: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(AUTHORIZATION, HeaderValue::from_str(&format!("Bearer {token}")).unwrap());
    headers
}

fn challenge(headers: &HeaderMap) -> &str {
    headers.get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or("")
}

/// Asserts that `/rpc` refuses `token` with `status` and a challenge
/// carrying `error` and a description containing `why`.
async fn assert_refused(rpc: &str, token: &str, status: u16, error: &str, why: &str) {
    let (got, headers, body) = post(rpc, CALL, bearer(token)).await;
    assert_eq!(got, status, "{why}: {body}");
    let challenge = challenge(&headers);
    assert!(challenge.starts_with("Bearer ") && challenge.contains(&format!("error=\"{error}\"")), "{challenge}");
    assert!(challenge.contains("resource_metadata=\""), "{challenge}");
    let message = body["error"].as_str().unwrap_or_default();
    assert!(message.contains(why) && challenge.contains(why), "`{why}` expected in {message} / {challenge}");
}

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

/// The names of the tools of a `tools/list` result.
fn tool_names(result: &Value) -> Vec<String> {
    let tools = result["tools"].as_array().cloned().unwrap_or_default();
    let mut names: Vec<String> = tools.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect();
    names.sort();
    names
}

#[tokio::test]
async fn callers_see_and_call_the_tools_their_scopes_allow() {
    let key = rsa(RSA1);
    let issuer = Issuer::start(json!({"keys": [jwk(&key, Algorithm::RS256, "k1")]})).await;
    let audience = "http://127.0.0.1:1/";
    let policy = OAuthSettings::new(issuer.url(), audience).unwrap().discover().await.expect("the issuer is read");
    let server = catalog(policy).await;
    let (rpc, mcp) = (server.url("/rpc"), server.url("/mcp/v1"));
    let token = |scope: &str| {
        sign(&key, Algorithm::RS256, Some("k1"), &with(claims(issuer.url(), audience), json!({"scope": scope})))
    };
    let (reader, writer, admin) = (token("catalog:read"), token("catalog:read catalog:write"), token("catalog:admin"));
    let rename = json!({"id": 7, "name": "Scoped"});

    // 2026-07-28: each caller's list holds what it may call, marked private.
    let modern = Modern::new(mcp.clone());
    let list = |token: &str| {
        let authorization = format!("Bearer {token}");
        let modern = &modern;
        async move {
            let body = modern.request("tools/list", json!({}), json!(1));
            modern.exchange(&body, &[("authorization", authorization.as_str())]).await
        }
    };
    let seen_by_reader = list(&reader).await;
    assert_eq!(seen_by_reader.status, 200, "{}", seen_by_reader.text);
    let result = &seen_by_reader.json["result"];
    assert_eq!(result["cacheScope"], "private", "{result}");
    let names = tool_names(result);
    assert!(names.contains(&"Catalog.get".to_owned()), "{names:?}");
    assert!(
        !names.contains(&"Catalog.rename".to_owned()) && !names.contains(&"Catalog.reindex".to_owned()),
        "{names:?}"
    );
    let seen_by_writer = tool_names(&list(&writer).await.json["result"]);
    assert!(seen_by_writer.contains(&"Catalog.rename".to_owned()), "{seen_by_writer:?}");
    assert!(!seen_by_writer.contains(&"Catalog.reindex".to_owned()), "{seen_by_writer:?}");
    let seen_by_admin = tool_names(&list(&admin).await.json["result"]);
    assert!(
        seen_by_admin.contains(&"Catalog.reindex".to_owned()) && !seen_by_admin.contains(&"Catalog.rename".to_owned())
    );
    assert_eq!(seen_by_writer.len(), names.len() + 1, "{seen_by_writer:?} / {names:?}");
    // The same lists again (served from the pages kept per grant).
    assert_eq!(tool_names(&list(&reader).await.json["result"]), names);

    // Calling a tool outside one's scopes: the era's error naming the scope.
    let auth = |token: &str| format!("Bearer {token}");
    // Over HTTP, a 403 whose challenge names the scopes to ask for (what
    // the token has and what the tool needs: MCP's step-up authorization).
    let refused = modern.tool_with("Catalog.rename", rename.clone(), &[("authorization", &auth(&reader))]).await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    assert_eq!(refused.json["error"]["code"], -32403, "{}", refused.text);
    assert_eq!(refused.json["error"]["data"]["extra"]["scope"], "catalog:write", "{}", refused.text);
    let step_up = refused.headers.get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or_default();
    assert_eq!(
        step_up,
        "Bearer error=\"insufficient_scope\", error_description=\"the token lacks the scope catalog:write\", \
         scope=\"catalog:read catalog:write\", \
         resource_metadata=\"http://127.0.0.1:1/.well-known/oauth-protected-resource\""
    );
    let renamed = modern.tool_with("Catalog.rename", rename.clone(), &[("authorization", &auth(&writer))]).await;
    assert_eq!(renamed.json["result"]["isError"], false, "{}", renamed.text);
    assert!(renamed.json["result"]["structuredContent"].is_object(), "{}", renamed.text);

    // Handshake era: the same lists and refusals within a session.
    let session = |token: String| {
        let mcp = mcp.clone();
        async move {
            let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
            let (status, headers, body) = post(&mcp, &initialize.to_string(), bearer(&token)).await;
            assert_eq!(status, 200, "{body}");
            let mut headers_out = bearer(&token);
            headers_out.insert("mcp-session-id", headers["mcp-session-id"].clone());
            headers_out.insert("mcp-protocol-version", HeaderValue::from_static("2025-11-25"));
            let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
            assert_eq!(post(&mcp, initialized, headers_out.clone()).await.0, 202);
            headers_out
        }
    };
    let reader_session = session(reader.clone()).await;
    let list_body = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (_, _, body) = post(&mcp, list_body, reader_session.clone()).await;
    assert_eq!(tool_names(&body["result"]), names, "{body}");
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "Catalog.rename", "arguments": rename}})
    .to_string();
    let (status, headers, body) = post(&mcp, &call, reader_session).await;
    assert_eq!((status, &body["error"]["code"]), (403, &json!(-32403)), "{body}");
    assert!(challenge(&headers).contains(r#"scope="catalog:read catalog:write""#), "{}", challenge(&headers));
    let writer_session = session(writer.clone()).await;
    let (_, _, body) = post(&mcp, list_body, writer_session.clone()).await;
    assert_eq!(tool_names(&body["result"]), seen_by_writer, "{body}");
    let (_, _, body) = post(&mcp, &call, writer_session).await;
    assert!(body["result"]["structuredContent"].is_object(), "{body}");

    // JSON-RPC: the same check, the same error.
    let rpc_rename = json!({"jsonrpc": "2.0", "id": 1, "method": "Catalog.rename", "params": rename}).to_string();
    let (status, _, body) = post(&rpc, &rpc_rename, bearer(&reader)).await;
    assert_eq!((status, &body["error"]["code"]), (200, &json!(-32403)), "{body}");
    assert!(body["error"]["message"].as_str().unwrap_or_default().contains("catalog:write"), "{body}");
    let (_, _, body) = post(&rpc, &rpc_rename, bearer(&writer)).await;
    assert_eq!(body["result"]["name"], "Scoped", "{body}");
    // A token granting no scope at all still calls what needs none.
    let (_, _, body) = post(&rpc, CALL, bearer(&token(""))).await;
    assert_eq!(body["result"]["id"], 7, "{body}");

    // OpenRPC names each method's scopes.
    let document: Value = reqwest::get(server.url("/rpc")).await.unwrap().json().await.unwrap();
    let methods = document["methods"].as_array().expect("methods");
    let scopes_of = |name: &str| methods.iter().find(|m| m["name"] == name).map(|m| m["x-scopes"].clone());
    assert_eq!(scopes_of("Catalog.rename"), Some(json!(["catalog:write"])));
    assert_eq!(scopes_of("Catalog.get"), Some(Value::Null));
}

#[tokio::test]
async fn without_scoped_callers_every_tool_is_listed_to_everyone() {
    // Static tokens give identities without scopes: one list, public.
    let security = Security::new().tokens(rpc::TokenPolicy::new().token("s3cret").unwrap());
    let server = TestServer::start(catalog::app_with(Environment::Prod, security).expect("catalog")).await;
    let modern = Modern::new(server.url("/mcp/v1"));
    let body = modern.request("tools/list", json!({}), json!(1));
    let reply = modern.exchange(&body, &[("authorization", "Bearer s3cret")]).await;
    let result = &reply.json["result"];
    assert_eq!(result["cacheScope"], "public", "{}", reply.text);
    let names = tool_names(result);
    assert!(names.contains(&"Catalog.rename".to_owned()) && names.contains(&"Catalog.reindex".to_owned()), "{names:?}");
    let renamed = modern
        .tool_with("Catalog.rename", json!({"id": 3, "name": "By token"}), &[("authorization", "Bearer s3cret")])
        .await;
    assert_eq!(renamed.json["result"]["isError"], false, "{}", renamed.text);
}

mod vault {
    use mcp::{mcp_prompt, mcp_resource};

    rpc::api_group!(pub struct Vaulted => "vault", mcp = true);

    /// Notes, some of them secret.
    pub struct Vault;

    #[rpc::service(groups(Vaulted))]
    impl Vault {
        /// Notes anyone may read.
        #[mcp_resource(uri = "vault://notes", mime_type = "text/plain")]
        pub fn notes(&self) -> String {
            "public".to_owned()
        }

        /// Notes for holders of vault:read.
        #[mcp_resource(uri = "vault://secret", mime_type = "text/plain", scopes("vault:read"))]
        pub fn secret(&self) -> String {
            "secret".to_owned()
        }

        /// One item, for holders of vault:read.
        ///
        /// # Arguments
        /// * `id` - The item
        #[mcp_resource(uri = "vault://items/{id}", mime_type = "text/plain")]
        #[rpc::info(scopes("vault:read"))]
        pub fn item(&self, id: String) -> String {
            format!("item {id}")
        }

        /// Greets.
        ///
        /// # Arguments
        /// * `name` - Who
        #[mcp_prompt]
        pub fn hello(&self, name: String) -> String {
            format!("Say hello to {name}.")
        }

        /// Rotates the keys: for holders of vault:admin.
        #[mcp_prompt(scopes("vault:admin"))]
        pub fn rotate(&self) -> String {
            "Rotate the keys.".to_owned()
        }
    }

    /// The archive: every method needs vault:archive.
    pub struct Archive;

    #[rpc::service(groups(Vaulted), scopes("vault:archive"))]
    impl Archive {
        /// Archived notes, for holders of vault:archive and vault:read.
        #[mcp_resource(uri = "vault://archive", mime_type = "text/plain", scopes("vault:read"))]
        pub fn archived(&self) -> String {
            "archived".to_owned()
        }
    }
}

#[tokio::test]
async fn resources_and_prompts_are_listed_and_served_by_scope_too() {
    let key = rsa(RSA1);
    let issuer = Issuer::start(json!({"keys": [jwk(&key, Algorithm::RS256, "k1")]})).await;
    let audience = "http://127.0.0.1:1/";
    let policy = OAuthSettings::new(issuer.url(), audience).unwrap().discover().await.expect("the issuer is read");
    let registry = rpc::Registry::builder().service(vault::Vault).service(vault::Archive).build().expect("registry");
    let executor = rpc::Executor::new(registry, Environment::Prod);
    let endpoint =
        mcp::McpEndpoint::builder::<vault::Vaulted>(executor).security(Security::new().oauth(policy)).build();
    let server = TestServer::start(rpc::server::Router::new().nest("/mcp", endpoint)).await;
    let modern = Modern::new(server.url("/mcp"));
    let token = |scope: &str| {
        let claims = with(claims(issuer.url(), audience), json!({"scope": scope}));
        format!("Bearer {}", sign(&key, Algorithm::RS256, Some("k1"), &claims))
    };
    let ask = async |method: &str, params: Value, authorization: &str| {
        let body = modern.request(method, params, json!(1));
        modern.exchange(&body, &[("authorization", authorization)]).await
    };
    let names = |result: &Value, key: &str, field: &str| -> Vec<String> {
        let items = result[key].as_array().cloned().unwrap_or_default();
        items.iter().filter_map(|i| i[field].as_str().map(str::to_owned)).collect()
    };
    let (nobody, reader, admin) = (token(""), token("vault:read"), token("vault:admin vault:read"));

    let list = ask("resources/list", json!({}), &nobody).await;
    assert_eq!(names(&list.json["result"], "resources", "uri"), ["vault://notes"], "{}", list.text);
    assert_eq!(list.json["result"]["cacheScope"], "private", "{}", list.text);
    let list = ask("resources/list", json!({}), &reader).await;
    assert_eq!(names(&list.json["result"], "resources", "uri"), ["vault://notes", "vault://secret"], "{}", list.text);
    let templates = ask("resources/templates/list", json!({}), &nobody).await;
    assert_eq!(names(&templates.json["result"], "resourceTemplates", "uriTemplate"), Vec::<String>::new());
    let templates = ask("resources/templates/list", json!({}), &reader).await;
    assert_eq!(names(&templates.json["result"], "resourceTemplates", "uriTemplate"), ["vault://items/{id}"]);
    let prompts = ask("prompts/list", json!({}), &reader).await;
    assert_eq!(names(&prompts.json["result"], "prompts", "name"), ["Vault.hello"], "{}", prompts.text);
    let prompts = ask("prompts/list", json!({}), &admin).await;
    assert_eq!(names(&prompts.json["result"], "prompts", "name"), ["Vault.hello", "Vault.rotate"], "{}", prompts.text);

    // Reading or getting what one's scopes do not allow: -32403 naming the scope.
    for (method, params) in [
        ("resources/read", json!({"uri": "vault://secret"})),
        ("resources/read", json!({"uri": "vault://items/9"})),
        ("prompts/get", json!({"name": "Vault.rotate"})),
    ] {
        let refused = ask(method, params.clone(), &nobody).await;
        assert_eq!(refused.json["error"]["code"], -32403, "{method} {params}: {}", refused.text);
        let allowed = ask(method, params.clone(), &admin).await;
        assert!(allowed.json.get("result").is_some(), "{method} {params}: {}", allowed.text);
    }
    let read = ask("resources/read", json!({"uri": "vault://secret"}), &reader).await;
    assert_eq!(read.json["result"]["contents"][0]["text"], "secret", "{}", read.text);

    // A service's scopes add to each of its methods' own.
    let archivist = token("vault:archive vault:read");
    let list = ask("resources/list", json!({}), &archivist).await;
    assert!(names(&list.json["result"], "resources", "uri").contains(&"vault://archive".to_owned()), "{}", list.text);
    for partial in [&reader, &token("vault:archive")] {
        let list = ask("resources/list", json!({}), partial).await;
        assert!(!names(&list.json["result"], "resources", "uri").contains(&"vault://archive".to_owned()));
        let refused = ask("resources/read", json!({"uri": "vault://archive"}), partial).await;
        assert_eq!(refused.json["error"]["code"], -32403, "{}", refused.text);
    }
    let read = ask("resources/read", json!({"uri": "vault://archive"}), &archivist).await;
    assert_eq!(read.json["result"]["contents"][0]["text"], "archived", "{}", read.text);
}
