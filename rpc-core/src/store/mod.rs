//! Shared state of the execution pipeline behind small traits: the result
//! cache ([`CacheStore`]) and the method locks ([`LockStore`]).
//!
//! Each has an in-process implementation ([`MemoryCache`], [`MemoryLocks`]:
//! the default, no setup) and, with the `redis` feature, one in Redis
//! (`store::redis`), which several instances of a server behind a load
//! balancer share. Both answer through [`MaybeReady`], so the in-process
//! stores cost no allocation per call.
//!
//! Keys are built by the executor and are opaque to the stores
//! (`rpc:cache:...`, `rpc:cgen:...`, `rpc:lock:...`); values are text. Call
//! results go through [`CacheStore::put_result`] and
//! [`CacheStore::get_result`], which a network store leaves to their
//! defaults (the result as text, checked when read back) and the in-process
//! cache overrides (the checked JSON kept and handed back as it is).
//!
//! **When a store fails.** The cache fails open: a read that fails is a
//! miss (the method runs), a write that fails is skipped. Locks fail
//! closed: a lock that cannot be taken refuses the call (`-32603`), so a
//! method that must not run twice never runs unguarded. (MCP sessions, in
//! the `mcp` crate, fail closed too: a session that cannot be read is not
//! served.) The Redis stores add a circuit breaker, so a Redis that is
//! down or stalled costs one call one short timeout, and the calls after it
//! none until it answers again (`store::redis`).

mod memory_cache;
mod memory_locks;
mod memory_rates;
#[cfg(feature = "redis")]
pub mod redis;
mod results;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use memory_cache::{DEFAULT_CACHE_BYTES, MemoryCache};
pub use memory_locks::MemoryLocks;
pub use memory_rates::{MAX_CLIENTS, MemoryRates};
pub use results::{FIRST_STAMP, ResultRead, result_text};

use serde_json::value::RawValue;

use crate::future::MaybeReady;
use crate::rate::{Rate, RateDecision};

/// A store could not be reached or answered unexpectedly.
#[derive(Debug, Clone)]
pub struct StoreError {
    message: String,
}

impl StoreError {
    /// An error with a message (which names the store and what failed).
    pub fn new(message: impl Into<String>) -> Self {
        StoreError { message: message.into() }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StoreError {}

/// A cached value and a generation stamp, read together
/// ([`CacheStore::get_with_generation`]).
pub type WithGeneration = (Option<String>, Option<String>);

/// Stored call results, by key, each with its own time to live.
///
/// A read that fails is treated as a miss (and logged): the method runs.
pub trait CacheStore: Send + Sync + 'static {
    /// The value stored under `key`, if it has not expired.
    fn get<'a>(&'a self, key: &'a str) -> MaybeReady<'a, Result<Option<String>, StoreError>>;
    /// Stores `value` under `key` for `ttl`, replacing what was there.
    fn put<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> MaybeReady<'a, Result<(), StoreError>>;
    /// Removes `key` (nothing happens if it is absent).
    fn remove<'a>(&'a self, key: &'a str) -> MaybeReady<'a, Result<(), StoreError>>;

    /// Removes every key starting with `prefix` (an exact text, not a
    /// pattern): how many were removed. Used by
    /// [`CacheControl`](crate::CacheControl) to delete a method's or a
    /// request's entries. The default fails ("this cache store cannot
    /// delete by prefix"), so a store written before this method existed
    /// still compiles; such a store deletes single entries only.
    fn remove_prefix<'a>(&'a self, prefix: &'a str) -> MaybeReady<'a, Result<u64, StoreError>> {
        let _ = prefix;
        MaybeReady::ready(Err(StoreError::new("this cache store cannot delete by prefix")))
    }

    /// The values under `key` and `generation` together: a cached result
    /// and the generation stamp it must carry to be current (one round trip
    /// in a network store: override the default, which reads one after the
    /// other).
    fn get_with_generation<'a>(
        &'a self,
        key: &'a str,
        generation: &'a str,
    ) -> MaybeReady<'a, Result<WithGeneration, StoreError>> {
        MaybeReady::pending(async move {
            let value = self.get(key).await?;
            let stamp = self.get(generation).await?;
            Ok((value, stamp))
        })
    }

    /// The call result under `key`, current if it carries the stamp under
    /// `generation` (for a method some relation invalidates; see
    /// [`ResultRead`]). The default reads the texts
    /// ([`get`](Self::get), [`get_with_generation`](Self::get_with_generation))
    /// and checks the JSON; a store holding what
    /// [`put_result`](Self::put_result) gave it (in this process) may hand
    /// the result back as it is.
    fn get_result<'a>(
        &'a self,
        key: &'a str,
        generation: Option<&'a str>,
    ) -> MaybeReady<'a, Result<ResultRead, StoreError>> {
        match generation {
            None => self.get(key).map(|value| value.map(|value| results::read_text(key, value, None))),
            Some(generation) => self
                .get_with_generation(key, generation)
                .map(|read| read.map(|(value, stamp)| results::read_text(key, value, Some(stamp)))),
        }
    }

    /// Stores the call result `json` under `key` for `ttl`, with the
    /// generation `stamp` it was computed under (if its method has
    /// generations). The default stores [`result_text`].
    fn put_result<'a>(
        &'a self,
        key: &'a str,
        stamp: Option<&'a str>,
        json: &'a RawValue,
        ttl: Duration,
    ) -> MaybeReady<'a, Result<(), StoreError>> {
        MaybeReady::pending(async move { self.put(key, &result_text(stamp, json), ttl).await })
    }

    /// Stores the call result `json` as [`put_result`](Self::put_result)
    /// does, for a caller that also writes it as a JSON string (see
    /// [`Call::result_as_string`](crate::Call::result_as_string)): a store
    /// that hands results back shared may keep room for that string with the
    /// entry, counted in its bound, and keep the string there once a hit has
    /// written it ([`ResultJson::json_string`](crate::ResultJson::json_string)).
    /// The default is [`put_result`](Self::put_result).
    fn put_result_with_string<'a>(
        &'a self,
        key: &'a str,
        stamp: Option<&'a str>,
        json: &'a RawValue,
        ttl: Duration,
    ) -> MaybeReady<'a, Result<(), StoreError>> {
        self.put_result(key, stamp, json, ttl)
    }
}

