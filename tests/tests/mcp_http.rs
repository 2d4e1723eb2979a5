//! The MCP endpoint at the HTTP level: sessions (expiry, DELETE), version
//! negotiation, headers, content negotiation, batches under 2025-03-26,
//! per-revision tool shapes, DNS-rebinding protection, content
//! pass-through, after-response hooks, and the fail-loudly rule for
//! invalid tool names.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use e2e_tests::TestServer;
use e2e_tests::raw_mcp::RawMcp;
use mcp::{Content, InMemorySessionStore, McpEndpoint};
use reqwest::Method;
use rpc::clock::ManualClock;
use rpc::server::Router;
use rpc::{CallInfo, Environment, Executor, Listener, MaybeReady, Registry, Transport};
use serde_json::{Value, json};

mod fixtures {
    rpc::api_group! {
        /// Published over MCP.
        pub struct Media => "media", mcp = true;
    }
    rpc::api_group! {
        /// Not declared for MCP: its names are not checked at compile time.
        pub struct Legacy => "legacy";
    }

    /// Returns MCP content blocks.
    pub struct MediaTools;

    #[rpc::service(alias = "media", groups(Media))]
    impl MediaTools {
        /// Two content blocks.
        pub fn both(&self) -> Vec<mcp::Content> {
            vec![mcp::Content::text("caption"), mcp::Content::image("aGVsbG8=", "image/png")]
        }

        /// One content block.
        pub fn one(&self) -> mcp::Content {
            mcp::Content::resource_link("test://thing", "thing")
        }

        /// Nothing to return.
        pub fn nothing(&self) {}
    }

    /// A name that is not a valid tool name, in a group not declared for MCP.
    pub struct Bad;

    #[rpc::service(alias = "Bad", separator = ":", groups(Legacy))]
    impl Bad {
        /// Ping.
        pub fn ping(&self) -> String {
            "pong".into()
        }
    }
}

fn registry() -> Registry {
    Registry::builder().service(fixtures::MediaTools).service(fixtures::Bad).build().expect("registry")
}

async fn fixture_server(env: Environment, listener: Option<Arc<dyn Listener>>) -> TestServer {
    let mut executor = Executor::new(Arc::new(registry()), env);
    if let Some(listener) = listener {
        executor = executor.with_listeners([listener]);
    }
    let mut meta = serde_json::Map::new();
    meta.insert("com.example/owner".into(), json!("media team"));
    let media = McpEndpoint::builder::<fixtures::Media>(executor.clone()).tool_meta("media.one", meta).build();
    // A group not declared for MCP is served only by its name (a type error otherwise).
    let legacy = McpEndpoint::builder_for(executor, "legacy").build();
    TestServer::start(Router::new().nest("/media", media).nest("/legacy", legacy)).await
}

async fn catalog_session(server: &TestServer, version: &str) -> RawMcp {
    let mut client = RawMcp::new(server.url("/mcp/v1"));
    let reply = client.initialize(version).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    client
}

#[tokio::test]
async fn negotiates_the_protocol_version() {
    let server = TestServer::catalog(Environment::Dev).await;
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let mut client = RawMcp::new(server.url("/mcp/v1"));
        let reply = client.initialize(asked).await;
        assert_eq!(reply.json["result"]["protocolVersion"], answered, "asked {asked}");
        assert!(client.session.as_ref().is_some_and(|s| s.len() == 32), "a session id is minted");
        let info = &reply.json["result"]["serverInfo"];
        assert_eq!(info["name"], "catalog");
        assert_eq!(info.get("title").is_some(), answered >= "2025-06-18", "title from 2025-06-18 ({asked})");
        assert_eq!(info.get("websiteUrl").is_some(), answered >= "2025-11-25", "websiteUrl from 2025-11-25 ({asked})");
    }
    let no_params =
        RawMcp::new(server.url("/mcp/v1")).post(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"})).await;
    assert_eq!(no_params.json["error"]["code"], -32602);
}

