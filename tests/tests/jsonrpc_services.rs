//! Services declared in this test file and served through the public API
//! (`Registry` → `Executor` → `JsonRpcService` → `Router`): a panicking
//! method is contained (`-32603`, `data.exception == "panic"`) and the server
//! keeps serving; methods returning `Result<T, rpc::RpcError>` with a custom
//! code; async methods; and registration by type: services linked into the
//! binary but not registered stay out, and the mistakes a registration can
//! make (a type without a service block, an `Arc`, twice, a version 2
//! without its base) fail the build with a message that says what to do.

use crate::jsonrpc_common;

use std::sync::Arc;

use e2e_tests::TestServer;
use jsonrpc_common::{call_error, call_result, expect_error, post_ok, request};
use rpc::server::Router;
use rpc::{Environment, Executor, JsonRpcService};
use serde_json::{Value, json};

/// The services this file serves.
mod app {
    // `rpc::RpcError` is large; returning it is what this file tests.

    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    use rpc::{Registry, RegistryError, RpcError};
    use serde_json::json;

    rpc::api_group! {
        /// Everything here.
        pub struct Tests => "tests";
    }

    /// Methods that fail in every way a method can.
    #[derive(Debug, Default)]
    pub struct Faulty {
        calls: AtomicU64,
    }

    #[rpc::service(groups(Tests))]
    impl Faulty {
        /// Counts the calls that reached a method body.
        pub fn calls(&self) -> u64 {
            self.calls.load(Ordering::SeqCst)
        }

        /// Always panics.
        ///
        /// # Arguments
        /// * `reason` - The panic message
        pub fn explode(&self, reason: String) -> String {
            self.calls.fetch_add(1, Ordering::SeqCst);
            panic!("boom: {reason}")
        }

        /// Panics after an await point.
        pub async fn explode_later(&self) -> u32 {
            self.calls.fetch_add(1, Ordering::SeqCst);
            tokio::task::yield_now().await;
            panic!("late boom")
        }

        /// Fails with a custom code and data.
        pub fn refuse(&self) -> Result<String, RpcError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            Err(RpcError::new(4001, "quota exceeded").with_data(json!({"limit": 3})))
        }

        /// Succeeds or fails depending on `fail`.
        pub fn maybe(&self, fail: bool) -> Result<String, RpcError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if fail { Err(RpcError::new(-1, "asked to fail")) } else { Ok("fine".into()) }
        }

        /// Echoes `text` after sleeping `ms` milliseconds.
        pub async fn delayed_echo(&self, text: String, #[rpc(default = 1)] ms: u64) -> String {
            self.calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            text
        }

        /// Fails after an await point.
        pub async fn refuse_later(&self) -> Result<u32, RpcError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            tokio::task::yield_now().await;
            Err(RpcError::new(4002, "too late"))
        }
    }

    /// This module's registry.
    pub fn registry() -> Result<Registry, RegistryError> {
        Registry::builder().service(Faulty::default()).build()
    }
}

/// A service nobody registers, and a version 2 of it.
mod orphan {
    /// Never registered by the test registries unless a test says so.
    #[derive(Debug)]
    pub struct Orphan;

    #[rpc::service]
    impl Orphan {
        /// Hello.
        pub fn hello(&self) -> String {
            "hello".into()
        }
    }

    /// Version 2 of `Orphan`'s API, on its own type.
    #[derive(Debug)]
    pub struct OrphanV2;

    #[rpc::service(alias = "Orphan", version = 2, removed("Orphan.hello"))]
    impl OrphanV2 {
        /// Hello, politely.
        pub fn greet(&self) -> String {
            "good day".into()
        }
    }

    /// A type with no `#[rpc::service]` block.
    #[derive(Debug)]
    pub struct Plain;
}

async fn start(env: Environment) -> (TestServer, String) {
    let registry = app::registry().expect("the test services register");
    let executor = Executor::new(Arc::new(registry), env);
    let router = Router::new().nest("/rpc", JsonRpcService::new(executor));
    let server = TestServer::start(router).await;
    let url = server.url("/rpc");
    (server, url)
}

async fn calls(url: &str) -> u64 {
    let calls = call_result(url, "Faulty.calls", Value::Null).await;
    calls.as_u64().unwrap_or_else(|| panic!("a count: {calls}"))
}

