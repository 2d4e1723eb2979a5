//! The cache and the locks in Redis (feature `redis`), shared by every
//! instance of a server that uses the same Redis.
//!
//! One multiplexed, self-reconnecting connection (redis-rs's
//! `ConnectionManager`) carries the commands of all requests: concurrent
//! calls are pipelined on it rather than queued for a connection from a
//! pool. Every command is bounded by a response timeout; a failure is an
//! error of the store (a cache miss, a refused locked call), never a hang.
//!
//! **Circuit breaker.** A command that times out or loses its connection
//! opens the breaker: from then on commands fail at once, without being
//! sent, while a background probe sends `PING` every
//! [`PROBE_INTERVAL`] until Redis answers, which closes the breaker. A dead
//! or stalled Redis therefore costs one call one response timeout, and the
//! calls after it nothing until it is back (the cache is skipped, locked
//! calls are refused: see [`store`](crate::store) for each store's choice).
//!
//! **Late locks.** A `SET NX` that timed out may still reach a stalled Redis
//! when it resumes, and hold the method for the lock's whole TTL with nobody
//! to release it. The store remembers such acquisitions and releases them
//! (by their owner token, so a lock somebody else took is left alone) as
//! soon as Redis answers again.
//!
//! * cache: `GET`, `MGET` (an entry and its generation stamp), `SET key
//!   value PX ttl`, `DEL`;
//! * locks: `SET key owner NX PX ttl`; release runs a script that deletes
//!   the key only while it still holds the owner's token;
//! * rate limits: one script per request that reads the client's due time,
//!   moves it on by one interval unless that is beyond the period, and
//!   keeps it for as long as it is in the future (`PX`); time is Redis's
//!   own (`TIME`), so instances whose clocks differ count alike.
//!
//! ```no_run
//! # extern crate rpc_core as rpc;
//! # async fn run(registry: rpc::Registry) -> Result<(), rpc::store::StoreError> {
//! let redis = rpc::store::redis::RedisStore::connect("redis://127.0.0.1:6379/").await?;
//! let executor = rpc::Executor::new(registry, rpc::Environment::Prod).with_stores(redis.stores());
//! # Ok(()) }
//! ```

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{RedisError, Script};

use crate::future::MaybeReady;
use crate::rate::{Rate, RateDecision};
use crate::store::{CacheStore, LockStore, RateStore, StoreError, Stores};

/// How long a command may take before it fails.
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long connecting may take.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How often an open circuit breaker checks whether Redis answers again.
pub const PROBE_INTERVAL: Duration = Duration::from_millis(250);
/// How often a lock acquisition that may have been applied late is
/// released again, once Redis answers.
const LATE_LOCK_RETRY: Duration = Duration::from_millis(250);

const RELEASE: &str =
    r#"if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end"#;

/// ARGV[1] the owner, ARGV[2] the new TTL in milliseconds.
const EXTEND: &str =
    r#"if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end"#;

/// GCRA in microseconds: ARGV[1] the interval, ARGV[2] the period; returns
/// 0 when counted, else how long to wait.
const RATE: &str = r#"
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local due = tonumber(redis.call("GET", KEYS[1]) or now)
if due < now then due = now end
local next = due + tonumber(ARGV[1])
local over = next - now - tonumber(ARGV[2])
if over > 0 then return over end
redis.call("SET", KEYS[1], string.format("%.0f", next), "PX", math.ceil((next - now) / 1000))
return 0
"#;

/// A connection to Redis, usable as the cache and the lock store (and, in
/// the `mcp` crate, the session store).
#[derive(Clone)]
pub struct RedisStore {
    client: redis::Client,
    connection: ConnectionManager,
    prefix: Arc<str>,
    release: Arc<Script>,
    extend: Arc<Script>,
    rate: Arc<Script>,
    breaker: Arc<Breaker>,
    response_timeout: Duration,
}

/// The circuit breaker shared by every handle on one connection.
#[derive(Default)]
struct Breaker {
    /// Commands fail without being sent while this is set.
    open: AtomicBool,
    /// A probe task is running.
    probing: AtomicBool,
    /// Why the breaker opened (the error of the command that opened it).
    reason: Mutex<String>,
}