#[tokio::test]
async fn sessions_are_required_checked_and_ended() {
    let server = TestServer::catalog(Environment::Dev).await;
    let anonymous = RawMcp::new(server.url("/mcp/v1"));
    let reply = anonymous.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    assert_eq!(reply.status, 400, "no session id: {}", reply.text);

    let mut stranger = RawMcp::new(server.url("/mcp/v1"));
    stranger.session = Some("0123456789abcdef0123456789abcdef".into());
    assert_eq!(stranger.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).await.status, 404);

    let client = catalog_session(&server, "2025-11-25").await;
    let pong = client.post(&json!({"jsonrpc": "2.0", "id": 5, "method": "ping"})).await;
    assert_eq!(pong.json, json!({"jsonrpc": "2.0", "id": 5, "result": {}}));

    let mut other_version = RawMcp::new(server.url("/mcp/v2"));
    other_version.session = client.session.clone();
    let reply = other_version.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).await;
    assert_eq!(reply.status, 404, "a v1 session is not valid on v2");

    assert_eq!(client.send(Method::DELETE, None, &[]).await.status, 200);
    assert_eq!(client.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).await.status, 404, "ended");
    assert_eq!(client.send(Method::DELETE, None, &[]).await.status, 404, "already ended");
    assert_eq!(anonymous.send(Method::DELETE, None, &[]).await.status, 400);
}

#[tokio::test]
async fn idle_sessions_expire() {
    let clock = Arc::new(ManualClock::new());
    let store = Arc::new(InMemorySessionStore::with_clock(1000, clock.clone()));
    let executor = Executor::new(catalog::registry().expect("registry"), Environment::Dev);
    let endpoint = McpEndpoint::builder::<catalog::Mcp>(executor)
        .session_ttl(Duration::from_secs(300))
        .session_store(store)
        .build();
    let server = TestServer::start(Router::new().nest("/mcp", endpoint)).await;
    let mut client = RawMcp::new(server.url("/mcp/v1"));
    client.initialize("2025-11-25").await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    clock.advance(Duration::from_secs(299));
    assert_eq!(client.post(&ping).await.status, 200, "299 s idle: alive, and the use extends it");
    clock.advance(Duration::from_secs(299));
    assert_eq!(client.post(&ping).await.status, 200, "598 s after initialize, 299 s idle: still alive");
    clock.advance(Duration::from_secs(300));
    assert_eq!(client.post(&ping).await.status, 404, "idle for the whole ttl: expired");
}

#[tokio::test]
async fn protocol_version_header() {
    let server = TestServer::catalog(Environment::Dev).await;
    let client = catalog_session(&server, "2025-11-25").await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let ok = client.send(Method::POST, Some(ping.clone()), &[("mcp-protocol-version", "2025-06-18")]).await;
    assert_eq!(ok.status, 200);
    let absent = client.send(Method::POST, Some(ping.clone()), &[("mcp-protocol-version", "")]).await;
    assert_eq!(absent.status, 200, "an absent header is allowed");
    let bad = client.send(Method::POST, Some(ping), &[("mcp-protocol-version", "2099-01-01")]).await;
    assert_eq!(bad.status, 400);
    assert!(bad.text.contains("2099-01-01"), "{}", bad.text);

    // The header decides the revision a request is served at; without it, 2025-03-26.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "Catalog.get", "arguments": {"id": 7}}}).to_string();
    let with = client.send(Method::POST, Some(call.clone()), &[]).await;
    assert_eq!(with.json["result"]["structuredContent"], json!({"result": {"id": 7, "name": "n7"}}));
    let without = client.send(Method::POST, Some(call), &[("mcp-protocol-version", "")]).await;
    assert!(without.json["result"].get("structuredContent").is_none(), "served as 2025-03-26: {}", without.text);
}

