//! The OpenRPC 1.3.2 documents served by `GET /rpc` and `GET /rpc/v{N}`:
//! info, servers, the sorted method list, parameter and result schemas,
//! shared `components.schemas` (with the recursive `Category`), and 404 for
//! a version that does not exist.

use crate::jsonrpc_common;

use e2e_tests::TestServer;
use jsonrpc_common::expect_error;
use rpc::Environment;
use serde_json::{Value, json};

async fn catalog() -> TestServer {
    TestServer::catalog(Environment::Dev).await
}

/// GETs `path` and returns the status and the JSON body.
async fn get(server: &TestServer, path: &str) -> (u16, Value) {
    get_with(reqwest::Client::new().get(server.url(path))).await
}

async fn get_with(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.expect("GET sent");
    let status = response.status().as_u16();
    let body = response.json().await.expect("a JSON body");
    (status, body)
}

/// GETs the OpenRPC document at `path`, expecting 200.
async fn document(server: &TestServer, path: &str) -> Value {
    let (status, doc) = get(server, path).await;
    assert_eq!(status, 200, "GET {path}: {doc}");
    doc
}

fn method<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["methods"]
        .as_array()
        .and_then(|methods| methods.iter().find(|m| m["name"] == name))
        .unwrap_or_else(|| panic!("method {name} is listed"))
}

fn method_names(doc: &Value) -> Vec<String> {
    doc["methods"]
        .as_array()
        .unwrap_or_else(|| panic!("methods is an array: {doc}"))
        .iter()
        .map(|m| m["name"].as_str().unwrap_or_else(|| panic!("a method has a name: {m}")).to_owned())
        .collect()
}

#[tokio::test]
async fn document_header() {
    let server = catalog().await;
    let doc = document(&server, "/rpc").await;
    assert_eq!(doc["openrpc"], json!("1.3.2"));
    assert_eq!(doc["info"]["title"], json!("Catalog API"));
    assert!(doc["info"]["version"].as_str().is_some_and(|v| !v.is_empty()), "{}", doc["info"]);
    assert_eq!(doc["info"]["x-versions"], json!(["v1", "v2"]));
    assert_eq!(doc["info"]["x-api-version"], json!("v1"));
    let url = doc["servers"][0]["url"].as_str().unwrap_or_else(|| panic!("servers[0].url: {doc}"));
    assert!(url.ends_with("/rpc"), "{url}");
    assert_eq!(url, server.url("/rpc"));
}

/// `X-Forwarded-Proto` is whatever the client says: it never changes the
/// published URL (a public base URL is configured instead, see
/// `security_rebinding::nothing_is_reflected`).
#[tokio::test]
async fn server_url_ignores_forwarded_proto() {
    let server = catalog().await;
    let request = reqwest::Client::new().get(server.url("/rpc/v2")).header("x-forwarded-proto", "https");
    let (status, doc) = get_with(request).await;
    assert_eq!(status, 200);
    assert_eq!(doc["servers"][0]["url"], json!(format!("http://{}/rpc/v2", server.addr)));
}

#[tokio::test]
async fn methods_are_sorted_by_name() {
    let server = catalog().await;
    let doc = document(&server, "/rpc").await;
    let names = method_names(&doc);
    assert_eq!(
        names,
        [
            "Activity.summary",
            "Catalog.categories",
            "Catalog.complete_id",
            "Catalog.complete_name",
            "Catalog.get",
            "Catalog.list",
            "Catalog.product",
            "Catalog.reindex",
            "Catalog.rename",
            "Catalog.review",
            "Catalog.search",
            "Catalog.stats",
            "Catalog.subscribe",
            "Catalog.unsubscribe",
            "Catalog.unsubscribe_all",
            "ping"
        ],
        "every v1 method, sorted"
    );
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
}

#[tokio::test]
async fn ping_method_object() {
    let server = catalog().await;
    let doc = document(&server, "/rpc").await;
    let ping = method(&doc, "ping");
    assert_eq!(ping["summary"], json!("Ping."));
    assert!(ping.get("description").is_none(), "ping has only a summary: {ping}");
    assert_eq!(
        ping["params"],
        json!([{
            "name": "who",
            "description": "Who is pinging",
            "required": false,
            "schema": {"type": "string", "description": "Who is pinging", "default": "x"}
        }])
    );
    assert_eq!(ping["result"], json!({"name": "result", "schema": {"type": "string"}}));
    assert_eq!(ping["deprecated"], json!(false));
}

