//! MCP tasks on the workers: a catalog web process started with
//! `--amqp-url --redis-url` hands the tasks of `Catalog.reindex` (`task =
//! optional`) to `<queue>.tasks`, and `catalog worker` processes (same
//! options) run them, recording them in Redis, where the web process reads
//! them for `tasks/get`.
//!
//! * a task completes on the worker and `tasks/get` on the web process
//!   returns its result; `tasks/cancel` on the web process stops the next
//!   one on the worker;
//! * a worker SIGKILLed mid-task: the message is redelivered to a second
//!   worker and the task completes once;
//! * forged, unsigned and unreadable task messages are dead-lettered unrun;
//! * the broker down at publish: `-32000`, the task failed in the store.
//!
//! * a task that asks a question: the catalog's only task tool asks none,
//!   so this one runs a fixture tool on a web endpoint and a
//!   `mcp::amqp::TaskWorker` in this test process, on the same broker and
//!   Redis: the question appears in `inputRequests` on the web endpoint, is
//!   answered there with `tasks/update`, and the task completes on the
//!   worker.

use std::time::Duration;

use lapin::options::QueueDeclareOptions;
use lapin::types::{FieldTable, ShortString};
use lapin::{Connection, ConnectionProperties};
use serde_json::{Value, json};

use super::redis_server::Redis;
use super::{Process, SECRET, StdListener, broker, delete_queues, eventually, put, unique_queue};

/// A web process publishing MCP tasks (and its Redis prefix).
fn web(broker: &str, queue: &str, redis: &Redis) -> Process {
    let args = ["--listen", "127.0.0.1:0", "--env", "prod", "--amqp-url", broker, "--amqp-queue", queue];
    Process::spawn(&[&args[..], &["--redis-url", &redis.url, "--redis-prefix", &redis.prefix]].concat(), true)
}

/// A worker running MCP tasks (and asynchronous calls).
fn worker(broker: &str, queue: &str, redis: &Redis) -> Process {
    let args = ["worker", "--env", "prod", "--amqp-url", broker, "--amqp-queue", queue];
    let more = ["--redis-url", &redis.url, "--redis-prefix", &redis.prefix, "--callback-allow", "http://127.0.0.1:9/"];
    Process::spawn(&[&args[..], &more[..]].concat(), false)
}

/// One 2026-07-28 request with the tasks extension to the web process's
/// `/mcp/v1`: the response's JSON.
async fn mcp(web: &Process, method: &str, params: Value) -> Value {
    let base = web.base.as_deref().expect("a web process");
    mcp_at(&format!("{base}/mcp/v1"), method, params).await
}

/// One 2026-07-28 request with the tasks extension to the MCP endpoint at `url`.
async fn mcp_at(url: &str, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "amqp-test", "version": "1.0.0"}
    });
    let name = params.get("taskId").or_else(|| params.get("name")).and_then(Value::as_str).map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let text = request.body(body.to_string()).send().await.expect("sent").text().await.expect("a body");
    serde_json::from_str(&text).unwrap_or_else(|_| {
        let data = text.lines().filter_map(|l| l.strip_prefix("data:")).next_back().unwrap_or("null");
        serde_json::from_str(data.trim()).expect("JSON")
    })
}

/// Starts `Catalog.reindex` as a task: its id.
async fn start_reindex(web: &Process, pause_ms: u64) -> String {
    let created = mcp(web, "tools/call", json!({"name": "Catalog.reindex", "arguments": {"pause_ms": pause_ms}})).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().expect("a task id").to_owned()
}

async fn status(web: &Process, id: &str) -> Value {
    mcp(web, "tasks/get", json!({"taskId": id})).await["result"].clone()
}

async fn wait_status(web: &Process, id: &str, wanted: &str, patience: Duration) -> Value {
    let what = format!("task {id} {wanted}");
    eventually(patience, &what, async || status(web, id).await["status"] == wanted).await;
    status(web, id).await
}