#[tokio::test]
async fn http_methods_paths_and_media_types() {
    let server = TestServer::catalog(Environment::Dev).await;
    let client = catalog_session(&server, "2025-11-25").await;
    // The catalog has a change hub: a session's GET opens its own stream
    // (headers only here; tests/tests/mcp_updates.rs reads it).
    let get = reqwest::Client::new()
        .get(&client.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", client.session.clone().expect("a session"))
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .expect("GET sent");
    assert_eq!(get.status(), 200, "the session's own stream");
    assert!(get.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    drop(get);
    let put = client.send(Method::PUT, None, &[]).await;
    assert_eq!(put.status, 405);
    assert_eq!(put.headers["allow"], "POST, GET, DELETE, OPTIONS");
    // Without CORS a preflight still gets 204 and what the endpoint allows.
    let options = client.send(Method::OPTIONS, None, &[]).await;
    assert_eq!(options.status, 204);
    assert_eq!(options.headers["allow"], "POST, GET, DELETE, OPTIONS");
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();

    let sse = client.send(Method::POST, Some(ping.clone()), &[("accept", "text/event-stream")]).await;
    assert_eq!(sse.status, 200);
    assert_eq!(sse.headers["content-type"], "text/event-stream");
    assert!(sse.text.starts_with("event: message\ndata: "), "{}", sse.text);
    assert_eq!(sse.json["result"], json!({}));
    for accept in ["*/*", "application/json", ""] {
        let reply = client.send(Method::POST, Some(ping.clone()), &[("accept", accept)]).await;
        assert_eq!(reply.headers["content-type"], "application/json", "Accept `{accept}`");
    }
    assert_eq!(client.send(Method::POST, Some(ping.clone()), &[("accept", "text/html")]).await.status, 406);
    assert_eq!(client.send(Method::POST, Some(ping.clone()), &[("content-type", "text/plain")]).await.status, 415);
    let huge = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#, "x".repeat(5 << 20));
    assert_eq!(client.send(Method::POST, Some(huge), &[]).await.status, 413);
    let broken = client.send(Method::POST, Some("{not json".into()), &[]).await;
    assert_eq!((broken.status, broken.json["error"]["code"].clone()), (400, json!(-32700)));
    let unknown = client.post(&json!({"jsonrpc": "2.0", "id": 9, "method": "resources/frobnicate"})).await;
    assert_eq!(unknown.json["error"]["code"], -32601);
    assert_eq!(unknown.json["id"], 9);
    let response = client.post(&json!({"jsonrpc": "2.0", "id": 3, "result": {}})).await;
    assert_eq!(response.status, 202, "a client's response is accepted");

    for path in ["/mcp/v3", "/mcp/v0", "/mcp/x"] {
        let mut other = RawMcp::new(server.url(path));
        other.session = client.session.clone();
        assert_eq!(other.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).await.status, 404, "{path}");
    }
}

#[tokio::test]
async fn dns_rebinding_is_refused() {
    let server = TestServer::catalog(Environment::Dev).await;
    let client = RawMcp::new(server.url("/mcp/v1"));
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}).to_string();
    let evil_host = client.send(Method::POST, Some(init.clone()), &[("host", "evil.example.com")]).await;
    assert_eq!(evil_host.status, 403);
    let evil_origin = client.send(Method::POST, Some(init.clone()), &[("origin", "http://evil.example.com")]).await;
    assert_eq!(evil_origin.status, 403);
    let local_origin = client.send(Method::POST, Some(init), &[("origin", "http://localhost:5173")]).await;
    assert_eq!(local_origin.status, 200);
}

