//! Asynchronous calls on a real RabbitMQ: catalog web processes publish
//! `$rpc.callback` calls (`--amqp-url`), `catalog worker` processes run them
//! and post the responses to a callback receiver in this test.
//!
//! * a worker killed (SIGKILL) in the middle of a call: the message goes to
//!   the other worker, and the receiver gets exactly one response;
//! * messages put into the queue by hand: forged (another secret), unsigned
//!   and unreadable ones are dead-lettered and never run; a message
//!   delivered twice is posted once; the caller's identity travels with the
//!   call (a scoped identity is refused a method it lacks the scope for); a
//!   callback that keeps failing is retried, then dead-lettered;
//! * two copies of one call taken by two workers at once (a duplicate
//!   publish): one runs and posts, the other waits for its claim, then finds
//!   the call delivered;
//! * the broker down when a call is published: the call is refused with
//!   `-32000`, not acknowledged (no broker needed);
//! * the broker going away and coming back (a relay cuts the connections):
//!   calls are refused meanwhile, the publisher and the worker reconnect.
//!
//! * MCP tasks run on the workers (`tasks`, with a Redis: `RPC_TEST_REDIS_URL`
//!   or a `redis-server` on `PATH`).
//!
//! The broker is `RPC_TEST_AMQP_URL` (`.ci/run` starts one); without it the
//! broker tests say SKIPPED, unless `RPC_REQUIRE_AMQP=1` (CI), which makes
//! that a failure. Each test uses queues of its own.

#[allow(dead_code)]
#[path = "../../../tests/src/redis_server.rs"]
mod redis_server;
#[path = "amqp_workers/tasks.rs"]
mod tasks;

use std::io::{BufRead, BufReader};
use std::net::TcpListener as StdListener;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lapin::options::{BasicPublishOptions, QueueDeclareOptions, QueueDeleteOptions};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::{BasicProperties, Connection, ConnectionProperties};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const SECRET: &str = "test-secret-0123456789abcdef";

/// The broker's URL, or `None` (the test is skipped) without one.
fn broker() -> Option<String> {
    match std::env::var("RPC_TEST_AMQP_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("RPC_REQUIRE_AMQP").as_deref() != Ok("1"),
                "RPC_REQUIRE_AMQP=1 but RPC_TEST_AMQP_URL names no broker"
            );
            eprintln!("SKIPPED: no RPC_TEST_AMQP_URL (a RabbitMQ to test against)");
            None
        }
    }
}

/// A queue name no other test (or run) uses.
fn unique_queue() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    format!("test.{}.{now}.{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The POSTs a callback endpoint received: path and JSON body. Paths under
/// `/fail` are answered 500, the others 200.
#[derive(Clone, Default)]
struct Receiver {
    got: Arc<Mutex<Vec<(String, Value)>>>,
    port: u16,
}

impl Receiver {
    async fn start() -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let receiver = Receiver { got: Arc::default(), port: listener.local_addr().expect("addr").port() };
        let got = receiver.got.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let got = got.clone();
                tokio::spawn(async move {
                    let mut buffer = Vec::new();
                    let mut chunk = [0u8; 4096];
                    let (head_end, length) = loop {
                        let Ok(n) = stream.read(&mut chunk).await else { return };
                        if n == 0 {
                            return;
                        }
                        buffer.extend_from_slice(&chunk[..n]);
                        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
                            let length = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .and_then(|v| v.trim().parse::<usize>().ok())
                                .unwrap_or(0);
                            break (end + 4, length);
                        }
                    };
                    while buffer.len() < head_end + length {
                        let Ok(n) = stream.read(&mut chunk).await else { return };
                        if n == 0 {
                            return;
                        }
                        buffer.extend_from_slice(&chunk[..n]);
                    }
                    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
                    let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
                    let body = serde_json::from_slice(&buffer[head_end..head_end + length]).unwrap_or(Value::Null);
                    let status = if path.starts_with("/fail") { "500 Internal Server Error" } else { "200 OK" };
                    got.lock().unwrap().push((path, body));
                    let reply = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                    let _ = stream.write_all(reply.as_bytes()).await;
                });
            }
        });
        receiver
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// The bodies posted to `path`.
    fn posted(&self, path: &str) -> Vec<Value> {
        self.got.lock().unwrap().iter().filter(|(p, _)| p == path).map(|(_, body)| body.clone()).collect()
    }

    fn total(&self) -> usize {
        self.got.lock().unwrap().len()
    }
}

