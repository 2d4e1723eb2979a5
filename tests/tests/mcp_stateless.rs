//! MCP 2026-07-28 (stateless) on the same endpoint as the handshake era:
//! each row of the check order, era routing with clients of both eras side
//! by side, `server/discover`, `resultType`/`ttlMs`/`cacheScope`, request
//! ids in errors, header mirroring, the per-group era and invalid-argument
//! options, and `subscriptions/listen`.

use std::time::Duration;

use base64::Engine;
use e2e_tests::TestServer;
use e2e_tests::modern_mcp::{Modern, SseReader, VERSION, meta};
use e2e_tests::raw_mcp::RawMcp;
use mcp::{CacheScope, Eras, InvalidArguments, ListChanges, McpEndpoint};
use rpc::server::Router;
use rpc::{Environment, Executor, Registry};
use serde_json::{Value, json};

mod fixtures {
    use mcp::mcp_tool;

    rpc::api_group! {
        /// The test tools.
        pub struct Live => "live", mcp = true;
    }

    /// Tools for the stateless-era tests.
    pub struct Tools;

    #[rpc::service(alias = "live", groups(Live))]
    impl Tools {
        /// Needs the client's sampling capability.
        #[mcp_tool(requires_client(sampling, elicitation))]
        pub fn sample(&self) -> String {
            "sampled".into()
        }

        /// Routes by region.
        ///
        /// # Arguments
        /// * `region` - The region, mirrored into `Mcp-Param-Region`
        /// * `shard` - The shard, mirrored into `Mcp-Param-shard`
        /// * `query` - Not mirrored
        pub fn route(
            &self,
            #[rpc(header = "Region")] region: String,
            #[rpc(header)] shard: Option<u64>,
            #[rpc(default = "")] query: String,
        ) -> String {
            format!("{region}/{}/{query}", shard.map_or("-".into(), |s| s.to_string()))
        }

        /// Adds.
        pub fn add(&self, a: i32, b: i32) -> i32 {
            a + b
        }
    }
}

fn registry() -> Registry {
    Registry::builder().service(fixtures::Tools).service(catalog::Catalog::new()).build().expect("registry")
}

/// The fixture tools at `/live` (both eras) plus variants, and the catalog.
async fn server(configure: impl FnOnce(mcp::McpEndpointBuilder) -> mcp::McpEndpointBuilder) -> TestServer {
    let executor = Executor::new(registry(), Environment::Dev);
    let live = configure(McpEndpoint::builder::<fixtures::Live>(executor.clone())).build();
    let catalog = McpEndpoint::builder::<catalog::Mcp>(executor).build();
    TestServer::start(Router::new().nest("/live", live).nest("/mcp", catalog)).await
}

fn code(reply: &e2e_tests::raw_mcp::Reply) -> i64 {
    reply.json["error"]["code"].as_i64().unwrap_or_else(|| panic!("an error: {}", reply.text))
}

