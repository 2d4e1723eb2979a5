//! Asynchronous calls on an AMQP 0-9-1 broker (RabbitMQ; feature `amqp`).
//!
//! The `/rpc` endpoint publishes each call with `$rpc.callback` to a queue
//! ([`AmqpQueue`], given to [`JsonRpcBuilder::queue`](crate::JsonRpcBuilder::queue))
//! before acknowledging it, and [`Worker`] processes consume the queue, run
//! each call through the same executor with the caller's identity and POST
//! its response to the callback.
//!
//! * **Topology** (declared by both sides, idempotently): a durable quorum
//!   queue (`rpc.async` by default) bounded to [`AmqpConfig::max_queue_length`]
//!   messages (beyond: the broker refuses the publish, the client gets
//!   `-32000`), whose dead letters go to `<queue>.dead` (durable, bounded,
//!   oldest dropped first).
//! * **Publishing**: persistent messages on a channel with publisher
//!   confirms; the call is acknowledged only once the broker confirmed the
//!   message. A broker that is down, refuses or does not confirm in time makes
//!   the call fail with `-32000`: refused, never acknowledged and lost.
//! * **Messages** ([`wire`]): the request, its version, the caller's
//!   identity, the `$rpc` options, the forwarded tracing headers, a random
//!   deduplication id and the time it was accepted, signed with
//!   HMAC-SHA256 under a shared secret. A worker refuses (dead-letters) a
//!   message that is unsigned, wrongly signed, too large, unreadable or
//!   older than [`AmqpConfig::max_age`].
//! * **Delivery** ([`Worker`]): at most [`AmqpConfig::prefetch`] messages
//!   in flight per worker; a message is acknowledged only after its callback
//!   answered 2xx, or dead-lettered after [`AmqpConfig::attempts`]
//!   deliveries (the broker's delivery count, so redeliveries after a
//!   worker crash count too), retried with a growing delay in between.
//!   The response is kept in the executor's cache store under the
//!   deduplication id once computed (a retry posts it again rather than
//!   running the method again), and a delivered job is marked there before
//!   its message is acknowledged: a redelivered message whose response
//!   was delivered is acknowledged without a second POST. Workers share that
//!   mark through a shared store (Redis): give every worker the same one.
//!
//! * **The generic layer**: [`AmqpQueue::publish_signed`] publishes any
//!   body, signed, persistent and confirmed, to a publisher's queue
//!   ([`AmqpConfig::for_queue`] names another); [`Consumer`] consumes a
//!   queue (declaration, prefetch, signature and size checks, reconnects,
//!   graceful shutdown) and hands each message to a [`Handler`], which
//!   says whether it is acknowledged, requeued after a delay or
//!   dead-lettered. [`Worker`] is such a handler; so is the MCP task
//!   worker of crate `mcp` (feature `amqp`, queue `<queue>.tasks`).
//!
//! **Guarantees.** At-least-once delivery of each accepted call's response,
//! deduplicated: a response is posted twice only if a worker dies (or loses
//! its store) between the callback's 2xx and writing the mark, a window of
//! one store write; or if the store forgets the mark (in-process stores are
//! per worker, an LRU cache may evict it). The method itself may run more
//! than once when a worker dies after running it and before storing its
//! response. A worker that lost its broker connection does not post the
//! responses of the messages it held (they are redelivered). Two copies of
//! one call held by two workers at once (a duplicate publish) do not both
//! run and post: before running or posting, a worker claims the call in
//! the executor's lock store (a lock keyed by the deduplication id, living
//! [`CLAIM_TTL`] and renewed every [`RENEW_EVERY`] while it runs); the
//! other requeues its copy after [`AmqpConfig::retry_delay`] and finds it
//! delivered later. This holds across workers sharing the lock store
//! (Redis); when the lock store fails, the call runs unclaimed.

mod claim;
#[cfg(feature = "cli")]
pub mod cli;
pub mod consumer;
mod publisher;
pub mod wire;
mod worker;

use std::sync::Arc;
use std::time::Duration;

use lapin::Channel;
use lapin::options::QueueDeclareOptions;
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};

pub use claim::{CLAIM_TTL, RENEW_EVERY};
pub use consumer::{Consumer, Delivered, Handler, SHUTDOWN_GRACE, Settle};
pub use publisher::AmqpQueue;
pub use worker::Worker;

/// The smallest shared secret accepted, in bytes.
pub const MIN_SECRET_BYTES: usize = 16;
/// The most deliveries of a message: the workers dead-letter a message
/// after their own [`AmqpConfig::attempts`] (at most this); the broker
/// enforces this bound as a backstop (a message that kills every worker
/// that takes it), so that setting need not be the same everywhere.
pub const MAX_ATTEMPTS: u32 = 100;
/// The default queue name.
pub const DEFAULT_QUEUE: &str = "rpc.async";