/// A catalog process (web or worker) whose log lines are collected; killed
/// (SIGKILL) when dropped.
struct Process {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
    base: Option<String>,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Process {
    fn spawn(args: &[&str], web: bool) -> Process {
        let mut child = Command::new(env!("CARGO_BIN_EXE_catalog"))
            .args(args)
            .env("RUST_LOG", "info")
            .env("RPC_AMQP_SECRET", SECRET)
            .env_remove("RPC_AMQP_URL")
            .env_remove("RPC_TOKENS")
            .env_remove("RPC_REDIS_URL")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the catalog starts");
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let stderr = child.stderr.take().expect("stderr");
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        let stdout = child.stdout.take().expect("stdout");
        let mut stdout = BufReader::new(stdout);
        let base = web.then(|| {
            let mut line = String::new();
            stdout.read_line(&mut line).expect("a line on stdout");
            line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("unexpected: {line}")).to_owned()
        });
        std::thread::spawn(move || for _ in stdout.lines().map_while(Result::ok) {});
        Process { child, log, base }
    }

    fn web(broker: &str, queue: &str, receiver: &Receiver) -> Process {
        let args = ["--listen", "127.0.0.1:0", "--env", "prod", "--amqp-url", broker, "--amqp-queue", queue];
        Process::spawn(&[&args[..], &["--callback-allow", &receiver.base()]].concat(), true)
    }

    fn worker(broker: &str, queue: &str, receiver: &Receiver, extra: &[&str]) -> Process {
        let base = receiver.base();
        let args = ["worker", "--env", "prod", "--amqp-url", broker, "--amqp-queue", queue, "--callback-allow", &base];
        Process::spawn(&[&args[..], extra].concat(), false)
    }

    fn logged(&self, needle: &str) -> usize {
        self.log.lock().unwrap().iter().filter(|l| l.contains(needle)).count()
    }

    async fn wait_log(&self, needle: &str, patience: Duration) {
        let what = format!("a log line with `{needle}`");
        eventually(patience, &what, async || self.logged(needle) > 0).await;
    }

