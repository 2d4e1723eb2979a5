// Only `mcp` in Cargo.toml, without its default features: the service macro
// is `mcp::rpc::service`, and the application brings its own HTTP server
// (here, requests handed to the endpoint's tower `Service` directly, as a
// router that mounts it at `/mcp` would).
use mcp::rpc;
use tower::ServiceExt as _;

rpc::api_group!(pub struct Tools => "tools", mcp = true);

pub struct Clock;

#[rpc::service(groups(Tools))]
impl Clock {
    /// The answer.
    #[mcp::mcp_tool(read_only_hint = true)]
    pub fn answer(&self, #[rpc(default = 42)] value: u32) -> u32 {
        value
    }
}

fn post(body: serde_json::Value, session: Option<&str>) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    let mut request = http::Request::post("/")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(id) = session {
        request = request.header("mcp-session-id", id).header("mcp-protocol-version", "2025-11-25");
    }
    request.body(http_body_util::Full::new(bytes::Bytes::from(body.to_string()))).expect("a request")
}

async fn json_of(
    response: http::Response<impl http_body::Body<Data = bytes::Bytes, Error = impl std::fmt::Debug>>,
) -> serde_json::Value {
    use http_body_util::BodyExt as _;
    let bytes = response.into_body().collect().await.expect("a body").to_bytes();
    let text = std::str::from_utf8(&bytes).expect("UTF-8");
    // A JSON body, or one SSE `data:` line.
    let json = text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(text);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {text}"))
}

pub fn main() {
    let registry = rpc::Registry::builder().service(Clock).build().expect("registry builds");
    let answer = registry.method(1, "Clock.answer", Some("tools")).expect("the tool");
    assert_eq!(answer.schemas().input["properties"]["value"]["default"], 42);
    let endpoint = mcp::McpEndpoint::builder::<Tools>(rpc::Executor::new(registry, rpc::Environment::Prod)).build();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let response = endpoint.clone().oneshot(post(init, None)).await.expect("infallible");
        assert_eq!(response.status(), 200);
        let session = response.headers()["mcp-session-id"].to_str().expect("ASCII").to_owned();
        let reply = json_of(response).await;
        assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
        let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = endpoint.clone().oneshot(post(initialized, Some(&session))).await.expect("infallible");
        assert_eq!(response.status(), 202);
        let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "Clock.answer", "arguments": {"value": 7}}});
        let response = endpoint.clone().oneshot(post(call, Some(&session))).await.expect("infallible");
        assert_eq!(response.status(), 200);
        let reply = json_of(response).await;
        assert_eq!(reply["result"]["structuredContent"]["result"], 7, "{reply}");
    });
}
