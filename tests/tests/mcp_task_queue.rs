//! Tasks handed to a task queue (`McpEndpointBuilder::task_queue`) and run
//! by a worker (`McpEndpoint::run_queued_task`), through the seam: an
//! in-memory queue between a web endpoint and a worker endpoint sharing one
//! task store. The worker runs the task, its questions are answered with
//! `tasks/update` on the web endpoint, `tasks/cancel` there stops it on the
//! worker, a redelivered message of an ended task does not run it again, a
//! queue that refuses fails the task with `-32000`, and a queue without a
//! shared store is refused at build. (Against a real RabbitMQ and Redis:
//! `examples/catalog/tests/amqp_workers.rs`.)

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use e2e_tests::TestServer;
use e2e_tests::modern_mcp::Modern;
use futures_util::future::BoxFuture;
use mcp::tasks::{MemoryTaskStore, QueuedRun, StoreError, TaskJob, TaskQueue, TaskStore};
use rpc::Environment;
use rpc::jsonrpc::QueueError;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// How many `queued.slow` calls ran to their end.
static RAN: AtomicUsize = AtomicUsize::new(0);

mod fixtures {
    use std::time::Duration;

    use mcp::{AskClient, mcp_tool};
    use rpc::RpcError;

    rpc::api_group!(pub struct Queued => "queued", mcp = true);

    /// Task fixtures run by a worker.
    pub struct Work;

    #[rpc::service(alias = "queued", groups(Queued))]
    impl Work {
        /// Waits `ms` milliseconds, then echoes `label`.
        #[mcp_tool(task = optional)]
        pub async fn slow(&self, ms: u64, #[rpc(default = "")] label: String) -> String {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            super::RAN.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            format!("done {label}")
        }

        /// Asks a name, then greets.
        #[mcp_tool(task = required)]
        pub async fn greet(&self, ctx: mcp::Context) -> Result<String, RpcError> {
            let form = serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let name = ctx.elicit("name", "Name?", form).await?.accepted_str("name").unwrap_or("-").to_owned();
            Ok(format!("hello {name}"))
        }
    }
}

/// A memory store both endpoints hold: shared, as far as they can tell.
struct SharedMemory(Arc<MemoryTaskStore>);

impl TaskStore for SharedMemory {
    fn create<'a>(&'a self, id: &'a str, record: String, ttl: Duration) -> BoxFuture<'a, Result<(), StoreError>> {
        self.0.create(id, record, ttl)
    }
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        self.0.load(id)
    }
    fn replace<'a>(&'a self, id: &'a str, old: &'a str, new: String) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.0.replace(id, old, new)
    }
    fn is_shared(&self) -> bool {
        true
    }
}

/// A queue in memory; refuses while `down`.
struct ChannelQueue {
    jobs: mpsc::UnboundedSender<TaskJob>,
    down: Arc<AtomicBool>,
    published: Arc<Mutex<Vec<TaskJob>>>,
}

impl TaskQueue for ChannelQueue {
    fn publish<'a>(
        &'a self,
        job: &'a TaskJob,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), QueueError>> + Send + 'a>> {
        Box::pin(async move {
            if self.down.load(Ordering::SeqCst) {
                return Err(QueueError::new("the message broker is unavailable"));
            }
            self.published.lock().unwrap().push(job.clone());
            self.jobs.send(job.clone()).map_err(|_| QueueError::new("no worker"))
        })
    }
}

struct Setup {
    server: TestServer,
    worker: Arc<mcp::McpEndpoint>,
    down: Arc<AtomicBool>,
    published: Arc<Mutex<Vec<TaskJob>>>,
    runs: Arc<Mutex<Vec<QueuedRun>>>,
}

fn builder(store: Arc<dyn TaskStore>) -> mcp::McpEndpointBuilder {
    let registry = rpc::Registry::builder().service(fixtures::Work).build().expect("registry");
    let executor = rpc::Executor::new(registry, Environment::Dev);
    mcp::McpEndpoint::builder::<fixtures::Queued>(executor).task_store(store)
}

async fn setup() -> Setup {
    let store: Arc<dyn TaskStore> = Arc::new(SharedMemory(Arc::new(MemoryTaskStore::default())));
    let (jobs, mut queued) = mpsc::unbounded_channel();
    let (down, published) = (Arc::new(AtomicBool::new(false)), Arc::default());
    let queue = ChannelQueue { jobs, down: Arc::clone(&down), published: Arc::clone(&published) };
    let web = builder(Arc::clone(&store)).task_queue(Arc::new(queue)).expect("a shared store").build();
    let server = TestServer::start(rpc::server::Router::new().nest("/mcp", web)).await;
    let worker = Arc::new(builder(store).build());
    let runs: Arc<Mutex<Vec<QueuedRun>>> = Arc::default();
    let (runner, done) = (Arc::clone(&worker), Arc::clone(&runs));
    tokio::spawn(async move {
        while let Some(job) = queued.recv().await {
            let (runner, done) = (Arc::clone(&runner), Arc::clone(&done));
            tokio::spawn(async move {
                let run = runner.run_queued_task(job).await;
                done.lock().unwrap().push(run);
            });
        }
    });
    Setup { server, worker, down, published, runs }
}

