//! Opaque access tokens checked at the test authorization server's RFC
//! 7662 endpoint: client authentication, answers kept by the token's hash,
//! bounded concurrency shared per token, 503 when the server cannot answer.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::oauth_fixture::*;
use e2e_tests::modern_mcp::Modern;
use jsonwebtoken::Algorithm;
use reqwest::header::HeaderMap;
use rpc::security::oauth::OAuthSettings;
use serde_json::json;

#[tokio::test]
async fn opaque_tokens_are_checked_by_introspection() {
    let key = rsa(RSA1);
    let issuer = Issuer::start(json!({"keys": [jwk(&key, Algorithm::RS256, "k1")]})).await;
    let audience = "http://127.0.0.1:1/";
    let good = introspected(issuer.url(), audience);
    issuer.answer("opaque-good", good.clone());
    issuer.answer("opaque-reader", with(good.clone(), json!({"scope": SCOPE})));
    issuer.answer("opaque-inactive", json!({"active": false}));
    issuer.answer("opaque-other-aud", with(good.clone(), json!({"aud": ["https://other.example/"]})));
    issuer.answer("opaque-no-aud", with(good.clone(), json!({"aud": null})));
    issuer.answer("opaque-expired", with(good.clone(), json!({"exp": now() - 120})));
    issuer.answer("opaque-other-iss", with(good.clone(), json!({"iss": "http://127.0.0.1:2"})));
    issuer.answer("opaque-refresh", with(good.clone(), json!({"token_type": "refresh_token"})));
    issuer.answer("opaque-writer", with(good.clone(), json!({"scope": "catalog:write"})));
    let policy = introspecting(&issuer, audience, RS_CLIENT.1).await;
    let expected_endpoint = format!("{}/introspect", issuer.url());
    assert_eq!(policy.introspection_endpoint(), Some(expected_endpoint.as_str()));
    let server = catalog(policy.clone()).await;
    let (rpc, mcp) = (server.url("/rpc"), server.url("/mcp/v1"));

    // The good token: the call runs, over JSON-RPC and MCP, asked once.
    let (status, _, body) = post(&rpc, CALL, bearer("opaque-good")).await;
    assert_eq!((status, &body["result"]["id"]), (200, &json!(7)), "{body}");
    assert_eq!(issuer.introspections(), 1);
    let authorization = "Bearer opaque-good";
    let modern = Modern::new(mcp.clone());
    let reply = modern.tool_with("Catalog.get", json!({"id": 7}), &[("authorization", authorization)]).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json["result"]["structuredContent"]["result"]["id"], 7, "{}", reply.text);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, _, body) = post(&mcp, &initialize.to_string(), bearer("opaque-good")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(issuer.introspections(), 1, "the answer is kept: no second introspection");
    // Its scopes are the caller's: catalog:write renames, catalog:read alone does not.
    let rename = json!({"id": 7, "name": "Opaque"});
    let renamed = modern.tool_with("Catalog.rename", rename.clone(), &[("authorization", authorization)]).await;
    assert_eq!(renamed.json["result"]["isError"], false, "{}", renamed.text);
    let refused = modern.tool_with("Catalog.rename", rename, &[("authorization", "Bearer opaque-reader")]).await;
    assert_eq!((refused.status, &refused.json["error"]["code"]), (403, &json!(-32403)), "{}", refused.text);
    let list = modern.request("tools/list", json!({}), json!(1));
    let names = tool_names(&modern.exchange(&list, &[("authorization", authorization)]).await.json["result"]);
    assert!(names.contains(&"Catalog.rename".to_owned()) && !names.contains(&"Catalog.reindex".to_owned()));

    // Every bad answer is refused with its reason.
    let calls = issuer.introspections();
    for (token, why) in [
        ("opaque-inactive", "the token is not active"),
        ("never-issued", "the token is not active"),
        ("not-a-jwt", "the token is not active"),
        ("opaque-other-aud", "not for this resource"),
        ("opaque-no-aud", "the authorization server must return `aud`"),
        ("opaque-expired", "the token has expired"),
        ("opaque-other-iss", "issued by another issuer"),
        ("opaque-refresh", "not a bearer access token"),
    ] {
        assert_refused(&rpc, token, 401, "invalid_token", why).await;
    }
    assert_eq!(issuer.introspections(), calls + 8);
    let (status, headers, body) = post(&rpc, CALL, bearer("opaque-writer")).await;
    assert_eq!(status, 403, "{body}");
    assert!(challenge(&headers).contains(r#"error="insufficient_scope""#), "{}", challenge(&headers));
    // Refusals are kept too.
    assert_refused(&rpc, "opaque-inactive", 401, "invalid_token", "not active").await;
    assert_refused(&rpc, "opaque-no-aud", 401, "invalid_token", "must return `aud`").await;
    assert_eq!(issuer.introspections(), calls + 9);
    assert_eq!(policy.introspection_cache_size(), issuer.introspections());
    // What is not even a bearer token is not asked about.
    assert_refused(&rpc, "not,a token", 401, "invalid_token", "the token is malformed (RFC 6750").await;
    assert_eq!(issuer.introspections(), calls + 9);

    // JWTs are still checked with the key set, never introspected.
    let jwt = sign(&key, Algorithm::RS256, Some("k1"), &claims(issuer.url(), audience));
    assert_eq!(post(&rpc, CALL, bearer(&jwt)).await.0, 200);
    let expired = sign(&key, Algorithm::RS256, Some("k1"), &with(claims(issuer.url(), audience), json!({"exp": 1})));
    assert_refused(&rpc, &expired, 401, "invalid_token", "expired").await;
    let stranger = sign(&rsa(RSA2), Algorithm::RS256, Some("k1"), &claims(issuer.url(), audience));
    assert_refused(&rpc, &stranger, 401, "invalid_token", "signature does not verify").await;
    assert_eq!(issuer.introspections(), calls + 9);
    // Without a token: the usual challenge.
    let (status, headers, _) = post(&rpc, CALL, HeaderMap::new()).await;
    assert_eq!(status, 401);
    assert!(!challenge(&headers).contains("error="), "{}", challenge(&headers));
}

#[tokio::test]
async fn an_authorization_server_that_cannot_answer_makes_it_503() {
    let key = rsa(RSA1);
    let keys = json!({"keys": [jwk(&key, Algorithm::RS256, "k1")]});
    let issuer = Issuer::start(keys.clone()).await;
    let audience = "http://127.0.0.1:1/";
    issuer.answer("opaque-good", introspected(issuer.url(), audience));
    let assert_unavailable = async |rpc: &str, token: &str| {
        let (status, headers, body) = post(rpc, CALL, bearer(token)).await;
        assert_eq!(status, 503, "{token}: {body}");
        assert_eq!(body["error"], "the authorization server could not check the token; retry later", "{body}");
        assert_eq!(
            challenge(&headers),
            r#"Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource", scope="catalog:read""#
        );
    };

    // A wrong client secret: the authorization server answers 401, the catalog 503, each time (not kept).
    let server = catalog(introspecting(&issuer, audience, "wrong-secret").await).await;
    let rpc = server.url("/rpc");
    assert_unavailable(&rpc, "opaque-good").await;
    assert_unavailable(&rpc, "opaque-good").await;
    assert_eq!(issuer.introspections(), 2);
    let reply = Modern::new(server.url("/mcp/v1"))
        .tool_with("Catalog.get", json!({"id": 7}), &[("authorization", "Bearer opaque-good")])
        .await;
    assert_eq!(reply.status, 503, "{}", reply.text);

    // An error status, HTML, an answer too large: 503 too; the good secret works.
    let server = catalog(introspecting(&issuer, audience, RS_CLIENT.1).await).await;
    let rpc = server.url("/rpc");
    for token in ["as-error", "as-garbage", "as-huge"] {
        assert_unavailable(&rpc, token).await;
    }
    assert_eq!(post(&rpc, CALL, bearer("opaque-good")).await.0, 200);

    // Nobody listening at the endpoint.
    let gone = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/introspect", listener.local_addr().unwrap())
    };
    let policy = OAuthSettings::new(issuer.url(), audience)
        .unwrap()
        .introspection(RS_CLIENT.0, RS_CLIENT.1)
        .introspection_endpoint(&gone)
        .unwrap()
        .discover()
        .await
        .unwrap();
    assert_eq!(policy.introspection_endpoint(), Some(gone.as_str()));
    let server = catalog(policy).await;
    let (status, _, body) = post(&server.url("/rpc"), CALL, bearer("opaque-good")).await;
    assert_eq!(status, 503, "{body}");

    // Settings that cannot work are refused by `discover`, saying what to set.
    let fails = async |settings: OAuthSettings, expected: &str| {
        let message = settings.discover().await.expect_err(expected).to_string();
        assert!(message.contains(expected), "`{expected}` expected in: {message}");
    };
    let settings = || OAuthSettings::new(issuer.url(), audience).unwrap();
    let silent = Issuer::start_with(keys.clone(), None, true, false).await;
    fails(
        OAuthSettings::new(silent.url(), audience).unwrap().introspection("a", "b"),
        "has no `introspection_endpoint`: give it (`OAuthSettings::introspection_endpoint`, --oauth-introspection-endpoint)",
    )
    .await;
    let jwks = format!("{}/jwks", issuer.url());
    fails(
        settings().jwks_uri(&jwks).unwrap().introspection("a", "b"),
        "give the introspection endpoint too (`OAuthSettings::introspection_endpoint`",
    )
    .await;
    fails(settings().introspection("", "b"), "client id and secret").await;
    fails(settings().introspection_endpoint(&gone).unwrap(), "introspection is not on").await;
    let message = settings().introspection_endpoint("http://as.example/introspect").unwrap_err().to_string();
    assert!(message.contains("plain http"), "{message}");
    // Without metadata: the key set and the endpoint as given.
    let endpoint = format!("{}/introspect", issuer.url());
    let policy = settings()
        .jwks_uri(&jwks)
        .unwrap()
        .introspection(RS_CLIENT.0, RS_CLIENT.1)
        .introspection_endpoint(&endpoint)
        .unwrap()
        .discover()
        .await
        .unwrap();
    let server = catalog(policy).await;
    assert_eq!(post(&server.url("/rpc"), CALL, bearer("opaque-good")).await.0, 200);
}

/// `count` distinct tokens nobody could guess.
fn random_tokens(count: usize) -> Vec<String> {
    let mut state = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    (0..count)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            format!("flood-{i}-{state:016x}")
        })
        .collect()
}

