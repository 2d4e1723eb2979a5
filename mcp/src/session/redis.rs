//! Sessions in Redis (feature `redis`): a session initialised through one
//! instance is found by every instance sharing the Redis.
//!
//! A session is a small JSON value under `mcp:session:<id>` (after the
//! store's prefix) with a sliding expiry: `SET .. NX PX ttl` creates it,
//! `GETEX .. PX ttl` reads it and extends its life, `SET .. XX KEEPTTL`
//! updates it, `DEL` ends it. Redis itself bounds memory (`maxmemory` and
//! an eviction policy); sessions never outlive their TTL.
//!
//! Commands go through the store's circuit breaker
//! ([`RedisStore::guard`]): while Redis does not answer, a session cannot be
//! read and its requests are refused (fail closed) at once, without
//! waiting for a timeout each.

use std::sync::Arc;
use std::time::Duration;

use rpc::store::redis::RedisStore;

use super::{Session, SessionError, SessionStore, StoreFuture};

/// The session store on a [`RedisStore`] connection.
#[derive(Debug, Clone)]
pub struct RedisSessionStore {
    redis: RedisStore,
}

impl RedisSessionStore {
    /// Sessions in the Redis `redis` is connected to (with its key prefix).
    pub fn new(redis: RedisStore) -> Self {
        RedisSessionStore { redis }
    }

    fn key(&self, id: &str) -> String {
        self.redis.key(&format!("mcp:session:{id}"))
    }
}

fn unavailable(e: rpc::store::StoreError) -> SessionError {
    SessionError::Unavailable(e.to_string())
}

fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl SessionStore for RedisSessionStore {
    fn create(&self, session: Session, ttl: Duration) -> StoreFuture<'_, Result<(), SessionError>> {
        StoreFuture::pending(async move {
            let json = serde_json::to_string(&session)
                .map_err(|e| SessionError::Unavailable(format!("a session does not encode: {e}")))?;
            let mut connection = self.redis.connection();
            let mut command = redis::cmd("SET");
            command.arg(self.key(&session.id)).arg(json).arg("NX").arg("PX").arg(millis(ttl));
            let created: Option<String> =
                self.redis.guard("SET", command.query_async(&mut connection)).await.map_err(unavailable)?;
            match created {
                Some(_) => Ok(()),
                None => Err(SessionError::Unavailable("a session with this id already exists".into())),
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, Result<Option<Arc<Session>>, SessionError>> {
        StoreFuture::pending(async move {
            let mut connection = self.redis.connection();
            let mut command = redis::cmd("GETEX");
            command.arg(self.key(id)).arg("PX").arg(millis(ttl));
            let json: Option<String> =
                self.redis.guard("GETEX", command.query_async(&mut connection)).await.map_err(unavailable)?;
            let Some(json) = json else { return Ok(None) };
            let session: Session = serde_json::from_str(&json)
                .map_err(|e| SessionError::Unavailable(format!("a stored session does not decode: {e}")))?;
            // A key that does not hold its own session is not trusted.
            Ok((session.id == id).then(|| Arc::new(session)))
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<bool, SessionError>> {
        StoreFuture::pending(async move {
            let mut connection = self.redis.connection();
            let mut command = redis::cmd("DEL");
            command.arg(self.key(id));
            let removed: i64 =
                self.redis.guard("DEL", command.query_async(&mut connection)).await.map_err(unavailable)?;
            Ok(removed > 0)
        })
    }

    fn update(&self, session: Session) -> StoreFuture<'_, Result<bool, SessionError>> {
        StoreFuture::pending(async move {
            let json = serde_json::to_string(&session)
                .map_err(|e| SessionError::Unavailable(format!("a session does not encode: {e}")))?;
            let mut connection = self.redis.connection();
            let mut command = redis::cmd("SET");
            command.arg(self.key(&session.id)).arg(json).arg("XX").arg("KEEPTTL");
            let updated: Option<String> =
                self.redis.guard("SET XX", command.query_async(&mut connection)).await.map_err(unavailable)?;
            Ok(updated.is_some())
        })
    }
}
