//! The test authorization server and token helpers of the OAuth tests
//! (`security_oauth*.rs`): RFC 8414 metadata, a JWKS it can rotate (reads
//! counted), an RFC 7662 introspection endpoint (client authentication,
//! answers from a map, calls and concurrency counted), signed tokens.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use e2e_tests::TestServer;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use rpc::security::oauth::{OAuthPolicy, OAuthSettings};
use rpc::{Environment, Security};
use serde_json::{Value, json};

pub(crate) const RSA1: &str = include_str!("../fixtures/oauth/rsa1.pem");
pub(crate) const RSA1_PUBLIC: &str = include_str!("../fixtures/oauth/rsa1.pub.pem");
pub(crate) const RSA2: &str = include_str!("../fixtures/oauth/rsa2.pem");
pub(crate) const EC1: &str = include_str!("../fixtures/oauth/ec1.pem");
pub(crate) const SCOPE: &str = "catalog:read";
pub(crate) const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":7}}"#;

pub(crate) fn rsa(pem: &str) -> EncodingKey {
    EncodingKey::from_rsa_pem(pem.as_bytes()).expect("test RSA key")
}

/// The public JWK of `key` for `algorithm`, named `kid`.
pub(crate) fn jwk(key: &EncodingKey, algorithm: Algorithm, kid: &str) -> Value {
    let mut jwk = Jwk::from_encoding_key(key, algorithm).expect("public JWK");
    jwk.common.key_id = Some(kid.to_owned());
    serde_json::to_value(jwk).expect("JWK as JSON")
}

/// The test authorization server: its metadata names `issuer` (normally
/// its own URL) and its key set is whatever `jwks` holds now; its token
/// introspection endpoint answers from `introspection`.
pub(crate) struct Issuer {
    pub(crate) server: TestServer,
    pub(crate) jwks: Arc<Mutex<Value>>,
    pub(crate) jwks_reads: Arc<AtomicUsize>,
    pub(crate) introspection: Introspection,
}

/// The client credentials the test server's introspection endpoint takes.
pub(crate) const RS_CLIENT: (&str, &str) = ("rs-client", "rs-secret");

/// The introspection endpoint of the test server (RFC 7662): Basic
/// authentication as [`RS_CLIENT`], a form with `token` and
/// `token_type_hint`, answers from `answers` (unknown tokens: inactive);
/// it counts its calls and the most it served at once, after waiting
/// `delay_ms`. The tokens `as-error`, `as-garbage` and `as-huge` get a
/// 500, HTML and 100 KiB of JSON.
#[derive(Clone, Default)]
pub(crate) struct Introspection {
    pub(crate) answers: Arc<Mutex<HashMap<String, Value>>>,
    pub(crate) calls: Arc<AtomicUsize>,
    pub(crate) in_flight: Arc<AtomicUsize>,
    pub(crate) max_in_flight: Arc<AtomicUsize>,
    pub(crate) delay_ms: Arc<AtomicU64>,
}