#[tokio::test]
async fn batches_only_under_2025_03_26() {
    let server = TestServer::catalog(Environment::Dev).await;
    let old = catalog_session(&server, "2025-03-26").await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "zzz"}},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/call", "params": {"name": "Catalog.get", "arguments": {"id": 7}}},
        {"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": {"name": "Catalog.get", "arguments": {}}},
        {"jsonrpc": "2.0", "id": "d", "method": "initialize", "params": {}}
    ]);
    let reply = old.post(&batch).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let responses = reply.json.as_array().expect("an array of responses");
    let by_id = |id: &str| responses.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("response {id}"));
    assert_eq!(responses.len(), 4, "no response for the notification");
    assert_eq!(by_id("a")["result"], json!({}));
    let text = &by_id("b")["result"]["content"][0]["text"];
    assert_eq!(text, r#"{"id":7,"name":"n7"}"#);
    assert!(by_id("b")["result"].get("structuredContent").is_none(), "2025-03-26 has no structuredContent");
    assert_eq!(by_id("c")["error"]["code"], -32602);
    assert_eq!(by_id("d")["error"]["code"], -32600, "initialize cannot be batched");
    // A client that takes only streams gets one event per response.
    let streamed = old.send(reqwest::Method::POST, Some(batch.to_string()), &[("accept", "text/event-stream")]).await;
    assert_eq!(streamed.headers["content-type"], "text/event-stream", "{}", streamed.text);
    let events = e2e_tests::modern_mcp::sse_messages(&streamed.text);
    assert_eq!(events.len(), 4, "{}", streamed.text);
    assert!(events.iter().all(|e| e.is_object() && e["jsonrpc"] == "2.0"), "{}", streamed.text);
    let only_notifications = old.post(&json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}])).await;
    assert_eq!(only_notifications.status, 202);
    assert_eq!(old.post(&json!([])).await.status, 400);

    let new = catalog_session(&server, "2025-06-18").await;
    let refused = new.post(&json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])).await;
    assert_eq!(refused.status, 400, "batches were removed in 2025-06-18");
}

#[tokio::test]
async fn tool_shape_follows_the_revision() {
    let server = TestServer::catalog(Environment::Dev).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let tools_at = |reply: &Value| reply["result"]["tools"].as_array().expect("tools").clone();
    let get_tool = |tools: &[Value]| tools.iter().find(|t| t["name"] == "Catalog.get").cloned().expect("Catalog.get");

    let newest = get_tool(&tools_at(&catalog_session(&server, "2025-11-25").await.post(&list).await.json));
    assert_eq!(newest["title"], "Get product");
    assert_eq!(newest["annotations"], json!({"title": "Get product", "readOnlyHint": true}));
    assert_eq!(newest["outputSchema"]["properties"]["result"]["$ref"], "#/$defs/Product");
    assert_eq!(newest["description"], "Get one product by id.\n\nFails with error 404 when there is no such product.");

    let mid = get_tool(&tools_at(&catalog_session(&server, "2025-03-26").await.post(&list).await.json));
    assert!(mid.get("title").is_none() && mid.get("outputSchema").is_none());
    assert!(mid.get("annotations").is_some());

    let oldest = get_tool(&tools_at(&catalog_session(&server, "2024-11-05").await.post(&list).await.json));
    assert!(oldest.get("annotations").is_none());
    assert_eq!(oldest["inputSchema"]["required"], json!(["id"]));
}

#[tokio::test]
async fn invalid_cursor() {
    let server = TestServer::catalog(Environment::Dev).await;
    let client = catalog_session(&server, "2025-11-25").await;
    for cursor in [json!("bogus"), json!(""), json!(3)] {
        let reply = client
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": cursor}}))
            .await;
        assert_eq!(reply.json["error"]["code"], -32602, "cursor {cursor}");
    }
}

#[tokio::test]
async fn content_is_passed_through() {
    let server = fixture_server(Environment::Dev, None).await;
    let mut client = RawMcp::new(server.url("/media/v1"));
    client.initialize("2025-11-25").await;
    let list = client.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    for tool in list.json["result"]["tools"].as_array().expect("tools") {
        assert!(tool.get("outputSchema").is_none(), "no outputSchema for {}", tool["name"]);
        let meta = if tool["name"] == "media.one" { json!({"com.example/owner": "media team"}) } else { Value::Null };
        assert_eq!(tool.get("_meta").cloned().unwrap_or(Value::Null), meta, "configured _meta only");
    }
    let both = client.call("media.both", json!({})).await;
    assert_eq!(
        both["result"],
        json!({"content": [{"type": "text", "text": "caption"}, {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}], "isError": false})
    );
    let one = client.call("media.one", json!({})).await;
    assert_eq!(one["result"]["content"], json!([{"type": "resource_link", "uri": "test://thing", "name": "thing"}]));
    let nothing = client.call("media.nothing", json!({})).await;
    assert_eq!(nothing["result"], json!({"content": [{"type": "text", "text": "null"}], "isError": false}));
    assert_eq!(serde_json::to_value(Content::text("x")).expect("serialises"), json!({"type": "text", "text": "x"}));
}