#[tokio::test]
async fn the_check_order_row_by_row() {
    let server = server(|b| b).await;
    let client = Modern::new(server.url("/live/v1"));
    let discover = client.request("server/discover", json!({}), json!(7));

    // Origin/Host: 403 before anything is parsed.
    let reply = client.exchange(&discover, &[("origin", "http://evil.example")]).await;
    assert_eq!(reply.status, 403, "{}", reply.text);

    // Parse error, invalid request.
    let bad = reqwest::Client::new()
        .post(server.url("/live/v1"))
        .header("content-type", "application/json")
        .header("mcp-protocol-version", VERSION)
        .body("{not json")
        .send()
        .await
        .expect("sent");
    assert_eq!(bad.status(), 400);
    let body: Value = bad.json().await.expect("json");
    assert_eq!(body["error"]["code"], -32700);
    let reply = client.exchange(&json!({"jsonrpc": "1.0", "id": 8, "method": "server/discover"}), &[]).await;
    assert_eq!((reply.status, code(&reply), reply.json["id"].clone()), (400, -32600, json!(8)), "{}", reply.text);

    // Mirrored headers.
    for (overrides, why) in
        [(vec![("mcp-method", "")], "Mcp-Method missing"), (vec![("mcp-method", "tools/list")], "Mcp-Method mismatch")]
    {
        let reply = client.exchange(&discover, &overrides).await;
        assert_eq!((reply.status, code(&reply)), (400, -32020), "{why}: {}", reply.text);
        assert_eq!(reply.json["id"], 7, "{why}: the id is echoed");
    }
    let call = client.request("tools/call", json!({"name": "live.add", "arguments": {"a": 1, "b": 2}}), json!(9));
    for (name, expected) in [
        ("", -32020),
        ("live.sub", -32020),
        ("live.add", 0),
        (&format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode("live.add")), 0),
    ] {
        let reply = client.exchange(&call, &[("mcp-name", name)]).await;
        if expected == 0 {
            assert_eq!(reply.status, 200, "Mcp-Name {name:?}: {}", reply.text);
            assert_eq!(reply.json["result"]["structuredContent"]["result"], 3);
        } else {
            assert_eq!((reply.status, code(&reply)), (400, expected), "Mcp-Name {name:?}: {}", reply.text);
        }
    }

    // `_meta` and its required members: -32602.
    let mut no_meta = discover.clone();
    no_meta["params"] = json!({});
    let mut no_version = discover.clone();
    no_version["params"]["_meta"].as_object_mut().map(|m| m.remove("io.modelcontextprotocol/protocolVersion"));
    let mut no_capabilities = discover.clone();
    no_capabilities["params"]["_meta"].as_object_mut().map(|m| m.remove("io.modelcontextprotocol/clientCapabilities"));
    for (body, why) in
        [(no_meta, "no _meta"), (no_version, "no protocolVersion"), (no_capabilities, "no clientCapabilities")]
    {
        let reply = client.exchange(&body, &[]).await;
        assert_eq!(
            (reply.status, code(&reply), reply.json["id"].clone()),
            (400, -32602, json!(7)),
            "{why}: {}",
            reply.text
        );
    }
    let mut no_info = discover.clone();
    no_info["params"]["_meta"].as_object_mut().map(|m| m.remove("io.modelcontextprotocol/clientInfo"));
    assert_eq!(client.exchange(&no_info, &[]).await.status, 200, "clientInfo is optional");

    // The version header must equal `_meta`'s version; then it must be supported.
    let reply = client.exchange(&discover, &[("mcp-protocol-version", "")]).await;
    assert_eq!((reply.status, code(&reply)), (400, -32020), "{}", reply.text);
    let mut future = discover.clone();
    future["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let reply = client.exchange(&future, &[]).await;
    assert_eq!((reply.status, code(&reply)), (400, -32020), "header 2026-07-28 vs _meta v999: {}", reply.text);
    let reply = client.exchange(&future, &[("mcp-protocol-version", "v999.0.0")]).await;
    assert_eq!((reply.status, code(&reply)), (400, -32022), "{}", reply.text);
    assert_eq!(reply.json["error"]["data"], json!({"supported": ["2026-07-28"], "requested": "v999.0.0"}));
    assert_eq!(reply.json["id"], 7);

    // Unknown methods, and the handshake-era ones: 404 + -32601.
    for method in ["unknown/method", "initialize", "ping", "logging/setLevel", "resources/subscribe"] {
        let reply = client.exchange(&client.request(method, json!({}), json!(11)), &[]).await;
        assert_eq!(
            (reply.status, code(&reply), reply.json["id"].clone()),
            (404, -32601, json!(11)),
            "{method}: {}",
            reply.text
        );
    }

    // A capability the tool needs: -32021 with requiredCapabilities, and the method does not run.
    let reply = client.tool("live.sample", json!({})).await;
    assert_eq!((reply.status, code(&reply)), (400, -32021), "{}", reply.text);
    assert_eq!(reply.json["error"]["data"], json!({"requiredCapabilities": {"sampling": {}, "elicitation": {}}}));
    let mut sampling = client.clone();
    sampling.capabilities = json!({"sampling": {}});
    let reply = sampling.tool("live.sample", json!({})).await;
    assert_eq!(reply.json["error"]["data"], json!({"requiredCapabilities": {"elicitation": {}}}), "{}", reply.text);
    sampling.capabilities = json!({"sampling": {}, "elicitation": {}});
    let reply = sampling.tool("live.sample", json!({})).await;
    assert_eq!(reply.json["result"]["structuredContent"]["result"], "sampled", "{}", reply.text);
}

