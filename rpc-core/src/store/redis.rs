//! The cache and the locks in Redis (feature `redis`), shared by every
//! instance of a server that uses the same Redis.
//!
//! One multiplexed, self-reconnecting connection (redis-rs's
//! `ConnectionManager`) carries the commands of all requests: concurrent
//! calls are pipelined on it rather than queued for a connection from a
//! pool. Every command is bounded by a response timeout; a failure is an
//! error of the store (a cache miss, a refused locked call), never a hang.
//!
//! * cache: `GET`, `SET key value PX ttl`, `DEL`;
//! * locks: `SET key owner NX PX ttl`; release runs a script that deletes
//!   the key only while it still holds the owner's token.
//!
//! ```no_run
//! # async fn run(registry: rpc::Registry) -> Result<(), rpc::store::StoreError> {
//! let redis = rpc::store::redis::RedisStore::connect("redis://127.0.0.1:6379/").await?;
//! let executor = rpc::Executor::new(registry, rpc::Environment::Prod).with_stores(redis.stores());
//! # Ok(()) }
//! ```

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands, Script};

use crate::future::MaybeReady;
use crate::store::{CacheStore, LockStore, StoreError, Stores};

/// How long a command may take before it fails.
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long connecting may take.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

const RELEASE: &str =
    r#"if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end"#;

/// A connection to Redis, usable as the cache and the lock store (and, in
/// the `mcp` crate, the session store).
#[derive(Clone)]
pub struct RedisStore {
    connection: ConnectionManager,
    prefix: Arc<str>,
    release: Arc<Script>,
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
            match tokio::time::timeout(connect * 2, ConnectionManager::new_with_config(client, config)).await {
                Ok(Ok(connection)) => connection,
                Ok(Err(e)) => return Err(failed("connection", e)),
                Err(_) => return Err(StoreError::new(format!("redis connection: no answer within {connect:?}"))),
            };
        Ok(RedisStore { connection, prefix: Arc::from(""), release: Arc::new(Script::new(RELEASE)) })
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

    /// The cache and the locks of an executor, both in this Redis.
    pub fn stores(&self) -> Stores {
        Stores { cache: Arc::new(self.clone()), locks: Arc::new(self.clone()) }
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
            connection.get(self.key(key)).await.map_err(|e| failed("GET", e))
        })
    }

    fn put<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> MaybeReady<'a, Result<(), StoreError>> {
        MaybeReady::pending(async move {
            let mut connection = self.connection.clone();
            redis::cmd("SET")
                .arg(self.key(key))
                .arg(value)
                .arg("PX")
                .arg(millis(ttl))
                .query_async::<()>(&mut connection)
                .await
                .map_err(|e| failed("SET", e))
        })
    }

    fn remove<'a>(&'a self, key: &'a str) -> MaybeReady<'a, Result<(), StoreError>> {
        MaybeReady::pending(async move {
            let mut connection = self.connection.clone();
            connection.del::<_, ()>(self.key(key)).await.map_err(|e| failed("DEL", e))
        })
    }
}

impl LockStore for RedisStore {
    fn acquire<'a>(&'a self, key: &'a str, owner: &'a str, ttl: Duration) -> MaybeReady<'a, Result<bool, StoreError>> {
        MaybeReady::pending(async move {
            let mut connection = self.connection.clone();
            let set: Option<String> = redis::cmd("SET")
                .arg(self.key(key))
                .arg(owner)
                .arg("NX")
                .arg("PX")
                .arg(millis(ttl))
                .query_async(&mut connection)
                .await
                .map_err(|e| failed("SET NX", e))?;
            Ok(set.is_some())
        })
    }

    fn release<'a>(&'a self, key: &'a str, owner: &'a str) -> MaybeReady<'a, Result<bool, StoreError>> {
        MaybeReady::pending(async move {
            let mut connection = self.connection.clone();
            let deleted: i64 = self
                .release
                .key(self.key(key))
                .arg(owner)
                .invoke_async(&mut connection)
                .await
                .map_err(|e| failed("lock release", e))?;
            Ok(deleted == 1)
        })
    }
}
