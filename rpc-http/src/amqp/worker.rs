//! The consuming side: [`Worker`] runs the queued calls and posts their
//! responses (see the [module](super) for the guarantees).

use std::future::Future;
use std::time::Duration;

use futures_util::StreamExt as _;
use lapin::message::Delivery;
use lapin::options::{BasicAckOptions, BasicCancelOptions, BasicConsumeOptions, BasicNackOptions, BasicQosOptions};
use lapin::types::{AMQPValue, FieldTable, ShortString};
use lapin::{Channel, Connection};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::wire::{self, Refusal};
use super::{AmqpConfig, connect, declare};
use crate::jsonrpc::{Job, JsonRpcService};
use rpc_core::logged::logged;

/// How long a stopping worker lets the calls it holds finish.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// How long the calls of a lost connection may go on before they are
/// abandoned: their messages are redelivered anyway (they are not posted
/// without the connection), and a worker reconnects after this.
const LOST_GRACE: Duration = Duration::from_secs(2);
/// The longest wait before connecting to the broker again.
const MAX_RECONNECT: Duration = Duration::from_secs(10);
/// The first wait before connecting to the broker again.
const FIRST_RECONNECT: Duration = Duration::from_millis(200);
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

/// Why a consuming session ended.
enum Ended {
    Shutdown,
    Lost(String),
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
    /// [`SHUTDOWN_GRACE`]; messages not acknowledged by then are redelivered
    /// to other workers) and closes its connection.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) {
        let (stop_tx, mut stop) = watch::channel(false);
        let watcher = async move {
            shutdown.await;
            let _ = stop_tx.send(true);
        };
        let work = async {
            let mut wait = FIRST_RECONNECT;
            while !*stop.borrow() {
                match self.session(&mut stop).await {
                    Ok(Ended::Shutdown) => break,
                    Ok(Ended::Lost(why)) => {
                        tracing::warn!(error = %why, "lost the message broker; reconnecting");
                        wait = FIRST_RECONNECT;
                    }
                    Err(why) => tracing::warn!(error = %why, retry_in = ?wait, "message broker unavailable"),
                }
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = stop.changed() => break,
                }
                wait = (wait * 2).min(MAX_RECONNECT);
            }
        };
        tokio::select! {
            _ = work => {}
            _ = async { watcher.await; std::future::pending::<()>().await } => {}
        }
        tracing::info!("worker stopped");
    }

    /// One connection: consumes until the broker goes away or shutdown.
    async fn session(&self, stop: &mut watch::Receiver<bool>) -> Result<Ended, String> {
        let connection = connect(&self.config, "rpc worker").await?;
        let channel = connection.create_channel().await.map_err(|e| format!("cannot open a channel: {e}"))?;
        channel
            .basic_qos(self.config.prefetch, BasicQosOptions::default())
            .await
            .map_err(|e| format!("cannot set the prefetch: {e}"))?;
        declare(&channel, &self.config).await?;
        let tag = ShortString::from(format!("rpc-worker-{}", std::process::id()));
        let mut consumer = channel
            .basic_consume(
                ShortString::from(self.config.queue.clone()),
                tag.clone(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await
            .map_err(|e| format!("cannot consume `{}`: {e}", self.config.queue))?;
        tracing::info!(queue = %self.config.queue, broker = %self.config.url_redacted(), prefetch = self.config.prefetch,
            "worker consuming");
        let mut running = JoinSet::new();
        let ended = loop {
            tokio::select! {
                _ = stop.changed() => {
                    let _ = channel.basic_cancel(tag.clone(), BasicCancelOptions::default()).await;
                    break Ended::Shutdown;
                }
                delivery = consumer.next() => match delivery {
                    Some(Ok(delivery)) => {
                        let (this, channel, stop) = (self.clone(), channel.clone(), stop.clone());
                        running.spawn(async move { this.handle(delivery, &channel, stop).await });
                    }
                    Some(Err(e)) => break Ended::Lost(e.to_string()),
                    None => break Ended::Lost("the broker cancelled the consumer".to_owned()),
                },
                Some(_) = running.join_next(), if !running.is_empty() => {}
            }
        };
        let grace = if matches!(ended, Ended::Shutdown) { SHUTDOWN_GRACE } else { LOST_GRACE };
        finish(running, grace).await;
        close(&connection).await;
        Ok(ended)
    }

    /// One delivery: refused and dead-lettered, or run (once) and its
    /// response posted; acknowledged once delivered, retried or
    /// dead-lettered when not.
    async fn handle(&self, delivery: Delivery, channel: &Channel, mut stop: watch::Receiver<bool>) {
        let attempt = delivery_count(&delivery).saturating_add(1);
        let signature = header_bytes(&delivery, wire::SIGNATURE_HEADER);
        let job = match wire::open(&delivery.data, signature.as_deref(), &self.config, &self.service) {
            Ok(job) => job,
            Err(refusal) => {
                let (text, bytes) = (refusal.to_string(), delivery.data.len());
                let reason = logged(&text);
                if matches!(refusal, Refusal::BadSignature) {
                    tracing::error!(%reason, bytes, "queue message refused (dead-lettered)");
                } else {
                    tracing::warn!(%reason, bytes, "queue message refused (dead-lettered)");
                }
                settle(&delivery, Settle::DeadLetter).await;
                return;
            }
        };
        let method = logged(job.method());
        tracing::info!(method = %method, dedup = %job.dedup_id(), attempt, "running queued call");
        let cache = self.service.executor().stores().cache.clone();
        let key = format!("rpc:amqp:{}", job.dedup_id());
        let known = cache.get(&key).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "cannot read the job's mark; running it");
            None
        });
        let (body, execution) = match known.as_deref() {
            Some(DONE) => {
                tracing::info!(method = %method, dedup = %job.dedup_id(), "already delivered: acknowledged without a POST");
                settle(&delivery, Settle::Ack).await;
                return;
            }
            Some(stored) if stored.starts_with(RESPONSE) => (Some(stored.as_bytes()[RESPONSE.len()..].to_vec()), None),
            _ => {
                let (body, execution) = self.service.execute_job(&job).await;
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
            settle(&delivery, Settle::Ack).await;
            return;
        };
        if !channel.status().connected() {
            tracing::info!(method = %method, "lost the broker: not posting, the message is redelivered");
            return;
        }
        let target = job.callback().target();
        let outcome = self.service.post_callback(&job, body).await;
        match outcome {
            Ok(status) if status.is_success() => {
                self.mark(&key, DONE).await;
                tracing::info!(method = %method, callback = %logged(&target), %status, "callback delivered");
                if let Some(execution) = execution {
                    self.service.job_delivered(execution);
                }
                settle(&delivery, Settle::Ack).await;
            }
            failed => {
                let why = match failed {
                    Ok(status) => format!("the callback answered {status}"),
                    Err(why) => why,
                };
                self.retry_or_give_up(&job, &delivery, attempt, &why, &mut stop).await;
            }
        }
    }

    /// A failed delivery: requeued after a delay, or dead-lettered after the
    /// last attempt.
    async fn retry_or_give_up(
        &self,
        job: &Job,
        delivery: &Delivery,
        attempt: u32,
        why: &str,
        stop: &mut watch::Receiver<bool>,
    ) {
        let (method, target) = (logged(job.method()), job.callback().target());
        if attempt >= self.config.attempts {
            tracing::error!(method = %method, callback = %logged(&target), error = %logged(why), attempt,
                "callback failed on the last attempt; message dead-lettered");
            settle(delivery, Settle::DeadLetter).await;
            return;
        }
        let delay = self.config.delay_before(attempt + 1);
        tracing::warn!(method = %method, callback = %logged(&target), error = %logged(why), attempt, retry_in = ?delay,
            "callback failed; will retry");
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = stop.wait_for(|stopped| *stopped) => {}
        }
        settle(delivery, Settle::Requeue).await;
    }

    /// Stores `value` under the job's key for as long as messages live.
    async fn mark(&self, key: &str, value: &str) {
        let cache = &self.service.executor().stores().cache;
        if let Err(e) = cache.put(key, value, self.config.max_age).await {
            tracing::warn!(error = %e, "cannot store the job's mark: a redelivery may post again");
        }
    }
}