#[tokio::test]
async fn panic_is_an_internal_error() {
    let (_server, url) = start(Environment::Dev).await;
    let error = call_error(&url, "Faulty.explode", json!({"reason": "test"})).await;
    assert_eq!(error["code"], json!(-32603), "{error}");
    assert_eq!(error["message"], json!("Internal error"), "{error}");
    assert_eq!(error["data"]["exception"], json!("panic"), "{error}");
    let message = error["data"]["message"].as_str().unwrap_or_else(|| panic!("dev shows the panic: {error}"));
    assert!(message.contains("boom: test"), "{message}");
}

#[tokio::test]
async fn the_server_keeps_serving_after_a_panic() {
    let (_server, url) = start(Environment::Dev).await;
    call_error(&url, "Faulty.explode", json!({"reason": "first"})).await;
    call_error(&url, "Faulty.explode_later", Value::Null).await;
    assert_eq!(call_result(&url, "Faulty.delayed_echo", json!({"text": "still here"})).await, json!("still here"));
    assert_eq!(calls(&url).await, 3);
}

#[tokio::test]
async fn async_panic_is_contained() {
    let (_server, url) = start(Environment::Dev).await;
    let error = call_error(&url, "Faulty.explode_later", Value::Null).await;
    assert_eq!(error["code"], json!(-32603), "{error}");
    assert_eq!(error["data"]["exception"], json!("panic"), "{error}");
}

#[tokio::test]
async fn panic_in_a_batch_leaves_the_other_calls_alone() {
    let (_server, url) = start(Environment::Dev).await;
    let batch = json!([
        request("Faulty.explode", json!(["in a batch"]), json!(1)),
        request("Faulty.delayed_echo", json!(["ok"]), json!(2)),
    ]);
    let response = post_ok(&url, &batch).await;
    let responses = jsonrpc_common::by_id(&response);
    expect_error(&responses["1"][0], -32603);
    assert_eq!(responses["2"][0]["result"], json!("ok"), "{response}");
}

#[tokio::test]
async fn panic_detail_is_hidden_in_production() {
    let (_server, url) = start(Environment::Prod).await;
    let error = call_error(&url, "Faulty.explode", json!({"reason": "secret"})).await;
    assert_eq!(error, json!({"code": -32603, "message": "Internal error", "data": {"exception": "panic"}}));
}

#[tokio::test]
async fn rpc_error_with_a_custom_code() {
    let (_server, url) = start(Environment::Dev).await;
    let error = call_error(&url, "Faulty.refuse", Value::Null).await;
    assert_eq!(error["code"], json!(4001));
    assert_eq!(error["message"], json!("quota exceeded"));
    assert_eq!(error["data"]["exception"], json!("rpc::RpcError"));
    assert_eq!(error["data"]["extra"], json!({"limit": 3}));
    let location = error["data"]["location"].as_str().unwrap_or_else(|| panic!("dev has a location: {error}"));
    assert!(location.starts_with(concat!(file!(), ":")), "created in this file: {location}");
}

#[tokio::test]
async fn rpc_error_in_production() {
    let (_server, url) = start(Environment::Prod).await;
    let error = call_error(&url, "Faulty.refuse", Value::Null).await;
    assert_eq!(
        error,
        json!({"code": 4001, "message": "quota exceeded", "data": {"exception": "rpc::RpcError", "extra": {"limit": 3}}})
    );
}

#[tokio::test]
async fn fallible_method_succeeds_or_fails() {
    let (_server, url) = start(Environment::Dev).await;
    assert_eq!(call_result(&url, "Faulty.maybe", json!({"fail": false})).await, json!("fine"));
    let error = call_error(&url, "Faulty.maybe", json!([true])).await;
    assert_eq!(error["code"], json!(-1));
    assert_eq!(error["message"], json!("asked to fail"));
}

#[tokio::test]
async fn async_methods() {
    let (_server, url) = start(Environment::Dev).await;
    assert_eq!(call_result(&url, "Faulty.delayed_echo", json!({"text": "hi", "ms": 5})).await, json!("hi"));
    assert_eq!(call_result(&url, "Faulty.delayed_echo", json!(["default delay"])).await, json!("default delay"));
    let error = call_error(&url, "Faulty.refuse_later", Value::Null).await;
    assert_eq!(error["code"], json!(4002));
    assert_eq!(error["message"], json!("too late"));
}

