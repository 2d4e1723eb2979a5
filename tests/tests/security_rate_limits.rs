//! Rate limits: calls and new MCP sessions per client (its identity, else
//! its address), on `/rpc` and MCP in both eras, over the rate answered
//! with 429 and `Retry-After` (each call of a batch counted, refused in its
//! slot), and served again once the client's time has come (a manual
//! clock, no sleeping).

use std::sync::Arc;
use std::time::Duration;

use e2e_tests::TestServer;
use e2e_tests::modern_mcp::Modern;
use rpc::clock::ManualClock;
use rpc::rate::{Rate, RateLimits};
use rpc::store::{MemoryCache, MemoryLocks, MemoryRates, Stores};
use rpc::{Environment, Security, TokenPolicy};
use serde_json::{Value, json};

const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":7}}"#;

/// The catalog with static tokens `a` and `b` (identities `alice`,
/// `bob`), `limits`, and rate counters on `clock`.
async fn catalog(limits: RateLimits, clock: &Arc<ManualClock>, tokens: bool) -> TestServer {
    let mut security = Security::new();
    if tokens {
        let policy = TokenPolicy::new().named_token("alice", "a").unwrap().named_token("bob", "b").unwrap();
        security = security.tokens(policy);
    }
    let shared = catalog::Shared {
        stores: Stores {
            cache: Arc::new(MemoryCache::new(1 << 20)),
            locks: Arc::new(MemoryLocks::new()),
            rates: Arc::new(MemoryRates::with_clock(clock.clone())),
        },
        sessions: Arc::new(mcp::session::InMemorySessionStore::default()),
        tasks: Arc::new(mcp::tasks::MemoryTaskStore::default()),
    };
    let setup = catalog::Setup { security, shared: Some(shared), rate_limits: limits, ..catalog::Setup::default() };
    TestServer::start(catalog::app_configured(Environment::Prod, setup).expect("catalog")).await
}

async fn post(url: &str, body: &str, token: Option<&str>) -> (u16, Option<String>, Value) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = request.body(body.to_owned()).send().await.expect("sent");
    let status = response.status().as_u16();
    let retry = response.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let text = response.text().await.expect("body");
    let json = serde_json::from_str(&text).unwrap_or_else(|_| e2e_tests::modern_mcp::last_message(&text));
    (status, retry, json)
}

