//! Who may call: static tokens (header and Bearer) on `/rpc` and `/mcp`,
//! documents protected separately, the caller's identity reaching hooks,
//! CORS preflights without a token, CORS headers, and 404 for versions a
//! group does not have or that the availability checker switched off.

use std::sync::{Arc, Mutex};

use e2e_tests::TestServer;
use e2e_tests::modern_mcp::Modern;
use e2e_tests::raw_mcp::RawMcp;
use mcp::McpEndpoint;
use reqwest::Method;
use rpc::server::Router;
use rpc::{CallInfo, Cors, Environment, Executor, JsonRpcService, Listener, MaybeReady, Security, TokenPolicy};
use serde_json::{Value, json};

const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.reindex"}"#;

fn tokens() -> TokenPolicy {
    TokenPolicy::new().token("s3cret").unwrap().named_token("ci-bot", "other-token").unwrap()
}

/// The catalog's two endpoints behind `security`, with `listeners`.
fn app(security: Security, listeners: Vec<Arc<dyn Listener>>) -> Router {
    let executor = Executor::new(catalog::registry().unwrap(), Environment::Prod).with_listeners(listeners);
    let rpc = JsonRpcService::builder(executor.clone()).security(security.clone()).build();
    let mcp = McpEndpoint::builder::<catalog::Mcp>(executor).security(security).build();
    Router::new().nest("/rpc", rpc).nest("/mcp", mcp)
}

async fn post(url: &str, body: &str, headers: &[(&str, &str)]) -> (u16, reqwest::header::HeaderMap, String) {
    let mut request = reqwest::Client::new().post(url).header("content-type", "application/json").body(body.to_owned());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("request sent");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.text().await.expect("body"))
}

/// Asserts a refusal: the status, a `{"error": "..."}` body that names no
/// token, and `WWW-Authenticate` on 401.
fn assert_refused(status: u16, headers: &reqwest::header::HeaderMap, body: &str, expected: u16) {
    assert_eq!(status, expected, "{body}");
    let json: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"));
    let message = json["error"].as_str().unwrap_or_else(|| panic!("{{\"error\": ...}} expected: {body}"));
    assert!(!message.is_empty() && json.as_object().unwrap().len() == 1, "{body}");
    for secret in ["s3cret", "other-token", "wrong-token"] {
        assert!(!body.contains(secret), "the body must not help guessing: {body}");
    }
    assert_eq!(headers.contains_key("www-authenticate"), expected == 401, "WWW-Authenticate only on 401");
}

#[tokio::test]
async fn tokens_guard_json_rpc() {
    let server = TestServer::start(app(Security::new().tokens(tokens()), vec![])).await;
    let url = server.url("/rpc");
    let (status, headers, body) = post(&url, CALL, &[]).await;
    assert_refused(status, &headers, &body, 401);
    let (status, headers, body) = post(&url, CALL, &[("ufo-rpc-token", "wrong-token")]).await;
    assert_refused(status, &headers, &body, 403);
    let (status, headers, body) = post(&url, CALL, &[("authorization", "Bearer wrong-token")]).await;
    assert_refused(status, &headers, &body, 403);
    let (status, headers, body) = post(&url, CALL, &[("authorization", "Basic czNjcmV0")]).await;
    assert_refused(status, &headers, &body, 401);
    let (status, headers, body) =
        post(&url, CALL, &[("ufo-rpc-token", "s3cret"), ("authorization", "Bearer other-token")]).await;
    assert_refused(status, &headers, &body, 401);
    // Refused calls never ran: the first call that gets through is the first reindex.
    let (status, _, body) = post(&url, CALL, &[("Ufo-RPC-Token", "s3cret")]).await;
    assert_eq!((status, serde_json::from_str::<Value>(&body).unwrap()["result"].clone()), (200, json!(1)));
    let (status, _, body) = post(&url, CALL, &[("authorization", "Bearer other-token")]).await;
    assert_eq!((status, serde_json::from_str::<Value>(&body).unwrap()["result"].clone()), (200, json!(2)));
}

