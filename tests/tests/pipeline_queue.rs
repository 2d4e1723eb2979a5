//! The queue seam of asynchronous calls (`JsonRpcBuilder::queue`): a call
//! with `$rpc.callback` is handed to the queue *before* it is acknowledged
//! (with the caller's identity, its version, the tracing headers and a
//! deduplication id), the web process then neither runs nor posts it, and
//! a queue that refuses it makes the call fail with `-32000`, nothing
//! acknowledged. A job taken from the queue runs through the endpoint's
//! executor with the caller's identity and its response is posted
//! (`execute_job`, `post_callback`): what an AMQP worker does.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router as Axum;
use axum::routing::post as route_post;
use e2e_tests::TestServer;
use rpc::jsonrpc::{Callbacks, Job, Queue, QueueError};
use rpc::server::Router;
use rpc::{Environment, Executor, HostPolicy, JsonRpcService, Security, TokenPolicy};
use serde_json::{Value, json};

/// A queue that keeps what it is given, or refuses everything.
#[derive(Debug, Default)]
struct Recording {
    jobs: Mutex<Vec<Job>>,
    refuse: bool,
}

impl Queue for Recording {
    fn publish<'a>(&'a self, job: &'a Job) -> Pin<Box<dyn Future<Output = Result<(), QueueError>> + Send + 'a>> {
        Box::pin(async move {
            if self.refuse {
                return Err(QueueError::new("the test queue is closed"));
            }
            self.jobs.lock().unwrap().push(job.clone());
            Ok(())
        })
    }
}

