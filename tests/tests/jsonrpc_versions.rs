//! API versions over HTTP: `/rpc` and `/rpc/v1` are version 1; `/rpc/v2`
//! overrides `Catalog.search` (adds `offset`), adds `Catalog.count`, removes
//! `Catalog.list` and inherits the rest; unknown versions get 404.

use crate::jsonrpc_common;

use e2e_tests::post_json;
use jsonrpc_common::{CatalogServer, expect_error, ids, request};
use rpc::Environment;
use serde_json::{Value, json};

async fn catalog() -> CatalogServer {
    CatalogServer::start(Environment::Dev).await
}

#[tokio::test]
async fn v2_search_has_an_offset() {
    let catalog = catalog().await;
    let page = catalog.result(2, "Catalog.search", json!({"query": "n", "limit": 2, "offset": 3})).await;
    assert_eq!(ids(&page), [4, 5]);
    let positional = catalog.result(2, "Catalog.search", json!(["n", 2, 3])).await;
    assert_eq!(positional, page);
    let defaults = catalog.result(2, "Catalog.search", json!({"query": "n"})).await;
    assert_eq!(ids(&defaults), (1..=10).collect::<Vec<_>>(), "offset defaults to 0, limit to 10");
    let past_the_end = catalog.result(2, "Catalog.search", json!({"query": "n", "offset": 1000})).await;
    assert_eq!(past_the_end, json!([]));
}

#[tokio::test]
async fn v1_search_has_no_offset() {
    let catalog = catalog().await;
    let error = catalog.error(1, "Catalog.search", json!({"query": "n", "offset": 3}), -32602).await;
    assert_eq!(error["data"]["extra"], json!({"offset": ["unknown parameter"]}));
    catalog.error(1, "Catalog.search", json!(["n", 2, 3]), -32602).await;
}

#[tokio::test]
async fn count_exists_only_in_v2() {
    let catalog = catalog().await;
    assert_eq!(catalog.result(2, "Catalog.count", Value::Null).await, json!(100));
    let error = catalog.error(1, "Catalog.count", Value::Null, -32601).await;
    assert_eq!(error["message"], json!("Method not found: Catalog.count"));
}

#[tokio::test]
async fn list_is_removed_in_v2() {
    let catalog = catalog().await;
    let error = catalog.error(2, "Catalog.list", json!({"sort": "id_asc"}), -32601).await;
    assert_eq!(error["message"], json!("Method not found: Catalog.list"));
    let listed = catalog.result(1, "Catalog.list", json!({"sort": "id_asc"})).await;
    assert_eq!(ids(&listed), (1..=20).collect::<Vec<_>>());
}

#[tokio::test]
async fn v2_inherits_the_other_methods() {
    let catalog = catalog().await;
    for (method, params) in
        [("ping", json!({"who": "v2"})), ("Catalog.get", json!({"id": 7})), ("Catalog.categories", Value::Null)]
    {
        let v1 = catalog.result(1, method, params.clone()).await;
        let v2 = catalog.result(2, method, params).await;
        assert_eq!(v1, v2, "{method}");
    }
    let error = catalog.error(2, "Catalog.get", json!({"id": 999}), 404).await;
    assert_eq!(error["message"], json!("product 999 not found"));
}

#[tokio::test]
async fn versions_share_the_service_instances() {
    let catalog = catalog().await;
    assert_eq!(catalog.result(1, "Catalog.reindex", Value::Null).await, json!(1));
    let v1 = catalog.server.url("/rpc/v1");
    let response = jsonrpc_common::post_ok(&v1, &request("Catalog.reindex", Value::Null, json!(1))).await;
    assert_eq!(response["result"], json!(2), "/rpc/v1 is /rpc: {response}");
    assert_eq!(catalog.result(2, "Catalog.reindex", Value::Null).await, json!(3), "v2 inherits reindex");
}

#[tokio::test]
async fn rpc_v1_equals_rpc() {
    let catalog = catalog().await;
    let v1 = catalog.server.url("/rpc/v1");
    for (method, params) in [
        ("ping", Value::Null),
        ("Catalog.get", json!({"id": 3})),
        ("Catalog.list", json!({"sort": "id_desc"})),
        ("Catalog.search", json!({"query": "n9"})),
        ("Catalog.count", Value::Null),
    ] {
        let body = request(method, params, json!(1)).to_string();
        let (status_v1, via_v1) = post_json(&v1, &body).await;
        let (status_rpc, via_rpc) = post_json(&catalog.url(1), &body).await;
        assert_eq!((status_v1, &via_v1), (status_rpc, &via_rpc), "{method}");
    }

    let client = reqwest::Client::new();
    let mut docs = Vec::new();
    for url in [v1, catalog.url(1)] {
        let response = client.get(&url).send().await.expect("GET sent");
        assert_eq!(response.status().as_u16(), 200, "{url}");
        let mut doc: Value = response.json().await.expect("an OpenRPC document");
        assert_eq!(doc["servers"][0]["url"], json!(url), "each document names the URL it was fetched from");
        doc["servers"][0]["url"] = Value::Null;
        doc["servers"][0]["x-transports"]["http"]["url"] = Value::Null;
        doc["servers"][0]["x-documentation"]["postman"] = Value::Null;
        docs.push(doc);
    }
    assert_eq!(docs[0], docs[1], "the same document apart from the server URL");
}

#[tokio::test]
async fn unknown_versions_are_404_with_a_json_rpc_error() {
    let catalog = catalog().await;
    let body = request("ping", Value::Null, json!(1)).to_string();
    for path in ["/rpc/v3", "/rpc/v0", "/rpc/v01", "/rpc/v", "/rpc/2", "/rpc/v2/extra"] {
        let (status, response) = post_json(&catalog.server.url(path), &body).await;
        assert_eq!(status, 404, "POST {path}: {response}");
        let error = expect_error(&response, -32600);
        assert_eq!(response["id"], Value::Null, "{path}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.contains("v1, v2"), "the message lists the versions: {message}");
    }
}

#[tokio::test]
async fn trailing_slash_is_the_same_version() {
    let catalog = catalog().await;
    let body = request("Catalog.count", Value::Null, json!(1)).to_string();
    let (status, response) = post_json(&catalog.server.url("/rpc/v2/"), &body).await;
    assert_eq!(status, 200);
    assert_eq!(response["result"], json!(100));
}
