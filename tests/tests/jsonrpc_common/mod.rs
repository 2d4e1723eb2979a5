//! Helpers shared by the `jsonrpc_*` black-box tests: building requests,
//! posting them over HTTP, picking responses apart, and checking catalog
//! results against their methods' output schemas.
//!
//! Each test file includes this module with `mod jsonrpc_common;`, so not
//! every helper is used by every file.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::LazyLock;

use e2e_tests::{TestServer, post_json};
use rpc::{Environment, Registry};
use serde_json::{Value, json};

/// The path of API version `version` below the catalog's `/rpc` mount.
pub fn rpc_path(version: u32) -> String {
    if version == 1 { "/rpc".to_owned() } else { format!("/rpc/v{version}") }
}

/// A request object `{"jsonrpc":"2.0","method":..,"params":..,"id":..}`;
/// `params` is left out when it is `Value::Null`.
pub fn request(method: &str, params: Value, id: Value) -> Value {
    let mut req = json!({"jsonrpc": "2.0", "method": method, "id": id});
    if !params.is_null() {
        req["params"] = params;
    }
    req
}

/// A notification (no `id`); `params` is left out when it is `Value::Null`.
pub fn notification(method: &str, params: Value) -> Value {
    let mut req = json!({"jsonrpc": "2.0", "method": method});
    if !params.is_null() {
        req["params"] = params;
    }
    req
}

/// POSTs `body` and returns the status, the headers and the raw body text.
pub async fn post_raw(url: &str, body: impl Into<reqwest::Body>) -> (u16, reqwest::header::HeaderMap, String) {
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("request sent");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("response body read");
    (status, headers, text)
}

/// POSTs one JSON value, expects HTTP 200 and returns the parsed body.
pub async fn post_ok(url: &str, body: &Value) -> Value {
    let (status, response) = post_json(url, &body.to_string()).await;
    assert_eq!(status, 200, "HTTP status for {body}: {response}");
    response
}

/// Sends one request with id 1 and returns the whole response object,
/// after checking its envelope (`jsonrpc`, `id`, exactly one of `result`/`error`).
pub async fn call(url: &str, method: &str, params: Value) -> Value {
    let response = post_ok(url, &request(method, params, json!(1))).await;
    assert_envelope(&response);
    assert_eq!(response["id"], json!(1), "id echoed: {response}");
    response
}

/// Sends one request and returns its `result`; fails if it is an error.
pub async fn call_result(url: &str, method: &str, params: Value) -> Value {
    let response = call(url, method, params).await;
    match response.get("result") {
        Some(result) => result.clone(),
        None => panic!("{method} failed: {response}"),
    }
}

/// Sends one request and returns its `error` object; fails if it succeeded.
pub async fn call_error(url: &str, method: &str, params: Value) -> Value {
    let response = call(url, method, params).await;
    match response.get("error") {
        Some(error) => error.clone(),
        None => panic!("{method} unexpectedly succeeded: {response}"),
    }
}

/// Checks the members every response object must have.
pub fn assert_envelope(response: &Value) {
    let object = response.as_object().unwrap_or_else(|| panic!("a response is an object: {response}"));
    assert_eq!(object.get("jsonrpc"), Some(&json!("2.0")), "jsonrpc member: {response}");
    assert!(object.contains_key("id"), "a response always has an id: {response}");
    assert!(
        object.contains_key("result") ^ object.contains_key("error"),
        "exactly one of result and error: {response}"
    );
    if let Some(error) = object.get("error") {
        assert!(error["code"].is_i64(), "error code is an integer: {response}");
        assert!(error["message"].is_string(), "error message is a string: {response}");
    }
}

/// Checks `response` is an error response with `code` and returns the error object.
pub fn expect_error(response: &Value, code: i64) -> &Value {
    assert_envelope(response);
    let error = response.get("error").unwrap_or_else(|| panic!("expected error {code}: {response}"));
    assert_eq!(error["code"], json!(code), "error code: {response}");
    error
}