/// Where the broker is and how the queue behaves; shared by the publisher
/// ([`AmqpQueue`]) and the workers ([`Worker`]), which must agree on it.
#[derive(Clone)]
pub struct AmqpConfig {
    url: String,
    secret: Arc<[u8]>,
    queue: String,
    max_message_bytes: usize,
    max_queue_length: u32,
    attempts: u32,
    prefetch: u16,
    retry_delay: Duration,
    max_age: Duration,
    connect_timeout: Duration,
    confirm_timeout: Duration,
}

impl std::fmt::Debug for AmqpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AmqpConfig")
            .field("url", &redacted(&self.url))
            .field("queue", &self.queue)
            .field("attempts", &self.attempts)
            .field("prefetch", &self.prefetch)
            .finish_non_exhaustive()
    }
}

/// The URL without its password (for logs and errors).
pub(crate) fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => format!("{}://***@{}", &url[..scheme], &url[at + 1..]),
        _ => url.to_owned(),
    }
}

impl AmqpConfig {
    /// The broker at `url` (`amqp://user:password@127.0.0.1:5672/%2f`) and the
    /// secret messages are signed with (at least [`MIN_SECRET_BYTES`]; the
    /// same for the publisher and every worker).
    pub fn new(url: impl Into<String>, secret: impl AsRef<[u8]>) -> Result<Self, String> {
        let url = url.into();
        if !(url.starts_with("amqp://") || url.starts_with("amqps://")) {
            return Err(format!("the AMQP URL `{}` does not start with amqp://", redacted(&url)));
        }
        if url.starts_with("amqps://") {
            return Err("amqps:// needs TLS, which this build of lapin does not include".to_owned());
        }
        let secret = secret.as_ref();
        if secret.len() < MIN_SECRET_BYTES {
            return Err(format!("the AMQP signing secret must have at least {MIN_SECRET_BYTES} bytes"));
        }
        Ok(AmqpConfig {
            url,
            secret: Arc::from(secret),
            queue: DEFAULT_QUEUE.to_owned(),
            max_message_bytes: 8 * 1024 * 1024,
            max_queue_length: 100_000,
            attempts: 5,
            prefetch: 8,
            retry_delay: Duration::from_secs(1),
            max_age: Duration::from_secs(24 * 3600),
            connect_timeout: Duration::from_secs(5),
            confirm_timeout: Duration::from_secs(5),
        })
    }

    /// The queue's name (default [`DEFAULT_QUEUE`]); dead letters go to `<name>.dead`.
    pub fn queue(mut self, name: impl Into<String>) -> Result<Self, String> {
        let name = name.into();
        if name.is_empty() || name.len() > 200 || name.starts_with("amq.") {
            return Err(format!("`{name}` is not a usable queue name (1 to 200 bytes, not starting with amq.)"));
        }
        self.queue = name;
        Ok(self)
    }

    /// The largest message published or consumed (default 8 MiB); a larger
    /// one is refused at publish and dead-lettered at consume.
    pub fn max_message_bytes(mut self, limit: usize) -> Self {
        self.max_message_bytes = limit;
        self
    }

    /// The most messages the queue holds (default 100,000); beyond it the
    /// broker refuses new ones and calls get `-32000`. The same for the
    /// publishers and the workers: changing it for an existing queue needs
    /// the queue deleted first (the broker refuses a declaration with other
    /// arguments, `PRECONDITION_FAILED`).
    pub fn max_queue_length(mut self, limit: u32) -> Self {
        self.max_queue_length = limit.max(1);
        self
    }

    /// Deliveries of a message before it is dead-lettered (default 5, 1 to
    /// [`MAX_ATTEMPTS`]).
    pub fn attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts.clamp(1, MAX_ATTEMPTS);
        self
    }

    /// Messages a worker holds at once (default 8, at least 1).
    pub fn prefetch(mut self, prefetch: u16) -> Self {
        self.prefetch = prefetch.max(1);
        self
    }

    /// The delay before the second delivery of a failed message (default
    /// 1 s), doubled for each further one, at most 60 s.
    pub fn retry_delay(mut self, delay: Duration) -> Self {
        self.retry_delay = delay;
        self
    }

    /// The oldest message a worker runs (default 24 h; older ones are
    /// dead-lettered), which is also how long deduplication marks are kept.
    pub fn max_age(mut self, age: Duration) -> Self {
        self.max_age = age;
        self
    }

    /// How long connecting and a publisher confirm may take (default 5 s each).
    pub fn timeouts(mut self, connect: Duration, confirm: Duration) -> Self {
        self.connect_timeout = connect;
        self.confirm_timeout = confirm;
        self
    }

    /// The queue's name.
    pub fn queue_name(&self) -> &str {
        &self.queue
    }

    /// The dead-letter queue's name (`<queue>.dead`).
    pub fn dead_letter_queue(&self) -> String {
        format!("{}.dead", self.queue)
    }

    /// The broker's URL without its password.
    pub fn url_redacted(&self) -> String {
        redacted(&self.url)
    }

    /// The configuration of the queue `name` on the same broker, with the
    /// same secret and settings (the MCP tasks' queue: `<queue>.tasks`).
    pub fn for_queue(&self, name: impl Into<String>) -> Result<Self, String> {
        self.clone().queue(name)
    }

    /// Deliveries of a message before it is dead-lettered.
    pub fn attempts_allowed(&self) -> u32 {
        self.attempts
    }

    /// The oldest message a consumer runs.
    pub fn max_age_allowed(&self) -> Duration {
        self.max_age
    }

    /// The delay before delivery `attempt` (2, 3, ...) of a failed message.
    pub fn delay_before(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(2).min(16);
        self.retry_delay.saturating_mul(1 << doublings).min(Duration::from_secs(60))
    }
}

