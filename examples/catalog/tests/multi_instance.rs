//! Several catalog processes sharing one Redis (`--redis-url`), as behind a
//! load balancer: a session opened through one instance is used through the
//! other, a result cached by one is served by the other (and a bypass
//! refreshes it for both), a lock taken through one refuses the other; and
//! when an instance is killed in the middle of a locked call, its lock
//! expires after its TTL while sessions and cached results survive.
//!
//! Needs a Redis: `RPC_TEST_REDIS_URL`, or `redis-server` on `PATH` (see
//! `tests/src/redis_server.rs`); skipped without one unless `RPC_REQUIRE_REDIS=1`.

#[path = "../../../tests/src/redis_server.rs"]
mod redis_server;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redis_server::Redis;
use serde_json::{Value, json};

/// A running catalog process, killed when dropped.
struct Instance {
    child: Child,
    base: String,
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Instance {
    fn start(redis: &Redis) -> Instance {
        Instance::start_with(redis, &[])
    }

    /// An instance with extra command-line arguments (`--token`, ...).
    fn start_with(redis: &Redis, args: &[&str]) -> Instance {
        let mut child = Command::new(env!("CARGO_BIN_EXE_catalog"))
            .args([
                "--listen",
                "127.0.0.1:0",
                "--env",
                "prod",
                "--redis-url",
                &redis.url,
                "--redis-prefix",
                &redis.prefix,
            ])
            .args(args)
            .env_remove("RPC_TOKENS")
            .env_remove("RPC_IDENTITY_KEY")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the catalog starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("a line on stdout");
        let base = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("unexpected: {line}")).to_owned();
        Instance { child, base }
    }

    async fn rpc(&self, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let response =
            reqwest::Client::new().post(format!("{}/rpc", self.base)).json(&body).send().await.expect("sent");
        response.json().await.expect("a JSON-RPC response")
    }

    async fn mcp(&self, session: Option<&str>, body: Value) -> (u16, Option<String>, Value) {
        let mut request = reqwest::Client::new()
            .post(format!("{}/mcp/v1", self.base))
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(&body);
        if let Some(id) = session {
            request = request.header("mcp-session-id", id);
        }
        let response = request.send().await.expect("sent");
        let status = response.status().as_u16();
        let id = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let text = response.text().await.expect("body");
        (status, id, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Opens an MCP session (handshake era): its id.
    async fn open_session(&self) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "multi", "version": "1"}}});
        let (status, id, _) = self.mcp(None, init).await;
        assert_eq!(status, 200);
        let id = id.expect("a session id");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(self.mcp(Some(&id), initialized).await.0, 202);
        id
    }

    async fn tool(&self, session: &str, name: &str, arguments: Value) -> (u16, Value) {
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
        let (status, _, body) = self.mcp(Some(session), call).await;
        (status, body)
    }
}

