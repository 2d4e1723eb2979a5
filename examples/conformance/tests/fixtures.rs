//! The fixture tools over real HTTP, as the conformance suite sees them:
//! initialize, tools/list, and one tools/call per tool.

use conformance_server::services::{ERROR_MESSAGE, RED_PIXEL_PNG, SIMPLE_TEXT};
use rpc::Environment;
use serde_json::{Value, json};

struct Server {
    mcp: String,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

async fn start() -> Server {
    let app = conformance_server::app(Environment::Dev).expect("registry builds");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = rpc::server::serve(listener, app, async {
            let _ = rx.await;
        })
        .await;
    });
    Server { mcp: format!("http://{addr}/mcp"), shutdown: Some(tx) }
}

/// A session: `initialize` done, requests carry the session id.
struct Session {
    url: String,
    id: String,
    client: reqwest::Client,
}

impl Session {
    async fn open(url: &str) -> Session {
        let client = reqwest::Client::new();
        let response = client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "fixtures-test", "version": "1.0.0"}}})
                .to_string(),
            )
            .send()
            .await
            .expect("initialize sent");
        assert_eq!(response.status(), 200);
        let id = response.headers()["mcp-session-id"].to_str().expect("ascii").to_owned();
        let body: Value = response.json().await.expect("json");
        assert_eq!(body["result"]["protocolVersion"], "2025-11-25");
        assert_eq!(body["result"]["capabilities"]["tools"], json!({"listChanged": false}));
        assert_eq!(body["result"]["serverInfo"]["name"], "conformance-server");
        Session { url: url.to_owned(), id, client }
    }

    async fn request(&self, method: &str, params: Value) -> Value {
        let body = self.request_raw(method, params).await;
        assert!(body.get("error").is_none(), "{method} failed: {body}");
        body["result"].clone()
    }

    /// The whole response, an error included.
    async fn request_raw(&self, method: &str, params: Value) -> Value {
        let response = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", "2025-11-25")
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string())
            .send()
            .await
            .expect("request sent");
        assert_eq!(response.status(), 200, "{method}");
        response.json().await.expect("json")
    }

    async fn call(&self, tool: &str) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": {}})).await
    }
}

#[tokio::test]
async fn lists_every_fixture_with_a_description() {
    let server = start().await;
    let session = Session::open(&server.mcp).await;
    let listed = session.request("tools/list", json!({})).await;
    assert!(listed.get("nextCursor").is_none());
    let tools = listed["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().expect("name")).collect();
    assert_eq!(
        names,
        [
            "confirm_delete",
            "failing_job",
            "greet",
            "json_schema_2020_12_tool",
            "multi_input",
            "protocol_error_job",
            "slow_compute",
            "test_audio_content",
            "test_elicitation",
            "test_elicitation_sep1034_defaults",
            "test_elicitation_sep1330_enums",
            "test_embedded_resource",
            "test_error_handling",
            "test_image_content",
            "test_input_required_result_capabilities",
            "test_input_required_result_elicitation",
            "test_input_required_result_list_roots",
            "test_input_required_result_multi_round",
            "test_input_required_result_multiple_inputs",
            "test_input_required_result_request_state",
            "test_input_required_result_sampling",
            "test_input_required_result_tampered_state",
            "test_logging_tool",
            "test_mirrored_header",
            "test_missing_capability",
            "test_multiple_content_types",
            "test_sampling",
            "test_simple_text",
            "test_streaming_elicitation",
            "test_tool_with_logging",
            "test_tool_with_progress",
            "test_tool_with_task",
            "test_trigger_prompt_change",
            "test_trigger_tool_change",
        ]
    );
    for tool in tools {
        assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()), "{tool}");
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool.get("outputSchema").is_none(), "content tools have no outputSchema: {tool}");
        let changes_state = ["test_trigger_tool_change", "test_trigger_prompt_change", "confirm_delete"]
            .contains(&tool["name"].as_str().unwrap_or_default());
        assert_eq!(tool["annotations"]["readOnlyHint"].as_bool(), (!changes_state).then_some(true), "{tool}");
        assert_eq!(tool["annotations"]["openWorldHint"], false, "{tool}");
    }
}