/// What becomes of a message.
enum Settle {
    Ack,
    Requeue,
    DeadLetter,
}

async fn settle(delivery: &Delivery, how: Settle) {
    let result = match how {
        Settle::Ack => delivery.ack(BasicAckOptions::default()).await,
        Settle::Requeue => delivery.nack(BasicNackOptions { requeue: true, ..BasicNackOptions::default() }).await,
        Settle::DeadLetter => delivery.nack(BasicNackOptions { requeue: false, ..BasicNackOptions::default() }).await,
    };
    if let Err(e) = result {
        tracing::warn!(error = %e, "cannot settle a message (it is redelivered)");
    }
}

/// The broker's count of earlier deliveries (`x-delivery-count`, set by
/// quorum queues on redelivery); 0 for a first delivery.
fn delivery_count(delivery: &Delivery) -> u32 {
    let Some(headers) = delivery.properties.headers() else { return 0 };
    let count = match headers.inner().get("x-delivery-count") {
        Some(AMQPValue::LongLongInt(n)) => *n,
        Some(AMQPValue::LongInt(n)) => i64::from(*n),
        Some(AMQPValue::LongUInt(n)) => i64::from(*n),
        Some(AMQPValue::ShortInt(n)) => i64::from(*n),
        Some(AMQPValue::ShortUInt(n)) => i64::from(*n),
        _ => 0,
    };
    u32::try_from(count.max(0)).unwrap_or(u32::MAX)
}

/// A string header's bytes.
fn header_bytes(delivery: &Delivery, name: &str) -> Option<Vec<u8>> {
    match delivery.properties.headers().as_ref()?.inner().get(name)? {
        AMQPValue::LongString(s) => Some(s.as_bytes().to_vec()),
        AMQPValue::ShortString(s) => Some(s.as_str().as_bytes().to_vec()),
        _ => None,
    }
}

/// Lets the calls still running finish, at most `grace`.
async fn finish(mut running: JoinSet<()>, grace: Duration) {
    if running.is_empty() {
        return;
    }
    tracing::info!(calls = running.len(), "waiting for the calls in progress");
    let drained = tokio::time::timeout(grace, async { while running.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tracing::warn!(calls = running.len(), "calls still running after the grace period: abandoned (redelivered)");
        running.abort_all();
    }
}

async fn close(connection: &Connection) {
    if connection.status().connected() {
        let _ =
            tokio::time::timeout(Duration::from_secs(2), connection.close(200, ShortString::from("worker stopping")))
                .await;
    }
}