#[tokio::test]
async fn invalid_tool_names_break_only_their_endpoint() {
    for env in [Environment::Dev, Environment::Prod] {
        let server = fixture_server(env, None).await;
        let mut broken = RawMcp::new(server.url("/legacy/v1"));
        let reply = broken.initialize_raw().await;
        assert_eq!(reply.status, 500, "every request to the group's endpoint fails");
        let message = reply.json["error"]["message"].as_str().expect("an explanation").to_owned();
        if env.is_debug() {
            assert!(message.contains("Bad:ping") && message.contains("not a valid MCP tool name"), "{message}");
        } else {
            assert!(!message.contains("Bad:ping"), "production hides the details: {message}");
        }
        broken.session = Some("whatever".into());
        assert_eq!(broken.send(Method::DELETE, None, &[]).await.status, 500);
        let mut healthy = RawMcp::new(server.url("/media/v1"));
        assert_eq!(healthy.initialize("2025-11-25").await.status, 200, "other groups keep working");
    }
}

#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl Listener for Recorder {
    fn before_execute<'a>(&'a self, call: &'a CallInfo) -> MaybeReady<'a, Result<(), rpc::RpcError>> {
        assert_eq!(call.transport, Transport::Mcp);
        self.0.lock().expect("lock").push(format!("before {}", call.method.name()));
        MaybeReady::ready(Ok(()))
    }
    fn after_response<'a>(&'a self, call: &'a CallInfo, _: &'a serde_json::value::RawValue) -> MaybeReady<'a, ()> {
        self.0.lock().expect("lock").push(format!("sent {} #{}", call.method.name(), call.id));
        MaybeReady::ready(())
    }
}

#[tokio::test]
async fn hooks_see_tool_calls_and_internal_ids_stay_internal() {
    let recorder = Arc::new(Recorder::default());
    let server = fixture_server(Environment::Dev, Some(recorder.clone())).await;
    let mut client = RawMcp::new(server.url("/media/v1"));
    client.initialize("2025-11-25").await;
    let reply = client
        .post(&json!({"jsonrpc": "2.0", "id": "client-id-42", "method": "tools/call", "params": {"name": "media.one"}}))
        .await;
    assert_eq!(reply.json["id"], "client-id-42", "the client's id is echoed");
    let mut events = Vec::new();
    for _ in 0..100 {
        events = recorder.0.lock().expect("lock").clone();
        if events.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(events[0], "before media.one");
    let internal: u64 = events[1]
        .strip_prefix("sent media.one #")
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("the hook saw an internal call id: {events:?}"));
    assert!(!json_mentions(&reply.json, internal), "internal call id {internal} leaked into {}", reply.text);
}

/// Whether `value` holds the number `n` anywhere (as a number or as a
/// string of its digits), keys included.
fn json_mentions(value: &Value, n: u64) -> bool {
    match value {
        Value::Number(x) => x.as_u64() == Some(n),
        Value::String(s) => s == &n.to_string(),
        Value::Array(items) => items.iter().any(|v| json_mentions(v, n)),
        Value::Object(map) => map.iter().any(|(k, v)| k == &n.to_string() || json_mentions(v, n)),
        _ => false,
    }
}

trait InitializeRaw {
    async fn initialize_raw(&mut self) -> e2e_tests::raw_mcp::Reply;
}

impl InitializeRaw for RawMcp {
    /// `initialize` without asserting anything about the reply.
    async fn initialize_raw(&mut self) -> e2e_tests::raw_mcp::Reply {
        self.post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
            .await
    }
}