#[tokio::test]
async fn async_methods_in_a_batch() {
    let (_server, url) = start(Environment::Dev).await;
    let batch: Vec<Value> =
        (0..5).map(|i| request("Faulty.delayed_echo", json!({"text": format!("t{i}"), "ms": 10}), json!(i))).collect();
    let response = post_ok(&url, &Value::Array(batch)).await;
    let responses = jsonrpc_common::by_id(&response);
    assert_eq!(responses.len(), 5);
    for i in 0..5 {
        assert_eq!(responses[&i.to_string()][0]["result"], json!(format!("t{i}")), "{response}");
    }
}

#[tokio::test]
async fn a_large_batch_runs_its_waiting_calls_together_and_answers_in_order() {
    // Past 30 calls a batch's calls that wait run on in a queue: 60 calls,
    // 20 of them waiting 300 ms and finishing in reverse order, the others
    // done at once.
    let (_server, url) = start(Environment::Dev).await;
    let batch: Vec<Value> = (0..60)
        .map(|i| {
            let ms = if i % 3 == 0 { 300 - i * 2 } else { 0 };
            request("Faulty.delayed_echo", json!({"text": format!("t{i}"), "ms": ms}), json!(i))
        })
        .collect();
    let started = std::time::Instant::now();
    let response = post_ok(&url, &Value::Array(batch)).await;
    let elapsed = started.elapsed();
    let answers = response.as_array().unwrap_or_else(|| panic!("an array: {response}"));
    assert_eq!(answers.len(), 60);
    for (i, answer) in answers.iter().enumerate() {
        assert_eq!(answer["id"], json!(i), "answers in request order: {response}");
        assert_eq!(answer["result"], json!(format!("t{i}")), "{answer}");
    }
    // One after the other the waiting calls would take 20 x ~270 ms.
    assert!(elapsed < std::time::Duration::from_secs(3), "the calls ran together: {elapsed:?}");
}

#[tokio::test]
async fn linked_but_unregistered_services_stay_out() {
    // `orphan::Orphan` and the catalog's services are linked into this
    // binary; a registry built from one service holds only that service.
    let registry = app::registry().expect("the test services register");
    assert!(registry.method(1, "Orphan.hello", None).is_none(), "an unregistered service is not pulled in");
    assert!(registry.method(1, "Catalog.get", None).is_none(), "nor are other crates' services");
    assert!(registry.method(1, "Faulty.calls", None).is_some());
}

#[tokio::test]
async fn registering_a_type_without_a_service_block_fails() {
    let error = rpc::Registry::builder().service(orphan::Plain).build().expect_err("Plain has no methods");
    let message = error.to_string();
    assert!(
        message.contains("jsonrpc_services::orphan::Plain") && message.contains("no `#[rpc::service]` impl block"),
        "{message}"
    );

    let arc = std::sync::Arc::new(orphan::Orphan);
    let error = rpc::Registry::builder().service(arc).build().expect_err("an Arc is not the service type");
    assert!(error.to_string().contains("use `.service_arc(arc)`"), "the message tells how to register an Arc: {error}");

    let error = rpc::Registry::builder().service(orphan::Orphan).service(orphan::Orphan).build().expect_err("twice");
    assert!(error.to_string().contains("registered twice"), "{error}");
}

#[tokio::test]
async fn a_later_version_without_its_base_fails_and_names_the_base() {
    let error = rpc::Registry::builder().service(orphan::OrphanV2).build().expect_err("version 1 is missing");
    let message = error.to_string();
    assert!(message.contains("orphan::OrphanV2") && message.contains("version 2 of `Orphan`"), "{message}");
    assert!(
        message.contains("version 1 in `") && message.contains("jsonrpc_services::orphan::Orphan` ("),
        "it names the base type: {message}"
    );
    assert!(message.contains("register it too"), "and says what to do: {message}");

    let registry = rpc::Registry::builder()
        .service(orphan::Orphan)
        .service(orphan::OrphanV2)
        .build()
        .expect("with its base, version 2 builds");
    assert!(registry.method(1, "Orphan.hello", None).is_some());
    assert!(registry.method(2, "Orphan.hello", None).is_none(), "removed in version 2");
    assert!(registry.method(2, "Orphan.greet", None).is_some());
}