#[tokio::test]
async fn tokens_guard_mcp_in_both_eras() {
    let server = TestServer::start(app(Security::new().tokens(tokens()), vec![])).await;
    let url = server.url("/mcp/v1");
    // Handshake era: initialize itself needs the token.
    let mut anonymous = RawMcp::new(&url);
    let reply = anonymous.initialize_lenient("2025-11-25").await;
    assert_refused(reply.status, &reply.headers, &reply.text, 401);
    assert!(anonymous.session.is_none(), "no session for a refused client");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let wrong = anonymous.send(Method::POST, Some(init.to_string()), &[("authorization", "Bearer wrong-token")]).await;
    assert_refused(wrong.status, &wrong.headers, &wrong.text, 403);
    let ok = anonymous.send(Method::POST, Some(init.to_string()), &[("authorization", "Bearer s3cret")]).await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    let session = ok.headers["mcp-session-id"].to_str().unwrap().to_owned();
    // A session id alone is not a credential.
    let mut stolen = RawMcp::new(&url);
    stolen.session = Some(session);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let reply = stolen.send(Method::POST, Some(list.clone()), &[]).await;
    assert_refused(reply.status, &reply.headers, &reply.text, 401);
    // Another valid token does not open someone else's session.
    let reply = stolen.send(Method::POST, Some(list.clone()), &[("ufo-rpc-token", "other-token")]).await;
    assert_eq!(reply.status, 404, "a session belongs to the caller that opened it: {}", reply.text);
    let delete = stolen.send(Method::DELETE, None, &[("ufo-rpc-token", "other-token")]).await;
    assert_eq!(delete.status, 404, "nor can another caller end it: {}", delete.text);
    let reply = stolen.send(Method::POST, Some(list), &[("ufo-rpc-token", "s3cret")]).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(reply.json["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()));

    // 2026-07-28: every request carries the token.
    let modern = Modern::new(&url);
    let body = modern.request("tools/list", json!({}), json!(1));
    let reply = modern.exchange(&body, &[]).await;
    assert_refused(reply.status, &reply.headers, &reply.text, 401);
    let reply = modern.exchange(&body, &[("authorization", "Bearer wrong-token")]).await;
    assert_refused(reply.status, &reply.headers, &reply.text, 403);
    let reply = modern.exchange(&body, &[("authorization", "Bearer other-token")]).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
}

#[tokio::test]
async fn documents_are_protected_separately() {
    // Default: API protected, documents public.
    let server = TestServer::start(app(Security::new().tokens(tokens()), vec![])).await;
    let docs = reqwest::get(server.url("/rpc")).await.unwrap();
    assert_eq!(docs.status(), 200);
    // Documents protected too.
    let server = TestServer::start(app(Security::new().tokens(tokens().protect_docs(true)), vec![])).await;
    let docs = reqwest::get(server.url("/rpc/v2")).await.unwrap();
    let (status, headers) = (docs.status().as_u16(), docs.headers().clone());
    assert_refused(status, &headers, &docs.text().await.unwrap(), 401);
    let docs = reqwest::Client::new().get(server.url("/rpc/v2")).bearer_auth("s3cret").send().await.unwrap();
    assert_eq!(docs.status(), 200);
    assert_eq!(docs.json::<Value>().await.unwrap()["openrpc"], "1.3.2");
    // Only documents protected: calls are open.
    let server =
        TestServer::start(app(Security::new().tokens(tokens().protect_api(false).protect_docs(true)), vec![])).await;
    let (status, _, body) = post(&server.url("/rpc"), CALL, &[]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(reqwest::get(server.url("/rpc")).await.unwrap().status(), 401);
}

/// Records the identity every call carried.
#[derive(Default)]
struct Identities(Mutex<Vec<Option<String>>>);

impl Listener for Identities {
    fn before_execute<'a>(&'a self, call: &'a CallInfo) -> MaybeReady<'a, Result<(), rpc::RpcError>> {
        self.0.lock().unwrap().push(call.identity.as_ref().map(|i| i.subject.clone()));
        MaybeReady::ready(Ok(()))
    }
}

#[tokio::test]
async fn the_callers_identity_reaches_hooks_over_both_endpoints() {
    let seen = Arc::new(Identities::default());
    let server = TestServer::start(app(Security::new().tokens(tokens()), vec![seen.clone()])).await;
    let (status, _, body) = post(&server.url("/rpc"), CALL, &[("authorization", "Bearer other-token")]).await;
    assert_eq!(status, 200, "{body}");
    let mut mcp = RawMcp::new(server.url("/mcp/v1"));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let reply = mcp.send(Method::POST, Some(init.to_string()), &[("ufo-rpc-token", "s3cret")]).await;
    mcp.session = reply.headers.get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
    mcp.protocol = Some("2025-11-25".into());
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "Catalog.get", "arguments": {"id": 3}}});
    let reply = mcp.send(Method::POST, Some(call.to_string()), &[("ufo-rpc-token", "s3cret")]).await;
    assert_eq!(reply.json["result"]["isError"], false, "{}", reply.text);
    let modern = Modern::new(server.url("/mcp/v1"));
    let reply = modern.tool_with("Catalog.get", json!({"id": 4}), &[("authorization", "Bearer other-token")]).await;
    assert_eq!(reply.json["result"]["isError"], false, "{}", reply.text);
    assert_eq!(
        *seen.0.lock().unwrap(),
        [Some("ci-bot".to_owned()), tokens().identity_for("s3cret").map(|i| i.subject), Some("ci-bot".to_owned())]
    );
}

