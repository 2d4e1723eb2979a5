//! MCP tasks on an AMQP broker (RabbitMQ; feature `amqp`): web processes
//! hand the tasks of `task = optional | required` tools to
//! [`AmqpTaskQueue`] (given to
//! [`McpEndpointBuilder::task_queue`](crate::endpoint::McpEndpointBuilder::task_queue)),
//! and [`TaskWorker`] processes run them.
//!
//! The queue is `<queue>.tasks` next to the JSON-RPC asynchronous calls'
//! `<queue>` ([`rpc::amqp::AmqpConfig::queue_name`]): durable, quorum,
//! bounded, its dead letters in `<queue>.tasks.dead`. Messages
//! ([`TaskJob`] as JSON) are signed with the shared secret and published
//! with publisher confirms; the client gets its `CreateTaskResult` only once
//! the broker confirmed, else `-32000` and the task is failed in the store.
//! A worker refuses (dead-letters, never runs) a message that is unsigned,
//! wrongly signed, too large, unreadable or too old; it runs the others
//! ([`McpEndpoint::run_queued_task`]) and acknowledges a message once the
//! task's end is recorded. A redelivered message (a worker died) of a task
//! that has not ended runs it again; of a task that has ended, it is
//! acknowledged without running.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use rpc::amqp::consumer::{refuse, retry_or_dead_letter};
use rpc::amqp::wire::{Refusal, check_age};
use rpc::amqp::{AmqpConfig, AmqpQueue, Consumer, Delivered, Handler, Settle};
use rpc::jsonrpc::QueueError;

use crate::http::McpEndpoint;
use crate::tasks::{QueuedRun, TaskJob, TaskQueue};

/// The tasks' queue of the broker `config` names: `<queue>.tasks`.
pub fn task_queue_config(config: &AmqpConfig) -> Result<AmqpConfig, String> {
    config.for_queue(format!("{}.tasks", config.queue_name()))
}

/// Publishes tasks to the broker (see the [module](self)).
#[derive(Debug)]
pub struct AmqpTaskQueue {
    queue: AmqpQueue,
}

impl AmqpTaskQueue {
    /// A publisher to the tasks' queue of the broker `config` names
    /// (`<queue>.tasks`); it connects when first used (or by
    /// [`connect`](Self::connect)).
    pub fn new(config: &AmqpConfig) -> Result<Self, String> {
        Ok(AmqpTaskQueue { queue: AmqpQueue::new(task_queue_config(config)?) })
    }

    /// Connects now and declares the queues (at start-up, to tell the
    /// operator when the broker is unreachable).
    pub async fn connect(&self) -> Result<(), String> {
        self.queue.connect().await
    }
}

impl TaskQueue for AmqpTaskQueue {
    fn publish<'a>(&'a self, job: &'a TaskJob) -> Pin<Box<dyn Future<Output = Result<(), QueueError>> + Send + 'a>> {
        Box::pin(async move {
            let body = job.encode()?;
            self.queue.publish_signed(&body, &job.task_id).await
        })
    }
}

/// Runs the tasks of the broker's tasks' queue on an endpoint built as the
/// web processes' (same registry, stores and task store).
#[derive(Debug, Clone)]
pub struct TaskWorker {
    endpoint: Arc<McpEndpoint>,
    config: AmqpConfig,
}

impl TaskWorker {
    /// A worker of the tasks' queue of the broker `config` names, running
    /// them on `endpoint`.
    pub fn new(endpoint: McpEndpoint, config: &AmqpConfig) -> Result<Self, String> {
        Ok(TaskWorker { endpoint: Arc::new(endpoint), config: task_queue_config(config)? })
    }

    /// Consumes until `shutdown` completes (reconnecting when the broker
    /// goes away); on shutdown, the tasks in progress get
    /// [`SHUTDOWN_GRACE`](rpc::amqp::SHUTDOWN_GRACE) to finish, the others
    /// are redelivered to other workers and run again there.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) {
        let config = self.config.clone();
        Consumer::new(config, "mcp task worker", Arc::new(self)).run(shutdown).await;
    }

    async fn handle_message(&self, message: Delivered) -> Settle {
        let attempt = message.attempt();
        let job = match TaskJob::decode(message.body()) {
            Ok(job) => job,
            Err(why) => return refuse(&Refusal::Unreadable(why), message.body().len()),
        };
        if let Err(refusal) = check_age(job.issued_at, &self.config) {
            return refuse(&refusal, message.body().len());
        }
        let (task, tool) = (rpc::logged::logged(&job.task_id).to_string(), rpc::logged::logged(&job.tool).to_string());
        tracing::info!(task = %task, tool = %tool, attempt, "running queued task");
        match self.endpoint.run_queued_task(job).await {
            QueuedRun::Done(what) => {
                tracing::info!(task = %task, tool = %tool, "queued task done: {what}");
                Settle::Ack
            }
            QueuedRun::Refused(why) => refuse(&Refusal::Unreadable(why), message.body().len()),
            QueuedRun::Retry(why) => {
                let settle = retry_or_dead_letter(&self.config, attempt);
                let error = rpc::logged::logged(&why);
                match settle {
                    Settle::RequeueAfter(delay) => tracing::warn!(task = %task, error = %error, attempt,
                        retry_in = ?delay, "queued task not run; will retry"),
                    _ => tracing::error!(task = %task, error = %error, attempt,
                        "queued task not run on the last attempt; message dead-lettered"),
                }
                settle
            }
        }
    }
}

impl Handler for TaskWorker {
    fn handle(&self, message: Delivered) -> BoxFuture<'static, Settle> {
        let this = self.clone();
        Box::pin(async move { this.handle_message(message).await })
    }
}
