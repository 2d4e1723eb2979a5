//! `rpc::CallHooks` around JSON-RPC calls on the catalog: the order of
//! `before_execute` → `after_execute` → `after_response`, `after_response`
//! once per executed call of a batch (and for notifications), several hooks
//! in the order given, and a hook refusing a call so the method never runs.

mod jsonrpc_common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use e2e_tests::TestServer;
use jsonrpc_common::{call_error, call_result, expect_error, notification, post_ok, post_raw, request};
use rpc::descriptor::InvokeResult;
use rpc::server::Router;
use rpc::{CallHooks, CallInfo, Environment, Executor, JsonRpcService, RpcError, Transport};
use serde_json::{Map, Value, json};

/// Which hook method fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Before,
    AfterExecute,
    AfterResponse,
}

/// One hook event.
#[derive(Debug, Clone)]
struct Event {
    hook: &'static str,
    stage: Stage,
    call: u64,
    method: String,
    version: u32,
    transport: Transport,
    params: Map<String, Value>,
    ok: bool,
}

type Log = Arc<Mutex<Vec<Event>>>;

/// Records every event into a log shared with the test (and other recorders).
struct Recorder {
    name: &'static str,
    log: Log,
}

impl Recorder {
    fn record(&self, stage: Stage, call: &CallInfo, ok: bool) {
        let event = Event {
            hook: self.name,
            stage,
            call: call.id,
            method: call.method.name().to_owned(),
            version: call.version,
            transport: call.transport,
            params: call.params.clone(),
            ok,
        };
        self.log.lock().expect("hook log lock").push(event);
    }
}

impl CallHooks for Recorder {
    fn before_execute(&self, call: &CallInfo) -> Result<(), RpcError> {
        self.record(Stage::Before, call, true);
        Ok(())
    }
    fn after_execute(&self, call: &CallInfo, result: &InvokeResult) {
        self.record(Stage::AfterExecute, call, result.is_ok());
    }
    fn after_response(&self, call: &CallInfo, result: &InvokeResult) {
        self.record(Stage::AfterResponse, call, result.is_ok());
    }
}

/// Refuses `Catalog.reindex` while `locked` is set, as a lock stage would.
struct IndexLock {
    locked: AtomicBool,
}

impl CallHooks for IndexLock {
    fn before_execute(&self, call: &CallInfo) -> Result<(), RpcError> {
        if call.method.name() == "Catalog.reindex" && self.locked.load(Ordering::SeqCst) {
            return Err(RpcError::new(-32001, "index locked").with_data(json!({"lock": "index"})));
        }
        Ok(())
    }
}

/// A method with a result too large to sit in socket buffers.
mod bulk {
    use rpc::{Registry, RegistryError};

    /// Large results.
    #[derive(Debug)]
    pub struct Bulk;

    #[rpc::service]
    impl Bulk {
        /// A string of `len` bytes.
        pub fn blob(&self, len: usize) -> String {
            "x".repeat(len)
        }
    }

    /// This module's registry.
    pub fn registry() -> Result<Registry, RegistryError> {
        Registry::builder().service(Bulk).build()
    }
}

/// Serves the catalog's registry at `/rpc` with `hooks` installed.
async fn start(hooks: Vec<Arc<dyn CallHooks>>) -> (TestServer, String) {
    start_with(catalog::registry().expect("the catalog registry builds"), hooks).await
}

/// Serves `registry` at `/rpc` with `hooks` installed.
async fn start_with(registry: rpc::Registry, hooks: Vec<Arc<dyn CallHooks>>) -> (TestServer, String) {
    let executor = Executor::new(Arc::new(registry), Environment::Dev).with_hooks(hooks);
    let server = TestServer::start(Router::new().nest("/rpc", JsonRpcService::new(executor))).await;
    let url = server.url("/rpc");
    (server, url)
}

async fn start_recording() -> (TestServer, String, Log) {
    let log = Log::default();
    let (server, url) = start(vec![Arc::new(Recorder { name: "rec", log: log.clone() })]).await;
    (server, url, log)
}

fn snapshot(log: &Log) -> Vec<Event> {
    log.lock().expect("hook log lock").clone()
}

fn count(log: &Log, stage: Stage) -> usize {
    snapshot(log).iter().filter(|e| e.stage == stage).count()
}

