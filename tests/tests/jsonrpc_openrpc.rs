//! The OpenRPC 1.3.2 documents served by `GET /rpc` and `GET /rpc/v{N}`:
//! info (license, contact), servers (with their extensions), the sorted
//! method list, parameter and result schemas, tags, errors (from the error
//! types, in `components.errors`), shared `components.schemas` (with the
//! recursive `Category`), `?info`, the whole documents against golden files
//! (`tests/golden/openrpc.v{N}.json`; regenerate with `UPDATE_GOLDEN=1`),
//! and 404 for a version that does not exist.

use crate::jsonrpc_common;

use e2e_tests::TestServer;
use jsonrpc_common::expect_error;
use rpc::Environment;
use serde_json::{Value, json};
use std::path::Path;

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
            let (kind, name) = r
                .strip_prefix("#/components/")
                .and_then(|rest| rest.split_once('/'))
                .unwrap_or_else(|| panic!("{path}: references point into components: {r}"));
            assert!(["schemas", "errors"].contains(&kind), "{path}: {r}");
            assert!(doc["components"][kind].get(name).is_some(), "{path}: {r} resolves");
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

/// The object a `{"$ref": "#/components/errors/..."}` names.
fn resolve<'a>(doc: &'a Value, object: &'a Value) -> &'a Value {
    match object["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/errors/")) {
        Some(key) => &doc["components"]["errors"][key],
        None => object,
    }
}

/// The `(code, message)` of each error a method lists.
fn errors_of(doc: &Value, name: &str) -> Vec<(i64, String)> {
    let errors = method(doc, name).get("errors").and_then(Value::as_array).cloned().unwrap_or_default();
    errors
        .iter()
        .map(|e| {
            let e = resolve(doc, e);
            let code = e["code"].as_i64().unwrap_or_else(|| panic!("{name}: an error has a code: {e}"));
            (code, e["message"].as_str().unwrap_or_default().to_owned())
        })
        .collect()
}

#[tokio::test]
async fn errors_come_from_the_methods_error_type() {
    let server = catalog().await;
    let doc = document(&server, "/rpc").await;
    let catalog_errors = [
        (404, "No product has this id."),
        (4041, "No subscription has this id."),
        (4042, "No product has this name."),
        (429, "The catalog keeps no more subscriptions."),
    ];
    let with = |framework: &[(i64, &str)]| -> Vec<(i64, String)> {
        framework.iter().chain(&catalog_errors).map(|(c, m)| (*c, (*m).to_owned())).collect()
    };
    assert_eq!(errors_of(&doc, "Catalog.get"), with(&[(-32602, "Invalid params")]));
    assert_eq!(
        errors_of(&doc, "Catalog.rename"),
        with(&[(-32602, "Invalid params"), (-32400, "Method is locked"), (-32403, "Insufficient scope")])
    );
    // No parameters, a plain result: nothing to list.
    assert!(method(&doc, "Catalog.categories").get("errors").is_none());
    // A plain result with parameters: only the framework's -32602.
    assert_eq!(errors_of(&doc, "Catalog.search"), [(-32602, "Invalid params".to_owned())]);
    // Shared: one component per error, referenced from every method.
    assert_eq!(method(&doc, "Catalog.get")["errors"][1], json!({"$ref": "#/components/errors/CatalogError.NotFound"}));
    let not_found = &doc["components"]["errors"]["CatalogError.NotFound"];
    assert_eq!(not_found["x-data-schema"]["properties"]["extra"]["required"], json!(["id"]));
    assert!(doc["components"]["errors"]["CatalogError.TooManySubscriptions"].get("x-data-schema").is_none());

    // The data schema describes what the error's `data` is, in every environment.
    for env in [Environment::Prod, Environment::Dev] {
        let server = TestServer::catalog(env).await;
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "Catalog.get", "params": {"id": 999}});
        let reply: Value = reqwest::Client::new()
            .post(server.url("/rpc"))
            .json(&body)
            .send()
            .await
            .expect("POST sent")
            .json()
            .await
            .expect("a JSON reply");
        assert_eq!(reply["error"]["code"], 404, "{reply}");
        let validator = jsonschema::validator_for(&not_found["x-data-schema"]).expect("the data schema compiles");
        assert!(validator.is_valid(&reply["error"]["data"]), "{env:?}: {reply}");
    }
}