/// Whether `e` says Redis cannot be reached (rather than that it refused
/// one command): a timeout, a lost or refused connection.
fn unreachable_error(e: &RedisError) -> bool {
    e.is_timeout()
        || e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_unrecoverable_error()
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

fn failed(what: &str, e: redis::RedisError) -> StoreError {
    StoreError::new(format!("redis {what}: {e}"))
}

impl RedisStore {
    /// Connects to the Redis at `url` (`redis://host:port/db`), with the
    /// default timeouts.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, DEFAULT_CONNECT_TIMEOUT, DEFAULT_RESPONSE_TIMEOUT).await
    }

    /// Connects with explicit timeouts for connecting and for each command.
    pub async fn connect_with(url: &str, connect: Duration, response: Duration) -> Result<Self, StoreError> {
        let client = redis::Client::open(url).map_err(|e| failed("URL", e))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(connect))
            .set_response_timeout(Some(response))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_secs(1));
        let connection =
            match tokio::time::timeout(connect * 2, ConnectionManager::new_with_config(client.clone(), config)).await {
                Ok(Ok(connection)) => connection,
                Ok(Err(e)) => return Err(failed("connection", e)),
                Err(_) => return Err(StoreError::new(format!("redis connection: no answer within {connect:?}"))),
            };
        Ok(RedisStore {
            client,
            connection,
            prefix: Arc::from(""),
            release: Arc::new(Script::new(RELEASE)),
            extend: Arc::new(Script::new(EXTEND)),
            rate: Arc::new(Script::new(RATE)),
            breaker: Arc::default(),
            response_timeout: response,
        })
    }

    /// The client the connection was made with, for connections of another
    /// kind (publish/subscribe).
    pub fn client(&self) -> &redis::Client {
        &self.client
    }

    /// How long one command may take before Redis counts as unavailable.
    pub fn response_timeout(&self) -> Duration {
        self.response_timeout
    }

    /// Whether the circuit breaker is open: Redis did not answer, and
    /// commands fail at once until a probe finds it back.
    pub fn is_unavailable(&self) -> bool {
        self.breaker.open.load(Ordering::Acquire)
    }

    /// Runs one command (`what` names it in errors) through the circuit
    /// breaker: refused at once while it is open; bounded by the response
    /// timeout; a timeout or a lost connection opens it. Stores built on
    /// this connection (MCP sessions) send their commands through here.
    pub async fn guard<T>(
        &self,
        what: &str,
        command: impl Future<Output = Result<T, RedisError>>,
    ) -> Result<T, StoreError> {
        if self.is_unavailable() {
            let reason = self.breaker.reason.lock().unwrap_or_else(|e| e.into_inner()).clone();
            return Err(StoreError::new(format!(
                "redis {what}: not sent, Redis is unavailable ({reason}); retried once it answers"
            )));
        }
        // redis-rs bounds each attempt; this bounds its reconnection attempts too.
        let bound = self.response_timeout.saturating_mul(2);
        let outcome = match tokio::time::timeout(bound, command).await {
            Ok(outcome) => outcome,
            Err(_) => {
                let reason = format!("no answer within {bound:?}");
                self.trip(&reason);
                return Err(StoreError::new(format!("redis {what}: {reason}")));
            }
        };
        outcome.map_err(|e| {
            if unreachable_error(&e) {
                self.trip(&e.to_string());
            }
            failed(what, e)
        })
    }

    /// Opens the breaker and starts a probe (one at a time) that closes it
    /// when Redis answers `PING` again.
    fn trip(&self, reason: &str) {
        *self.breaker.reason.lock().unwrap_or_else(|e| e.into_inner()) = reason.chars().take(200).collect();
        self.breaker.open.store(true, Ordering::Release);
        if self.breaker.probing.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // Nothing to probe with: let the next command try again.
            self.breaker.probing.store(false, Ordering::Release);
            self.breaker.open.store(false, Ordering::Release);
            return;
        };
        tracing::warn!(reason, "redis unavailable: cache skipped, locked calls and sessions refused until it answers");
        let this = self.clone();
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(PROBE_INTERVAL).await;
                let mut connection = this.connection.clone();
                let ping = redis::cmd("PING");
                if let Ok(Ok(_)) =
                    tokio::time::timeout(this.response_timeout, ping.query_async::<String>(&mut connection)).await
                {
                    break;
                }
            }
            this.breaker.open.store(false, Ordering::Release);
            this.breaker.probing.store(false, Ordering::Release);
            tracing::info!("redis answers again");
        });
    }

    /// Releases a lock whose acquisition failed without an answer: the
    /// `SET NX` may still be applied when Redis resumes. Tried once Redis
    /// answers, then once more (a command of the dropped connection may be
    /// read after the first answer), within the lock's TTL.
    fn release_late(&self, key: String, owner: String, ttl: Duration) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let this = self.clone();
        runtime.spawn(async move {
            let deadline = tokio::time::Instant::now() + ttl;
            let mut answers = 0;
            while answers < 2 && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(LATE_LOCK_RETRY).await;
                let mut connection = this.connection.clone();
                let mut release = this.release.key(this.key(&key));
                release.arg(&owner);
                match tokio::time::timeout(this.response_timeout, release.invoke_async::<i64>(&mut connection)).await {
                    Ok(Ok(1)) => {
                        tracing::info!(key = %crate::logged::logged(&key), "a lock taken after its acquisition had failed was released");
                        return;
                    }
                    Ok(Ok(_)) => answers += 1,
                    _ => {}
                }
            }
        });
    }

    /// Prefixes every key (`myapp:`), so several applications share one Redis.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Arc::from(prefix.into());
        self
    }

    /// `key` with the prefix.
    pub fn key(&self, key: &str) -> String {
        let mut out = String::with_capacity(self.prefix.len() + key.len());
        out.push_str(&self.prefix);
        out.push_str(key);
        out
    }

    /// A handle on the connection, for stores built on this one.
    pub fn connection(&self) -> ConnectionManager {
        self.connection.clone()
    }

    /// The cache, the locks and the rate counters of an executor, all in
    /// this Redis.
    pub fn stores(&self) -> Stores {
        Stores { cache: Arc::new(self.clone()), locks: Arc::new(self.clone()), rates: Arc::new(self.clone()) }
    }

    /// Checks the connection (`PING`).
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut connection = self.connection.clone();
        let _: String = redis::cmd("PING").query_async(&mut connection).await.map_err(|e| failed("PING", e))?;
        Ok(())
    }
}

fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl CacheStore for RedisStore {
    fn get<'a>(&'a self, key: &'a str) -> MaybeReady<'a, Result<Option<String>, StoreError>> {
        MaybeReady::pending(async move {
            let mut connection = self.connection.clone();
            self.guard("GET", redis::cmd("GET").arg(self.key(key)).query_async(&mut connection)).await
        })
    }

    fn get_with_generation<'a>(
        &'a self,
        key: &'a str,
        generation: &'a str,
    ) -> MaybeReady<'a, Result<crate::store::WithGeneration, StoreError>> {
        MaybeReady::pending(async move {
            let mut connection = self.connection.clone();
            let mut command = redis::cmd("MGET");
            command.arg(self.key(key)).arg(self.key(generation));
            let (value, stamp): (Option<String>, Option<String>) =
                self.guard("MGET", command.query_async(&mut connection)).await?;
            Ok((value, stamp))
        })
    }

    fn put<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> MaybeReady<'a, Result<(), StoreError>> {
        MaybeReady::pending(async move {
            let mut connection = self.connection.clone();
            let mut command = redis::cmd("SET");
            command.arg(self.key(key)).arg(value).arg("PX").arg(millis(ttl));
            self.guard("SET", command.query_async::<()>(&mut connection)).await
        })
    }

    fn remove<'a>(&'a self, key: &'a str) -> MaybeReady<'a, Result<(), StoreError>> {
        MaybeReady::pending(async move {
            let mut connection = self.connection.clone();
            self.guard("DEL", redis::cmd("DEL").arg(self.key(key)).query_async::<()>(&mut connection)).await
        })
    }

    fn remove_prefix<'a>(&'a self, prefix: &'a str) -> MaybeReady<'a, Result<u64, StoreError>> {
        MaybeReady::pending(self.unlink_prefix(prefix))
    }
}

/// How many keys one `SCAN` of [`CacheStore::remove_prefix`] looks at.
const SCAN_COUNT: usize = 500;