#[tokio::test]
async fn cors_preflights_pass_without_a_token_and_responses_carry_cors_headers() {
    let cors = Cors::origins(["https://app.example"]).unwrap();
    let server = TestServer::start(app(Security::new().tokens(tokens()).cors(cors), vec![])).await;
    let client = reqwest::Client::new();
    for path in ["/rpc", "/mcp/v1"] {
        let preflight = client
            .request(Method::OPTIONS, server.url(path))
            .header("origin", "https://app.example")
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "content-type, authorization, mcp-protocol-version")
            .send()
            .await
            .unwrap();
        assert!(preflight.status().is_success(), "{path}: {}", preflight.status());
        let h = preflight.headers();
        assert_eq!(h["access-control-allow-origin"], "https://app.example", "{path}");
        assert!(h["access-control-allow-methods"].to_str().unwrap().contains("POST"), "{path}");
        let allowed = h["access-control-allow-headers"].to_str().unwrap().to_ascii_lowercase();
        assert!(allowed.contains("authorization") && allowed.contains("mcp-protocol-version"), "{allowed}");
        assert!(h.get_all("vary").iter().any(|v| v.to_str().unwrap().to_ascii_lowercase().contains("origin")));
        assert!(h.get("access-control-allow-credentials").is_none(), "no cookies");
    }
    // A real call from the page: CORS headers, the session header exposed.
    let mcp = RawMcp::new(server.url("/mcp/v1"));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let reply = mcp
        .send(
            Method::POST,
            Some(init.to_string()),
            &[("origin", "https://app.example"), ("authorization", "Bearer s3cret")],
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.headers["access-control-allow-origin"], "https://app.example");
    let exposed = reply.headers["access-control-expose-headers"].to_str().unwrap().to_ascii_lowercase();
    assert!(exposed.contains("mcp-session-id") && exposed.contains("mcp-protocol-version"), "{exposed}");
    assert!(exposed.contains("www-authenticate") && exposed.contains("retry-after"), "{exposed}");
    // A refusal carries them too, so the page can read why.
    let (status, headers, _) = post(&server.url("/rpc"), CALL, &[("origin", "https://app.example")]).await;
    assert_eq!(status, 401);
    assert_eq!(headers["access-control-allow-origin"], "https://app.example");
    // Another origin: refused before anything else, no CORS headers.
    let (status, headers, body) = post(&server.url("/rpc"), CALL, &[("origin", "https://evil.example")]).await;
    assert_eq!(status, 403, "{body}");
    assert!(headers.get("access-control-allow-origin").is_none());
    assert!(!body.contains("evil"), "the refused origin is not echoed: {body}");
}

