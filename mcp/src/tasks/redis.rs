//! Tasks in Redis (feature `redis`): every instance sharing the Redis
//! answers for every task.
//!
//! A task is a string under `mcp:task:<id>` (after the store's prefix):
//! `SET .. NX PX ttl` creates it, `GET` reads it, and a change is a script
//! that replaces the value only if it is still the one the change was made
//! from, keeping its expiry (`KEEPTTL`). Commands go through the store's
//! circuit breaker: while Redis does not answer, tasks cannot be started or
//! read (they fail with an error at once) rather than each waiting a timeout.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use redis::Script;
use rpc::store::redis::RedisStore;

use super::{StoreError, TaskStore};

/// Replaces `KEYS[1]` with `ARGV[2]` if it holds `ARGV[1]`.
const REPLACE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
  return 1
end
return 0
";

/// The task store on a [`RedisStore`] connection.
#[derive(Debug, Clone)]
pub struct RedisTaskStore {
    redis: RedisStore,
    replace: Arc<Script>,
}

impl RedisTaskStore {
    /// Tasks in the Redis `redis` is connected to (with its key prefix).
    pub fn new(redis: RedisStore) -> Self {
        RedisTaskStore { redis, replace: Arc::new(Script::new(REPLACE)) }
    }

    fn key(&self, id: &str) -> String {
        self.redis.key(&format!("mcp:task:{id}"))
    }
}

fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl TaskStore for RedisTaskStore {
    fn is_shared(&self) -> bool {
        true
    }

    fn create<'a>(&'a self, id: &'a str, record: String, ttl: Duration) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut connection = self.redis.connection();
            let mut command = redis::cmd("SET");
            command.arg(self.key(id)).arg(record).arg("NX").arg("PX").arg(millis(ttl));
            let created: Option<String> = self.redis.guard("task SET", command.query_async(&mut connection)).await?;
            match created {
                Some(_) => Ok(()),
                None => Err(StoreError::new("a task with this id already exists")),
            }
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        Box::pin(async move {
            let mut connection = self.redis.connection();
            let mut command = redis::cmd("GET");
            command.arg(self.key(id));
            self.redis.guard("task GET", command.query_async(&mut connection)).await
        })
    }

    fn replace<'a>(&'a self, id: &'a str, old: &'a str, new: String) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut connection = self.redis.connection();
            let mut command = self.replace.key(self.key(id));
            command.arg(old).arg(new);
            Ok(self.redis.guard("task replace", command.invoke_async::<i64>(&mut connection)).await? == 1)
        })
    }
}
