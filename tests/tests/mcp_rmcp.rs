//! The catalog's MCP endpoint driven by a real MCP client: rmcp (the
//! official Rust SDK) over Streamable HTTP. Initialize, list (every page),
//! call success and error, invalid arguments, unknown tool; every
//! `structuredContent` is validated against the tool's `outputSchema`.

use std::sync::Arc;

use e2e_tests::TestServer;
use mcp::McpEndpoint;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, Tool};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rpc::server::Router;
use rpc::{Environment, Executor};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

async fn connect(url: String) -> Client {
    ().serve(StreamableHttpClientTransport::from_uri(url)).await.expect("rmcp client initializes")
}

/// The catalog with `tools/list` pages of two tools.
async fn small_pages() -> TestServer {
    let executor = Executor::new(Arc::new(catalog::registry().expect("registry")), Environment::Test);
    let endpoint = McpEndpoint::builder::<catalog::Mcp>(executor).page_size(2).build();
    TestServer::start(Router::new().nest("/mcp", endpoint)).await
}

fn tool<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
    tools.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("tool {name} listed"))
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, got {other}"),
    }
}

/// The catalog's tools at version 1, in the order `tools/list` gives them.
pub(crate) const TOOLS: [&str; 11] = [
    "Catalog.categories",
    "Catalog.get",
    "Catalog.list",
    "Catalog.reindex",
    "Catalog.rename",
    "Catalog.search",
    "Catalog.stats",
    "Catalog.subscribe",
    "Catalog.unsubscribe",
    "Catalog.unsubscribe_all",
    "ping",
];

/// Validates `structured` against `tool`'s output schema with a JSON Schema validator.
pub(crate) fn assert_valid_structured(tool: &Tool, structured: &Value) {
    let schema = Value::Object((*tool.output_schema.clone().expect("tool has an outputSchema")).clone());
    let validator = jsonschema::validator_for(&schema).expect("outputSchema compiles");
    let errors: Vec<String> = validator.iter_errors(structured).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "structuredContent of {} violates its outputSchema: {errors:?}", tool.name);
}

#[tokio::test]
async fn initialize_reports_server_identity() {
    let server = TestServer::catalog(Environment::Dev).await;
    let client = connect(server.url("/mcp/v1")).await;
    let info = client.peer_info().expect("server info after initialize");
    assert_eq!(info.protocol_version.as_str(), "2025-11-25", "counter-offer for the client's newer version");
    let server_info = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(server_info.name, "catalog");
    assert_eq!(server_info.title.as_deref(), Some("Product catalog"));
    assert!(info.capabilities.tools.is_some(), "tools capability advertised");
    assert!(info.instructions.as_deref().is_some_and(|i| i.contains("Catalog.search")));
    client.cancel().await.expect("client closes");
}

#[tokio::test]
async fn lists_every_tool_across_pages() {
    let server = small_pages().await;
    let client = connect(server.url("/mcp/v1")).await;
    let first = client.list_tools(None).await.expect("first page");
    assert_eq!(first.tools.len(), 2);
    assert!(first.next_cursor.is_some(), "more pages follow");
    let tools = client.list_all_tools().await.expect("all pages");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, TOOLS, "deterministic order, admin-only Activity.summary excluded");
    let search = tool(&tools, "Catalog.search");
    let annotations = search.annotations.as_ref().expect("search has annotations");
    assert_eq!(annotations.read_only_hint, Some(true));
    assert_eq!(annotations.idempotent_hint, Some(true));
    assert_eq!(annotations.destructive_hint, None, "unset hints are left out");
    assert_eq!(annotations.open_world_hint, None);
    let ping = tool(&tools, "ping");
    assert_eq!(ping.description.as_deref(), Some("Ping."));
    assert_eq!(
        Value::Object((*ping.input_schema).clone()),
        json!({"type":"object","properties":{"who":{"type":"string","description":"Who is pinging","default":"x"}},"additionalProperties":false})
    );
    client.cancel().await.expect("client closes");
}

#[tokio::test]
async fn version_two_has_its_own_tools() {
    let server = TestServer::catalog(Environment::Dev).await;
    let client = connect(server.url("/mcp/v2")).await;
    let tools = client.list_all_tools().await.expect("tools of v2");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "Catalog.categories",
            "Catalog.count",
            "Catalog.get",
            "Catalog.reindex",
            "Catalog.rename",
            "Catalog.search",
            "Catalog.stats",
            "Catalog.subscribe",
            "Catalog.unsubscribe",
            "Catalog.unsubscribe_all",
            "ping"
        ]
    );
    let search = tool(&tools, "Catalog.search");
    assert!(search.input_schema.get("properties").and_then(|p| p.get("offset")).is_some(), "v2 search has offset");
    let result = client.call_tool(CallToolRequestParams::new("Catalog.count")).await.expect("Catalog.count runs");
    assert_eq!(result.structured_content, Some(json!({"result": 100})));
    client.cancel().await.expect("client closes");
}