#[tokio::test]
async fn results_carry_result_type_identity_and_cache_hints() {
    let server = server(|b| b.cache_hints(Duration::from_secs(42), CacheScope::Private).instructions("Be kind.")).await;
    let client = Modern::new(server.url("/live/v1"));
    let discover = client.call("server/discover", json!({})).await;
    assert_eq!(discover.status, 200, "{}", discover.text);
    assert_eq!(discover.headers["content-type"], "application/json");
    let result = &discover.json["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(result["capabilities"], json!({"tools": {"listChanged": false}, "logging": {}}));
    assert_eq!(result["instructions"], "Be kind.");
    assert_eq!((result["ttlMs"].clone(), result["cacheScope"].clone()), (json!(42_000), json!("private")));
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].is_string(), "{result}");

    let list = client.call("tools/list", json!({})).await;
    let result = &list.json["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!((result["ttlMs"].clone(), result["cacheScope"].clone()), (json!(42_000), json!("private")));
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"].is_string());
    let names: Vec<&str> =
        result["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["live.add", "live.route", "live.sample"], "deterministic order");
    let bad_cursor = client.call("tools/list", json!({"cursor": "nope"})).await;
    assert_eq!((bad_cursor.status, code(&bad_cursor)), (400, -32602));

    let call = client.tool("live.add", json!({"a": 2, "b": 3})).await;
    let result = &call.json["result"];
    assert_eq!(result["resultType"], "complete", "{}", call.text);
    assert_eq!(result["structuredContent"], json!({"result": 5}));
    assert_eq!(result["content"], json!([{"type": "text", "text": "5"}]));
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());

    let unknown = client.tool("live.nope", json!({})).await;
    assert_eq!((unknown.status, code(&unknown)), (400, -32602), "{}", unknown.text);
    let invalid = client.tool("live.add", json!({"a": "two", "b": 3})).await;
    assert_eq!((invalid.status, code(&invalid)), (400, -32602), "invalid arguments are -32602 by default");
    assert!(invalid.json["error"]["data"]["extra"]["a"].is_array(), "{}", invalid.text);
}

#[tokio::test]
async fn clients_of_both_eras_use_one_endpoint_at_once() {
    let server = server(|b| b).await;
    let url = server.url("/mcp/v1");
    let legacy = async {
        let mut client = RawMcp::new(&url);
        assert_eq!(client.initialize("2025-11-25").await.json["result"]["protocolVersion"], "2025-11-25");
        let mut got = Vec::new();
        for id in 1..=20u64 {
            let reply = client.call("Catalog.get", json!({"id": id})).await;
            assert!(reply["result"].get("resultType").is_none(), "no 2026 fields for a 2025 client: {reply}");
            got.push(reply["result"]["structuredContent"]["result"]["id"].as_u64());
        }
        got
    };
    let modern = async {
        let client = Modern::new(&url);
        let mut got = Vec::new();
        for id in 1..=20u64 {
            let reply = client.tool("Catalog.get", json!({"id": id})).await;
            assert_eq!(reply.json["result"]["resultType"], "complete", "{}", reply.text);
            assert!(reply.headers.get("mcp-session-id").is_none(), "no session is minted");
            got.push(reply.json["result"]["structuredContent"]["result"]["id"].as_u64());
        }
        got
    };
    let (legacy, modern) = tokio::join!(legacy, modern);
    let expected: Vec<Option<u64>> = (1..=20).map(Some).collect();
    assert_eq!(legacy, expected);
    assert_eq!(modern, expected);

    // A handshake request with an unknown version header stays in its session.
    let mut session = RawMcp::new(&url);
    session.initialize("2025-11-25").await;
    let reply = session
        .send(
            reqwest::Method::POST,
            Some(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}).to_string()),
            &[("mcp-protocol-version", "2099-01-01")],
        )
        .await;
    assert_eq!((reply.status, reply.json["id"].clone()), (400, json!(3)), "session errors echo the id: {}", reply.text);
}

