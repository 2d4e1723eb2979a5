//! Sessions in Redis (feature `redis`): a session initialised through one
//! instance is found by every instance sharing the Redis.
//!
//! A session is a small JSON value under `mcp:session:<id>` (after the
//! store's prefix) with a sliding expiry: `SET .. NX PX ttl` creates it,
//! `GETEX .. PX ttl` reads it and extends its life, `SET .. XX KEEPTTL`
//! updates it, `DEL` ends it. Redis itself bounds memory (`maxmemory` and
//! an eviction policy); sessions never outlive their TTL.

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

fn unavailable(what: &str, e: impl std::fmt::Display) -> SessionError {
    SessionError::Unavailable(format!("redis {what}: {e}"))
}

fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl SessionStore for RedisSessionStore {
    fn create(&self, session: Session, ttl: Duration) -> StoreFuture<'_, Result<(), SessionError>> {
        StoreFuture::pending(async move {
            let json = serde_json::to_string(&session).map_err(|e| unavailable("encode", e))?;
            let mut connection = self.redis.connection();
            let created: Option<String> = redis::cmd("SET")
                .arg(self.key(&session.id))
                .arg(json)
                .arg("NX")
                .arg("PX")
                .arg(millis(ttl))
                .query_async(&mut connection)
                .await
                .map_err(|e| unavailable("SET", e))?;
            match created {
                Some(_) => Ok(()),
                None => Err(SessionError::Unavailable("a session with this id already exists".into())),
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, Result<Option<Arc<Session>>, SessionError>> {
        StoreFuture::pending(async move {
            let mut connection = self.redis.connection();
            let json: Option<String> = redis::cmd("GETEX")
                .arg(self.key(id))
                .arg("PX")
                .arg(millis(ttl))
                .query_async(&mut connection)
                .await
                .map_err(|e| unavailable("GETEX", e))?;
            let Some(json) = json else { return Ok(None) };
            let session: Session = serde_json::from_str(&json).map_err(|e| unavailable("decode", e))?;
            // A key that does not hold its own session is not trusted.
            Ok((session.id == id).then(|| Arc::new(session)))
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<bool, SessionError>> {
        StoreFuture::pending(async move {
            let mut connection = self.redis.connection();
            let removed: i64 = redis::cmd("DEL")
                .arg(self.key(id))
                .query_async(&mut connection)
                .await
                .map_err(|e| unavailable("DEL", e))?;
            Ok(removed > 0)
        })
    }

    fn update(&self, session: Session) -> StoreFuture<'_, Result<bool, SessionError>> {
        StoreFuture::pending(async move {
            let json = serde_json::to_string(&session).map_err(|e| unavailable("encode", e))?;
            let mut connection = self.redis.connection();
            let updated: Option<String> = redis::cmd("SET")
                .arg(self.key(&session.id))
                .arg(json)
                .arg("XX")
                .arg("KEEPTTL")
                .query_async(&mut connection)
                .await
                .map_err(|e| unavailable("SET XX", e))?;
            Ok(updated.is_some())
        })
    }
}