#[tokio::test]
async fn tags_name_the_service() {
    let server = catalog().await;
    let doc = document(&server, "/rpc").await;
    let catalog_tag =
        json!([{"name": "Catalog", "description": "Products: search, details, renames, and restock notices."}]);
    assert_eq!(method(&doc, "Catalog.get")["tags"], catalog_tag);
    // Another impl block of the same service, without a doc comment of its own.
    assert_eq!(method(&doc, "Catalog.review")["tags"], catalog_tag);
    // An empty alias: the type's name.
    assert_eq!(method(&doc, "ping")["tags"], json!([{"name": "Pinger", "description": "Is the server there?"}]));
    // Version 2 describes the service by its own block, for the inherited methods too.
    let v2 = document(&server, "/rpc/v2").await;
    let v2_tag = json!([{"name": "Catalog", "description": "Products, version 2: paged search and a count."}]);
    assert_eq!(method(&v2, "Catalog.count")["tags"], v2_tag);
    assert_eq!(method(&v2, "Catalog.get")["tags"], v2_tag);
}

#[tokio::test]
async fn license_contact_and_server_extensions() {
    let server = catalog().await;
    let doc = document(&server, "/rpc/v2").await;
    assert_eq!(doc["info"]["license"], json!({"name": "MIT OR Apache-2.0"}));
    assert_eq!(
        doc["info"]["contact"],
        json!({"name": "Catalog team", "url": "https://example.com/catalog", "email": "catalog@example.com"})
    );
    let url = server.url("/rpc/v2");
    let expected = json!({
        "name": "v2",
        "url": url,
        "x-environment": "dev",
        "x-transports": {"http": {"method": "POST", "url": url}},
        "x-documentation": {
            "postman": format!("{url}/postman"),
            "json-rpc": "https://www.jsonrpc.org/specification",
            "openrpc": "https://spec.open-rpc.org/"
        }
    });
    assert_eq!(doc["servers"], json!([expected]));
    // The Postman link works.
    let (status, collection) = get(&server, "/rpc/v2/postman").await;
    assert_eq!(status, 200);
    assert_eq!(collection["info"]["name"], "Catalog API v2");
}

#[tokio::test]
async fn info_query_gives_the_header_only() {
    let server = catalog().await;
    for path in ["/rpc", "/rpc/v2"] {
        let full = document(&server, path).await;
        let header = document(&server, &format!("{path}?info")).await;
        assert!(header.get("methods").is_none() && header.get("components").is_none(), "{path}: {header}");
        assert_eq!(header["info"], full["info"], "{path}");
        assert_eq!(header["servers"], full["servers"], "{path}");
        assert_eq!(header["openrpc"], json!("1.3.2"));
        // Other queries leave the document whole.
        assert_eq!(document(&server, &format!("{path}?information")).await, full, "{path}");
    }
}

#[tokio::test]
async fn whole_documents_match_the_golden_files() {
    let server = catalog().await;
    for version in [1, 2] {
        let doc = document(&server, &format!("/rpc/v{version}")).await;
        let text = serde_json::to_string_pretty(&doc).expect("a document serialises");
        // The server's ephemeral port, and the package version, are not part of the comparison.
        let text = text.replace(&server.base, "http://127.0.0.1:PORT");
        let text = text.replace(&format!("\"{}\"", doc["info"]["version"].as_str().unwrap_or("")), "\"VERSION\"");
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden").join(format!("openrpc.v{version}.json"));
        if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
            std::fs::write(&path, text + "\n").unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
            continue;
        }
        let golden = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("read {} ({e}); run with UPDATE_GOLDEN=1 to create it", path.display()));
        let golden: Value = serde_json::from_str(&golden).expect("the golden file is JSON");
        let actual: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(
            golden, actual,
            "openrpc.v{version}.json differs; run with UPDATE_GOLDEN=1 if the change is intended"
        );
    }
}