/// Named locks with an owner and a time to live.
///
/// A lock is taken only if nobody holds it (`SET NX PX` in Redis), released
/// only by its owner (the token given when it was taken), and expires after
/// its TTL even if the process holding it died. A lock store that fails
/// refuses the call (`-32603`): a method that must not run twice never runs
/// unguarded.
pub trait LockStore: Send + Sync + 'static {
    /// Takes `key` for `owner` for `ttl`: `true` when taken, `false` when
    /// somebody else holds it.
    fn acquire<'a>(&'a self, key: &'a str, owner: &'a str, ttl: Duration) -> MaybeReady<'a, Result<bool, StoreError>>;
    /// Releases `key` if `owner` holds it: `true` when released.
    fn release<'a>(&'a self, key: &'a str, owner: &'a str) -> MaybeReady<'a, Result<bool, StoreError>>;
    /// Makes `owner`'s lock on `key` last `ttl` from now, atomically, if
    /// `owner` still holds it: `true` when extended, `false` when it has
    /// expired or another owner holds it. The default releases and takes
    /// the lock again, which is not atomic (another owner may take it in
    /// between): stores override it (memory, Redis).
    fn extend<'a>(&'a self, key: &'a str, owner: &'a str, ttl: Duration) -> MaybeReady<'a, Result<bool, StoreError>> {
        MaybeReady::pending(async move {
            if !self.release(key, owner).await? {
                return Ok(false);
            }
            self.acquire(key, owner, ttl).await
        })
    }
}

/// Counters of rate limits ([`crate::rate`]), by client key.
///
/// A store that fails lets the request through on the executor's own
/// in-process counters ([`MemoryRates`]): a rate limit protects the
/// service, and refusing everyone while Redis is away would not.
pub trait RateStore: Send + Sync + 'static {
    /// Counts one request of `key` at `rate`, unless it is over the rate.
    fn hit<'a>(&'a self, key: &'a str, rate: Rate) -> MaybeReady<'a, Result<RateDecision, StoreError>>;
}

/// The stores an executor uses (see [`Executor::with_stores`](crate::Executor::with_stores)).
#[derive(Clone)]
pub struct Stores {
    /// Where `#[rpc::cache]` results go.
    pub cache: Arc<dyn CacheStore>,
    /// Where `#[rpc::lock]` locks are taken.
    pub locks: Arc<dyn LockStore>,
    /// Where rate limits count ([`Executor::with_rate_limits`](crate::Executor::with_rate_limits)).
    pub rates: Arc<dyn RateStore>,
}

impl fmt::Debug for Stores {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stores").finish_non_exhaustive()
    }
}

impl Default for Stores {
    /// In-process stores: a cache of at most [`DEFAULT_CACHE_BYTES`], locks
    /// and rate counters.
    fn default() -> Self {
        Stores {
            cache: Arc::new(MemoryCache::new(DEFAULT_CACHE_BYTES)),
            locks: Arc::new(MemoryLocks::new()),
            rates: Arc::new(MemoryRates::new()),
        }
    }
}