#[tokio::test]
async fn without_cors_options_is_answered_without_cors_headers() {
    let server = TestServer::start(app(Security::new().tokens(tokens()), vec![])).await;
    for path in ["/rpc", "/mcp/v1"] {
        let response = reqwest::Client::new()
            .request(Method::OPTIONS, server.url(path))
            .header("access-control-request-method", "POST")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 204, "{path}: no token needed");
        assert!(response.headers()["allow"].to_str().unwrap().contains("POST"));
        assert!(response.headers().get("access-control-allow-origin").is_none());
    }
    // A page of another origin cannot get its preflight through: its Origin is refused.
    let response = reqwest::Client::new()
        .request(Method::OPTIONS, server.url("/rpc"))
        .header("origin", "https://app.example")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn disabled_groups_and_unknown_versions_are_404() {
    // Version 2 of the `mcp` group and of the ungrouped /rpc switched off.
    let security = Security::new().tokens(tokens()).availability(|_group: Option<&str>, version: u32| version != 2);
    let server = TestServer::start(app(security, vec![])).await;
    for path in ["/rpc/v2", "/rpc/v9", "/mcp/v2", "/mcp/v9"] {
        let (status, _, body) = post(&server.url(path), CALL, &[("authorization", "Bearer s3cret")]).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert!(!body.contains("v9"), "{path}: the path is not echoed: {body}");
        let get = reqwest::get(server.url(path)).await.unwrap();
        assert_eq!(get.status(), 404, "{path}");
    }
    let listed = post(&server.url("/rpc/v2"), CALL, &[]).await.2;
    assert!(listed.contains("available: v1") && !listed.contains("v2"), "only available versions listed: {listed}");
    let (status, _, _) = post(&server.url("/rpc"), CALL, &[("authorization", "Bearer s3cret")]).await;
    assert_eq!(status, 200);
    let modern = Modern::new(server.url("/mcp/v1"));
    let reply = modern.tool_with("Catalog.get", json!({"id": 1}), &[("authorization", "Bearer s3cret")]).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
}

/// A per-tenant policy: a key per tenant, tenants allowed per group, the
/// tenant attached to the identity; only loopback clients.
struct TenantKeys;

impl rpc::security::AccessPolicy for TenantKeys {
    fn check<'a>(
        &'a self,
        request: &'a rpc::security::AccessRequest<'a>,
    ) -> rpc::MaybeReady<'a, rpc::security::Access> {
        use rpc::security::{Access, Identity, Resource};
        if request.resource == Resource::Docs {
            return rpc::MaybeReady::ready(Access::allow());
        }
        // A policy that must wait (a database) returns `MaybeReady::pending(async { .. })`.
        rpc::MaybeReady::pending(async move {
            if !request.peer.is_some_and(|p| p.ip().is_loopback()) {
                return Access::Forbidden("Forbidden: loopback clients only".into());
            }
            let tenant = match request.headers.get("x-tenant-key").map(|v| v.as_bytes()) {
                None => return Access::Unauthorized("Unauthorized: send X-Tenant-Key".into()),
                Some(b"key-a") => "tenant-a",
                Some(b"key-b") => "tenant-b",
                Some(_) => return Access::Forbidden("Forbidden: unknown key".into()),
            };
            // Tenant B may use the JSON-RPC API but not the MCP group.
            if tenant == "tenant-b" && request.group == Some("mcp") {
                return Access::Forbidden("Forbidden: no MCP for this tenant".into());
            }
            Access::allow_as(Identity::new(tenant).with("plan", "gold"))
        })
    }
}

/// Records identities with an attribute.
#[derive(Default)]
struct Tenants(Mutex<Vec<(String, Value)>>);

impl Listener for Tenants {
    fn before_execute<'a>(&'a self, call: &'a CallInfo) -> MaybeReady<'a, Result<(), rpc::RpcError>> {
        if let Some(identity) = &call.identity {
            self.0.lock().unwrap().push((identity.subject.clone(), identity.attributes["plan"].clone()));
        }
        MaybeReady::ready(Ok(()))
    }
}

#[tokio::test]
async fn a_custom_access_policy_decides_per_group_and_attaches_an_identity() {
    let seen = Arc::new(Tenants::default());
    let server = TestServer::start(app(Security::new().access(TenantKeys), vec![seen.clone()])).await;
    assert_eq!(post(&server.url("/rpc"), CALL, &[]).await.0, 401);
    assert_eq!(post(&server.url("/rpc"), CALL, &[("x-tenant-key", "nope")]).await.0, 403);
    assert_eq!(post(&server.url("/rpc"), CALL, &[("x-tenant-key", "key-b")]).await.0, 200);
    let modern = Modern::new(server.url("/mcp/v1"));
    let refused = modern.tool_with("Catalog.get", json!({"id": 1}), &[("x-tenant-key", "key-b")]).await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    let allowed = modern.tool_with("Catalog.get", json!({"id": 1}), &[("x-tenant-key", "key-a")]).await;
    assert_eq!(allowed.status, 200, "{}", allowed.text);
    assert_eq!(reqwest::get(server.url("/rpc")).await.unwrap().status(), 200, "documents stay public");
    assert_eq!(
        *seen.0.lock().unwrap(),
        [("tenant-b".to_owned(), json!("gold")), ("tenant-a".to_owned(), json!("gold"))]
    );
}
