//! Error `data` per environment: dev and test servers add where an
//! application error was created (`location`) and protocol error details;
//! production servers expose exactly `{"exception", "extra"}`.

use crate::jsonrpc_common;

use jsonrpc_common::CatalogServer;
use rpc::Environment;
use serde_json::{Value, json};

/// The catalog's source, as compiled into this test binary.
const CATALOG_SOURCE: &str = include_str!("../../examples/catalog/src/services.rs");
const CATALOG_SOURCE_PATH: &str = "examples/catalog/src/services.rs";

async fn not_found_error(env: Environment) -> Value {
    let catalog = CatalogServer::start(env).await;
    let error = catalog.error(1, "Catalog.get", json!({"id": 999}), 404).await;
    assert_eq!(error["message"], json!("product 999 not found"), "{env:?}: {error}");
    error
}

/// Checks `location` is `file:line:col` in the catalog's services and
/// returns the source line it points at.
fn located_line(location: &str) -> &'static str {
    jsonrpc_common::located(location, CATALOG_SOURCE_PATH, CATALOG_SOURCE).1
}

#[tokio::test]
async fn dev_error_data_has_exception_extra_and_location() {
    let error = not_found_error(Environment::Dev).await;
    let data = &error["data"];
    assert_eq!(data["exception"], json!("catalog::services::CatalogError"));
    assert_eq!(data["extra"], json!({"id": 999}));
    let location = data["location"].as_str().unwrap_or_else(|| panic!("location is a string: {data}"));
    let line = located_line(location);
    assert!(line.contains("fn get("), "the location points at `Catalog::get`, not at `{line}`");
}

#[tokio::test]
async fn test_environment_reveals_as_much_as_dev() {
    let dev = not_found_error(Environment::Dev).await;
    let test = not_found_error(Environment::Test).await;
    assert_eq!(test, dev);
}

#[tokio::test]
async fn prod_error_data_is_exactly_exception_and_extra() {
    let error = not_found_error(Environment::Prod).await;
    assert_eq!(
        error,
        json!({
            "code": 404,
            "message": "product 999 not found",
            "data": {"exception": "catalog::services::CatalogError", "extra": {"id": 999}}
        })
    );
}

#[tokio::test]
async fn protocol_errors_carry_no_location() {
    for env in [Environment::Dev, Environment::Test, Environment::Prod] {
        let catalog = CatalogServer::start(env).await;
        let error = catalog.error(1, "nope", Value::Null, -32601).await;
        assert_eq!(error["data"], json!({"exception": "rpc::MethodNotFound"}), "{env:?}");
    }
}

#[tokio::test]
async fn parse_error_detail_only_outside_production() {
    for (env, detailed) in [(Environment::Dev, true), (Environment::Test, true), (Environment::Prod, false)] {
        let catalog = CatalogServer::start(env).await;
        let (status, response) = e2e_tests::post_json(&catalog.url(1), "{oops").await;
        assert_eq!(status, 200);
        let data = &response["error"]["data"];
        assert_eq!(data["exception"], json!("rpc::ParseError"), "{env:?}: {response}");
        assert_eq!(data.get("message").is_some(), detailed, "{env:?}: {response}");
        assert!(data.get("location").is_none(), "{env:?}: {response}");
    }
}