/// Polls `check` until it holds (fails after `patience`).
async fn eventually<F: AsyncFn() -> bool>(patience: Duration, what: &str, check: F) {
    let deadline = Instant::now() + patience;
    while !check().await {
        assert!(Instant::now() < deadline, "{what}: not within {patience:?}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Whether the reindex lock is held, read from Redis (probing with a call
/// would take the lock when it is free).
async fn reindex_locked(redis: &Redis) -> bool {
    let client = ::redis::Client::open(redis.url.as_str()).expect("redis URL");
    let mut connection = client.get_multiplexed_async_connection().await.expect("redis connection");
    let key = format!("{}rpc:lock:Catalog.reindex", redis.prefix);
    ::redis::cmd("EXISTS").arg(key).query_async::<bool>(&mut connection).await.expect("EXISTS")
}

/// How many `Catalog.get` results are cached in Redis (waiting on this,
/// rather than probing with a call, keeps the test's own calls from
/// caching a value first).
async fn cached_gets(redis: &Redis) -> usize {
    let client = ::redis::Client::open(redis.url.as_str()).expect("redis URL");
    let mut connection = client.get_multiplexed_async_connection().await.expect("redis connection");
    let pattern = format!("{}rpc:cache:Catalog.get:v1:*", redis.prefix);
    ::redis::cmd("KEYS").arg(pattern).query_async::<Vec<String>>(&mut connection).await.expect("KEYS").len()
}

fn name(response: &Value) -> Value {
    response["result"]["name"].clone()
}

#[tokio::test]
async fn two_instances_share_sessions_cache_and_locks() {
    let Some(redis) = Redis::start() else { return };
    let a = Instance::start(&redis);
    let b = Instance::start(&redis);

    // A session opened through A is used through B.
    let session = a.open_session().await;
    let (status, _, listed) = b.mcp(Some(&session), json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})).await;
    assert_eq!(status, 200, "B knows A's session: {listed}");
    assert!(listed["result"]["tools"].as_array().is_some_and(|tools| !tools.is_empty()), "{listed}");

    // A's rename invalidates and warms up `Catalog.get` for id 5 in Redis:
    // B, whose own data still says `n5`, serves A's cached `alpha`.
    let renamed = a.rpc("Catalog.rename", json!({"id": 5, "name": "alpha"})).await;
    assert_eq!(name(&renamed), "alpha", "{renamed}");
    eventually(Duration::from_secs(5), "A warms the entry up", async || cached_gets(&redis).await == 1).await;
    assert_eq!(name(&b.rpc("Catalog.get", json!({"id": 5})).await), "alpha", "B serves the result A cached");
    // Over MCP too, through the session A opened.
    let (status, body) = b.tool(&session, "Catalog.get", json!({"id": 5})).await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["structuredContent"]["result"]["name"], "alpha", "{body}");
    // B bypasses the cache: it computes `n5` and stores it, so A serves it now.
    let fresh = b.rpc("Catalog.get", json!({"id": 5, "$rpc": {"ignoreCache": true}})).await;
    assert_eq!(name(&fresh), "n5");
    assert_eq!(name(&a.rpc("Catalog.get", json!({"id": 5})).await), "n5", "A serves what B stored");

    // A lock taken through A refuses B, until A's call ends.
    let slow = {
        let base = a.base.clone();
        tokio::spawn(async move {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "Catalog.reindex", "params": {"pause_ms": 1500}});
            let response = reqwest::Client::new().post(format!("{base}/rpc")).json(&body).send().await.expect("sent");
            response.json::<Value>().await.expect("JSON")
        })
    };
    eventually(Duration::from_secs(5), "A takes the lock", async || reindex_locked(&redis).await).await;
    let locked = b.rpc("Catalog.reindex", json!({})).await;
    assert_eq!(locked["error"]["message"], "Method 'Catalog.reindex' is locked", "{locked}");
    assert!(slow.await.expect("A's call")["result"].is_number(), "A's call completed");
    assert!(b.rpc("Catalog.reindex", json!({})).await["result"].is_number(), "released when A's call ended");
}

