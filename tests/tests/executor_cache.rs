//! The cache seam of the executor: a hit skips the method and the hooks,
//! on `/rpc` and on MCP `tools/call` alike.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use e2e_tests::raw_mcp::RawMcp;
use e2e_tests::{TestServer, post_json};
use futures_util::future::BoxFuture;
use rpc::server::Router;
use rpc::{CallCache, CallHooks, CallInfo, Environment, Executor, JsonRpcService, Registry};
use serde_json::json;
use serde_json::value::RawValue;

mod fixtures {
    use std::sync::atomic::{AtomicU32, Ordering};

    rpc::api_group!(pub struct Tools => "tools", mcp = true);

    /// Counts its calls.
    #[derive(Default)]
    pub struct Counter(pub AtomicU32);

    #[rpc::service(groups(Tools))]
    impl Counter {
        /// Doubles `n` and counts the call.
        pub fn double(&self, n: i64) -> i64 {
            self.0.fetch_add(1, Ordering::SeqCst);
            n * 2
        }

        /// Fails: errors are not cached.
        pub fn fail(&self) -> Result<u32, rpc::RpcError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Err(rpc::RpcError::new(1, "no"))
        }
    }
}

#[derive(Default)]
struct MemoryCache(Mutex<HashMap<String, String>>);

impl MemoryCache {
    fn key(call: &CallInfo) -> String {
        format!("{}@{}:{}", call.method.name(), call.version, serde_json::Value::Object(call.params.clone()))
    }
}

impl CallCache for MemoryCache {
    fn get<'a>(&'a self, call: &'a CallInfo) -> BoxFuture<'a, Option<Box<RawValue>>> {
        let hit = self.0.lock().expect("lock").get(&Self::key(call)).cloned();
        Box::pin(async move { hit.and_then(|s| RawValue::from_string(s).ok()) })
    }
    fn put<'a>(&'a self, call: &'a CallInfo, result: &'a RawValue) -> BoxFuture<'a, ()> {
        self.0.lock().expect("lock").insert(Self::key(call), result.get().to_owned());
        Box::pin(async {})
    }
}

#[derive(Default)]
struct CountHooks(AtomicU32);

impl CallHooks for CountHooks {
    fn before_execute(&self, _: &CallInfo) -> Result<(), rpc::RpcError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

#[tokio::test]
async fn cache_hits_skip_the_method_and_the_hooks() {
    let counter = Arc::new(fixtures::Counter::default());
    let registry = Registry::builder().service_arc(counter.clone()).build().expect("registry");
    let hooks = Arc::new(CountHooks::default());
    let executor = Executor::new(Arc::new(registry), Environment::Test)
        .with_cache(Arc::new(MemoryCache::default()))
        .with_hooks([hooks.clone() as Arc<dyn CallHooks>]);
    let app = Router::new()
        .nest("/rpc", JsonRpcService::new(executor.clone()))
        .nest("/mcp", mcp::McpEndpoint::builder::<fixtures::Tools>(executor).build());
    let server = TestServer::start(app).await;

    let call = r#"{"jsonrpc":"2.0","id":1,"method":"Counter.double","params":{"n":21}}"#;
    for _ in 0..3 {
        let (_, reply) = post_json(&server.url("/rpc"), call).await;
        assert_eq!(reply["result"], 42);
    }
    assert_eq!(counter.0.load(Ordering::SeqCst), 1, "ran once, then served from the cache");
    assert_eq!(hooks.0.load(Ordering::SeqCst), 1, "hooks do not run on a hit");

    let mut client = RawMcp::new(server.url("/mcp/v1"));
    client.initialize("2025-11-25").await;
    let reply = client.call("Counter.double", json!({"n": 21})).await;
    assert_eq!(reply["result"]["structuredContent"], json!({"result": 42}), "the same cache serves MCP");
    assert_eq!(counter.0.load(Ordering::SeqCst), 1);
    client.call("Counter.double", json!({"n": 1})).await;
    assert_eq!(counter.0.load(Ordering::SeqCst), 2, "other parameters miss");

    for _ in 0..2 {
        let (_, reply) = post_json(&server.url("/rpc"), r#"{"jsonrpc":"2.0","id":1,"method":"Counter.fail"}"#).await;
        assert_eq!(reply["error"]["code"], 1);
    }
    assert_eq!(counter.0.load(Ordering::SeqCst), 4, "errors are not cached");
}
