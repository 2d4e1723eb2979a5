//! `#[rpc::lock]`: a second concurrent call with the same key fails fast
//! with `-32400` ("Method 'X' is locked") instead of running twice, on
//! `/rpc` and MCP; other keys run side by side; the lock is released when
//! the call ends, also when it fails, panics or is abandoned, and expires
//! after its TTL; a failing lock store refuses the call.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use e2e_tests::raw_mcp::RawMcp;
use e2e_tests::{TestServer, post_json};
use rpc::clock::ManualClock;
use rpc::server::Router;
use rpc::store::{LockStore, MemoryLocks, StoreError};
use rpc::{Call, Environment, Executor, JsonRpcService, MaybeReady, Params, Registry};
use serde_json::{Value, json};

mod fixtures {
    use std::sync::atomic::{AtomicU32, Ordering};

    rpc::api_group!(pub struct Tools => "tools", mcp = true);

    /// Tracks how many calls run at once.
    #[derive(Default)]
    pub struct Jobs {
        /// Calls running now.
        pub running: AtomicU32,
        /// The most that ran at once.
        pub peak: AtomicU32,
        /// Calls that ran.
        pub runs: AtomicU32,
    }

    impl Jobs {
        async fn work(&self, ms: u64) -> u32 {
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.peak.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            self.running.fetch_sub(1, Ordering::SeqCst);
            self.runs.fetch_add(1, Ordering::SeqCst)
        }
    }

    #[rpc::service(groups(Tools))]
    impl Jobs {
        /// One transfer per account at a time.
        #[rpc::lock(param = "account", ttl = 30)]
        pub async fn transfer(&self, account: String, ms: u64) -> u32 {
            let _ = account;
            self.work(ms).await
        }

        /// One at a time, whatever the arguments.
        #[rpc::lock(ttl = 30)]
        pub async fn global(&self, #[rpc(default = 0)] ms: u64) -> u32 {
            self.work(ms).await
        }

        /// Panics while holding the lock.
        #[rpc::lock(param = "account")]
        pub fn boom(&self, account: String) -> u32 {
            panic!("boom for {account}")
        }

        /// Fails while holding the lock.
        #[rpc::lock(param = "account")]
        pub fn fails(&self, account: String) -> Result<u32, rpc::RpcError> {
            Err(rpc::RpcError::new(5, format!("no {account}")))
        }
    }
}

fn registry(jobs: Arc<fixtures::Jobs>) -> Registry {
    Registry::builder().service_arc(jobs).build().expect("registry")
}

async fn server(executor: Executor) -> TestServer {
    let app = Router::new()
        .nest("/rpc", JsonRpcService::new(executor.clone()))
        .nest("/mcp", mcp::McpEndpoint::builder::<fixtures::Tools>(executor).build());
    TestServer::start(app).await
}

async fn call(server: &TestServer, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    post_json(&server.url("/rpc"), &body).await.1
}

#[tokio::test]
async fn concurrent_calls_with_one_key_run_once_the_others_fail_fast() {
    let jobs = Arc::new(fixtures::Jobs::default());
    let server = Arc::new(server(Executor::new(registry(jobs.clone()), Environment::Dev)).await);
    let started = Instant::now();
    let calls: Vec<_> = (0..6)
        .map(|_| {
            let server = server.clone();
            tokio::spawn(async move {
                let reply = call(&server, "Jobs.transfer", json!({"account": "a", "ms": 400})).await;
                (reply, started.elapsed())
            })
        })
        .collect();
    let mut ran = 0;
    for handle in calls {
        let (reply, took) = handle.await.unwrap();
        if reply.get("result").is_some() {
            ran += 1;
        } else {
            assert_eq!(reply["error"]["code"], -32400, "{reply}");
            assert_eq!(reply["error"]["message"], "Method 'Jobs.transfer' is locked");
            assert!(took < Duration::from_millis(350), "refused at once, not after waiting: {took:?}");
        }
    }
    assert_eq!(ran, 1, "exactly one call ran");
    assert_eq!(jobs.peak.load(Ordering::SeqCst), 1);
    // Released when it ended.
    assert!(call(&server, "Jobs.transfer", json!({"account": "a", "ms": 1})).await["result"].is_number());
}

#[tokio::test]
async fn other_keys_run_side_by_side() {
    let jobs = Arc::new(fixtures::Jobs::default());
    let server = Arc::new(server(Executor::new(registry(jobs.clone()), Environment::Dev)).await);
    let a = tokio::spawn({
        let s = server.clone();
        async move { call(&s, "Jobs.transfer", json!({"account": "a", "ms": 300})).await }
    });
    let b = tokio::spawn({
        let s = server.clone();
        async move { call(&s, "Jobs.transfer", json!({"account": "b", "ms": 300})).await }
    });
    assert!(a.await.unwrap()["result"].is_number());
    assert!(b.await.unwrap()["result"].is_number());
    assert_eq!(jobs.peak.load(Ordering::SeqCst), 2, "accounts a and b at once");
}

