//! Every tool schema the running catalog publishes passes a strict JSON
//! Schema 2020-12 check (no unknown keyword or format, refs resolve), at
//! every API version and protocol revision; and the check itself catches
//! what strict clients complain about.

use e2e_tests::TestServer;
use e2e_tests::raw_mcp::RawMcp;
use e2e_tests::strict_schema::{problems, tool_problems};
use rpc::Environment;
use serde_json::{Value, json};

/// Every tool of `/mcp/v{version}` at `revision`, across all pages.
async fn all_tools(server: &TestServer, version: u32, revision: &str) -> Vec<Value> {
    let mut client = RawMcp::new(server.url(&format!("/mcp/v{version}")));
    client.initialize(revision).await;
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor.as_ref().map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let reply = client.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params})).await;
        let result = &reply.json["result"];
        tools.extend(result["tools"].as_array().cloned().unwrap_or_default());
        match result["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    tools
}

#[tokio::test]
async fn every_catalog_tool_schema_is_strict_json_schema() {
    let server = TestServer::catalog(Environment::Prod).await;
    for version in [1, 2] {
        for revision in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
            let tools = all_tools(&server, version, revision).await;
            assert!(tools.len() >= 5, "v{version} at {revision} lists the catalog's tools: {tools:?}");
            let failing = tool_problems(&tools, &[]);
            assert!(failing.is_empty(), "v{version} at {revision}: {}", Value::Object(failing));
            let with_output = tools.iter().filter(|t| t.get("outputSchema").is_some()).count();
            assert_eq!(with_output > 0, revision >= "2025-06-18", "output schemas from 2025-06-18 ({revision})");
        }
    }
}

#[test]
fn integer_ranges_survive_as_bounds() {
    let registry = catalog::registry().expect("registry");
    let get = registry.method(1, "Catalog.get", None).expect("Catalog.get");
    assert_eq!(
        get.schemas().input["properties"]["id"],
        json!({
            "type": "integer",
            "minimum": 1,
            "maximum": u64::MAX,
            "description": "Product id"
        })
    );
    let list = registry.method(1, "Catalog.list", None).expect("Catalog.list");
    assert_eq!(list.schemas().input["properties"]["page"]["maximum"], json!(u32::MAX));
}

#[test]
fn the_check_catches_what_strict_clients_reject() {
    let bad = json!({
        "type": "object",
        "properties": {
            "n": {"type": "integer", "format": "uint64"},
            "when": {"type": "string", "format": "date-time"},
            "x": {"type": "string", "x-unknown": true},
            "r": {"$ref": "#/$defs/Missing"}
        },
        "required": "n"
    });
    let found = problems(&bad, &[]);
    let text = found.join("\n");
    assert!(text.contains("/properties/n/format: `\"uint64\"` is not a format"), "{text}");
    assert!(!text.contains("date-time"), "standard formats pass: {text}");
    assert!(text.contains("/properties/x/x-unknown: unknown keyword"), "{text}");
    assert!(text.contains("/properties/r/$ref: `\"#/$defs/Missing\"` does not resolve"), "{text}");
    assert!(text.contains("not a valid JSON Schema"), "`required` must be an array: {text}");
    assert!(problems(&bad["properties"]["x"], &["x-unknown"]).is_empty(), "allowed extensions pass");
}

mod decorated {
    use mcp::mcp_tool;

    rpc::api_group!(pub struct Decorated => "decorated", mcp = true);

    /// A tool with the metadata an annotation gives.
    pub struct Weather;

    #[rpc::service(alias = "weather", groups(Decorated))]
    impl Weather {
        /// Today's temperature.
        #[mcp_tool(
            icon = "https://example.com/sun.png",
            icon = "data:image/svg+xml;base64,PHN2Zy8+",
            meta = r#"{"com.example/owner": "forecasts", "com.example/tier": 2}"#,
            output_schema = r#"{"type": "number", "minimum": -90, "maximum": 60, "description": "degrees Celsius"}"#
        )]
        pub fn today(&self) -> f64 {
            21.5
        }
    }
}

#[tokio::test]
async fn icons_meta_and_a_written_output_schema_from_the_annotation() {
    let registry = rpc::Registry::builder().service(decorated::Weather).build().expect("registry");
    let executor = rpc::Executor::new(registry, Environment::Dev);
    let mut owner = serde_json::Map::new();
    owner.insert("com.example/owner".into(), json!("on-call"));
    let endpoint =
        mcp::McpEndpoint::builder::<decorated::Decorated>(executor).tool_meta("weather.today", owner).build();
    let server = TestServer::start(rpc::server::Router::new().nest("/mcp", endpoint)).await;
    let tools = all_tools(&server, 1, "2025-11-25").await;
    let tool = &tools[0];
    assert_eq!(
        tool["icons"],
        json!([{"src": "https://example.com/sun.png", "mimeType": "image/png"},
               {"src": "data:image/svg+xml;base64,PHN2Zy8+", "mimeType": "image/svg+xml"}])
    );
    assert_eq!(tool["_meta"], json!({"com.example/owner": "on-call", "com.example/tier": 2}), "the endpoint's wins");
    assert_eq!(
        tool["outputSchema"]["properties"]["result"],
        json!({"type": "number", "minimum": -90, "maximum": 60, "description": "degrees Celsius"})
    );
    let problems = tool_problems(&tools, &[]);
    assert!(problems.is_empty(), "{problems:?}");
    // Older revisions get what they define.
    let old = &all_tools(&server, 1, "2025-06-18").await[0];
    assert!(old.get("icons").is_none() && old.get("_meta").is_some());
    assert!(all_tools(&server, 1, "2025-03-26").await[0].get("_meta").is_none());
}