fn client(server: &TestServer) -> Modern {
    let mut client = Modern::new(server.url("/mcp"));
    client.capabilities = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    client
}

async fn task_until(client: &Modern, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let task = client.call("tasks/get", json!({"taskId": id})).await.json["result"].clone();
        if done(&task) {
            return task;
        }
        assert!(Instant::now() < deadline, "task {id}: {task}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_task_runs_on_the_worker_and_a_redelivery_does_not_run_it_again() {
    let setup = setup().await;
    let client = client(&setup.server);
    let created = client.tool("queued.slow", json!({"ms": 50, "label": "q"})).await;
    assert_eq!(created.json["result"]["resultType"], "task", "{}", created.json);
    let id = created.json["result"]["taskId"].as_str().expect("a task").to_owned();
    let done = task_until(&client, &id, |t| t["status"] == "completed").await;
    assert_eq!(done["result"]["structuredContent"]["result"], "done q", "{done}");

    let job = setup.published.lock().unwrap()[0].clone();
    assert_eq!((job.task_id.as_str(), job.tool.as_str(), job.version), (id.as_str(), "queued.slow", 1));
    assert_eq!(job.arguments, json!({"ms": 50, "label": "q"}).as_object().cloned().unwrap());
    assert_eq!(job.protocol, "2026-07-28");
    assert_eq!(job.client_info, Some(json!({"name": "e2e-modern", "version": "1.0.0"})));
    assert!(job.capabilities.as_ref().is_some_and(|c| c.get("extensions").is_some()));
    assert_eq!(setup.runs.lock().unwrap().as_slice(), [QueuedRun::Done("the task ran")]);

    // The same message again (a redelivery after a crash): acknowledged, not run.
    let before = RAN.load(Ordering::SeqCst);
    assert_eq!(setup.worker.run_queued_task(job.clone()).await, QueuedRun::Done("the task had ended"));
    assert_eq!(RAN.load(Ordering::SeqCst), before);
    // A message naming another tool for the task is refused.
    let mut other = job;
    other.tool = "queued.greet".into();
    assert!(matches!(setup.worker.run_queued_task(other).await, QueuedRun::Refused(_)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_are_answered_on_the_web_endpoint_and_cancel_stops_the_worker() {
    let setup = setup().await;
    let client = client(&setup.server);
    let created = client.tool("queued.greet", json!({})).await;
    let id = created.json["result"]["taskId"].as_str().expect("a task").to_owned();
    let asking = task_until(&client, &id, |t| t["status"] == "input_required").await;
    assert_eq!(asking["inputRequests"]["name"]["method"], "elicitation/create", "{asking}");
    let answer = json!({"taskId": id, "inputResponses": {"name": {"action": "accept", "content": {"name": "Ann"}}}});
    client.call("tasks/update", answer).await;
    let done = task_until(&client, &id, |t| t["status"] == "completed").await;
    assert_eq!(done["result"]["structuredContent"]["result"], "hello Ann", "{done}");

    let before = RAN.load(Ordering::SeqCst);
    let created = client.tool("queued.slow", json!({"ms": 3000, "label": "never"})).await;
    let id = created.json["result"]["taskId"].as_str().expect("a task").to_owned();
    tokio::time::sleep(Duration::from_millis(100)).await;
    client.call("tasks/cancel", json!({"taskId": id})).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while setup.runs.lock().unwrap().len() < 2 {
        assert!(Instant::now() < deadline, "the worker stopped the cancelled task");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(setup.runs.lock().unwrap()[1], QueuedRun::Done("the task was cancelled or expired while it ran"));
    let task = client.call("tasks/get", json!({"taskId": id})).await.json["result"].clone();
    assert_eq!(task["status"], "cancelled", "{task}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(RAN.load(Ordering::SeqCst), before, "the method was dropped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_that_refuses_fails_the_task_and_a_queue_needs_a_shared_store() {
    let setup = setup().await;
    let client = client(&setup.server);
    setup.down.store(true, Ordering::SeqCst);
    let refused = client.tool("queued.slow", json!({"ms": 0})).await;
    assert_eq!(refused.json["error"]["code"], -32000, "{}", refused.json);
    let message = refused.json["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("not accepted") && message.contains("broker"), "{message}");
    let id = refused.json["error"]["data"]["taskId"].as_str().expect("the task's id").to_owned();
    let task = client.call("tasks/get", json!({"taskId": id})).await.json["result"].clone();
    assert_eq!(task["status"], "failed", "{task}");
    assert_eq!(task["error"]["code"], -32000, "{task}");
    assert!(setup.published.lock().unwrap().is_empty());

    let local: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::default());
    let (jobs, _) = mpsc::unbounded_channel();
    let queue = ChannelQueue { jobs, down: Arc::default(), published: Arc::default() };
    let error = builder(local).task_queue(Arc::new(queue)).map(|_| ()).expect_err("refused");
    assert!(error.contains("shared"), "{error}");
}