/// Connects to the broker within the connect timeout.
pub(crate) async fn connect(config: &AmqpConfig, name: &str) -> Result<lapin::Connection, String> {
    let properties = lapin::ConnectionProperties::default().with_connection_name(LongString::from(name.to_owned()));
    match tokio::time::timeout(config.connect_timeout, lapin::Connection::connect(&config.url, properties)).await {
        Ok(Ok(connection)) => Ok(connection),
        Ok(Err(e)) => Err(format!("cannot connect to the broker at {}: {e}", config.url_redacted())),
        Err(_) => {
            Err(format!("the broker at {} did not answer within {:?}", config.url_redacted(), config.connect_timeout))
        }
    }
}

/// Declares the queue and its dead-letter queue (both durable; the same
/// arguments on every side, or the broker refuses the declaration).
pub(crate) async fn declare(channel: &Channel, config: &AmqpConfig) -> Result<(), String> {
    let dead = config.dead_letter_queue();
    let mut dead_args = FieldTable::default();
    dead_args.insert(ShortString::from("x-max-length"), AMQPValue::LongLongInt(i64::from(config.max_queue_length)));
    channel
        .queue_declare(ShortString::from(dead.clone()), QueueDeclareOptions::durable(), dead_args)
        .await
        .map_err(|e| format!("cannot declare the queue `{dead}`: {e}"))?;
    let mut args = FieldTable::default();
    args.insert(ShortString::from("x-queue-type"), AMQPValue::LongString(LongString::from("quorum")));
    args.insert(ShortString::from("x-dead-letter-exchange"), AMQPValue::LongString(LongString::from("")));
    args.insert(ShortString::from("x-dead-letter-routing-key"), AMQPValue::LongString(LongString::from(dead)));
    args.insert(ShortString::from("x-delivery-limit"), AMQPValue::LongLongInt(i64::from(MAX_ATTEMPTS)));
    args.insert(ShortString::from("x-max-length"), AMQPValue::LongLongInt(i64::from(config.max_queue_length)));
    args.insert(ShortString::from("x-overflow"), AMQPValue::LongString(LongString::from("reject-publish")));
    channel
        .queue_declare(ShortString::from(config.queue.clone()), QueueDeclareOptions::durable(), args)
        .await
        .map_err(|e| format!("cannot declare the queue `{}`: {e}", config.queue))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_is_checked() {
        assert!(AmqpConfig::new("http://x", [0u8; 32]).is_err());
        assert!(AmqpConfig::new("amqp://x", [0u8; 8]).is_err());
        let config = AmqpConfig::new("amqp://guest:hunter2@127.0.0.1:5672/%2f", [7u8; 32]).unwrap();
        assert_eq!(config.url_redacted(), "amqp://***@127.0.0.1:5672/%2f");
        assert!(!format!("{config:?}").contains("hunter2"));
        assert!(config.clone().queue("amq.x").is_err() && config.clone().queue("").is_err());
        assert_eq!(config.dead_letter_queue(), "rpc.async.dead");
    }

    #[test]
    fn retry_delays_grow_and_are_capped() {
        let config = AmqpConfig::new("amqp://x", [7u8; 32]).unwrap().retry_delay(Duration::from_millis(100));
        assert_eq!(config.delay_before(2), Duration::from_millis(100));
        assert_eq!(config.delay_before(3), Duration::from_millis(200));
        assert_eq!(config.delay_before(40), Duration::from_secs(60));
    }

    #[test]
    fn failed_messages_are_retried_until_their_last_attempt() {
        use consumer::{Settle, retry_or_dead_letter};
        let config =
            AmqpConfig::new("amqp://x", [7u8; 32]).unwrap().retry_delay(Duration::from_millis(100)).attempts(3);
        assert_eq!(retry_or_dead_letter(&config, 1), Settle::RequeueAfter(Duration::from_millis(100)));
        assert_eq!(retry_or_dead_letter(&config, 2), Settle::RequeueAfter(Duration::from_millis(200)));
        assert_eq!(retry_or_dead_letter(&config, 3), Settle::DeadLetter);
        assert_eq!(retry_or_dead_letter(&config, 7), Settle::DeadLetter, "the broker's count may pass ours");
    }
}
