//! The JSON-RPC consuming side: [`Worker`] runs the queued calls and posts
//! their responses (see the [module](super) for the guarantees), as a
//! [`Handler`] of the generic [`Consumer`].

use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::AmqpConfig;
use super::claim::{self, Claimed};
use super::consumer::{Consumer, Delivered, Handler, Settle, refuse, retry_or_dead_letter};
use super::wire;
use crate::jsonrpc::{Job, JsonRpcService};
use rpc_core::logged::logged;

/// The mark of a job whose response was delivered (or that was a notification).
const DONE: &str = "done";
/// The prefix of a job's stored response.
const RESPONSE: &str = "r:";

/// Consumes the queue and runs its calls through `service`'s executor
/// (its stores, listeners and limits), posting each response to its
/// callback under `service`'s callback policy.
#[derive(Debug, Clone)]
pub struct Worker {
    service: JsonRpcService,
    config: AmqpConfig,
}

impl Worker {
    /// A worker running the calls on `service` (built as for the web
    /// process, with the same registry, stores and callback policy).
    pub fn new(service: JsonRpcService, config: AmqpConfig) -> Self {
        Worker { service, config }
    }

    /// Consumes until `shutdown` completes, reconnecting (200 ms, doubling
    /// up to 10 s) whenever the broker goes away. On shutdown it stops
    /// taking messages, lets the calls it holds finish (at most
    /// [`SHUTDOWN_GRACE`](super::SHUTDOWN_GRACE); messages not acknowledged
    /// by then are redelivered to other workers) and closes its connection.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) {
        let config = self.config.clone();
        Consumer::new(config, "rpc worker", Arc::new(self)).run(shutdown).await;
    }

    /// One message whose signature holds: refused and dead-lettered, or run
    /// (once) and its response posted; acknowledged once delivered, retried
    /// or dead-lettered when not.
    async fn handle_message(&self, message: Delivered) -> Settle {
        let attempt = message.attempt();
        let job = match wire::read(message.body(), &self.config, &self.service) {
            Ok(job) => job,
            Err(refusal) => return refuse(&refusal, message.body().len()),
        };
        let method = logged(job.method());
        tracing::info!(method = %method, dedup = %job.dedup_id(), attempt, "running queued call");
        let claim = match claim::claim(&self.service.executor().stores().locks, job.dedup_id()).await {
            Claimed::Mine(claim) => Some(claim),
            Claimed::Theirs => {
                tracing::info!(method = %method, dedup = %job.dedup_id(), retry_in = ?self.config.retry_delay,
                    "another worker holds this call: requeued");
                return Settle::RequeueAfter(self.config.retry_delay);
            }
            Claimed::Unknown(why) => {
                tracing::warn!(error = %logged(&why), "cannot claim the call; running it unclaimed");
                None
            }
        };
        let settle = self.run_claimed(&job, &message, attempt).await;
        if let Some(claim) = claim {
            claim.release().await;
        }
        settle
    }

    /// Runs (or finds the response of) a claimed job and posts it.
    async fn run_claimed(&self, job: &Job, message: &Delivered, attempt: u32) -> Settle {
        let method = logged(job.method());
        let cache = self.service.executor().stores().cache.clone();
        let key = format!("rpc:amqp:{}", job.dedup_id());
        let known = cache.get(&key).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "cannot read the job's mark; running it");
            None
        });
        let (body, execution) = match known.as_deref() {
            Some(DONE) => {
                tracing::info!(method = %method, dedup = %job.dedup_id(), "already delivered: acknowledged without a POST");
                return Settle::Ack;
            }
            Some(stored) if stored.starts_with(RESPONSE) => (Some(stored.as_bytes()[RESPONSE.len()..].to_vec()), None),
            _ => {
                let (body, execution) = self.service.execute_job(job).await;
                if let Some(text) = body.as_deref().and_then(|b| std::str::from_utf8(b).ok()) {
                    self.mark(&key, &format!("{RESPONSE}{text}")).await;
                }
                (body, Some(execution))
            }
        };
        let Some(body) = body else {
            self.mark(&key, DONE).await;
            if let Some(execution) = execution {
                self.service.job_delivered(execution);
            }
            return Settle::Ack;
        };
        if !message.connected() {
            tracing::info!(method = %method, "lost the broker: not posting, the message is redelivered");
            return Settle::Leave;
        }
        let target = job.callback().target();
        let outcome = self.service.post_callback(job, body).await;
        match outcome {
            Ok(status) if status.is_success() => {
                self.mark(&key, DONE).await;
                tracing::info!(method = %method, callback = %logged(&target), %status, "callback delivered");
                if let Some(execution) = execution {
                    self.service.job_delivered(execution);
                }
                Settle::Ack
            }
            failed => {
                let why = match failed {
                    Ok(status) => format!("the callback answered {status}"),
                    Err(why) => why,
                };
                self.retry_or_give_up(job, attempt, &why)
            }
        }
    }

    /// A failed delivery: requeued after a delay, or dead-lettered after the
    /// last attempt.
    fn retry_or_give_up(&self, job: &Job, attempt: u32, why: &str) -> Settle {
        let (method, target) = (logged(job.method()), job.callback().target());
        let settle = retry_or_dead_letter(&self.config, attempt);
        match settle {
            Settle::RequeueAfter(delay) => tracing::warn!(method = %method, callback = %logged(&target),
                error = %logged(why), attempt, retry_in = ?delay, "callback failed; will retry"),
            _ => tracing::error!(method = %method, callback = %logged(&target), error = %logged(why), attempt,
                "callback failed on the last attempt; message dead-lettered"),
        }
        settle
    }

    /// Stores `value` under the job's key for as long as messages live.
    async fn mark(&self, key: &str, value: &str) {
        let cache = &self.service.executor().stores().cache;
        if let Err(e) = cache.put(key, value, self.config.max_age).await {
            tracing::warn!(error = %e, "cannot store the job's mark: a redelivery may post again");
        }
    }
}

impl Handler for Worker {
    fn handle(&self, message: Delivered) -> BoxFuture<'static, Settle> {
        let this = self.clone();
        Box::pin(async move { this.handle_message(message).await })
    }
}
