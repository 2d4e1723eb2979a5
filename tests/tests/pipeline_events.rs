//! Pipeline events (`rpc::Listener`) around JSON-RPC calls on the catalog:
//! `on_request` → `before_execute` → `after_execute` → `before_response`
//! → `after_response` (after the response was written, once per executed
//! call with a result, also in batches and for notifications; never for an
//! error), `on_error` for every error; listeners run in the order given,
//! sync or async; a listener can replace the request, refuse a call or
//! change its outcome; a panicking listener never breaks the response.

use crate::jsonrpc_common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use e2e_tests::TestServer;
use jsonrpc_common::{call_error, call_result, expect_error, notification, post_ok, post_raw, request};
use rpc::descriptor::InvokeResult;
use rpc::server::Router;
use rpc::{
    CallInfo, Environment, ErrorEvent, Executor, JsonRpcService, Listener, MaybeReady, Params, RequestEvent, RpcError,
    Transport,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// Which event fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Request,
    Before,
    AfterExecute,
    BeforeResponse,
    Error,
    AfterResponse,
}

/// One event.
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
    fn push(&self, event: Event) {
        self.log.lock().expect("hook log lock").push(event);
    }

    fn record(&self, stage: Stage, call: &CallInfo, ok: bool) {
        self.push(Event {
            hook: self.name,
            stage,
            call: call.id,
            method: call.method.name().to_owned(),
            version: call.version,
            transport: call.transport,
            params: call.params.clone(),
            ok,
        });
    }
}

impl Listener for Recorder {
    fn on_request<'a>(&'a self, request: &'a mut RequestEvent) -> MaybeReady<'a, Result<(), RpcError>> {
        let params = match &request.params {
            Params::Named(map) => map.clone(),
            _ => Map::new(),
        };
        self.push(Event {
            hook: self.name,
            stage: Stage::Request,
            call: 0,
            method: request.method.clone(),
            version: request.version,
            transport: request.transport,
            params,
            ok: true,
        });
        MaybeReady::ready(Ok(()))
    }
    fn before_execute<'a>(&'a self, call: &'a CallInfo) -> MaybeReady<'a, Result<(), RpcError>> {
        self.record(Stage::Before, call, true);
        MaybeReady::ready(Ok(()))
    }
    fn after_execute<'a>(&'a self, call: &'a CallInfo, result: &'a InvokeResult) -> MaybeReady<'a, ()> {
        self.record(Stage::AfterExecute, call, result.is_ok());
        MaybeReady::ready(())
    }
    fn before_response<'a>(&'a self, call: &'a CallInfo, result: &'a mut InvokeResult) -> MaybeReady<'a, ()> {
        self.record(Stage::BeforeResponse, call, result.is_ok());
        MaybeReady::ready(())
    }
    fn on_error<'a>(&'a self, event: &'a ErrorEvent<'a>) -> MaybeReady<'a, ()> {
        self.push(Event {
            hook: self.name,
            stage: Stage::Error,
            call: 0,
            method: event.method.to_owned(),
            version: event.version,
            transport: event.transport,
            params: event.params.cloned().unwrap_or_default(),
            ok: false,
        });
        MaybeReady::ready(())
    }
    fn after_response<'a>(&'a self, call: &'a CallInfo, _result: &'a RawValue) -> MaybeReady<'a, ()> {
        // Asynchronously, as a listener that writes to a database would.
        MaybeReady::pending(async move {
            tokio::task::yield_now().await;
            self.record(Stage::AfterResponse, call, true);
        })
    }
}

/// Refuses `Catalog.reindex` while `locked` is set.
struct IndexLock {
    locked: AtomicBool,
}

