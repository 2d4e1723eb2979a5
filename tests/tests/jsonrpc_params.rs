//! Invalid parameters: unknown, missing, mistyped and out-of-range
//! parameters and too many positional ones all give `-32602`; `data.extra`
//! maps each offending parameter to its reasons, and the method never runs.

use crate::jsonrpc_common;

use jsonrpc_common::CatalogServer;
use rpc::Environment;
use serde_json::{Value, json};

async fn catalog() -> CatalogServer {
    CatalogServer::start(Environment::Dev).await
}

/// The `data.extra` of a `-32602` error, after checking the rest of the error.
async fn violations(catalog: &CatalogServer, method: &str, params: Value) -> Value {
    let error = catalog.error(1, method, params, -32602).await;
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.starts_with(&format!("Invalid params for {method}: ")), "{error}");
    assert!(message.len() <= 512, "the message is bounded: {error}");
    assert_eq!(error["data"]["exception"], json!("rpc::InvalidParams"), "{error}");
    error["data"]["extra"].clone()
}

/// The single reason given for `param`.
fn only_reason<'a>(extra: &'a Value, param: &str) -> &'a str {
    match extra[param].as_array().map(Vec::as_slice) {
        Some([Value::String(reason)]) => reason,
        _ => panic!("exactly one reason for `{param}`: {extra}"),
    }
}

#[tokio::test]
async fn unknown_parameter() {
    let catalog = catalog().await;
    let extra = violations(&catalog, "ping", json!({"who": "me", "color": "red"})).await;
    assert_eq!(extra, json!({"color": ["unknown parameter"]}));
}

#[tokio::test]
async fn missing_required_parameter() {
    let catalog = catalog().await;
    let extra = violations(&catalog, "Catalog.search", json!({"limit": 3})).await;
    assert_eq!(extra, json!({"query": ["required parameter is missing"]}));
    let extra = violations(&catalog, "Catalog.get", json!({})).await;
    assert_eq!(extra, json!({"id": ["required parameter is missing"]}));
}

#[tokio::test]
async fn missing_required_positional_parameter() {
    let catalog = catalog().await;
    let extra = violations(&catalog, "Catalog.list", json!([])).await;
    assert_eq!(extra, json!({"sort": ["required parameter is missing"]}));
}

#[tokio::test]
async fn wrong_type() {
    let catalog = catalog().await;
    let extra = violations(&catalog, "Catalog.search", json!({"query": 5})).await;
    assert_eq!(extra.as_object().map(|m| m.len()), Some(1), "{extra}");
    assert!(only_reason(&extra, "query").contains("string"), "the reason names the expected type: {extra}");

    let extra = violations(&catalog, "Catalog.get", json!(["7"])).await;
    assert_eq!(extra.as_object().map(|m| m.len()), Some(1), "{extra}");
    only_reason(&extra, "id");
}

#[tokio::test]
async fn negative_limit() {
    let catalog = catalog().await;
    let extra = violations(&catalog, "Catalog.search", json!({"query": "n", "limit": -1})).await;
    assert_eq!(extra.as_object().map(|m| m.len()), Some(1), "{extra}");
    only_reason(&extra, "limit");
}

#[tokio::test]
async fn integer_out_of_the_rust_type_range() {
    let catalog = catalog().await;
    let extra = violations(&catalog, "Catalog.search", json!({"query": "n", "limit": 4_294_967_296u64})).await;
    assert_eq!(extra.as_object().map(|m| m.len()), Some(1), "{extra}");
    only_reason(&extra, "limit");
    let extra = violations(&catalog, "Catalog.get", json!({"id": 1.5})).await;
    only_reason(&extra, "id");
}

#[tokio::test]
async fn every_offending_parameter_is_listed() {
    let catalog = catalog().await;
    let extra = violations(&catalog, "Catalog.search", json!({"limit": -1, "color": "red", "size": 3})).await;
    let mut names: Vec<&String> = extra.as_object().unwrap_or_else(|| panic!("an object: {extra}")).keys().collect();
    names.sort();
    assert_eq!(names, ["color", "limit", "query", "size"], "{extra}");
    assert_eq!(extra["query"], json!(["required parameter is missing"]));
    assert_eq!(extra["color"], json!(["unknown parameter"]));
    assert_eq!(extra["size"], json!(["unknown parameter"]));
    only_reason(&extra, "limit");
}

#[tokio::test]
async fn too_many_positional_parameters() {
    let catalog = catalog().await;
    for (method, params) in
        [("Catalog.search", json!(["n", 1, 2])), ("ping", json!(["a", "b"])), ("Catalog.reindex", json!([true]))]
    {
        let error = catalog.error(1, method, params, -32602).await;
        assert_eq!(error["data"]["exception"], json!("rpc::InvalidParams"), "{error}");
    }
}

#[tokio::test]
async fn invalid_params_are_reported_in_production_too() {
    let catalog = CatalogServer::start(Environment::Prod).await;
    let error = catalog.error(1, "Catalog.search", json!({"color": "red"}), -32602).await;
    assert_eq!(
        error["data"],
        json!({
            "exception": "rpc::InvalidParams",
            "extra": {"color": ["unknown parameter"], "query": ["required parameter is missing"]}
        })
    );
}

#[tokio::test]
async fn the_method_does_not_run_on_invalid_params() {
    let catalog = catalog().await;
    catalog.error(1, "Catalog.reindex", json!({"force": true}), -32602).await;
    catalog.error(1, "Catalog.reindex", json!([1, 2]), -32602).await;
    catalog.error(1, "Catalog.reindex", json!({"pause_ms": 99999}), -32602).await;
    assert_eq!(catalog.result(1, "Catalog.reindex", Value::Null).await, json!(1), "no earlier call ran");
}