#[tokio::test]
async fn a_flood_of_opaque_tokens_is_bounded() {
    let key = rsa(RSA1);
    let issuer = Issuer::start(json!({"keys": [jwk(&key, Algorithm::RS256, "k1")]})).await;
    let audience = "http://127.0.0.1:1/";
    let policy = introspecting(&issuer, audience, RS_CLIENT.1).await;
    let server = catalog(policy.clone()).await;
    let rpc = server.url("/rpc");
    issuer.introspection.delay_ms.store(40, Ordering::SeqCst);

    // 200 distinct tokens at once: at most 16 introspections at a time, each token once.
    let started = Instant::now();
    let tokens = random_tokens(200);
    let statuses = futures_util::future::join_all(tokens.iter().map(|t| post(&rpc, CALL, bearer(t)))).await;
    assert!(statuses.iter().all(|(status, _, _)| *status == 401), "every token refused as inactive");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    let most = issuer.introspection.max_in_flight.load(Ordering::SeqCst);
    assert!((2..=16).contains(&most), "{most} introspections at once");
    assert_eq!(issuer.introspections(), 200);
    assert_eq!(policy.introspection_cache_size(), 200, "kept, within the bound");

    // The same token 50 times at once: one introspection.
    issuer.introspection.delay_ms.store(300, Ordering::SeqCst);
    issuer.answer("opaque-shared", introspected(issuer.url(), audience));
    let replies = futures_util::future::join_all((0..50).map(|_| post(&rpc, CALL, bearer("opaque-shared")))).await;
    assert!(replies.iter().all(|(status, _, _)| *status == 200));
    assert_eq!(issuer.introspections(), 201);
}

#[tokio::test]
async fn requests_waiting_too_long_for_the_authorization_server_get_503() {
    let key = rsa(RSA1);
    let issuer = Issuer::start(json!({"keys": [jwk(&key, Algorithm::RS256, "k1")]})).await;
    let audience = "http://127.0.0.1:1/";
    let server = catalog(introspecting(&issuer, audience, RS_CLIENT.1).await).await;
    let rpc = server.url("/rpc");
    // Each introspection takes 6 s: 16 run, the 17th waits 5 s for a slot and gives up.
    issuer.introspection.delay_ms.store(6_000, Ordering::SeqCst);
    let started = Instant::now();
    let tokens = random_tokens(17);
    let replies = futures_util::future::join_all(tokens.iter().map(|t| post(&rpc, CALL, bearer(t)))).await;
    let mut statuses: Vec<u16> = replies.iter().map(|(status, _, _)| *status).collect();
    statuses.sort();
    assert_eq!(statuses, [[401; 16].as_slice(), &[503]].concat());
    assert_eq!(issuer.introspection.max_in_flight.load(Ordering::SeqCst), 16);
    assert!(started.elapsed() < Duration::from_secs(9), "{:?}", started.elapsed());
}