#[tokio::test]
async fn calls_over_a_clients_rate_wait_and_each_client_has_its_own() {
    let clock = Arc::new(ManualClock::new());
    let limits = RateLimits::new().calls(Rate::per_minute(3).unwrap());
    let server = catalog(limits, &clock, true).await;
    let rpc = server.url("/rpc");

    // A burst of three, then one every 20 s.
    for i in 0..3 {
        let (status, _, body) = post(&rpc, CALL, Some("a")).await;
        assert_eq!((status, &body["result"]["id"]), (200, &json!(7)), "call {i}: {body}");
    }
    let (status, retry, body) = post(&rpc, CALL, Some("a")).await;
    assert_eq!((status, retry.as_deref()), (429, Some("20")), "{body}");
    assert_eq!(body["error"]["code"], -32429, "{body}");
    assert_eq!(body["error"]["data"]["extra"]["retryAfter"], 20, "{body}");
    assert_eq!(body["id"], 1, "{body}");
    // Another identity is not held back; nor are the documents.
    assert_eq!(post(&rpc, CALL, Some("b")).await.0, 200);
    assert_eq!(reqwest::get(server.url("/rpc")).await.unwrap().status(), 200, "documents are not calls");

    // Over MCP, the same client's count: a 429 in both eras.
    let modern = Modern::new(server.url("/mcp/v1"));
    let refused = modern.tool_with("Catalog.get", json!({"id": 7}), &[("authorization", "Bearer a")]).await;
    assert_eq!(refused.status, 429, "{}", refused.text);
    assert_eq!(refused.headers.get("retry-after").unwrap(), "20");
    assert_eq!(refused.json["error"]["code"], -32429, "{}", refused.text);

    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let response = reqwest::Client::new()
        .post(server.url("/mcp/v1"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", "Bearer a")
        .body(initialize.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "opening a session is not a call");
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "Catalog.get", "arguments": {"id": 7}}});
    let response = reqwest::Client::new()
        .post(server.url("/mcp/v1"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", "Bearer a")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(call.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!((response.status().as_u16(), response.headers()["retry-after"].to_str().unwrap()), (429, "20"));

    // After 20 s, one more call; a batch then gets one answer and two refusals, in their slots.
    clock.advance(Duration::from_secs(20));
    let batch = format!("[{},{},{}]", CALL, CALL.replace("\"id\":1", "\"id\":2"), CALL.replace("\"id\":1", "\"id\":3"));
    let (status, retry, body) = post(&rpc, &batch, Some("a")).await;
    assert_eq!((status, retry), (200, None), "a batch is answered as a whole: {body}");
    let answers = body.as_array().expect("a batch answer");
    assert_eq!(answers.iter().filter(|a| a["result"]["id"] == 7).count(), 1, "{body}");
    assert_eq!(answers.iter().filter(|a| a["error"]["code"] == -32429).count(), 2, "{body}");

    // A quiet minute: the whole burst again.
    clock.advance(Duration::from_secs(60));
    for _ in 0..3 {
        assert_eq!(post(&rpc, CALL, Some("a")).await.0, 200);
    }
}

#[tokio::test]
async fn without_an_identity_clients_are_counted_by_address_and_sessions_have_their_own_rate() {
    let clock = Arc::new(ManualClock::new());
    let limits = RateLimits::new().calls(Rate::per_minute(100).unwrap()).sessions(Rate::per_minute(2).unwrap());
    let server = catalog(limits, &clock, false).await;
    let mcp = server.url("/mcp/v1");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    for i in 0..2 {
        let (status, _, body) = post(&mcp, &initialize, None).await;
        assert_eq!(status, 200, "session {i}: {body}");
    }
    let (status, retry, body) = post(&mcp, &initialize, None).await;
    assert_eq!((status, retry.as_deref()), (429, Some("30")), "{body}");
    assert_eq!(body["error"]["code"], -32429, "{body}");
    assert!(body["error"]["message"].as_str().unwrap_or_default().contains("new sessions"), "{body}");
    // Calls have their own count: still served.
    let modern = Modern::new(mcp.clone());
    assert_eq!(modern.tool("Catalog.get", json!({"id": 7})).await.status, 200);
    clock.advance(Duration::from_secs(30));
    assert_eq!(post(&mcp, &initialize, None).await.0, 200, "one more session after 30 s");
}

/// A rate store that always fails (a Redis that went away).
struct Failing;

impl rpc::store::RateStore for Failing {
    fn hit<'a>(
        &'a self,
        _key: &'a str,
        _rate: Rate,
    ) -> rpc::MaybeReady<'a, Result<rpc::rate::RateDecision, rpc::store::StoreError>> {
        rpc::MaybeReady::ready(Err(rpc::store::StoreError::new("redis rate: not sent, Redis is unavailable")))
    }
}

#[tokio::test]
async fn a_rate_store_that_fails_leaves_the_counting_to_this_process() {
    let registry = catalog::registry().expect("registry");
    let stores = Stores { rates: Arc::new(Failing), ..Stores::default() };
    let executor = rpc::Executor::new(registry, Environment::Prod)
        .with_stores(stores)
        .with_rate_limits(RateLimits::new().calls(Rate::per_minute(2).unwrap()));
    let peer = Some("192.0.2.1".parse().unwrap());
    let call = || {
        rpc::Call::new("Catalog.get", 1, rpc::Params::Named(json!({"id": 7}).as_object().unwrap().clone()))
            .from_client(peer)
    };
    assert!(executor.execute(call()).await.result.is_ok());
    assert!(executor.execute(call()).await.result.is_ok());
    let third = executor.execute(call()).await;
    assert_eq!(third.stage, rpc::Stage::RateLimit);
    assert_eq!(third.result.unwrap_err().code(), -32429);
    // Calls the server makes itself, and callers the transport does not name, are not counted.
    let internal = rpc::Call::new("Catalog.get", 1, rpc::Params::Named(json!({"id": 7}).as_object().unwrap().clone()));
    assert!(executor.execute(internal).await.result.is_ok());
}