#[tokio::test]
async fn a_killed_instance_loses_nothing_but_its_call() {
    let Some(redis) = Redis::start() else { return };
    let mut a = Instance::start(&redis);
    let b = Instance::start(&redis);
    let session = a.open_session().await;
    assert_eq!(name(&a.rpc("Catalog.rename", json!({"id": 9, "name": "kept"})).await), "kept");
    eventually(Duration::from_secs(5), "the warmed result is in Redis", async || cached_gets(&redis).await == 1).await;
    assert_eq!(name(&b.rpc("Catalog.get", json!({"id": 9})).await), "kept");

    // A takes the reindex lock (TTL 5 s) for a long call, and dies in it.
    let base = a.base.clone();
    let doomed = tokio::spawn(async move {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "Catalog.reindex", "params": {"pause_ms": 4000}});
        reqwest::Client::new().post(format!("{base}/rpc")).json(&body).send().await
    });
    eventually(Duration::from_secs(5), "A holds the lock", async || reindex_locked(&redis).await).await;
    let killed_at = Instant::now();
    a.child.kill().expect("kill A");
    let _ = a.child.wait();
    assert!(doomed.await.expect("task").is_err(), "A's client lost its connection");

    // The lock outlives A until its TTL, then B gets it.
    assert_eq!(b.rpc("Catalog.reindex", json!({})).await["error"]["code"], -32400, "still held right after the kill");
    eventually(Duration::from_secs(10), "the dead instance's lock expires", async || {
        b.rpc("Catalog.reindex", json!({})).await["result"].is_number()
    })
    .await;
    let waited = killed_at.elapsed();
    assert!(waited < Duration::from_secs(7), "expired within its TTL (5 s), not later: {waited:?}");

    // Nothing else was lost: A's session and A's cached result live on in B.
    let (status, body) = b.tool(&session, "Catalog.get", json!({"id": 9})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["structuredContent"]["result"]["name"], "kept");
}

/// A JSON-RPC call to `base` with a bearer `token`.
async fn rpc_as(base: &str, token: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response =
        reqwest::Client::new().post(format!("{base}/rpc")).bearer_auth(token).json(&body).send().await.expect("sent");
    response.json().await.expect("a JSON-RPC response")
}

/// An MCP request to `base` with a bearer `token`: the status, the session
/// id the response names, the body.
async fn mcp_as(base: &str, token: &str, session: Option<&str>, body: Value) -> (u16, Option<String>, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/mcp/v1"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&body);
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    let response = request.send().await.expect("sent");
    let status = response.status().as_u16();
    let id = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let text = response.text().await.expect("body");
    (status, id, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Opens a session through `base` as `token`.
async fn open_session_as(base: &str, token: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "multi", "version": "1"}}});
    let (status, id, body) = mcp_as(base, token, None, init).await;
    assert_eq!(status, 200, "{body}");
    id.expect("a session id")
}

