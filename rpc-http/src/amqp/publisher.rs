//! The publishing side: [`AmqpQueue`], the [`Queue`] of an endpoint whose
//! asynchronous calls go to the broker.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use lapin::options::{BasicPublishOptions, ConfirmSelectOptions};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::{BasicProperties, Channel, Connection};
use tokio::sync::Mutex;

use super::{AmqpConfig, connect, declare, wire};
use crate::jsonrpc::{Job, Queue, QueueError};

/// The longest a publisher waits before trying a broker that was down again.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// The first wait after a failed connection.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);

/// Publishes asynchronous calls to the broker (see the [module](super)).
///
/// Connects on first use and again after the connection was lost; after a
/// failed attempt, calls fail at once (without waiting for the broker) until
/// a backoff delay (250 ms, doubling up to 5 s) has passed.
pub struct AmqpQueue {
    config: AmqpConfig,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    link: Option<(Connection, Channel)>,
    failures: u32,
    retry_at: Option<Instant>,
}

impl std::fmt::Debug for AmqpQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AmqpQueue").field("config", &self.config).finish_non_exhaustive()
    }
}

impl AmqpQueue {
    /// A publisher to the broker `config` names; it connects when first used
    /// (or by [`connect`](Self::connect)).
    pub fn new(config: AmqpConfig) -> Self {
        AmqpQueue { config, state: Mutex::new(State::default()) }
    }

    /// Connects now and declares the queues: at start-up, to tell the
    /// operator at once when the broker is unreachable (publishing still
    /// connects later when it was).
    pub async fn connect(&self) -> Result<(), String> {
        self.channel().await.map(|_| ())
    }

    /// The confirm-mode channel, connecting if there is none (unless a
    /// failed attempt was too recent).
    async fn channel(&self) -> Result<Channel, String> {
        let mut state = self.state.lock().await;
        if let Some((connection, channel)) = &state.link {
            if connection.status().connected() && channel.status().connected() {
                return Ok(channel.clone());
            }
            state.link = None;
        }
        if let Some(at) = state.retry_at
            && Instant::now() < at
        {
            return Err("the message broker is unavailable (reconnecting)".to_owned());
        }
        match self.open().await {
            Ok((connection, channel)) => {
                if state.failures > 0 {
                    tracing::info!(broker = %self.config.url_redacted(), "connected to the message broker again");
                }
                state.failures = 0;
                state.retry_at = None;
                state.link = Some((connection, channel.clone()));
                Ok(channel)
            }
            Err(why) => {
                let wait = FIRST_BACKOFF.saturating_mul(1 << state.failures.min(8)).min(MAX_BACKOFF);
                state.failures = state.failures.saturating_add(1);
                state.retry_at = Some(Instant::now() + wait);
                tracing::warn!(error = %why, retry_in = ?wait, "message broker unavailable");
                Err("the message broker is unavailable".to_owned())
            }
        }
    }

    async fn open(&self) -> Result<(Connection, Channel), String> {
        let connection = connect(&self.config, "rpc publisher").await?;
        let channel = connection.create_channel().await.map_err(|e| format!("cannot open a channel: {e}"))?;
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .map_err(|e| format!("cannot enable publisher confirms: {e}"))?;
        declare(&channel, &self.config).await?;
        Ok((connection, channel))
    }

    /// Forgets `channel` if it is still the current one (it failed).
    async fn drop_channel(&self, channel: &Channel) {
        let mut state = self.state.lock().await;
        if state.link.as_ref().is_some_and(|(_, current)| current.id() == channel.id()) {
            state.link = None;
        }
    }

    async fn publish_job(&self, job: &Job) -> Result<(), QueueError> {
        let (body, signature) = wire::seal(job, &self.config).map_err(QueueError::new)?;
        self.publish_sealed(&body, signature, job.dedup_id()).await
    }

    /// Signs `body` with the shared secret and publishes it, persistent and
    /// confirmed, to the queue of this publisher's configuration
    /// ([`AmqpConfig::queue_name`]) as the message `message_id`: `Ok` once
    /// the broker confirmed it. For other kinds of messages than JSON-RPC
    /// calls (MCP tasks), read by a [`Consumer`](super::Consumer).
    pub async fn publish_signed(&self, body: &[u8], message_id: &str) -> Result<(), QueueError> {
        if body.len() > self.config.max_message_bytes {
            return Err(QueueError::new(format!(
                "the message ({} bytes) is over the limit of {}",
                body.len(),
                self.config.max_message_bytes
            )));
        }
        let signature = wire::sign(&self.config.secret, body);
        self.publish_sealed(body, signature, message_id).await
    }

    async fn publish_sealed(&self, body: &[u8], signature: String, message_id: &str) -> Result<(), QueueError> {
        let channel = self.channel().await.map_err(QueueError::new)?;
        let mut headers = FieldTable::default();
        headers.insert(ShortString::from(wire::SIGNATURE_HEADER), AMQPValue::LongString(LongString::from(signature)));
        let properties = BasicProperties::default()
            .with_delivery_mode(2)
            .with_content_type(ShortString::from("application/json"))
            .with_message_id(ShortString::from(message_id.to_owned()))
            .with_headers(headers);
        let options = BasicPublishOptions { mandatory: true, ..BasicPublishOptions::default() };
        let queue = ShortString::from(self.config.queue.clone());
        let published = async {
            let confirm = channel
                .basic_publish(ShortString::from(""), queue, options, body, properties)
                .await
                .map_err(|e| format!("publish failed: {e}"))?;
            confirm.await.map_err(|e| format!("no confirmation: {e}"))
        };
        let confirmation = match tokio::time::timeout(self.config.confirm_timeout, published).await {
            Ok(Ok(confirmation)) => confirmation,
            Ok(Err(why)) => {
                self.drop_channel(&channel).await;
                tracing::warn!(error = %why, "message broker failed a publish");
                return Err(QueueError::new("the message broker is unavailable"));
            }
            Err(_) => {
                self.drop_channel(&channel).await;
                tracing::warn!(timeout = ?self.config.confirm_timeout, "message broker did not confirm a publish");
                return Err(QueueError::new("the message broker did not confirm the message in time"));
            }
        };
        if !confirmation.is_ack() {
            return Err(QueueError::new("the message broker refused the message (is the queue full?)"));
        }
        if confirmation.take_message().is_some() {
            return Err(QueueError::new("the message broker could not route the message to its queue"));
        }
        Ok(())
    }
}

impl Queue for AmqpQueue {
    fn publish<'a>(&'a self, job: &'a Job) -> Pin<Box<dyn Future<Output = Result<(), QueueError>> + Send + 'a>> {
        Box::pin(self.publish_job(job))
    }
}