#[tokio::test]
async fn released_after_a_failure_and_a_panic() {
    let server = server(Executor::new(registry(Arc::default()), Environment::Dev)).await;
    for _ in 0..3 {
        assert_eq!(call(&server, "Jobs.fails", json!({"account": "x"})).await["error"]["code"], 5);
        assert_eq!(call(&server, "Jobs.boom", json!({"account": "x"})).await["error"]["code"], -32603);
    }
}

#[tokio::test]
async fn released_when_the_call_is_abandoned() {
    let jobs = Arc::new(fixtures::Jobs::default());
    let executor = Executor::new(registry(jobs.clone()), Environment::Dev);
    let params = || Params::Named(json!({"ms": 5000}).as_object().cloned().unwrap_or_default());
    // The caller gives up (a client that went away drops the call the same way).
    let abandoned =
        tokio::time::timeout(Duration::from_millis(100), executor.execute(Call::new("Jobs.global", 1, params()))).await;
    assert!(abandoned.is_err(), "still running when abandoned");
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let quick = Params::Named(serde_json::Map::new());
        let execution = executor.execute(Call::new("Jobs.global", 1, quick)).await;
        if execution.result.is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "the abandoned call's lock was released");
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn a_lock_left_by_a_dead_holder_expires_after_its_ttl() {
    let clock = Arc::new(ManualClock::new());
    let locks = Arc::new(MemoryLocks::with_clock(clock.clone()));
    // Another process took the lock and died without releasing it.
    assert!(locks.acquire("rpc:lock:Jobs.global", "dead-process", Duration::from_secs(30)).await.unwrap());
    let executor = Executor::new(registry(Arc::default()), Environment::Dev).with_lock_store(locks);
    let run = || executor.execute(Call::new("Jobs.global", 1, Params::None));
    assert_eq!(run().await.result.unwrap_err().code(), -32400);
    clock.advance(Duration::from_secs(29));
    assert_eq!(run().await.result.unwrap_err().code(), -32400, "still within its ttl");
    clock.advance(Duration::from_secs(1));
    assert!(run().await.result.is_ok(), "expired after 30 s");
}

#[tokio::test]
async fn locks_hold_over_mcp_too() {
    let jobs = Arc::new(fixtures::Jobs::default());
    let server = server(Executor::new(registry(jobs.clone()), Environment::Dev)).await;
    let slow = tokio::spawn({
        let url = server.url("/rpc");
        async move {
            let body =
                json!({"jsonrpc": "2.0", "id": 1, "method": "Jobs.transfer", "params": {"account": "m", "ms": 500}});
            post_json(&url, &body.to_string()).await.1
        }
    });
    let deadline = Instant::now() + Duration::from_secs(2);
    while jobs.running.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let mut client = RawMcp::new(server.url("/mcp/v1"));
    client.initialize("2025-11-25").await;
    let reply = client.call("Jobs.transfer", json!({"account": "m", "ms": 1})).await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = reply["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("-32400") && text.contains("Method 'Jobs.transfer' is locked"), "{text}");
    assert!(slow.await.unwrap()["result"].is_number());
}

/// A lock store that is down.
struct Down(AtomicU32);

impl LockStore for Down {
    fn acquire<'a>(&'a self, _: &'a str, _: &'a str, _: Duration) -> MaybeReady<'a, Result<bool, StoreError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        MaybeReady::ready(Err(StoreError::new("connection refused")))
    }
    fn release<'a>(&'a self, _: &'a str, _: &'a str) -> MaybeReady<'a, Result<bool, StoreError>> {
        MaybeReady::ready(Err(StoreError::new("connection refused")))
    }
}

#[tokio::test]
async fn a_failing_lock_store_refuses_the_call() {
    let jobs = Arc::new(fixtures::Jobs::default());
    let down = Arc::new(Down(AtomicU32::new(0)));
    let executor = Executor::new(registry(jobs.clone()), Environment::Dev).with_lock_store(down.clone());
    let server = server(executor).await;
    let reply = call(&server, "Jobs.global", json!({})).await;
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
    assert_eq!(jobs.runs.load(Ordering::SeqCst), 0, "never ran unguarded");
    assert_eq!(down.0.load(Ordering::SeqCst), 1);
}
