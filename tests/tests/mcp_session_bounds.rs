//! What a handshake-era session costs, and what a flood of `initialize`
//! does to the session store:
//!
//! * a 4 MiB `clientInfo` or `capabilities` leaves a session of a few
//!   hundred bytes (name, title and version cut to 256 bytes; known
//!   capability names only);
//! * a `clientInfo` that is not an object is ignored (the `initialize`
//!   succeeds, the session has no client info);
//! * 5,000 `initialize` into a store of 500 are all answered, leave the
//!   store at its cap, and neither the session in use nor a new client
//!   notices.

use std::sync::Arc;
use std::time::Duration;

use e2e_tests::TestServer;
use e2e_tests::raw_mcp::RawMcp;
use mcp::{InMemorySessionStore, McpEndpoint, SessionStore};
use reqwest::Method;
use rpc::server::Router;
use rpc::{Environment, Executor};
use serde_json::{Value, json};

const TTL: Duration = Duration::from_secs(3600);

async fn server(store: Arc<InMemorySessionStore>) -> TestServer {
    let executor = Executor::new(catalog::registry().expect("registry"), Environment::Prod);
    let endpoint = McpEndpoint::builder::<catalog::Mcp>(executor).session_store(store).build();
    TestServer::start(Router::new().nest("/mcp", endpoint)).await
}

/// `count` strings of 80 characters: big in bytes, moderate in JSON values.
fn padding(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("{i:0>80}")).collect()
}

fn initialize(capabilities: Value, client_info: Value) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": client_info
    }})
    .to_string()
}

/// Sends `body` as an `initialize`; the session the store holds for it.
async fn session_for(client: &mut RawMcp, store: &InMemorySessionStore, body: String) -> Arc<mcp::Session> {
    client.session = None;
    let reply = client.send(Method::POST, Some(body), &[]).await;
    assert_eq!(reply.status, 200, "{}", &reply.text[..reply.text.len().min(300)]);
    let id = reply.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("a session id").to_owned();
    client.session = Some(id.clone());
    store.get(&id, TTL).await.expect("store answers").expect("the session is stored")
}

#[tokio::test]
async fn a_huge_client_info_is_not_kept() {
    let store = Arc::new(InMemorySessionStore::new(100));
    let server = server(store.clone()).await;
    let mut client = RawMcp::new(server.url("/mcp/v1"));

    let name = "é".repeat(50_000);
    let info = json!({"name": name, "title": "Flood", "version": "1.0.0", "pad": padding(45_000)});
    let body = initialize(json!({"sampling": {}}), info);
    assert!(body.len() > 3_800_000, "{} bytes", body.len());
    let session = session_for(&mut client, &store, body).await;
    let kept = session.client_info.clone().expect("client info kept");
    let kept_name = kept.name().expect("a name");
    assert!(kept_name.len() <= 256 && name.starts_with(kept_name), "{} bytes kept", kept_name.len());
    assert_eq!((kept.title(), kept.version()), (Some("Flood"), Some("1.0.0")));
    let stored = serde_json::to_string(&*session).expect("a session serialises");
    assert!(stored.len() < 1024, "the session holds {} bytes: {stored}", stored.len());
    assert_eq!(client.post(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"})).await.status, 200);

    let capabilities = json!({"sampling": {}, "roots": {"listChanged": true}, "pad": padding(45_000)});
    let body = initialize(capabilities, json!({"name": "cli", "version": "1"}));
    let session = session_for(&mut client, &store, body).await;
    assert_eq!(session.client_capabilities, ["sampling", "roots"], "known capability names only");
    let stored = serde_json::to_string(&*session).expect("a session serialises");
    assert!(stored.len() < 1024, "the session holds {} bytes: {stored}", stored.len());
}

#[tokio::test]
async fn client_info_that_is_not_an_object_is_ignored() {
    let store = Arc::new(InMemorySessionStore::new(100));
    let server = server(store.clone()).await;
    let mut client = RawMcp::new(server.url("/mcp/v1"));
    for info in [json!("cli"), json!([1, 2]), json!(42), json!(null), json!(true)] {
        let session = session_for(&mut client, &store, initialize(json!({}), info.clone())).await;
        assert_eq!(session.client_info, None, "{info}");
    }
    let session = session_for(&mut client, &store, initialize(json!({}), json!({"name": 5, "version": "1"}))).await;
    let kept = session.client_info.clone().expect("an object is kept");
    assert_eq!((kept.name(), kept.version()), (None, Some("1")), "a member that is not a string is left out");

    let refused = client.send(Method::POST, Some(initialize(json!("sampling"), json!({}))), &[]).await;
    assert_eq!(refused.json["error"]["code"], -32602, "capabilities must be an object: {}", refused.text);
}

/// One client's `initialize` loop: `count` sessions, each status returned.
async fn flood(url: String, count: usize) -> Vec<u16> {
    let client = reqwest::Client::new();
    let body = initialize(json!({}), json!({"name": "flood", "version": "1"}));
    let mut statuses = Vec::with_capacity(count);
    for _ in 0..count {
        let response = client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.clone())
            .send()
            .await
            .expect("request sent");
        statuses.push(response.status().as_u16());
    }
    statuses
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_initialize_does_not_lock_out_clients() {
    let store = Arc::new(InMemorySessionStore::new(500));
    let server = server(store.clone()).await;
    let url = server.url("/mcp/v1");
    let mut regular = RawMcp::new(url.clone());
    regular.initialize("2025-11-25").await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});

    let floods: Vec<_> = (0..8).map(|_| tokio::spawn(flood(url.clone(), 625))).collect();
    let mut pings = 0;
    while !floods.iter().all(|f| f.is_finished()) {
        let reply = regular.post(&ping).await;
        assert_eq!(reply.status, 200, "the session in use survives the flood: {}", reply.text);
        pings += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut statuses = Vec::new();
    for f in floods {
        statuses.extend(f.await.expect("flood task"));
    }
    assert_eq!(statuses.len(), 5_000);
    assert!(statuses.iter().all(|s| *s == 200), "no initialize refused: {:?}", statuses.iter().find(|s| **s != 200));
    assert!(pings > 1, "the regular client was active during the flood");

    assert_eq!(store.len(), 500, "the store stays at its cap");
    assert!(store.evicted() >= 4_000, "idle sessions made room: {} evicted", store.evicted());
    assert_eq!(regular.post(&ping).await.status, 200, "the session in use still works");
    let mut newcomer = RawMcp::new(url);
    assert_eq!(newcomer.initialize("2025-11-25").await.status, 200, "a new client gets a session");
    assert_eq!(newcomer.post(&ping).await.status, 200);
    assert_eq!(store.len(), 500);
}