#[tokio::test]
async fn mirrored_parameters_are_checked_against_their_headers() {
    let server = server(|b| b).await;
    let client = Modern::new(server.url("/live/v1"));
    let list = client.call("tools/list", json!({})).await;
    let route =
        list.json["result"]["tools"].as_array().and_then(|t| t.iter().find(|t| t["name"] == "live.route")).cloned();
    let schema = &route.expect("live.route is listed")["inputSchema"]["properties"];
    assert_eq!(schema["region"]["x-mcp-header"], "Region");
    assert_eq!(schema["shard"]["x-mcp-header"], "shard");
    assert!(schema["query"].get("x-mcp-header").is_none());
    assert_eq!(schema["shard"]["maximum"], json!(9_007_199_254_740_991_u64), "within JavaScript's safe range");

    let call = |args: Value| client.request("tools/call", json!({"name": "live.route", "arguments": args}), json!(5));
    let body = call(json!({"region": "eu-west", "shard": 7}));
    let ok = client.exchange(&body, &[("mcp-param-region", "eu-west"), ("mcp-param-shard", "7")]).await;
    assert_eq!(ok.json["result"]["structuredContent"]["result"], "eu-west/7/", "{}", ok.text);
    let missing = client.exchange(&body, &[("mcp-param-region", "eu-west")]).await;
    assert_eq!((missing.status, code(&missing)), (400, -32020), "{}", missing.text);
    let wrong = client.exchange(&body, &[("mcp-param-region", "us-east"), ("mcp-param-shard", "7")]).await;
    assert_eq!((wrong.status, code(&wrong), wrong.json["id"].clone()), (400, -32020, json!(5)));
    let numeric = client.exchange(&body, &[("mcp-param-region", "eu-west"), ("mcp-param-shard", "7.0")]).await;
    assert_eq!(numeric.status, 200, "integers compare numerically: {}", numeric.text);
    let unicode = call(json!({"region": "Zürich"}));
    let encoded = format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode("Zürich"));
    let reply = client.exchange(&unicode, &[("mcp-param-region", encoded.as_str())]).await;
    assert_eq!(reply.json["result"]["structuredContent"]["result"], "Zürich/-/", "{}", reply.text);
    let stray =
        client.exchange(&call(json!({"region": "x"})), &[("mcp-param-region", "x"), ("mcp-param-shard", "1")]).await;
    assert_eq!((stray.status, code(&stray)), (400, -32020), "a header for an absent argument: {}", stray.text);

    // Handshake-era lists do not show the 2026 keyword, and do not check headers.
    let mut legacy = RawMcp::new(server.url("/live/v1"));
    legacy.initialize("2025-11-25").await;
    let list = legacy.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    assert!(!list.text.contains("x-mcp-header"), "{}", list.text);
    assert_eq!(
        legacy.call("live.route", json!({"region": "eu"})).await["result"]["structuredContent"]["result"],
        "eu/-/"
    );
}

#[tokio::test]
async fn invalid_arguments_can_be_tool_errors_in_both_eras() {
    let server = server(|b| b.invalid_arguments(InvalidArguments::ToolError)).await;
    let modern = Modern::new(server.url("/live/v1"));
    let reply = modern.tool("live.add", json!({"a": "two", "b": 3})).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let result = &reply.json["result"];
    assert_eq!(result["isError"], true, "{}", reply.text);
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().expect("text")).expect("JSON text");
    assert_eq!(text["code"], -32602);
    assert!(text["data"]["extra"]["a"].is_array(), "the details: {text}");
    assert_eq!(result["resultType"], "complete");

    let mut legacy = RawMcp::new(server.url("/live/v1"));
    legacy.initialize("2025-11-25").await;
    let reply = legacy.call("live.add", json!({"b": 1})).await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let unknown = legacy.call("live.nope", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32602, "an unknown tool stays a protocol error: {unknown}");
}

