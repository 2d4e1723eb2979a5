//! The generic consuming side: [`Consumer`] takes the signed messages of
//! one queue and hands each one whose signature holds to a [`Handler`],
//! then settles it as the handler says. Both the JSON-RPC [`Worker`](super::Worker)
//! and the MCP task worker (crate `mcp`, feature `amqp`) are handlers.
//!
//! A consumer declares its queue (and dead-letter queue), holds at most
//! [`AmqpConfig::prefetch`] messages (`basic.qos`), refuses (dead-letters,
//! never hands over) a message that is over the size limit, unsigned or
//! signed with another secret, reconnects (200 ms doubling to 10 s) when
//! the broker goes away, and on shutdown stops taking messages and lets
//! the ones it holds finish (at most [`SHUTDOWN_GRACE`]).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use lapin::message::Delivery;
use lapin::options::{BasicAckOptions, BasicCancelOptions, BasicConsumeOptions, BasicNackOptions, BasicQosOptions};
use lapin::types::{AMQPValue, FieldTable, ShortString};
use lapin::{Channel, Connection};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::wire::{self, Refusal};
use super::{AmqpConfig, connect, declare};
use rpc_core::logged::logged;

/// How long a stopping consumer lets the messages it holds finish.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// How long the messages of a lost connection may go on before they are
/// abandoned: they are redelivered anyway, and the consumer reconnects.
const LOST_GRACE: Duration = Duration::from_secs(2);
/// The longest wait before connecting to the broker again.
const MAX_RECONNECT: Duration = Duration::from_secs(10);
/// The first wait before connecting to the broker again.
const FIRST_RECONNECT: Duration = Duration::from_millis(200);

/// One message whose signature was checked, as a [`Handler`] gets it.
#[derive(Debug)]
pub struct Delivered {
    body: Vec<u8>,
    attempt: u32,
    channel: Channel,
    stop: watch::Receiver<bool>,
}

impl Delivered {
    /// The message's body (signed with the shared secret).
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// Which delivery of the message this is: 1 for the first, more for a
    /// redelivery (after a requeue or a consumer's crash; counted by the
    /// broker).
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Whether the connection the message came on is still up (when it is
    /// not, the message will be redelivered whatever the handler does).
    pub fn connected(&self) -> bool {
        self.channel.status().connected()
    }

    /// Completes when the consumer is stopping.
    pub async fn stopping(&self) {
        let mut stop = self.stop.clone();
        let _ = stop.wait_for(|stopped| *stopped).await;
    }
}

/// What becomes of a message once its handler is done with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Settle {
    /// Done: acknowledged (removed from the queue).
    Ack,
    /// Requeued after this delay (shortened when the consumer stops), for
    /// another delivery.
    RequeueAfter(Duration),
    /// Refused or given up: to the dead-letter queue.
    DeadLetter,
    /// Left unsettled: the broker redelivers it once the connection is gone
    /// (for a handler that saw the connection go away).
    Leave,
}

/// What a [`Consumer`] does with each message whose signature holds.
pub trait Handler: Send + Sync + 'static {
    /// Handles one message; the returned future runs concurrently with the
    /// other messages held (at most the prefetch).
    fn handle(&self, message: Delivered) -> BoxFuture<'static, Settle>;
}

/// Logs why `message` was refused and dead-letters it (never run).
pub fn refuse(refusal: &Refusal, bytes: usize) -> Settle {
    let text = refusal.to_string();
    let reason = logged(&text);
    if matches!(refusal, Refusal::BadSignature) {
        tracing::error!(%reason, bytes, "queue message refused (dead-lettered)");
    } else {
        tracing::warn!(%reason, bytes, "queue message refused (dead-lettered)");
    }
    Settle::DeadLetter
}

/// What becomes of a message whose handling failed on delivery `attempt`:
/// requeued for the next delivery after [`AmqpConfig::delay_before`] it,
/// or dead-lettered once it has had [`AmqpConfig::attempts_allowed`].
pub fn retry_or_dead_letter(config: &AmqpConfig, attempt: u32) -> Settle {
    if attempt >= config.attempts_allowed() {
        Settle::DeadLetter
    } else {
        Settle::RequeueAfter(config.delay_before(attempt + 1))
    }
}

