//! The fixture serves what it generates: every method of `Big` is listed
//! (over as many pages as it takes) and callable, `Small` lists ten.

use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use tower::ServiceExt as _;

async fn post(router: &mcp::rpc::server::Router, path: &str, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "fixture", "version": "1"},
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut request = http::Request::post(path)
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        request = request.header("mcp-name", name);
    }
    let request = request.body(http_body_util::Full::new(bytes::Bytes::from(body))).expect("a request");
    let response = router.clone().oneshot(request).await.expect("infallible");
    assert_eq!(response.status(), 200);
    let bytes = response.into_body().collect().await.expect("a body").to_bytes();
    serde_json::from_slice(&bytes).expect("JSON")
}

async fn tool_names(router: &mcp::rpc::server::Router) -> Vec<String> {
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor.map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let reply = post(router, "/mcp/v1", "tools/list", params).await;
        let result = &reply["result"];
        let tools = result["tools"].as_array().unwrap_or_else(|| panic!("a list: {reply}"));
        names.extend(tools.iter().map(|t| t["name"].as_str().expect("a name").to_owned()));
        match result["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return names,
        }
    }
}

#[tokio::test]
async fn every_generated_method_is_listed_and_callable() {
    let big = scale::with_services(mcp::App::new::<scale::Big>()).router().expect("the app builds");
    let names = tool_names(&big).await;
    assert_eq!(names.len(), scale::BIG_METHODS);
    assert!(names.contains(&"B0.get_0".to_owned()), "{names:?}");
    let reply =
        post(&big, "/mcp/v1", "tools/call", json!({"name": "B0.get_0", "arguments": {"id": 7, "detail": true}})).await;
    assert_eq!(reply["result"]["structuredContent"]["result"]["detail"], "item 7 of kind 0", "{reply}");
    let reply =
        post(&big, "/mcp/v1", "tools/call", json!({"name": "B0.rename_2", "arguments": {"id": 7, "name": ""}})).await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");

    let small = scale::with_services(mcp::App::new::<scale::Small>()).router().expect("the app builds");
    assert_eq!(tool_names(&small).await.len(), 10);
}