#[tokio::test]
async fn a_stateless_only_endpoint_refuses_the_handshake_era() {
    let server = server(|b| b.eras(Eras::StatelessOnly)).await;
    let url = server.url("/live/v1");
    let http = reqwest::Client::new();
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let reply = http.request(method.clone(), &url).header("mcp-session-id", "abc").send().await.expect("sent");
        assert_eq!(reply.status(), 405, "{method}");
        assert_eq!(reply.headers()["allow"], "POST, OPTIONS");
    }
    let mut legacy = RawMcp::new(&url);
    let reply = legacy.initialize_lenient("2025-11-25").await;
    assert_eq!((reply.status, reply.json["error"]["code"].clone()), (404, json!(-32601)), "{}", reply.text);
    assert!(reply.headers.get("mcp-session-id").is_none());
    // A request with a stale session id is served statelessly all the same.
    let modern = Modern::new(&url);
    let body = modern.request("tools/call", json!({"name": "live.add", "arguments": {"a": 1, "b": 1}}), json!(1));
    let reply = modern.exchange(&body, &[("mcp-session-id", "0123456789abcdef"), ("last-event-id", "5")]).await;
    assert_eq!(reply.json["result"]["structuredContent"]["result"], 2, "{}", reply.text);
    // Without _meta, a request is a 2026 request missing its envelope.
    let reply = legacy.post(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})).await;
    assert_eq!((reply.status, reply.json["error"]["code"].clone()), (400, json!(-32020)), "{}", reply.text);
}

#[tokio::test]
async fn a_handshake_only_endpoint_sends_modern_clients_back_to_initialize() {
    let server = server(|b| b.eras(Eras::HandshakeOnly)).await;
    let modern = Modern::new(server.url("/live/v1"));
    let reply = modern.call("server/discover", json!({})).await;
    assert_eq!(reply.status, 400, "{}", reply.text);
    assert_eq!(reply.json["error"]["code"], -32000, "a session error, not a 2026 error: the client falls back");
    let mut legacy = RawMcp::new(server.url("/live/v1"));
    assert_eq!(legacy.initialize("2025-11-25").await.status, 200);
}

#[tokio::test]
async fn notifications_are_accepted_and_batches_refused() {
    let server = server(|b| b.eras(Eras::StatelessOnly)).await;
    let modern = Modern::new(server.url("/live/v1"));
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    assert_eq!(modern.exchange(&notification, &[]).await.status, 202);
    let batch = json!([modern.request("server/discover", json!({}), json!(1))]);
    let reply = modern.exchange(&batch, &[("mcp-method", "server/discover")]).await;
    assert_eq!((reply.status, code(&reply)), (400, -32600), "{}", reply.text);
    let response = json!({"jsonrpc": "2.0", "id": 3, "result": {}});
    let reply = modern.exchange(&response, &[]).await;
    assert_eq!((reply.status, code(&reply), reply.json["id"].clone()), (400, -32600, json!(3)), "{}", reply.text);
}

async fn listen(client: &Modern, id: Value, filter: Value) -> SseReader {
    let body = client.request("subscriptions/listen", json!({"notifications": filter}), id);
    SseReader::new(client.send(&body, &[]).await)
}

#[tokio::test]
async fn listen_streams_deliver_requested_changes_tagged_and_end_on_close() {
    let changes = ListChanges::new();
    let hub = changes.clone();
    let server = server(move |b| b.list_changes(changes).keep_alive(Duration::from_millis(100))).await;
    let client = Modern::new(server.url("/live/v1"));
    let discover = client.call("server/discover", json!({})).await;
    assert_eq!(discover.json["result"]["capabilities"]["tools"]["listChanged"], true);

    let mut tools =
        listen(&client, json!("sub-1"), json!({"toolsListChanged": true, "promptsListChanged": true})).await;
    assert_eq!(tools.headers()["x-accel-buffering"], "no");
    let ack = tools.next(Duration::from_secs(5)).await.expect("the acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub-1");
    assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}), "prompts are not served here");
    let mut prompts_only = listen(&client, json!(2), json!({"promptsListChanged": true})).await;
    assert_eq!(prompts_only.next(Duration::from_secs(5)).await.expect("ack")["params"]["notifications"], json!({}));

    hub.tools_changed();
    let change = tools.next(Duration::from_secs(5)).await.expect("a change");
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert_eq!(change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub-1");
    assert_eq!(prompts_only.next_within(Duration::from_millis(300)).await, None, "nothing it did not ask for");
    assert!(prompts_only.comments > 0, "keep-alive comments flow while it is quiet");

    hub.close();
    let farewell = tools.next(Duration::from_secs(5)).await.expect("a final response");
    assert_eq!(farewell["id"], "sub-1");
    assert_eq!(
        farewell["result"],
        json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": "sub-1"}})
    );
    assert_eq!(tools.next(Duration::from_secs(5)).await, None, "then the stream ends");
}