async fn list_tools_as(base: &str, token: &str, session: &str) -> u16 {
    mcp_as(base, token, Some(session), json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await.0
}

/// Callers are named by their token, not by where it stands in the list:
/// two instances listing the same tokens in another order agree on whose
/// sessions and cached results are whose, and an instance restarted without
/// a revoked token gives that token's sessions to nobody.
#[tokio::test]
async fn identities_follow_the_token_not_its_position() {
    let Some(redis) = Redis::start() else { return };
    let (alice, bob) = ("alice-token-0123456789", "bob-token-0123456789");
    let a = Instance::start_with(&redis, &["--token", alice, "--token", bob]);
    let b = Instance::start_with(&redis, &["--token", bob, "--token", alice]);

    let alices = open_session_as(&a.base, alice).await;
    assert_eq!(list_tools_as(&b.base, alice, &alices).await, 200, "Alice's session, through B");
    assert_eq!(list_tools_as(&b.base, bob, &alices).await, 404, "not Bob's, whatever B's token order");
    assert_eq!(list_tools_as(&a.base, bob, &alices).await, 404);

    // Alice renames product 6 through A: her `Catalog.get` is warmed in Redis.
    let renamed = rpc_as(&a.base, alice, "Catalog.rename", json!({"id": 6, "name": "alices"})).await;
    assert_eq!(name(&renamed), "alices");
    eventually(Duration::from_secs(5), "A warms Alice's entry", async || cached_gets(&redis).await == 1).await;
    assert_eq!(name(&rpc_as(&b.base, alice, "Catalog.get", json!({"id": 6})).await), "alices", "Alice's, through B");
    // Bob is not served Alice's entry: B computes his from its own data.
    assert_eq!(name(&rpc_as(&b.base, bob, "Catalog.get", json!({"id": 6})).await), "n6", "Bob gets his own");

    // A restarts with Alice's token revoked: Bob now stands first in the list.
    drop(a);
    let a = Instance::start_with(&redis, &["--token", bob]);
    assert_eq!(list_tools_as(&a.base, bob, &alices).await, 404, "a revoked token's session goes to nobody");
    assert_eq!(name(&rpc_as(&a.base, bob, "Catalog.get", json!({"id": 6})).await), "n6", "nor its cached results");
    let bobs = open_session_as(&a.base, bob).await;
    assert_eq!(list_tools_as(&b.base, bob, &bobs).await, 200, "Bob's session is his on every instance");
}

/// A rename by one caller refreshes the cached `Catalog.get` of every
/// caller, in Redis too (README: the rename "refreshes the cached
/// Catalog.get"): Bob's cached `n8` is not served after Alice's rename.
#[tokio::test]
async fn a_rename_by_one_caller_refreshes_every_callers_cached_get() {
    let Some(redis) = Redis::start() else { return };
    let (alice, bob) = ("alice-token-0123456789", "bob-token-0123456789");
    let a = Instance::start_with(&redis, &["--token", alice, "--token", bob]);
    assert_eq!(name(&rpc_as(&a.base, bob, "Catalog.get", json!({"id": 8})).await), "n8");
    eventually(Duration::from_secs(5), "Bob's entry is cached", async || cached_gets(&redis).await == 1).await;
    assert_eq!(name(&rpc_as(&a.base, alice, "Catalog.rename", json!({"id": 8, "name": "renamed"})).await), "renamed");
    eventually(Duration::from_secs(5), "Bob's cached n8 is not served after Alice's rename", async || {
        name(&rpc_as(&a.base, bob, "Catalog.get", json!({"id": 8})).await) == "renamed"
    })
    .await;
}

/// A Redis that stalls (SIGSTOP) under a running catalog: the first call to
/// reach it waits one response timeout (2 s); every call after it is served
/// at once (the cache is skipped, locked calls and sessions are refused)
/// until Redis answers again; a lock whose `SET NX` Redis applied late,
/// after it resumed, does not hold the method for its TTL (10 s).
#[tokio::test]
async fn a_stalled_redis_costs_one_timeout_and_holds_no_lock() {
    let Some(redis) = Redis::start_private() else { return };
    let a = Instance::start(&redis);
    let session = a.open_session().await;
    assert_eq!(name(&a.rpc("Catalog.get", json!({"id": 3})).await), "n3");

    redis.pause();
    let started = Instant::now();
    let locked = a.rpc("Catalog.rename", json!({"id": 4, "name": "late"})).await;
    assert_eq!(locked["error"]["code"], -32603, "the lock store did not answer: {locked}");
    let first = started.elapsed();
    assert!(first < Duration::from_secs(5), "one response timeout: {first:?}");
    for id in 1..=10 {
        let started = Instant::now();
        let got = a.rpc("Catalog.get", json!({"id": id})).await;
        assert_eq!(name(&got), format!("n{id}"), "served without the cache: {got}");
        assert!(started.elapsed() < Duration::from_millis(500), "no wait on Redis: {:?}", started.elapsed());
    }
    let started = Instant::now();
    let (status, _, _) = a.mcp(Some(&session), json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})).await;
    assert_eq!(status, 503, "a session that cannot be read is not served");
    assert!(started.elapsed() < Duration::from_millis(500), "{:?}", started.elapsed());

    redis.resume();
    let resumed = Instant::now();
    eventually(Duration::from_secs(5), "the rename runs again", async || {
        a.rpc("Catalog.rename", json!({"id": 4, "name": "late"})).await["result"]["name"] == "late"
    })
    .await;
    let waited = resumed.elapsed();
    assert!(waited < Duration::from_secs(4), "the late lock was released, not held 10 s: {waited:?}");
    let (status, _, _) = a.mcp(Some(&session), json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})).await;
    assert_eq!(status, 200, "the session is back");
}
