//! The catalog's methods over `POST /rpc`: results, defaults, enum
//! parameters, the recursive category tree, the admin-only `Catalog.reindex`
//! and the application error of `Catalog.get`. Every result is checked
//! against its method's output schema.

use crate::jsonrpc_common;

use jsonrpc_common::{CatalogServer, ids};
use rpc::Environment;
use serde_json::{Value, json};

async fn catalog() -> CatalogServer {
    CatalogServer::start(Environment::Dev).await
}

#[tokio::test]
async fn ping_uses_its_default() {
    let catalog = catalog().await;
    assert_eq!(catalog.result(1, "ping", Value::Null).await, json!("pong x"));
    assert_eq!(catalog.result(1, "ping", json!({})).await, json!("pong x"));
    assert_eq!(catalog.result(1, "ping", json!([])).await, json!("pong x"));
}

#[tokio::test]
async fn ping_with_a_name() {
    let catalog = catalog().await;
    assert_eq!(catalog.result(1, "ping", json!({"who": "me"})).await, json!("pong me"));
    assert_eq!(catalog.result(1, "ping", json!(["you"])).await, json!("pong you"));
}

#[tokio::test]
async fn get_finds_a_product() {
    let catalog = catalog().await;
    assert_eq!(catalog.result(1, "Catalog.get", json!({"id": 7})).await, json!({"id": 7, "name": "n7"}));
}

#[tokio::test]
async fn get_reports_a_missing_product_as_an_application_error() {
    let catalog = catalog().await;
    let error = catalog.error(1, "Catalog.get", json!({"id": 999}), 404).await;
    assert_eq!(error["message"], json!("product 999 not found"));
    assert_eq!(error["data"]["exception"], json!("catalog::services::CatalogError"));
    assert_eq!(error["data"]["extra"], json!({"id": 999}));
}

#[tokio::test]
async fn search_defaults_to_ten_results() {
    let catalog = catalog().await;
    let found = catalog.result(1, "Catalog.search", json!({"query": "n"})).await;
    assert_eq!(ids(&found), (1..=10).collect::<Vec<_>>());
}

#[tokio::test]
async fn search_honours_limit_and_ignores_case() {
    let catalog = catalog().await;
    let found = catalog.result(1, "Catalog.search", json!({"query": "N1", "limit": 4})).await;
    assert_eq!(ids(&found), [1, 10, 11, 12]);
    let refused = catalog.error(1, "Catalog.search", json!({"query": "n", "limit": 0}), -32602).await;
    assert_eq!(refused["data"]["extra"]["limit"], json!(["0 is less than the minimum of 1"]), "{refused}");
    let unknown = catalog.result(1, "Catalog.search", json!({"query": "zzz"})).await;
    assert_eq!(unknown, json!([]));
}

#[tokio::test]
async fn list_takes_an_enum_parameter() {
    let catalog = catalog().await;
    let desc = catalog.result(1, "Catalog.list", json!({"sort": "id_desc"})).await;
    assert_eq!(ids(&desc), (81..=100).rev().collect::<Vec<_>>(), "first page, 20 products, highest id first");

    let asc = catalog.result(1, "Catalog.list", json!({"sort": "id_asc", "page": 2})).await;
    assert_eq!(ids(&asc), (21..=40).collect::<Vec<_>>());

    let by_name = catalog.result(1, "Catalog.list", json!(["name"])).await;
    assert_eq!(ids(&by_name)[..4], [1, 10, 100, 11], "alphabetical: n1, n10, n100, n11");
}

#[tokio::test]
async fn list_rejects_an_unknown_enum_value() {
    let catalog = catalog().await;
    let error = catalog.error(1, "Catalog.list", json!({"sort": "price"}), -32602).await;
    let reasons = error["data"]["extra"]["sort"].as_array().unwrap_or_else(|| panic!("reasons for sort: {error}"));
    assert_eq!(reasons.len(), 1, "{error}");
    assert_eq!(error["data"]["extra"].as_object().map(|m| m.len()), Some(1), "only `sort` is wrong: {error}");
}

#[tokio::test]
async fn categories_are_a_recursive_tree() {
    let catalog = catalog().await;
    let tree = catalog.result(1, "Catalog.categories", Value::Null).await;
    let leaf = |name: &str| json!({"name": name, "children": []});
    assert_eq!(
        tree,
        json!({
            "name": "All",
            "children": [
                {"name": "Books", "children": [leaf("Fiction"), leaf("Science")]},
                leaf("Music"),
            ]
        })
    );
}

#[tokio::test]
async fn reindex_is_served_over_rpc() {
    let catalog = catalog().await;
    assert_eq!(catalog.result(1, "Catalog.reindex", Value::Null).await, json!(1));
    assert_eq!(catalog.result(1, "Catalog.reindex", json!({})).await, json!(2));
    assert_eq!(catalog.result(1, "Catalog.reindex", json!([])).await, json!(3));
}

#[tokio::test]
async fn method_names_are_case_sensitive() {
    let catalog = catalog().await;
    for name in ["Ping", "catalog.get", "Catalog.Get", "Catalog.get ", "Catalog_get"] {
        let error = catalog.error(1, name, json!({"id": 7}), -32601).await;
        assert_eq!(error["message"], json!(format!("Method not found: {name}")));
    }
}