/// Polls until `log` has `n` events of `stage` (fails after two seconds).
async fn wait_for(log: &Log, stage: Stage, n: usize) -> Vec<Event> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    loop {
        let events = snapshot(log);
        if events.iter().filter(|e| e.stage == stage).count() >= n {
            return events;
        }
        assert!(tokio::time::Instant::now() < deadline, "waited for {n} {stage:?} events, have {events:#?}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// The stages of the events of call `call`, in order.
fn stages_of(events: &[Event], call: u64) -> Vec<Stage> {
    events.iter().filter(|e| e.call == call).map(|e| e.stage).collect()
}

#[tokio::test]
async fn hooks_fire_in_order_around_one_call() {
    let (_server, url, log) = start_recording().await;
    assert_eq!(call_result(&url, "ping", json!(["me"])).await, json!("pong me"));

    // Both execution events happened before the response was written.
    let seen = snapshot(&log);
    assert_eq!(seen.iter().map(|e| e.stage).take(2).collect::<Vec<_>>(), [Stage::Before, Stage::AfterExecute]);

    let events = wait_for(&log, Stage::AfterResponse, 1).await;
    assert_eq!(events.len(), 3, "{events:#?}");
    let call = events[0].call;
    assert_eq!(stages_of(&events, call), [Stage::Before, Stage::AfterExecute, Stage::AfterResponse]);
    for event in &events {
        assert_eq!(event.method, "ping");
        assert_eq!(event.version, 1);
        assert_eq!(event.transport, Transport::JsonRpc);
        assert!(event.ok);
        assert_eq!(Value::Object(event.params.clone()), json!({"who": "me"}), "positional params are bound by name");
    }
}

#[tokio::test]
async fn after_execute_sees_failures() {
    let (_server, url, log) = start_recording().await;
    call_error(&url, "Catalog.get", json!({"id": 999})).await;
    let events = wait_for(&log, Stage::AfterResponse, 1).await;
    let outcomes: Vec<(Stage, bool)> = events.iter().map(|e| (e.stage, e.ok)).collect();
    assert_eq!(outcomes, [(Stage::Before, true), (Stage::AfterExecute, false), (Stage::AfterResponse, false)]);
}

#[tokio::test]
async fn calls_that_never_execute_fire_no_hooks() {
    let (_server, url, log) = start_recording().await;
    call_error(&url, "nope", Value::Null).await;
    call_error(&url, "Catalog.get", json!({"id": "seven"})).await;
    // A call that does execute, to know when the server is done with the others.
    call_result(&url, "ping", Value::Null).await;
    let events = wait_for(&log, Stage::AfterResponse, 1).await;
    assert!(events.iter().all(|e| e.method == "ping"), "{events:#?}");
    assert_eq!(events.len(), 3, "{events:#?}");
}

#[tokio::test]
async fn after_response_once_per_executed_call_in_a_batch() {
    let (_server, url, log) = start_recording().await;
    let batch = json!([
        request("ping", json!({"who": "a"}), json!(1)),
        request("Catalog.get", json!({"id": 7}), json!(2)),
        notification("Catalog.search", json!({"query": "n1"})),
        request("nope", Value::Null, json!(3)),
        request("Catalog.get", json!({"id": "x"}), json!(4)),
        request("Catalog.get", json!({"id": 999}), json!(5)),
    ]);
    let response = post_ok(&url, &batch).await;
    assert_eq!(response.as_array().map(Vec::len), Some(5), "every request but the notification: {response}");

    let events = wait_for(&log, Stage::AfterResponse, 4).await;
    let mut calls: Vec<u64> = events.iter().map(|e| e.call).collect();
    calls.sort_unstable();
    calls.dedup();
    assert_eq!(calls.len(), 4, "ping, two Catalog.get and the notification executed: {events:#?}");
    for call in calls {
        assert_eq!(stages_of(&events, call), [Stage::Before, Stage::AfterExecute, Stage::AfterResponse]);
    }
    let mut methods: Vec<&str> =
        events.iter().filter(|e| e.stage == Stage::AfterResponse).map(|e| e.method.as_str()).collect();
    methods.sort_unstable();
    assert_eq!(methods, ["Catalog.get", "Catalog.get", "Catalog.search", "ping"]);

    // Nothing more arrives later.
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(count(&log, Stage::AfterResponse), 4);
}

#[tokio::test]
async fn after_response_fires_for_a_notification() {
    let (_server, url, log) = start_recording().await;
    let (status, _headers, body) = post_raw(&url, notification("ping", Value::Null).to_string()).await;
    assert_eq!((status, body.as_str()), (204, ""));
    let events = wait_for(&log, Stage::AfterResponse, 1).await;
    assert_eq!(stages_of(&events, events[0].call), [Stage::Before, Stage::AfterExecute, Stage::AfterResponse]);
}

#[tokio::test]
async fn hooks_run_in_the_order_given() {
    let log = Log::default();
    let (_server, url) = start(vec![
        Arc::new(Recorder { name: "first", log: log.clone() }),
        Arc::new(Recorder { name: "second", log: log.clone() }),
    ])
    .await;
    call_result(&url, "ping", Value::Null).await;
    let events = wait_for(&log, Stage::AfterResponse, 2).await;
    let order: Vec<(Stage, &str)> = events.iter().map(|e| (e.stage, e.hook)).collect();
    assert_eq!(
        order,
        [
            (Stage::Before, "first"),
            (Stage::Before, "second"),
            (Stage::AfterExecute, "first"),
            (Stage::AfterExecute, "second"),
            (Stage::AfterResponse, "first"),
            (Stage::AfterResponse, "second"),
        ]
    );
}

#[tokio::test]
async fn a_hook_can_refuse_a_call() {
    let log = Log::default();
    let lock = Arc::new(IndexLock { locked: AtomicBool::new(true) });
    let (_server, url) = start(vec![lock.clone(), Arc::new(Recorder { name: "rec", log: log.clone() })]).await;

    let error = call_error(&url, "Catalog.reindex", Value::Null).await;
    assert_eq!(error["code"], json!(-32001), "{error}");
    assert_eq!(error["message"], json!("index locked"));
    assert_eq!(error["data"]["extra"], json!({"lock": "index"}));
    let events = snapshot(&log);
    assert!(
        events.iter().any(|e| e.stage == Stage::AfterExecute && !e.ok),
        "after_execute sees the refusal: {events:#?}"
    );

    // Other methods are not refused.
    assert_eq!(call_result(&url, "ping", Value::Null).await, json!("pong x"));

    // The refused call never ran: the first call that gets through is the first reindex.
    lock.locked.store(false, Ordering::SeqCst);
    assert_eq!(call_result(&url, "Catalog.reindex", Value::Null).await, json!(1));
}

#[tokio::test]
async fn a_refused_call_in_a_batch() {
    let lock = Arc::new(IndexLock { locked: AtomicBool::new(true) });
    let (_server, url) = start(vec![lock]).await;
    let batch = json!([request("Catalog.reindex", Value::Null, json!(1)), request("ping", Value::Null, json!(2))]);
    let response = post_ok(&url, &batch).await;
    let responses = jsonrpc_common::by_id(&response);
    expect_error(&responses["1"][0], -32001);
    assert_eq!(responses["2"][0]["result"], json!("pong x"));
}

#[tokio::test]
async fn after_response_waits_until_the_response_is_sent() {
    // Far more than the loopback socket buffers hold (net.ipv4.tcp_rmem max
    // is 32 MiB here, tcp_wmem max 4 MiB), so the server cannot have sent the
    // whole response until the client reads it.
    const LEN: usize = 64 * 1024 * 1024;
    let log = Log::default();
    let registry = bulk::registry().expect("the bulk service registers");
    let (_server, url) = start_with(registry, vec![Arc::new(Recorder { name: "rec", log: log.clone() })]).await;
    let response = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .body(request("Bulk.blob", json!([LEN]), json!(1)).to_string())
        .send()
        .await
        .expect("response headers received");
    // Give the server time to write what the socket accepts.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(count(&log, Stage::AfterExecute), 1);
    assert_eq!(count(&log, Stage::AfterResponse), 0, "after_response fired while the body was still being sent");
    let body = response.bytes().await.expect("the whole body");
    assert!(body.len() > LEN);
    wait_for(&log, Stage::AfterResponse, 1).await;
}