/// `application/x-www-form-urlencoded` text decoded.
pub(crate) fn form_decode(text: &str) -> String {
    let mut out = Vec::new();
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'+' => out.push(b' '),
            b'%' => {
                let hex: String = bytes.by_ref().take(2).map(char::from).collect();
                out.push(u8::from_str_radix(&hex, 16).unwrap_or(b'?'));
            }
            b => out.push(b),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Introspection {
    pub(crate) async fn serve(&self, headers: axum::http::HeaderMap, body: String) -> (u16, &'static str, String) {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let now_in = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now_in, Ordering::SeqCst);
        let delay = self.delay_ms.load(Ordering::SeqCst);
        if delay > 0 {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        let answer = self.answer(&headers, &body);
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        answer
    }

    pub(crate) fn answer(&self, headers: &axum::http::HeaderMap, body: &str) -> (u16, &'static str, String) {
        const JSON: &str = "application/json";
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        let basic = format!("Basic {}", STANDARD.encode(format!("{}:{}", RS_CLIENT.0, RS_CLIENT.1)));
        if header("authorization") != basic {
            return (401, JSON, json!({"error": "invalid_client"}).to_string());
        }
        let form: HashMap<String, String> = body
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .map(|(k, v)| (form_decode(k), form_decode(v)))
            .collect();
        let well_formed = header("content-type") == "application/x-www-form-urlencoded"
            && header("accept").contains(JSON)
            && form.get("token_type_hint").map(String::as_str) == Some("access_token");
        let (true, Some(token)) = (well_formed, form.get("token")) else {
            return (400, JSON, json!({"error": "invalid_request"}).to_string());
        };
        match token.as_str() {
            "as-error" => (500, JSON, "{}".to_owned()),
            "as-garbage" => (200, "text/html", "<html>busy</html>".to_owned()),
            "as-huge" => (200, JSON, json!({"active": false, "pad": "x".repeat(100 * 1024)}).to_string()),
            token => {
                let answer = self.answers.lock().unwrap().get(token).cloned();
                (200, JSON, answer.unwrap_or_else(|| json!({"active": false})).to_string())
            }
        }
    }
}

impl Issuer {
    pub(crate) async fn start(keys: Value) -> Issuer {
        Issuer::start_naming(keys, None, true).await
    }

    /// With `named` as the metadata's `issuer` (default: its URL) and, when
    /// `with_jwks_uri` is false, no `jwks_uri`.
    pub(crate) async fn start_naming(keys: Value, named: Option<&str>, with_jwks_uri: bool) -> Issuer {
        Issuer::start_with(keys, named, with_jwks_uri, true).await
    }

    /// [`start_naming`](Self::start_naming), and without
    /// `introspection_endpoint` in the metadata unless `with_introspection`.
    pub(crate) async fn start_with(
        keys: Value,
        named: Option<&str>,
        with_jwks_uri: bool,
        with_introspection: bool,
    ) -> Issuer {
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
        if with_introspection {
            metadata["introspection_endpoint"] = json!(format!("{base}/introspect"));
        }
        let introspection = Introspection::default();
        let introspect = introspection.clone();
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
            )
            .route(
                "/introspect",
                axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
                    let introspect = introspect.clone();
                    async move {
                        let (status, kind, body) = introspect.serve(headers, body).await;
                        let status = axum::http::StatusCode::from_u16(status).expect("a status");
                        (status, [("content-type", kind)], body)
                    }
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
        Issuer { server: TestServer::external(base, addr, tx), jwks, jwks_reads, introspection }
    }

    pub(crate) fn url(&self) -> &str {
        &self.server.base
    }

    pub(crate) fn reads(&self) -> usize {
        self.jwks_reads.load(Ordering::SeqCst)
    }

    /// How often the introspection endpoint was called.
    pub(crate) fn introspections(&self) -> usize {
        self.introspection.calls.load(Ordering::SeqCst)
    }

    /// Introspecting `token` answers `answer`.
    pub(crate) fn answer(&self, token: &str, answer: Value) {
        self.introspection.answers.lock().unwrap().insert(token.to_owned(), answer);
    }
}

pub(crate) fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// A token signed with `key` (`kid`, `algorithm`) carrying `claims`.
pub(crate) fn sign(key: &EncodingKey, algorithm: Algorithm, kid: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(algorithm);
    header.kid = kid.map(str::to_owned);
    encode(&header, claims, key).expect("signed")
}

/// The claims of a good token of `issuer` for `audience`.
pub(crate) fn claims(issuer: &str, audience: &str) -> Value {
    json!({
        "iss": issuer, "aud": audience, "sub": "user-1", "client_id": "client-9",
        "scope": format!("{SCOPE} catalog:write"), "iat": now(), "exp": now() + 600,
    })
}

/// `claims` with `changes` merged in (a `null` removes a claim).
pub(crate) fn with(mut claims: Value, changes: Value) -> Value {
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
pub(crate) async fn catalog(policy: OAuthPolicy) -> TestServer {
    let security = Security::new().oauth(policy);
    TestServer::start(catalog::app_with(Environment::Prod, security).expect("catalog")).await
}

pub(crate) async fn post(url: &str, body: &str, headers: HeaderMap) -> (u16, HeaderMap, Value) {
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

pub(crate) fn bearer(token: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(AUTHORIZATION, HeaderValue::from_str(&format!("Bearer {token}")).unwrap());
    headers
}

pub(crate) fn challenge(headers: &HeaderMap) -> &str {
    headers.get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or("")
}

/// Asserts that `/rpc` refuses `token` with `status` and a challenge
/// carrying `error` and a description containing `why`.
pub(crate) async fn assert_refused(rpc: &str, token: &str, status: u16, error: &str, why: &str) {
    let (got, headers, body) = post(rpc, CALL, bearer(token)).await;
    assert_eq!(got, status, "{why}: {body}");
    let challenge = challenge(&headers);
    assert!(challenge.starts_with("Bearer ") && challenge.contains(&format!("error=\"{error}\"")), "{challenge}");
    assert!(challenge.contains("resource_metadata=\""), "{challenge}");
    let message = body["error"].as_str().unwrap_or_default();
    assert!(message.contains(why) && challenge.contains(why), "`{why}` expected in {message} / {challenge}");
}

/// The names of the tools of a `tools/list` result.
pub(crate) fn tool_names(result: &Value) -> Vec<String> {
    let tools = result["tools"].as_array().cloned().unwrap_or_default();
    let mut names: Vec<String> = tools.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect();
    names.sort();
    names
}

/// The introspection answer of a good opaque token of `issuer` for `audience`.
pub(crate) fn introspected(issuer: &str, audience: &str) -> Value {
    json!({"active": true, "iss": issuer, "aud": audience, "sub": "user-7", "client_id": "client-3",
           "scope": format!("{SCOPE} catalog:write"), "exp": now() + 600, "token_type": "Bearer"})
}

/// The policy of `issuer` for `audience`, requiring [`SCOPE`], with
/// introspection as `client` and `secret`.
pub(crate) async fn introspecting(issuer: &Issuer, audience: &str, secret: &str) -> OAuthPolicy {
    OAuthSettings::new(issuer.url(), audience)
        .unwrap()
        .require_scope(SCOPE)
        .unwrap()
        .introspection(RS_CLIENT.0, secret)
        .discover()
        .await
        .expect("the issuer is read")
}