#[tokio::test]
async fn get_result_references_the_product_component() {
    let server = catalog().await;
    let doc = document(&server, "/rpc").await;
    let get = method(&doc, "Catalog.get");
    assert_eq!(get["result"]["schema"], json!({"$ref": "#/components/schemas/Product"}));
    assert_eq!(get["params"][0]["name"], json!("id"));
    assert_eq!(get["params"][0]["required"], json!(true));
    let list = method(&doc, "Catalog.list");
    assert_eq!(list["result"]["schema"]["items"], json!({"$ref": "#/components/schemas/Product"}));
}

#[tokio::test]
async fn components_hold_product_and_recursive_category() {
    let server = catalog().await;
    let doc = document(&server, "/rpc").await;
    let schemas = &doc["components"]["schemas"];
    let product = &schemas["Product"];
    assert_eq!(product["type"], json!("object"));
    assert_eq!(product["required"], json!(["id", "name"]));
    let category = &schemas["Category"];
    assert_eq!(category["properties"]["children"]["type"], json!("array"));
    assert_eq!(category["properties"]["children"]["items"], json!({"$ref": "#/components/schemas/Category"}));
    assert_eq!(
        method(&doc, "Catalog.categories")["result"]["schema"],
        json!({"$ref": "#/components/schemas/Category"})
    );
}

#[tokio::test]
async fn every_reference_resolves() {
    let server = catalog().await;
    for path in ["/rpc", "/rpc/v2"] {
        let doc = document(&server, path).await;
        let mut found = Vec::new();
        jsonrpc_common::refs(&doc, &mut found);
        assert!(!found.is_empty(), "{path}");
        for r in found {
            let name = r
                .strip_prefix("#/components/schemas/")
                .unwrap_or_else(|| panic!("{path}: references point into components.schemas: {r}"));
            assert!(doc["components"]["schemas"].get(name).is_some(), "{path}: {r} resolves");
        }
    }
}

#[tokio::test]
async fn version_2_document() {
    let server = catalog().await;
    let doc = document(&server, "/rpc/v2").await;
    assert_eq!(doc["info"]["x-api-version"], json!("v2"));
    assert_eq!(doc["info"]["x-versions"], json!(["v1", "v2"]));
    assert_eq!(doc["servers"][0]["url"], json!(server.url("/rpc/v2")));
    let names = method_names(&doc);
    assert!(names.iter().any(|n| n == "Catalog.count"), "{names:?}");
    assert!(!names.iter().any(|n| n == "Catalog.list"), "{names:?}");
    let search = method(&doc, "Catalog.search");
    let params: Vec<&Value> =
        search["params"].as_array().map(|p| p.iter().map(|p| &p["name"]).collect()).expect("params");
    assert_eq!(params, [&json!("query"), &json!("limit"), &json!("offset")]);
    assert!(
        doc["components"]["schemas"].get("SortOrder").is_none(),
        "only Catalog.list used SortOrder, and v2 removed it"
    );
}

#[tokio::test]
async fn unknown_version_is_404_with_a_json_rpc_error() {
    let server = catalog().await;
    for path in ["/rpc/v9", "/rpc/v0", "/rpc/v01", "/rpc/latest"] {
        let (status, body) = get(&server, path).await;
        assert_eq!(status, 404, "{path}");
        expect_error(&body, -32600);
        assert_eq!(body["id"], Value::Null, "{path}");
    }
}

#[tokio::test]
async fn head_gives_the_headers_only() {
    let server = catalog().await;
    let response = reqwest::Client::new().head(server.url("/rpc")).send().await.expect("HEAD sent");
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers().get("content-type").and_then(|v| v.to_str().ok()), Some("application/json"));
    assert_eq!(response.text().await.expect("body read"), "");
}

#[tokio::test]
async fn summary_is_the_first_paragraph_and_description_the_rest() {
    let server = catalog().await;
    let doc = document(&server, "/rpc").await;
    let get = method(&doc, "Catalog.get");
    assert_eq!(get["summary"], json!("Get one product by id."));
    assert_eq!(get["description"], json!("Fails with error 404 when there is no such product."));
    let search = method(&doc, "Catalog.search");
    assert_eq!(search["summary"], json!("Search products by name."));
    assert_eq!(
        search["description"],
        json!("Returns up to `limit` products whose name contains `query`, in id order.")
    );
}
