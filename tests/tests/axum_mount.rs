//! The endpoints mounted in an existing axum application
//! (`examples/axum-mount`): the application's own routes and state keep
//! working, and under the `/api/rpc` and `/api/mcp` prefixes JSON-RPC,
//! OpenRPC (with the prefix in `servers[0].url`) and MCP answer.

use e2e_tests::post_json;
use e2e_tests::raw_mcp::RawMcp;
use rpc::{Environment, HostPolicy};
use serde_json::{Value, json};
use tokio::sync::oneshot;

struct AxumServer {
    base: String,
    _shutdown: oneshot::Sender<()>,
}

async fn start() -> AxumServer {
    let app = axum_mount::app(Environment::Dev, HostPolicy::localhost()).expect("the app builds");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = rx.await;
            })
            .await;
    });
    AxumServer { base: format!("http://{addr}"), _shutdown: tx }
}

async fn get_json(url: &str) -> (u16, Value) {
    let response = reqwest::get(url).await.expect("GET sent");
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

#[tokio::test]
async fn the_application_keeps_its_routes_and_state() {
    let server = start().await;
    let (status, first) = get_json(&format!("{}/", server.base)).await;
    assert_eq!(status, 200);
    assert_eq!(first["hits"], 1, "{first}");
    assert_eq!(get_json(&format!("{}/health", server.base)).await, (200, Value::String("ok".into())));
    let (_, third) = get_json(&format!("{}/", server.base)).await;
    assert_eq!(third["hits"], 3, "the state is shared by the app's own routes: {third}");
}

#[tokio::test]
async fn json_rpc_and_openrpc_under_the_prefix() {
    let server = start().await;
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":7}}"#;
    let (status, reply) = post_json(&format!("{}/api/rpc", server.base), call).await;
    assert_eq!(status, 200);
    assert_eq!(reply, json!({"jsonrpc": "2.0", "id": 1, "result": {"id": 7, "name": "n7"}}));
    let (_, v2) =
        post_json(&format!("{}/api/rpc/v2", server.base), r#"{"jsonrpc":"2.0","id":2,"method":"Catalog.count"}"#).await;
    assert_eq!(v2["result"], 100, "{v2}");

    for (path, version) in [("/api/rpc", "v1"), ("/api/rpc/v2", "v2")] {
        let (status, doc) = get_json(&format!("{}{path}", server.base)).await;
        assert_eq!(status, 200, "{doc}");
        assert_eq!(doc["servers"][0]["url"], format!("{}{path}", server.base), "the mount prefix is kept ({version})");
        assert_eq!(doc["info"]["x-api-version"], version);
    }
    let (status, _) = get_json(&format!("{}/api/rpc/v9", server.base)).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn mcp_under_the_prefix() {
    let server = start().await;
    let mut client = RawMcp::new(format!("{}/api/mcp/v1", server.base));
    let reply = client.initialize("2025-11-25").await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json["result"]["protocolVersion"], "2025-11-25");
    let list = client.post(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    let names: Vec<&str> =
        list.json["result"]["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"Catalog.get") && names.contains(&"ping"), "{names:?}");
    let call = client.call("Catalog.get", json!({"id": 9})).await;
    assert_eq!(call["result"]["structuredContent"], json!({"result": {"id": 9, "name": "n9"}}), "{call}");

    let mut v2 = RawMcp::new(format!("{}/api/mcp/v2", server.base));
    v2.initialize("2025-11-25").await;
    assert_eq!(v2.call("Catalog.count", json!({})).await["result"]["structuredContent"], json!({"result": 100}));
}