#[tokio::test]
async fn a_hand_written_schema_is_listed_as_written_and_enforced() {
    let server = start().await;
    let session = Session::open(&server.mcp).await;
    let listed = session.request("tools/list", json!({})).await;
    let tool =
        listed["tools"].as_array().expect("tools").iter().find(|t| t["name"] == "json_schema_2020_12_tool").cloned();
    let written: Value =
        serde_json::from_str(include_str!("../schemas/json_schema_2020_12.json")).expect("the fixture schema");
    assert_eq!(tool.expect("listed")["inputSchema"], written, "returned unmodified");

    let call = |arguments: Value| {
        session.request("tools/call", json!({"name": "json_schema_2020_12_tool", "arguments": arguments}))
    };
    let ok = call(json!({"name": "Ann", "contactMethod": "phone", "phone": "1", "address": {"city": "Kyiv"}})).await;
    assert_eq!(ok["content"][0]["text"], "Ann in Kyiv, by phone 1", "{ok}");
    // `if`/`then`: phone chosen, no phone; `additionalProperties: false`; `$ref` into `$defs`.
    for wrong in [
        json!({"contactMethod": "phone", "email": "a@b"}),
        json!({"email": "a@b", "fax": "2"}),
        json!({"email": "a@b", "address": {"city": 5}}),
        json!({"name": "no contact at all"}),
    ] {
        let refused =
            session.request_raw("tools/call", json!({"name": "json_schema_2020_12_tool", "arguments": wrong})).await;
        assert_eq!(refused["error"]["code"], -32602, "{wrong}: {refused}");
    }
}

#[tokio::test]
async fn content_fixtures() {
    let server = start().await;
    let session = Session::open(&server.mcp).await;

    let text = session.call("test_simple_text").await;
    assert_eq!(text, json!({"content": [{"type": "text", "text": SIMPLE_TEXT}], "isError": false}));

    let image = session.call("test_image_content").await;
    assert_eq!(image["content"], json!([{"type": "image", "data": RED_PIXEL_PNG, "mimeType": "image/png"}]));

    let audio = session.call("test_audio_content").await;
    assert_eq!(audio["content"][0]["type"], "audio");
    assert_eq!(audio["content"][0]["mimeType"], "audio/wav");
    // base64 of "RIFF"
    assert!(audio["content"][0]["data"].as_str().is_some_and(|d| d.starts_with("UklGR")));

    let embedded = session.call("test_embedded_resource").await;
    assert_eq!(
        embedded["content"],
        json!([{"type": "resource", "resource": {
            "uri": "test://embedded-resource", "mimeType": "text/plain",
            "text": "This is an embedded resource content."}}])
    );

    let mixed = session.call("test_multiple_content_types").await;
    let types: Vec<&str> = mixed["content"].as_array().unwrap().iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["text", "image", "resource"]);
    assert_eq!(mixed["content"][2]["resource"]["uri"], "test://mixed-content-resource");
    assert_eq!(mixed["content"][2]["resource"]["mimeType"], "application/json");
    let data: Value = serde_json::from_str(mixed["content"][2]["resource"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(data, json!({"test": "data", "value": 123}));
}

#[tokio::test]
async fn error_fixture_is_a_tool_error() {
    let server = start().await;
    let session = Session::open(&server.mcp).await;
    let result = session.call("test_error_handling").await;
    assert_eq!(result["isError"], true);
    let text = result["content"][0]["text"].as_str().expect("error text");
    let error: Value = serde_json::from_str(text).expect("the text is the RPC error object");
    assert_eq!(error["code"], 1);
    assert_eq!(error["message"], ERROR_MESSAGE);
}

#[tokio::test]
async fn served_at_mcp_and_mcp_v1_for_loopback_hosts_only() {
    let server = start().await;
    Session::open(&format!("{}/v1", server.mcp)).await;
    let refused = reqwest::Client::new()
        .post(&server.mcp)
        .header("content-type", "application/json")
        .header("host", "evil.example.com")
        .header("origin", "http://evil.example.com")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#)
        .send()
        .await
        .expect("sent");
    assert_eq!(refused.status(), 403);
}
