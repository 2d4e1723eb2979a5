//! The result cache of a call (`#[rpc::cache]`): where its entry lives,
//! the read before the method runs and the write after it.
//!
//! A method that some `#[rpc::invalidates]` names is cached with a
//! *generation stamp*: its entries (one per caller) are stored as
//! `g:<stamp>:<json>`, and are current only while the stamp under the
//! method's generation key (the method, the version and the parameters,
//! without the caller) is the same. An invalidation writes a new stamp
//! there, which makes every caller's entry stale at once; the stamp is read
//! with the entry (one round trip), and a result computed while an
//! invalidation happened carries the old stamp, so it is never served.

use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{Executor, keys};
use crate::descriptor::CachePolicy;
use crate::identity::Identity;
use crate::logged::logged;
use crate::registry::Method;
use crate::result_json::ResultJson;
use crate::store::{FIRST_STAMP, ResultRead};

/// Where a call's result is cached.
pub(super) struct CacheSlot {
    key: String,
    /// The generation key, for methods some relation invalidates.
    generation: Option<String>,
    ttl: Duration,
}

/// What the cache said before the method ran.
pub(super) enum Lookup {
    /// A current entry.
    Hit(ResultJson),
    /// Nothing current: the result is stored under this stamp (`None` for a
    /// method without generations, or when the stamp could not be read).
    Miss(Option<String>),
}

impl CacheSlot {
    /// The slot of a call of `method` with `params`, by `identity`.
    pub(super) fn new(
        executor: &Executor,
        method: &Method,
        version: u32,
        policy: &CachePolicy,
        params: &Map<String, Value>,
        identity: Option<&Identity>,
    ) -> Self {
        let invalidated = executor.shared.registry.is_invalidated(version, method.name());
        let (key, generation) = keys::entry_keys(method, version, params, identity, invalidated);
        CacheSlot { key, generation, ttl: Duration::from_secs(policy.ttl_secs) }
    }
}

impl Executor {
    /// The cached result of `slot`, if current (a store failure is a miss).
    /// With `bypass` (`$rpc.ignoreCache`) nothing is read but the stamp.
    pub(super) async fn cache_lookup(&self, slot: &CacheSlot, bypass: bool) -> Lookup {
        let cache = &self.shared.stores.cache;
        if bypass {
            // Nothing is read but the stamp a fresh result is stored under.
            let Some(generation) = &slot.generation else { return Lookup::Miss(None) };
            return match cache.get(generation).await {
                Ok(stamp) => Lookup::Miss(Some(stamp.unwrap_or_else(|| FIRST_STAMP.to_owned()))),
                Err(e) => {
                    tracing::warn!(key = %logged(&slot.key), error = %e, "the cache store failed; calling the method");
                    Lookup::Miss(None)
                }
            };
        }
        match cache.get_result(&slot.key, slot.generation.as_deref()).await {
            Ok(ResultRead::Current(json)) => Lookup::Hit(json),
            Ok(ResultRead::Missing(stamp)) => Lookup::Miss(stamp),
            Err(e) => {
                tracing::warn!(key = %logged(&slot.key), error = %e, "the cache store failed; calling the method");
                // The stamp is unknown: the result is not stored.
                Lookup::Miss(None)
            }
        }
    }

    /// Stores `result` in `slot`, under the stamp the lookup read (with
    /// room for it as a JSON string when the caller writes it so).
    pub(super) async fn cache_store(&self, slot: &CacheSlot, stamp: Option<&str>, result: &RawValue, as_string: bool) {
        let stamp = match (&slot.generation, stamp) {
            (None, _) => None,
            (Some(_), Some(stamp)) => Some(stamp),
            // The stamp could not be read: a stored result might be stale.
            (Some(_), None) => return,
        };
        let cache = &self.shared.stores.cache;
        let stored = match as_string {
            true => cache.put_result_with_string(&slot.key, stamp, result, slot.ttl).await,
            false => cache.put_result(&slot.key, stamp, result, slot.ttl).await,
        };
        if let Err(e) = stored {
            tracing::warn!(key = %logged(&slot.key), error = %e, "could not store a result in the cache");
        }
    }

    /// Makes every caller's cached result of `method` for `params` stale
    /// (a new generation stamp); `Err` when the store failed.
    pub(super) async fn cache_invalidate(
        &self,
        method: &Method,
        version: u32,
        policy: &CachePolicy,
        params: &Map<String, Value>,
    ) -> Result<(), crate::store::StoreError> {
        let generation = keys::generation_key(method, version, params);
        let stamp = super::lock::owner_token();
        self.shared.stores.cache.put(&generation, &stamp, Duration::from_secs(policy.ttl_secs.max(1))).await
    }
}
