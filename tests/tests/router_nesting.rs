//! The catalog's whole router mounted under `/api` in another `Router`:
//! the endpoints (which keep the target the client sent and find their
//! path below the mount prefixes) answer JSON-RPC, OpenRPC, Postman and MCP
//! under the prefix, with the prefix in every URL they publish, and paths
//! that only look like the prefix are not theirs.

use e2e_tests::modern_mcp::Modern;
use e2e_tests::{TestServer, get_json, post_json};
use rpc::server::Router;
use rpc::{Environment, Security};
use serde_json::json;

async fn nested() -> TestServer {
    let catalog = catalog::app_with(Environment::Dev, Security::new()).expect("the catalog builds");
    TestServer::start(Router::new().nest("/api", catalog)).await
}

#[tokio::test]
async fn json_rpc_openrpc_and_postman_under_the_prefix() {
    let server = nested().await;
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":7}}"#;
    for path in ["/api/rpc", "/api/rpc/v1", "/api/rpc/?x=1"] {
        let (status, reply) = post_json(&server.url(path), call).await;
        assert_eq!(
            (status, &reply),
            (200, &json!({"jsonrpc": "2.0", "id": 1, "result": {"id": 7, "name": "n7"}})),
            "{path}"
        );
    }
    let (status, v2) =
        post_json(&server.url("/api/rpc/v2"), r#"{"jsonrpc":"2.0","id":2,"method":"Catalog.count"}"#).await;
    assert_eq!((status, &v2["result"]), (200, &json!(100)), "{v2}");
    let (status, document) = get_json(&server.url("/api/rpc/v2")).await;
    assert_eq!(status, 200);
    assert_eq!(document["servers"][0]["url"], server.url("/api/rpc/v2"), "the whole path, prefix included");
    let (status, collection) = get_json(&server.url("/api/rpc/v2/postman")).await;
    assert_eq!(status, 200, "{collection}");
    let raw = collection["item"][0]["request"]["url"]["raw"].as_str().unwrap_or_default().to_owned();
    assert_eq!(raw, "{{baseUrl}}/api/rpc/v2", "the mount path found below the prefixes");
}

#[tokio::test]
async fn mcp_under_the_prefix_in_both_eras() {
    let server = nested().await;
    let reply = Modern::new(server.url("/api/mcp/v1")).tool("Catalog.get", json!({"id": 7})).await;
    let reply = reply.json;
    assert_eq!(reply["result"]["structuredContent"]["result"], json!({"id": 7, "name": "n7"}), "{reply}");
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let response = reqwest::Client::new()
        .post(server.url("/api/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize)
        .send()
        .await
        .expect("POST sent");
    assert_eq!(response.status(), 200);
    assert!(response.headers().contains_key("mcp-session-id"), "a session under the prefix");
}

#[tokio::test]
async fn paths_that_only_look_like_the_prefix_are_not_served() {
    let server = nested().await;
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":7}}"#;
    for path in ["/rpc", "/apirpc", "/api", "/api/", "/api/rpcx", "/api/mcpx/v1", "/api/nothing"] {
        let (status, _) = post_json(&server.url(path), call).await;
        assert_eq!(status, 404, "{path}");
    }
}