impl Listener for IndexLock {
    fn before_execute<'a>(&'a self, call: &'a CallInfo) -> MaybeReady<'a, Result<(), RpcError>> {
        if call.method.name() == "Catalog.reindex" && self.locked.load(Ordering::SeqCst) {
            return MaybeReady::ready(Err(RpcError::new(-32001, "index locked").with_data(json!({"lock": "index"}))));
        }
        MaybeReady::ready(Ok(()))
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

/// Serves the catalog's registry at `/rpc` with `listeners` installed.
async fn start(listeners: Vec<Arc<dyn Listener>>) -> (TestServer, String) {
    start_with(catalog::registry().expect("the catalog registry builds"), listeners).await
}

/// Serves `registry` at `/rpc` with `listeners` installed.
async fn start_with(registry: rpc::Registry, listeners: Vec<Arc<dyn Listener>>) -> (TestServer, String) {
    let executor = Executor::new(Arc::new(registry), Environment::Dev).with_listeners(listeners);
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

/// The stages of events of one recorder, in order, for method `method`.
fn stages_for(events: &[Event], method: &str) -> Vec<Stage> {
    events.iter().filter(|e| e.method == method).map(|e| e.stage).collect()
}

#[tokio::test]
async fn events_fire_in_order_around_one_call() {
    let (_server, url, log) = start_recording().await;
    assert_eq!(call_result(&url, "ping", json!(["me"])).await, json!("pong me"));

    // Every event but after_response happened before the response was written.
    let seen: Vec<Stage> = snapshot(&log).iter().map(|e| e.stage).collect();
    assert_eq!(seen[..4], [Stage::Request, Stage::Before, Stage::AfterExecute, Stage::BeforeResponse]);

    let events = wait_for(&log, Stage::AfterResponse, 1).await;
    assert_eq!(events.len(), 5, "{events:#?}");
    let call = events[1].call;
    assert_eq!(
        stages_of(&events, call),
        [Stage::Before, Stage::AfterExecute, Stage::BeforeResponse, Stage::AfterResponse]
    );
    for event in &events {
        assert_eq!(event.method, "ping");
        assert_eq!(event.version, 1);
        assert_eq!(event.transport, Transport::JsonRpc);
        assert!(event.ok);
    }
    for event in &events[1..] {
        assert_eq!(Value::Object(event.params.clone()), json!({"who": "me"}), "positional params are bound by name");
    }
}

#[tokio::test]
async fn a_failed_call_passes_through_on_error_and_gets_no_after_response() {
    let (_server, url, log) = start_recording().await;
    call_error(&url, "Catalog.get", json!({"id": 999})).await;
    // A call with a result, to know when the server is done with the first.
    call_result(&url, "ping", Value::Null).await;
    let events = wait_for(&log, Stage::AfterResponse, 1).await;
    let failed: Vec<(Stage, bool)> =
        events.iter().filter(|e| e.method == "Catalog.get").map(|e| (e.stage, e.ok)).collect();
    assert_eq!(
        failed,
        [
            (Stage::Request, true),
            (Stage::Before, true),
            (Stage::AfterExecute, false),
            (Stage::BeforeResponse, false),
            (Stage::Error, false)
        ]
    );
    let error = events.iter().find(|e| e.stage == Stage::Error).expect("on_error fired");
    assert_eq!(Value::Object(error.params.clone()), json!({"id": 999}), "on_error sees the parameters");
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(count(&log, Stage::AfterResponse), 1, "only ping's result was followed by after_response");
}

#[tokio::test]
async fn calls_that_never_execute_pass_through_on_error_only() {
    let (_server, url, log) = start_recording().await;
    call_error(&url, "nope", Value::Null).await;
    call_error(&url, "Catalog.get", json!({"id": "seven"})).await;
    call_result(&url, "ping", Value::Null).await;
    let events = wait_for(&log, Stage::AfterResponse, 1).await;
    assert_eq!(stages_for(&events, "nope"), [Stage::Request, Stage::Error]);
    assert_eq!(stages_for(&events, "Catalog.get"), [Stage::Request, Stage::Error]);
    assert_eq!(stages_for(&events, "ping").len(), 5);
}

#[tokio::test]
async fn refusals_before_the_executor_pass_through_on_error_too() {
    let (_server, url, log) = start_recording().await;
    call_error(&url, "ping", json!({"$rpc": {"timeout": -1}})).await;
    call_error(&url, "Catalog.get", json!("not params")).await;
    let (status, _, _) = post_raw(&url, r#"[{"jsonrpc":"2.0","id":1}]"#).await;
    assert_eq!(status, 200);
    let errors: Vec<(String, Stage)> =
        snapshot(&log).iter().filter(|e| e.stage == Stage::Error).map(|e| (e.method.clone(), e.stage)).collect();
    assert_eq!(
        errors,
        [("ping".into(), Stage::Error), (String::new(), Stage::Error), (String::new(), Stage::Error)],
        "invalid $rpc, params of the wrong kind (an invalid request), a message without a method"
    );
}

#[tokio::test]
async fn after_response_once_per_executed_call_with_a_result_in_a_batch() {
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

    let events = wait_for(&log, Stage::AfterResponse, 3).await;
    let mut methods: Vec<&str> =
        events.iter().filter(|e| e.stage == Stage::AfterResponse).map(|e| e.method.as_str()).collect();
    methods.sort_unstable();
    assert_eq!(methods, ["Catalog.get", "Catalog.search", "ping"], "not for the error of id 999");
    assert_eq!(count(&log, Stage::Request), 6);
    assert_eq!(count(&log, Stage::Error), 3, "unknown method, invalid params, not found");

    // Nothing more arrives later.
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(count(&log, Stage::AfterResponse), 3);
}

#[tokio::test]
async fn after_response_fires_for_a_notification() {
    let (_server, url, log) = start_recording().await;
    let (status, _headers, body) = post_raw(&url, notification("ping", Value::Null).to_string()).await;
    assert_eq!((status, body.as_str()), (204, ""));
    let events = wait_for(&log, Stage::AfterResponse, 1).await;
    assert_eq!(
        stages_of(&events, events[1].call),
        [Stage::Before, Stage::AfterExecute, Stage::BeforeResponse, Stage::AfterResponse]
    );
}

#[tokio::test]
async fn listeners_run_in_the_order_given() {
    let log = Log::default();
    let (_server, url) = start(vec![
        Arc::new(Recorder { name: "first", log: log.clone() }),
        Arc::new(Recorder { name: "second", log: log.clone() }),
    ])
    .await;
    call_result(&url, "ping", Value::Null).await;
    let events = wait_for(&log, Stage::AfterResponse, 2).await;
    let order: Vec<(Stage, &str)> = events.iter().map(|e| (e.stage, e.hook)).collect();
    let mut expected = Vec::new();
    for stage in [Stage::Request, Stage::Before, Stage::AfterExecute, Stage::BeforeResponse, Stage::AfterResponse] {
        expected.push((stage, "first"));
        expected.push((stage, "second"));
    }
    assert_eq!(order, expected);
}

#[tokio::test]
async fn a_listener_can_refuse_a_call() {
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
    assert!(events.iter().any(|e| e.stage == Stage::Error), "and on_error: {events:#?}");

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

/// Rewrites requests and results: `greet` becomes `ping`, and every
/// `ping` result is wrapped.
struct Rewriter;

impl Listener for Rewriter {
    fn on_request<'a>(&'a self, request: &'a mut RequestEvent) -> MaybeReady<'a, Result<(), RpcError>> {
        MaybeReady::pending(async move {
            if request.method == "greet" {
                request.method = "ping".into();
                let mut named = Map::new();
                named.insert("who".into(), json!("rewritten"));
                request.params = Params::Named(named);
            }
            if request.method == "forbidden" {
                return Err(RpcError::new(-32003, "not here"));
            }
            Ok(())
        })
    }
    fn before_response<'a>(&'a self, call: &'a CallInfo, result: &'a mut InvokeResult) -> MaybeReady<'a, ()> {
        if call.method.name() == "ping"
            && let Ok(value) = result
        {
            let wrapped = format!("{{\"wrapped\":{}}}", value.get());
            *result = RawValue::from_string(wrapped).map_err(RpcError::internal);
        }
        MaybeReady::ready(())
    }
}

#[tokio::test]
async fn listeners_can_replace_the_request_and_the_outcome() {
    let (_server, url) = start(vec![Arc::new(Rewriter)]).await;
    assert_eq!(call_result(&url, "greet", json!({"ignored": true})).await, json!({"wrapped": "pong rewritten"}));
    assert_eq!(call_result(&url, "ping", json!(["x"])).await, json!({"wrapped": "pong x"}));
    let error = call_error(&url, "forbidden", Value::Null).await;
    assert_eq!(error["code"], json!(-32003), "{error}");
}

/// Panics in every event.
struct Panicker;

impl Listener for Panicker {
    fn on_request<'a>(&'a self, request: &'a mut RequestEvent) -> MaybeReady<'a, Result<(), RpcError>> {
        if request.method == "Catalog.reindex" {
            panic!("on_request bug");
        }
        MaybeReady::ready(Ok(()))
    }
    fn before_execute<'a>(&'a self, call: &'a CallInfo) -> MaybeReady<'a, Result<(), RpcError>> {
        if call.method.name() == "Catalog.categories" {
            // In the future, after an await.
            return MaybeReady::pending(async {
                tokio::task::yield_now().await;
                panic!("async before_execute bug")
            });
        }
        MaybeReady::ready(Ok(()))
    }
    fn after_execute<'a>(&'a self, _: &'a CallInfo, _: &'a InvokeResult) -> MaybeReady<'a, ()> {
        panic!("after_execute bug")
    }
    fn before_response<'a>(&'a self, _: &'a CallInfo, _: &'a mut InvokeResult) -> MaybeReady<'a, ()> {
        MaybeReady::pending(async { panic!("before_response bug") })
    }
    fn on_error<'a>(&'a self, _: &'a ErrorEvent<'a>) -> MaybeReady<'a, ()> {
        panic!("on_error bug")
    }
    fn after_response<'a>(&'a self, _: &'a CallInfo, _: &'a RawValue) -> MaybeReady<'a, ()> {
        panic!("after_response bug")
    }
}