/// Consumes the queue [`AmqpConfig::queue_name`] names with a [`Handler`]
/// (see the [module](self)).
pub struct Consumer {
    config: AmqpConfig,
    name: String,
    handler: Arc<dyn Handler>,
}

impl std::fmt::Debug for Consumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer").field("config", &self.config).field("name", &self.name).finish_non_exhaustive()
    }
}

/// Why a consuming session ended.
enum Ended {
    Shutdown,
    Lost(String),
}

impl Consumer {
    /// A consumer of `config`'s queue named `name` (in logs and as the
    /// broker's connection name) handing messages to `handler`.
    pub fn new(config: AmqpConfig, name: impl Into<String>, handler: Arc<dyn Handler>) -> Self {
        Consumer { config, name: name.into(), handler }
    }

    /// Consumes until `shutdown` completes, reconnecting whenever the
    /// broker goes away. On shutdown it stops taking messages, lets the
    /// ones it holds finish (at most [`SHUTDOWN_GRACE`]; the others are
    /// redelivered) and closes its connection.
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
                        tracing::warn!(error = %why, queue = %self.config.queue, "lost the message broker; reconnecting");
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
        tracing::info!(queue = %self.config.queue, "{} stopped", self.name);
    }

    /// One connection: consumes until the broker goes away or shutdown.
    async fn session(&self, stop: &mut watch::Receiver<bool>) -> Result<Ended, String> {
        let connection = connect(&self.config, &self.name).await?;
        let channel = connection.create_channel().await.map_err(|e| format!("cannot open a channel: {e}"))?;
        channel
            .basic_qos(self.config.prefetch, BasicQosOptions::default())
            .await
            .map_err(|e| format!("cannot set the prefetch: {e}"))?;
        declare(&channel, &self.config).await?;
        let tag = ShortString::from(format!("{}-{}", self.name.replace(' ', "-"), std::process::id()));
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
            "{} consuming", self.name);
        let mut running = JoinSet::new();
        let ended = loop {
            tokio::select! {
                _ = stop.changed() => {
                    let _ = channel.basic_cancel(tag.clone(), BasicCancelOptions::default()).await;
                    break Ended::Shutdown;
                }
                delivery = consumer.next() => match delivery {
                    Some(Ok(delivery)) => {
                        let (handler, config) = (Arc::clone(&self.handler), self.config.clone());
                        let (channel, stop) = (channel.clone(), stop.clone());
                        running.spawn(async move { handle(handler, &config, delivery, channel, stop).await });
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
}

/// One delivery: refused when its signature does not hold, else handed to
/// `handler`; settled as it says.
async fn handle(
    handler: Arc<dyn Handler>,
    config: &AmqpConfig,
    delivery: Delivery,
    channel: Channel,
    stop: watch::Receiver<bool>,
) {
    let attempt = delivery_count(&delivery).saturating_add(1);
    let signature = header_bytes(&delivery, wire::SIGNATURE_HEADER);
    if let Err(refusal) = wire::verify(&delivery.data, signature.as_deref(), config) {
        settle(&delivery, refuse(&refusal, delivery.data.len()), &stop).await;
        return;
    }
    let message = Delivered { body: delivery.data.clone(), attempt, channel, stop: stop.clone() };
    let how = handler.handle(message).await;
    settle(&delivery, how, &stop).await;
}

async fn settle(delivery: &Delivery, how: Settle, stop: &watch::Receiver<bool>) {
    let result = match how {
        Settle::Leave => return,
        Settle::Ack => delivery.ack(BasicAckOptions::default()).await,
        Settle::RequeueAfter(delay) => {
            let mut stop = stop.clone();
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = stop.wait_for(|stopped| *stopped) => {}
            }
            delivery.nack(BasicNackOptions { requeue: true, ..BasicNackOptions::default() }).await
        }
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

/// Lets the messages still being handled finish, at most `grace`.
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