#[tokio::test]
async fn listen_needs_a_change_source_and_sse() {
    let server = server(|b| b).await;
    let client = Modern::new(server.url("/live/v1"));
    let reply = client.call("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}})).await;
    assert_eq!((reply.status, code(&reply)), (404, -32601), "no list changes configured: {}", reply.text);

    let changes = ListChanges::new();
    let server = server_with_changes(changes).await;
    let client = Modern::new(server.url("/live/v1"));
    let body = client.request("subscriptions/listen", json!({"notifications": {}}), json!(1));
    let reply = client.exchange(&body, &[("accept", "application/json")]).await;
    assert_eq!(reply.status, 406, "{}", reply.text);
}

async fn server_with_changes(changes: ListChanges) -> TestServer {
    server(move |b| b.list_changes(changes)).await
}

#[tokio::test]
async fn shutting_down_the_server_ends_listen_streams_gracefully() {
    let changes = ListChanges::new();
    let server = server_with_changes(changes).await;
    let client = Modern::new(server.url("/live/v1"));
    let mut stream = listen(&client, json!(77), json!({"toolsListChanged": true})).await;
    stream.next(Duration::from_secs(5)).await.expect("ack");
    drop(server);
    let farewell = stream.next(Duration::from_secs(5)).await.expect("a final response at shutdown");
    assert_eq!(farewell["id"], 77);
    assert_eq!(stream.next(Duration::from_secs(5)).await, None);
}

#[test]
fn meta_helper_names_the_version() {
    assert_eq!(meta(json!({}))["io.modelcontextprotocol/protocolVersion"], VERSION);
}

/// `subscriptions/listen` streams are bounded per client and in all: one
/// more than its share is refused with 429 and `Retry-After`, and a closed
/// stream gives its place back. The conformance server keeps the default
/// share (8 per client).
#[tokio::test]
async fn listen_streams_are_bounded_per_client_and_in_all() {
    let changes = ListChanges::new();
    let server = server(move |b| b.list_changes(changes).listen_limits(2, 3)).await;
    let client = Modern::new(server.url("/live/v1"));
    let mut open = Vec::new();
    for id in 0..2 {
        let mut stream = listen(&client, json!(id), json!({"toolsListChanged": true})).await;
        stream.next(Duration::from_secs(5)).await.expect("ack");
        open.push(stream);
    }
    let body = client.request("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}), json!(9));
    let refused = client.exchange(&body, &[]).await;
    assert_eq!(refused.status, 429, "{}", refused.text);
    assert_eq!(refused.headers["retry-after"], "5");
    assert_eq!(refused.json["id"], 9);
    assert!(refused.json["error"]["message"].as_str().unwrap().contains("at most 2 per client"), "{}", refused.text);
    // A closed stream gives its place back.
    drop(open.pop());
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let reply = client.send(&body, &[]).await;
        if reply.status() == 200 {
            open.push(SseReader::new(reply));
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the closed stream's place came back");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The conformance server: at most 8 per client.
    let conformance = TestServer::start(conformance_server::app(rpc::Environment::Prod).unwrap()).await;
    let client = Modern::new(conformance.url("/mcp"));
    let mut streams = Vec::new();
    for id in 0..8 {
        let mut stream = listen(&client, json!(id), json!({"toolsListChanged": true})).await;
        stream.next(Duration::from_secs(5)).await.expect("ack");
        streams.push(stream);
    }
    let body = client.request("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}), json!(8));
    assert_eq!(client.exchange(&body, &[]).await.status, 429, "a ninth stream from one client");
}