#[tokio::test]
async fn a_panicking_listener_never_breaks_the_response() {
    let log = Log::default();
    let (_server, url) = start(vec![Arc::new(Panicker), Arc::new(Recorder { name: "rec", log: log.clone() })]).await;
    // Observing events panic: the call goes on, the next listener still runs.
    assert_eq!(call_result(&url, "ping", json!(["p"])).await, json!("pong p"));
    wait_for(&log, Stage::AfterResponse, 1).await;
    // A guard that panics refuses the call, with a well-formed error.
    for method in ["Catalog.reindex", "Catalog.categories"] {
        let error = call_error(&url, method, Value::Null).await;
        assert_eq!(error["code"], json!(-32603), "{method}: {error}");
    }
    // In a batch, each call is answered; the connection survives.
    let batch = json!([request("ping", Value::Null, json!(1)), request("Catalog.reindex", Value::Null, json!(2))]);
    let responses = jsonrpc_common::by_id(&post_ok(&url, &batch).await);
    assert_eq!(responses["1"][0]["result"], json!("pong x"));
    expect_error(&responses["2"][0], -32603);
    assert_eq!(call_result(&url, "ping", Value::Null).await, json!("pong x"));
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

#[tokio::test]
async fn the_catalog_counts_calls_with_its_listener() {
    let server = TestServer::catalog(Environment::Dev).await;
    let url = server.url("/rpc");
    call_result(&url, "ping", Value::Null).await;
    call_result(&url, "ping", json!(["again"])).await;
    call_error(&url, "Catalog.get", json!({"id": 999})).await;
    call_error(&url, "Catalog.get", json!({"id": 0})).await;
    call_error(&url, "no.such.method", Value::Null).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let summary = call_result(&url, "Activity.summary", Value::Null).await;
        if summary["ping"]["answered"] == 2 {
            assert_eq!(summary["ping"]["failed"], 0, "{summary}");
            assert_eq!(summary["Catalog.get"], json!({"answered": 0, "failed": 2}), "{summary}");
            assert_eq!(summary["(no such method)"]["failed"], 1, "client-chosen names are not keys: {summary}");
            assert!(summary.get("no.such.method").is_none(), "{summary}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the listener counted the calls: {summary}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