fn services(broker: Option<String>) -> Option<(String, Redis)> {
    let broker = broker?;
    let redis = Redis::start()?;
    Some((broker, redis))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_completes_on_a_worker_and_cancel_stops_it_there() {
    let Some((broker, redis)) = services(broker()) else { return };
    let queue = unique_queue();
    let web = web(&broker, &queue, &redis);
    let worker = worker(&broker, &queue, &redis);
    worker.wait_log("task worker consuming", Duration::from_secs(20)).await;

    let id = start_reindex(&web, 300).await;
    let done = wait_status(&web, &id, "completed", Duration::from_secs(20)).await;
    assert_eq!(done["result"]["structuredContent"]["result"], 1, "{done}");
    assert_eq!(worker.logged("running queued task"), 1);
    assert_eq!(worker.logged("queued task done: the task ran"), 1);
    assert_eq!(web.logged("running queued task"), 0, "the web process runs nothing");

    // A long one, cancelled on the web process while the worker runs it.
    let id = start_reindex(&web, 4000).await;
    eventually(Duration::from_secs(10), "the second run", async || worker.logged("running queued task") == 2).await;
    let ack = mcp(&web, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    worker.wait_log("cancelled or expired while it ran", Duration::from_secs(3)).await;
    let cancelled = status(&web, &id).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(status(&web, &id).await["status"], "cancelled", "the worker recorded no end over the cancellation");
    drop((web, worker));
    delete_queues(&broker, &queue).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_mid_task_leaves_it_to_another_and_it_completes_once() {
    let Some((broker, redis)) = services(broker()) else { return };
    let queue = unique_queue();
    let web = web(&broker, &queue, &redis);
    let mut first = worker(&broker, &queue, &redis);
    first.wait_log("task worker consuming", Duration::from_secs(20)).await;
    let id = start_reindex(&web, 3000).await;
    first.wait_log("running queued task", Duration::from_secs(10)).await;
    first.child.kill().expect("SIGKILL"); // in the middle of its 3 s run
    let _ = first.child.wait();
    assert_eq!(status(&web, &id).await["status"], "working");
    // `Catalog.reindex` holds a 5 s lock in Redis, which the killed worker never released.
    tokio::time::sleep(Duration::from_millis(5500)).await;

    let second = worker(&broker, &queue, &redis);
    let done = wait_status(&web, &id, "completed", Duration::from_secs(20)).await;
    assert_eq!(done["result"]["structuredContent"]["result"], 1, "{done}");
    assert_eq!(second.logged("attempt=2"), 1, "the second worker ran the redelivered message");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(second.logged("running queued task"), 1, "run once");
    assert_eq!(status(&web, &id).await["status"], "completed");
    drop((web, second));
    delete_queues(&broker, &queue).await;
}

/// A task message as a web process writes it.
fn task_message(task: &str) -> Vec<u8> {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    serde_json::to_vec(&json!({
        "v": 1, "taskId": task, "tool": "Catalog.reindex", "version": 1, "protocol": "2026-07-28",
        "arguments": {"pause_ms": 0}, "owner": null, "identity": null, "language": "en", "capabilities": null,
        "clientInfo": null, "peer": null, "inputBytes": 14, "issuedAt": now,
    }))
    .expect("JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_task_messages_are_dead_lettered_unrun() {
    let Some((broker, redis)) = services(broker()) else { return };
    let queue = unique_queue();
    let worker = worker(&broker, &queue, &redis);
    worker.wait_log("task worker consuming", Duration::from_secs(20)).await;
    let tasks = format!("{queue}.tasks");
    let connection = Connection::connect(&broker, ConnectionProperties::default()).await.expect("broker");
    let channel = connection.create_channel().await.expect("channel");
    channel.confirm_select(Default::default()).await.expect("confirms");

    let forged = task_message("forged-task");
    put(&channel, &tasks, &forged, Some(rpc::amqp::wire::sign(b"another secret, not ours", &forged))).await;
    put(&channel, &tasks, &forged, None).await;
    put(&channel, &tasks, b"{\"v\":1}", Some(rpc::amqp::wire::sign(SECRET.as_bytes(), b"{\"v\":1}"))).await;
    let mut old: Value = serde_json::from_slice(&task_message("old-task")).expect("JSON");
    old["issuedAt"] = json!(1_000);
    let old = serde_json::to_vec(&old).expect("JSON");
    put(&channel, &tasks, &old, Some(rpc::amqp::wire::sign(SECRET.as_bytes(), &old))).await;

    let dead = format!("{tasks}.dead");
    let dead_letters = async || {
        let passive = QueueDeclareOptions { passive: true, ..QueueDeclareOptions::default() };
        let declared = channel.queue_declare(ShortString::from(dead.clone()), passive, FieldTable::default()).await;
        declared.map_or(0, |q| q.message_count())
    };
    eventually(Duration::from_secs(20), "four dead letters", async || dead_letters().await == 4).await;
    assert_eq!(worker.logged("queue message refused"), 4);
    assert_eq!(worker.logged("missing or wrong signature"), 2);
    assert_eq!(worker.logged("running queued task"), 0, "nothing ran");
    let _ = connection.close(200, ShortString::from("done")).await;
    drop(worker);
    delete_queues(&broker, &queue).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_refused_and_failed_when_the_broker_is_down() {
    let Some(redis) = Redis::start() else { return };
    let port = StdListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let broker = format!("amqp://guest:guest@127.0.0.1:{port}/%2f");
    let web = web(&broker, "rpc.async", &redis);
    let refused = mcp(&web, "tools/call", json!({"name": "Catalog.reindex", "arguments": {"pause_ms": 0}})).await;
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("not accepted") && message.contains("broker"), "{message}");
    assert!(refused.get("result").is_none());
    let id = refused["error"]["data"]["taskId"].as_str().expect("the task's id");
    let failed = status(&web, id).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32000, "{failed}");
    assert_eq!(web.logged("the queue did not take it"), 1);
}

mod asking {
    use mcp::{AskClient, mcp_tool};
    use rpc::RpcError;

    rpc::api_group!(pub struct Asking => "asking", mcp = true);

    /// A task that asks a question.
    pub struct Ask;

    #[rpc::service(alias = "asking", groups(Asking))]
    impl Ask {
        /// Asks a name, then greets.
        #[mcp_tool(task = required)]
        pub async fn greet(&self, ctx: mcp::Context) -> Result<String, RpcError> {
            let form = serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let name = ctx.elicit("name", "Name?", form).await?.accepted_str("name").unwrap_or("-").to_owned();
            Ok(format!("hello {name}"))
        }
    }
}

/// A web endpoint and a task worker of the `asking` group on `broker` and
/// `redis`; the web endpoint's URL, and what stops both.
async fn asking_pair(broker: &str, queue: &str, redis: &Redis) -> (String, tokio::sync::watch::Sender<bool>) {
    use std::sync::Arc;
    let executor = || {
        let registry = rpc::Registry::builder().service(asking::Ask).build().expect("registry");
        rpc::Executor::new(registry, rpc::Environment::Prod)
    };
    let connected = rpc::store::redis::RedisStore::connect(&redis.url).await.expect("redis");
    let store: Arc<dyn mcp::tasks::TaskStore> =
        Arc::new(mcp::tasks::RedisTaskStore::new(connected.with_prefix(&redis.prefix)));
    let config = rpc::amqp::AmqpConfig::new(broker, SECRET).expect("config").queue(queue).expect("queue");
    let queue = Arc::new(mcp::amqp::AmqpTaskQueue::new(&config).expect("a task queue"));
    // As a web process does at start-up: connected, the queues declared, before the first call.
    queue.connect().await.expect("the broker");
    let web = mcp::McpEndpoint::builder::<asking::Asking>(executor())
        .task_store(Arc::clone(&store))
        .task_queue(queue)
        .expect("a shared store")
        .build();
    let worker = mcp::McpEndpoint::builder::<asking::Asking>(executor()).task_store(store).build();
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let until = |mut stopping: tokio::sync::watch::Receiver<bool>| async move {
        let _ = stopping.wait_for(|stopped| *stopped).await;
    };
    let router = rpc::server::Router::new().nest("/mcp", web);
    tokio::spawn(rpc::server::serve(listener, router, until(stopping.clone())));
    let worker = mcp::amqp::TaskWorker::new(worker, &config).expect("a task worker");
    tokio::spawn(worker.run(until(stopping)));
    (url, stop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_of_a_task_on_a_worker_is_answered_on_the_web_endpoint() {
    let Some((broker, redis)) = services(broker()) else { return };
    let queue = unique_queue();
    let (url, stop) = asking_pair(&broker, &queue, &redis).await;
    let created = mcp_at(&url, "tools/call", json!({"name": "asking.greet", "arguments": {}})).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().expect("a task id").to_owned();
    let get = async || mcp_at(&url, "tasks/get", json!({"taskId": id})).await["result"].clone();
    eventually(Duration::from_secs(20), "the question", async || get().await["status"] == "input_required").await;
    let asking = get().await;
    assert_eq!(asking["inputRequests"]["name"]["method"], "elicitation/create", "{asking}");
    assert_eq!(asking["inputRequests"]["name"]["params"]["message"], "Name?", "{asking}");
    let answer = json!({"taskId": id, "inputResponses": {"name": {"action": "accept", "content": {"name": "Ann"}}}});
    let ack = mcp_at(&url, "tasks/update", answer).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    eventually(Duration::from_secs(10), "the answer seen by the worker", async || get().await["status"] == "completed")
        .await;
    assert_eq!(get().await["result"]["structuredContent"]["result"], "hello Ann");
    let _ = stop.send(true);
    delete_queues(&broker, &queue).await;
}