/// A callback endpoint counting its POSTs (bodies kept).
async fn receiver() -> (TestServer, Arc<Mutex<Vec<Value>>>) {
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let record = seen.clone();
    let app = Axum::new().route(
        "/hooks/{name}",
        route_post(move |body: String| {
            let record = record.clone();
            async move {
                record.lock().unwrap().push(serde_json::from_str(&body).unwrap_or(Value::Null));
                axum::http::StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).with_graceful_shutdown(async { drop(rx.await) }).await;
    });
    (TestServer::external(format!("http://{addr}"), addr, tx), seen)
}

fn service(callbacks: &str, queue: Option<Arc<Recording>>) -> JsonRpcService {
    let executor = Executor::new(catalog::registry().unwrap(), Environment::Prod);
    let tokens = TokenPolicy::new().named_token("ci-bot", "bot-token").unwrap();
    let security = Security::new().hosts(HostPolicy::localhost()).tokens(tokens);
    let mut builder =
        JsonRpcService::builder(executor).security(security).callbacks(Callbacks::allow([callbacks]).unwrap());
    if let Some(queue) = queue {
        builder = builder.queue(queue);
    }
    builder.build()
}

async fn call(server: &TestServer, body: Value) -> Value {
    let response = reqwest::Client::new()
        .post(server.url("/rpc/v2"))
        .header("authorization", "Bearer bot-token")
        .header("x-request-id", "rid-7")
        .json(&body)
        .send()
        .await
        .unwrap();
    response.json().await.unwrap()
}

#[tokio::test]
async fn a_queued_call_is_handed_over_before_its_acknowledgement_and_run_by_a_worker() {
    let (hooks, seen) = receiver().await;
    let queue = Arc::new(Recording::default());
    let web = service(&format!("{}/hooks", hooks.base), Some(queue.clone()));
    let server = TestServer::start(Router::new().nest("/rpc", web)).await;
    let callback = format!("{}/hooks/a", hooks.base);
    let ack = call(
        &server,
        json!({"jsonrpc": "2.0", "id": "q-1", "method": "Catalog.get",
               "params": {"id": 7, "$rpc": {"callback": callback, "rayId": "parent"}}}),
    )
    .await;
    assert_eq!(ack["result"], json!({"async": true, "callback": callback}), "{ack}");
    let job = queue.jobs.lock().unwrap().pop().expect("the job was queued before the acknowledgement");
    assert_eq!((job.method(), job.version(), job.ray_id()), ("Catalog.get", 2, Some("parent")));
    assert_eq!(job.identity().map(|i| i.subject.as_str()), Some("ci-bot"));
    assert_eq!(job.callback().as_str(), callback);
    assert!(job.dedup_id().len() == 32 && job.dedup_id().bytes().all(|b| b.is_ascii_hexdigit()));
    assert!(!job.is_notification());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(seen.lock().unwrap().is_empty(), "the web process neither runs nor posts a queued call");

    // A worker: the same registry, its own endpoint (no queue), the same callback policy.
    let worker = service(&format!("{}/hooks", hooks.base), None);
    let (body, execution) = worker.execute_job(&job).await;
    let status = worker.post_callback(&job, body.expect("a response")).await.expect("posted");
    assert!(status.is_success());
    worker.job_delivered(execution);
    assert_eq!(*seen.lock().unwrap(), [json!({"jsonrpc": "2.0", "id": "q-1", "result": {"id": 7, "name": "n7"}})]);

    // The worker's own policy decides where it posts.
    let strict = service("http://127.0.0.1:9/elsewhere", None);
    let refused = strict.post_callback(&job, b"{}".to_vec()).await.unwrap_err();
    assert!(refused.contains("not allowed"), "{refused}");
}

#[tokio::test]
async fn a_queue_that_refuses_makes_the_call_fail_unacknowledged() {
    let (hooks, seen) = receiver().await;
    let queue = Arc::new(Recording { refuse: true, ..Recording::default() });
    let server =
        TestServer::start(Router::new().nest("/rpc", service(&format!("{}/hooks", hooks.base), Some(queue)))).await;
    let callback = format!("{}/hooks/b", hooks.base);
    let reply = call(
        &server,
        json!({"jsonrpc": "2.0", "id": 1, "method": "Catalog.get", "params": {"id": 7, "$rpc": {"callback": callback}}}),
    )
    .await;
    assert_eq!(reply["error"]["code"], -32000, "{reply}");
    assert_eq!(reply["error"]["data"]["exception"], "rpc::QueueUnavailable", "{reply}");
    assert!(reply["error"]["message"].as_str().unwrap().contains("the test queue is closed"), "{reply}");
    assert!(reply.get("result").is_none());
    // A URL the policy refuses never reaches the queue.
    let counted = Arc::new(Recording::default());
    let server =
        TestServer::start(Router::new().nest("/rpc", service("http://127.0.0.1:9/x", Some(counted.clone())))).await;
    let reply = call(
        &server,
        json!({"jsonrpc": "2.0", "id": 2, "method": "Catalog.get", "params": {"id": 7, "$rpc": {"callback": callback}}}),
    )
    .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert!(counted.jobs.lock().unwrap().is_empty());
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn queued_batches_and_notifications() {
    let (hooks, _seen) = receiver().await;
    let queue = Arc::new(Recording::default());
    let server =
        TestServer::start(Router::new().nest("/rpc", service(&format!("{}/hooks", hooks.base), Some(queue.clone()))))
            .await;
    let callback = format!("{}/hooks/c", hooks.base);
    let special = json!({"callback": callback});
    let reply = call(
        &server,
        json!([
            {"jsonrpc": "2.0", "id": 1, "method": "Catalog.get", "params": {"id": 1, "$rpc": special}},
            {"jsonrpc": "2.0", "method": "Catalog.get", "params": {"id": 2, "$rpc": special}},
            {"jsonrpc": "2.0", "id": 3, "method": "Catalog.get", "params": {"id": 3}},
        ]),
    )
    .await;
    let replies = reply.as_array().expect("a batch answer");
    assert_eq!(replies.len(), 2, "{reply}");
    assert_eq!(replies[0]["result"]["async"], true, "{reply}");
    assert_eq!(replies[1]["result"]["id"], 3, "{reply}");
    let jobs = queue.jobs.lock().unwrap();
    assert_eq!(jobs.len(), 2);
    let notifications = jobs.iter().filter(|job| job.is_notification()).count();
    assert_eq!(notifications, 1);
    let ids: std::collections::HashSet<_> = jobs.iter().map(Job::dedup_id).collect();
    assert_eq!(ids.len(), 2, "each job has its own deduplication id");
}