/// The responses of a batch, keyed by their `id` as JSON text (`"1"`, `"\"a\""`, `"null"`).
/// Fails when the body is not an array or two responses share a non-null id.
pub fn by_id(batch: &Value) -> BTreeMap<String, Vec<Value>> {
    let items = batch.as_array().unwrap_or_else(|| panic!("a batch response is an array: {batch}"));
    let mut map: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for item in items {
        assert_envelope(item);
        let key = item["id"].to_string();
        let entry = map.entry(key.clone()).or_default();
        assert!(key == "null" || entry.is_empty(), "duplicate response id {key}: {batch}");
        entry.push(item.clone());
    }
    map
}

/// The catalog's registry, built once per test binary, for schema look-ups.
pub static CATALOG_REGISTRY: LazyLock<Registry> =
    LazyLock::new(|| catalog::registry().expect("the catalog registry builds"));

/// Validates `result` (wrapped as `{"result": result}`) against the output
/// schema of catalog method `method` in `version`.
pub fn assert_valid_result(version: u32, method: &str, result: &Value) {
    let registry_method = CATALOG_REGISTRY
        .method(version, method, None)
        .unwrap_or_else(|| panic!("catalog method {method} exists in v{version}"));
    let Some(schema) = &registry_method.schemas().output else {
        panic!("catalog method {method} has no output schema");
    };
    let validator = jsonschema::validator_for(schema).expect("output schema compiles");
    let wrapped = json!({"result": result});
    let errors: Vec<String> = validator.iter_errors(&wrapped).map(|e| e.to_string()).collect();
    assert!(
        errors.is_empty(),
        "result of {method} (v{version}) does not match its output schema: {errors:?}\n{result}"
    );
}

/// The catalog example, started in the test's process.
pub struct CatalogServer {
    /// The running server.
    pub server: TestServer,
}

impl CatalogServer {
    /// Starts the catalog in environment `env`.
    pub async fn start(env: Environment) -> CatalogServer {
        CatalogServer { server: TestServer::catalog(env).await }
    }

    /// The URL of API version `version` (`/rpc` for version 1).
    pub fn url(&self, version: u32) -> String {
        self.server.url(&rpc_path(version))
    }

    /// Calls `method` and returns its result, checked against the method's output schema.
    pub async fn result(&self, version: u32, method: &str, params: Value) -> Value {
        let result = call_result(&self.url(version), method, params).await;
        assert_valid_result(version, method, &result);
        result
    }

    /// Calls `method` and returns the error object, checking its code.
    pub async fn error(&self, version: u32, method: &str, params: Value, code: i64) -> Value {
        let error = call_error(&self.url(version), method, params).await;
        assert_eq!(error["code"], json!(code), "error code of {method}: {error}");
        error
    }
}

/// Where an error's `data.location` points: checks it is `file:line:col`
/// in the file at `path` (as `file!()` spells it) and returns the line's
/// number, its text in `source` (that file's text) and the column, from 1.
pub fn located<'s>(location: &str, path: &str, source: &'s str) -> (usize, &'s str, usize) {
    let rest = location
        .strip_prefix(path)
        .and_then(|r| r.strip_prefix(':'))
        .unwrap_or_else(|| panic!("location points into {path}: {location}"));
    let (line, column) = rest.split_once(':').unwrap_or_else(|| panic!("location is file:line:col: {location}"));
    let line: usize = line.parse().unwrap_or_else(|e| panic!("line number in {location}: {e}"));
    let column: usize = column.parse().unwrap_or_else(|e| panic!("column number in {location}: {e}"));
    assert!(line >= 1 && column >= 1, "{location}");
    let text = source.lines().nth(line - 1).unwrap_or_else(|| panic!("line {line} exists in {path}"));
    (line, text, column)
}

/// The ids of a list of products.
pub fn ids(products: &Value) -> Vec<u64> {
    products
        .as_array()
        .unwrap_or_else(|| panic!("a product list is an array: {products}"))
        .iter()
        .map(|p| p["id"].as_u64().unwrap_or_else(|| panic!("a product has an integer id: {p}")))
        .collect()
}

/// Every `$ref` anywhere in `value`.
pub fn refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                out.push(r.clone());
            }
            map.values().for_each(|v| refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}