/// `text` with the characters a `MATCH` pattern gives a meaning (`* ? [ ]
/// \`) escaped, so that it matches itself only.
fn glob_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl RedisStore {
    /// Removes the keys starting with `prefix` (without the application
    /// prefix): `SCAN MATCH` of [`SCAN_COUNT`] keys at a time, each batch
    /// found removed with `UNLINK` (freed in the background), every
    /// command through the circuit breaker. Memory stays at one batch
    /// whatever the number of keys.
    async fn unlink_prefix(&self, prefix: &str) -> Result<u64, StoreError> {
        let mut pattern = glob_escaped(&self.key(prefix));
        pattern.push('*');
        let mut connection = self.connection.clone();
        let mut cursor: u64 = 0;
        let mut removed = 0;
        loop {
            let mut scan = redis::cmd("SCAN");
            scan.arg(cursor).arg("MATCH").arg(&pattern).arg("COUNT").arg(SCAN_COUNT);
            let (next, keys): (u64, Vec<Vec<u8>>) = self.guard("SCAN", scan.query_async(&mut connection)).await?;
            if !keys.is_empty() {
                let unlinked: u64 =
                    self.guard("UNLINK", redis::cmd("UNLINK").arg(&keys).query_async(&mut connection)).await?;
                removed += unlinked;
            }
            if next == 0 {
                return Ok(removed);
            }
            cursor = next;
        }
    }
}

impl LockStore for RedisStore {
    fn acquire<'a>(&'a self, key: &'a str, owner: &'a str, ttl: Duration) -> MaybeReady<'a, Result<bool, StoreError>> {
        MaybeReady::pending(async move {
            let mut connection = self.connection.clone();
            let mut command = redis::cmd("SET");
            command.arg(self.key(key)).arg(owner).arg("NX").arg("PX").arg(millis(ttl));
            let sent = !self.is_unavailable();
            match self.guard("SET NX", command.query_async::<Option<String>>(&mut connection)).await {
                Ok(set) => Ok(set.is_some()),
                Err(e) => {
                    if sent {
                        // Sent without an answer: it may be applied later.
                        self.release_late(key.to_owned(), owner.to_owned(), ttl);
                    }
                    Err(e)
                }
            }
        })
    }

    fn release<'a>(&'a self, key: &'a str, owner: &'a str) -> MaybeReady<'a, Result<bool, StoreError>> {
        MaybeReady::pending(async move {
            let mut connection = self.connection.clone();
            let mut command = self.release.key(self.key(key));
            command.arg(owner);
            Ok(self.guard("lock release", command.invoke_async::<i64>(&mut connection)).await? == 1)
        })
    }

    fn extend<'a>(&'a self, key: &'a str, owner: &'a str, ttl: Duration) -> MaybeReady<'a, Result<bool, StoreError>> {
        MaybeReady::pending(async move {
            let mut connection = self.connection.clone();
            let mut command = self.extend.key(self.key(key));
            command.arg(owner).arg(millis(ttl));
            Ok(self.guard("lock extend", command.invoke_async::<i64>(&mut connection)).await? == 1)
        })
    }
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX).max(1)
}

impl RateStore for RedisStore {
    fn hit<'a>(&'a self, key: &'a str, rate: Rate) -> MaybeReady<'a, Result<RateDecision, StoreError>> {
        MaybeReady::pending(async move {
            let mut connection = self.connection.clone();
            let mut command = self.rate.key(self.key(key));
            command.arg(micros(rate.interval())).arg(micros(rate.period()));
            let wait: i64 = self.guard("rate", command.invoke_async(&mut connection)).await?;
            Ok(match u64::try_from(wait) {
                Ok(0) | Err(_) => RateDecision::Allowed,
                Ok(micros) => RateDecision::Limited { retry_after: Duration::from_micros(micros) },
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::glob_escaped;

    #[test]
    fn patterns_match_their_text_only() {
        assert_eq!(glob_escaped("app:rpc:cache:Catalog.get:v1:"), "app:rpc:cache:Catalog.get:v1:");
        assert_eq!(glob_escaped(r"a*b?c[d]e\f"), r"a\*b\?c\[d\]e\\f");
    }
}