#[tokio::test]
async fn call_success_has_text_and_valid_structured_content() {
    let server = TestServer::catalog(Environment::Dev).await;
    let client = connect(server.url("/mcp/v1")).await;
    let tools = client.list_all_tools().await.expect("tools");
    let calls = [
        ("Catalog.get", json!({"id": 7})),
        ("Catalog.search", json!({"query": "n1", "limit": 3})),
        ("Catalog.list", json!({"sort": "id_desc"})),
        ("Catalog.categories", json!({})),
        ("ping", json!({})),
    ];
    for (name, arguments) in calls {
        let result = client
            .call_tool(CallToolRequestParams::new(name).with_arguments(args(arguments)))
            .await
            .unwrap_or_else(|e| panic!("{name} call fails: {e}"));
        assert_eq!(result.is_error, Some(false), "{name} succeeds");
        let structured = result.structured_content.clone().expect("structuredContent present");
        assert_valid_structured(tool(&tools, name), &structured);
        let text = result.content[0].as_text().expect("first content block is text").text.clone();
        let text_json: Value = serde_json::from_str(&text).expect("text content is JSON");
        assert_eq!(text_json, structured["result"], "{name}: text mirrors structuredContent.result");
    }
    let get = client
        .call_tool(CallToolRequestParams::new("Catalog.get").with_arguments(args(json!({"id": 7}))))
        .await
        .expect("get");
    assert_eq!(get.structured_content, Some(json!({"result": {"id": 7, "name": "n7"}})));
    client.cancel().await.expect("client closes");
}

#[tokio::test]
async fn method_error_is_a_tool_error() {
    let server = TestServer::catalog(Environment::Prod).await;
    let client = connect(server.url("/mcp/v1")).await;
    let result = client
        .call_tool(CallToolRequestParams::new("Catalog.get").with_arguments(args(json!({"id": 999}))))
        .await
        .expect("a tool error is a result, not a protocol error");
    assert_eq!(result.is_error, Some(true));
    assert!(result.structured_content.is_none(), "no structuredContent on error");
    let text = result.content[0].as_text().expect("text block").text.clone();
    let error: Value = serde_json::from_str(&text).expect("the text is the RPC error object");
    assert_eq!(
        error,
        json!({"code": 404, "message": "product 999 not found", "data": {"exception": "catalog::services::CatalogError", "extra": {"id": 999}}}),
        "production data: error type and exposed extra only"
    );
    client.cancel().await.expect("client closes");
}

fn protocol_error_code(error: ServiceError) -> (i32, String, Option<Value>) {
    match error {
        ServiceError::McpError(e) => (e.code.0, e.message.to_string(), e.data),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

#[tokio::test]
async fn invalid_arguments_are_a_protocol_error() {
    let server = TestServer::catalog(Environment::Dev).await;
    let client = connect(server.url("/mcp/v1")).await;
    for arguments in [json!({}), json!({"id": "seven"}), json!({"id": 7, "extra": true}), json!({"id": -1})] {
        let error = client
            .call_tool(CallToolRequestParams::new("Catalog.get").with_arguments(args(arguments.clone())))
            .await
            .expect_err("invalid arguments are refused before the method runs");
        let (code, _, data) = protocol_error_code(error);
        assert_eq!(code, -32602, "for {arguments}");
        let extra = data.and_then(|d| d.get("extra").cloned()).expect("data lists the offending parameters");
        assert!(extra.is_object() && !extra.as_object().is_some_and(|m| m.is_empty()), "for {arguments}: {extra}");
    }
    client.cancel().await.expect("client closes");
}

#[tokio::test]
async fn unknown_and_unpublished_tools_are_a_protocol_error() {
    let server = TestServer::catalog(Environment::Dev).await;
    let client = connect(server.url("/mcp/v1")).await;
    for name in ["no.such.tool", "Activity.summary"] {
        let error = client.call_tool(CallToolRequestParams::new(name)).await.expect_err("not a tool");
        let (code, message, _) = protocol_error_code(error);
        assert_eq!(code, -32602);
        assert!(message.contains(name), "{message}");
    }
    client.cancel().await.expect("client closes");
}