    async fn rpc(&self, body: Value) -> Value {
        let base = self.base.as_deref().expect("a web process");
        let response = reqwest::Client::new().post(format!("{base}/rpc")).json(&body).send().await.expect("sent");
        response.json().await.expect("a JSON-RPC response")
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

/// Deletes a test's queues (best effort).
async fn delete_queues(broker: &str, queue: &str) {
    let Ok(connection) = Connection::connect(broker, ConnectionProperties::default()).await else { return };
    if let Ok(channel) = connection.create_channel().await {
        for name in [queue.to_owned(), format!("{queue}.dead"), format!("{queue}.tasks"), format!("{queue}.tasks.dead")]
        {
            let _ = channel.queue_delete(ShortString::from(name), QueueDeleteOptions::default()).await;
        }
    }
    let _ = connection.close(200, ShortString::from("done")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_mid_call_leaves_the_call_to_the_other_and_one_response_is_posted() {
    let Some(broker) = broker() else { return };
    let queue = unique_queue();
    let receiver = Receiver::start().await;
    let web = Process::web(&broker, &queue, &receiver);
    let mut first = Process::worker(&broker, &queue, &receiver, &[]);
    first.wait_log("worker consuming", Duration::from_secs(20)).await;

    let callback = format!("{}done", receiver.base());
    let call = json!({"jsonrpc": "2.0", "id": 41, "method": "Catalog.reindex",
                      "params": {"pause_ms": 3000, "$rpc": {"callback": callback}}});
    let ack = web.rpc(call).await;
    assert_eq!(ack["result"], json!({"async": true, "callback": callback}), "{ack}");
    first.wait_log("running queued call", Duration::from_secs(10)).await;

    let second = Process::worker(&broker, &queue, &receiver, &[]);
    second.wait_log("worker consuming", Duration::from_secs(20)).await;
    assert_eq!(second.logged("running queued call"), 0, "the call is held by the first worker");
    first.child.kill().expect("SIGKILL"); // in the middle of its 3 s call
    let _ = first.child.wait();

    eventually(Duration::from_secs(20), "the response", async || !receiver.posted("/done").is_empty()).await;
    assert_eq!(second.logged("attempt=2"), 1, "the second worker ran the redelivered message");
    // Nothing else arrives: one response, from the second worker.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(receiver.posted("/done"), [json!({"jsonrpc": "2.0", "id": 41, "result": 1})]);
    assert_eq!(receiver.total(), 1);
    drop((web, second));
    delete_queues(&broker, &queue).await;
}

/// Publishes `body` to `queue` with `signature` (if any) as the message's
/// signature header, as a web process would (confirmed).
async fn put(channel: &lapin::Channel, queue: &str, body: &[u8], signature: Option<String>) {
    let mut headers = FieldTable::default();
    if let Some(signature) = signature {
        headers.insert(ShortString::from("x-rpc-signature"), AMQPValue::LongString(LongString::from(signature)));
    }
    let properties = BasicProperties::default().with_delivery_mode(2).with_headers(headers);
    let confirm = channel
        .basic_publish(
            ShortString::from(""),
            ShortString::from(queue),
            BasicPublishOptions::default(),
            body,
            properties,
        )
        .await
        .expect("published");
    assert!(confirm.await.expect("confirmed").is_ack());
}

/// A message as a web process writes it.
fn message(dedup: &str, method: &str, params: Value, callback: &str, identity: Value) -> Vec<u8> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    serde_json::to_vec(&json!({
        "v": 1, "dedup": dedup, "issuedAt": now, "method": method, "version": 1, "params": params, "id": "7",
        "callback": callback, "headers": {}, "identity": identity, "ignoreCache": false, "timeoutMs": null, "rayId": null,
    }))
    .expect("JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_messages_are_refused_duplicates_posted_once_identities_kept_failures_dead_lettered() {
    let Some(broker) = broker() else { return };
    let queue = unique_queue();
    let receiver = Receiver::start().await;
    // One message at a time, so the duplicate comes after its twin is done (as a redelivery does).
    let extra = ["--amqp-prefetch", "1", "--amqp-attempts", "3", "--amqp-retry-delay-ms", "50"];
    let worker = Process::worker(&broker, &queue, &receiver, &extra);
    worker.wait_log("worker consuming", Duration::from_secs(20)).await;

    let connection = Connection::connect(&broker, ConnectionProperties::default()).await.expect("broker");
    let channel = connection.create_channel().await.expect("channel");
    channel.confirm_select(Default::default()).await.expect("confirms");
    let sign = |body: &[u8]| Some(rpc::amqp::wire::sign(SECRET.as_bytes(), body));
    let base = receiver.base();

    // Forged: signed with another secret; unsigned; signed but not a message.
    let forged = message(&"a".repeat(32), "Catalog.get", json!({"id": 7}), &format!("{base}forged"), Value::Null);
    put(&channel, &queue, &forged, Some(rpc::amqp::wire::sign(b"another secret, not ours", &forged))).await;
    put(&channel, &queue, &forged, None).await;
    put(&channel, &queue, b"\x00garbage", sign(b"\x00garbage")).await;
    // The same message twice.
    let twice = message(&"b".repeat(32), "Catalog.get", json!({"id": 7}), &format!("{base}twice"), Value::Null);
    put(&channel, &queue, &twice, sign(&twice)).await;
    put(&channel, &queue, &twice, sign(&twice)).await;
    // A caller limited to scopes without `catalog:admin`.
    let identity =
        json!({"subject": "alice", "scopes": ["catalog:read"], "scoped": true, "clientId": "app", "attributes": {}});
    let scoped = message(&"c".repeat(32), "Catalog.reindex", json!({}), &format!("{base}scoped"), identity);
    put(&channel, &queue, &scoped, sign(&scoped)).await;
    // A callback that answers 500: three attempts, then the dead-letter queue.
    let failing = message(&"d".repeat(32), "Catalog.get", json!({"id": 8}), &format!("{base}fail"), Value::Null);
    put(&channel, &queue, &failing, sign(&failing)).await;

    let dead = format!("{queue}.dead");
    let dead_letters = async || {
        let passive = QueueDeclareOptions { passive: true, ..QueueDeclareOptions::default() };
        let declared = channel.queue_declare(ShortString::from(dead.clone()), passive, FieldTable::default()).await;
        declared.map_or(0, |q| q.message_count())
    };
    eventually(Duration::from_secs(20), "four dead letters", async || dead_letters().await == 4).await;
    eventually(Duration::from_secs(5), "the scoped call's response", async || !receiver.posted("/scoped").is_empty())
        .await;

    assert!(receiver.posted("/forged").is_empty(), "a forged message never runs");
    assert_eq!(worker.logged("queue message refused"), 3);
    assert_eq!(worker.logged("missing or wrong signature"), 2);
    assert_eq!(receiver.posted("/twice"), [json!({"jsonrpc": "2.0", "id": 7, "result": {"id": 7, "name": "n7"}})]);
    assert_eq!(worker.logged("already delivered"), 1);
    let refused = &receiver.posted("/scoped")[0];
    assert_eq!(refused["error"]["code"], -32403, "{refused}");
    let failed = receiver.posted("/fail");
    assert_eq!(failed.len(), 3, "three attempts: {failed:?}");
    assert!(failed.iter().all(|body| body["result"]["id"] == 8));
    assert_eq!(worker.logged("callback failed on the last attempt"), 1);

    let _ = connection.close(200, ShortString::from("done")).await;
    drop(worker);
    delete_queues(&broker, &queue).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_copies_of_a_call_at_once_run_and_post_once() {
    let Some(broker) = broker() else { return };
    let Some(redis) = redis_server::Redis::start() else { return };
    let queue = unique_queue();
    let receiver = Receiver::start().await;
    let shared = ["--redis-url", &redis.url, "--redis-prefix", &redis.prefix];
    let workers =
        [Process::worker(&broker, &queue, &receiver, &shared), Process::worker(&broker, &queue, &receiver, &shared)];
    for worker in &workers {
        worker.wait_log("worker consuming", Duration::from_secs(20)).await;
    }
    let connection = Connection::connect(&broker, ConnectionProperties::default()).await.expect("broker");
    let channel = connection.create_channel().await.expect("channel");
    channel.confirm_select(Default::default()).await.expect("confirms");
    // A duplicate publish: one call (one deduplication id), two messages, taken at once.
    let call = message(
        &"e".repeat(32),
        "Catalog.reindex",
        json!({"pause_ms": 1500}),
        &format!("{}claimed", receiver.base()),
        Value::Null,
    );
    let signature = rpc::amqp::wire::sign(SECRET.as_bytes(), &call);
    put(&channel, &queue, &call, Some(signature.clone())).await;
    put(&channel, &queue, &call, Some(signature)).await;

    eventually(Duration::from_secs(20), "the response", async || !receiver.posted("/claimed").is_empty()).await;
    let logged = |needle: &str| workers.iter().map(|w| w.logged(needle)).sum::<usize>();
    eventually(Duration::from_secs(20), "the twin settled", async || logged("already delivered") == 1).await;
    assert!(logged("another worker holds this call") >= 1, "the twin waited for the claim");
    assert_eq!(
        receiver.posted("/claimed"),
        [json!({"jsonrpc": "2.0", "id": 7, "result": 1})],
        "posted once, no -32400"
    );
    let _ = connection.close(200, ShortString::from("done")).await;
    drop(workers);
    delete_queues(&broker, &queue).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_is_refused_not_acknowledged_when_the_broker_is_down() {
    // A port nobody listens on.
    let port = StdListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let broker = format!("amqp://guest:guest@127.0.0.1:{port}/%2f");
    let receiver = Receiver::start().await;
    let web = Process::web(&broker, "rpc.async", &receiver);
    let callback = format!("{}done", receiver.base());
    for id in [1, 2] {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "Catalog.get",
                          "params": {"id": 7, "$rpc": {"callback": callback}}});
        let answer = web.rpc(call).await;
        assert_eq!(answer["error"]["code"], -32000, "{answer}");
        assert_eq!(answer["error"]["data"]["exception"], "rpc::QueueUnavailable", "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("not accepted") && message.contains("broker"), "{message}");
        assert!(answer.get("result").is_none());
    }
    // Calls without a callback are not affected.
    let plain = web.rpc(json!({"jsonrpc": "2.0", "id": 3, "method": "Catalog.get", "params": {"id": 7}})).await;
    assert_eq!(plain["result"]["id"], 7, "{plain}");
    assert_eq!(web.logged("the queue did not take it"), 2);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.total(), 0);
}

/// A TCP relay to the broker that can cut every connection and refuse new
/// ones (a broker gone away), then let them through again.
struct Relay {
    url: String,
    up: Arc<std::sync::atomic::AtomicBool>,
    pipes: Arc<Mutex<Vec<tokio::task::AbortHandle>>>,
}

impl Relay {
    /// A relay to the broker of `broker` (`amqp://user:pw@host:port/vhost`): its URL goes through the relay.
    async fn start(broker: &str) -> Relay {
        let (head, rest) = broker.split_once('@').expect("a broker URL with credentials");
        let (target, vhost) = rest.split_once('/').expect("a broker URL with a vhost");
        let target = target.to_owned();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("{head}@{}/{vhost}", listener.local_addr().expect("addr"));
        let up = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let pipes: Arc<Mutex<Vec<tokio::task::AbortHandle>>> = Arc::default();
        let (open, list) = (up.clone(), pipes.clone());
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if !open.load(Ordering::SeqCst) {
                    continue; // dropped: the connection is refused
                }
                let target = target.clone();
                let pipe = tokio::spawn(async move {
                    if let Ok(mut server) = tokio::net::TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                list.lock().unwrap().push(pipe.abort_handle());
            }
        });
        Relay { url, up, pipes }
    }

    /// The broker goes away: open connections are cut, new ones refused.
    fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        for pipe in self.pipes.lock().unwrap().drain(..) {
            pipe.abort();
        }
    }

    /// The broker is back.
    fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publisher_and_worker_reconnect_when_the_broker_comes_back() {
    let Some(broker) = broker() else { return };
    let queue = unique_queue();
    let relay = Relay::start(&broker).await;
    let receiver = Receiver::start().await;
    let web = Process::web(&relay.url, &queue, &receiver);
    let worker = Process::worker(&relay.url, &queue, &receiver, &[]);
    worker.wait_log("worker consuming", Duration::from_secs(20)).await;
    let call = |path: &str, id: u32| {
        let callback = format!("{}{path}", receiver.base());
        json!({"jsonrpc": "2.0", "id": id, "method": "Catalog.get", "params": {"id": id, "$rpc": {"callback": callback}}})
    };
    assert_eq!(web.rpc(call("before", 1)).await["result"]["async"], true);
    eventually(Duration::from_secs(10), "the first response", async || receiver.posted("/before").len() == 1).await;

    relay.cut();
    worker.wait_log("lost the message broker", Duration::from_secs(10)).await;
    let refused = web.rpc(call("never", 2)).await;
    assert_eq!(refused["error"]["data"]["exception"], "rpc::QueueUnavailable", "{refused}");

    relay.restore();
    // The publisher tries again after its backoff; calls are refused, never lost, until then.
    let mut accepted = false;
    for _ in 0..100 {
        let answer = web.rpc(call("after", 3)).await;
        if answer["result"]["async"] == true {
            accepted = true;
            break;
        }
        assert_eq!(answer["error"]["data"]["exception"], "rpc::QueueUnavailable", "{answer}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(accepted, "the publisher reconnected");
    eventually(Duration::from_secs(20), "the response after", async || receiver.posted("/after").len() == 1).await;
    assert!(worker.logged("worker consuming") >= 2, "the worker reconnected");
    assert!(receiver.posted("/never").is_empty());
    drop((web, worker));
    delete_queues(&broker, &queue).await;
}
