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

/// The stamp of a method that was never invalidated.
const FIRST_STAMP: &str = "0";

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
    Hit(Box<RawValue>),
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
        let invalidated = executor.registry.is_invalidated(version, method.name());
        let canonical = keys::canonical_params(method, params);
        let (key, generation) = keys::entry_keys(method.name(), version, &canonical, identity, invalidated);
        CacheSlot { key, generation, ttl: Duration::from_secs(policy.ttl_secs) }
    }
}

/// `g:<stamp>:<json>` split into the stamp and the JSON.
fn stamped(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("g:")?;
    let end = rest.find(':')?;
    Some((&rest[..end], &rest[end + 1..]))
}

impl Executor {
    /// The cached result of `slot`, if current (a store failure is a miss).
    /// With `bypass` (`$rpc.ignoreCache`) nothing is read but the stamp.
    pub(super) async fn cache_lookup(&self, slot: &CacheSlot, bypass: bool) -> Lookup {
        let cache = &self.stores.cache;
        let Some(generation) = &slot.generation else {
            if bypass {
                return Lookup::Miss(None);
            }
            return match cache.get(&slot.key).await {
                Ok(Some(text)) => parse(&slot.key, text).map_or(Lookup::Miss(None), Lookup::Hit),
                Ok(None) => Lookup::Miss(None),
                Err(e) => {
                    tracing::warn!(key = %logged(&slot.key), error = %e, "the cache store failed; calling the method");
                    Lookup::Miss(None)
                }
            };
        };
        let read = if bypass {
            cache.get(generation).await.map(|stamp| (None, stamp))
        } else {
            cache.get_with_generation(&slot.key, generation).await
        };
        let (value, stamp) = match read {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(key = %logged(&slot.key), error = %e, "the cache store failed; calling the method");
                // The stamp is unknown: the result is not stored.
                return Lookup::Miss(None);
            }
        };
        let stamp = stamp.unwrap_or_else(|| FIRST_STAMP.to_owned());
        if let Some(mut text) = value
            && let Some((written, json)) = stamped(&text)
            && written == stamp
        {
            // The JSON moved to the front of the same buffer (no second copy).
            let start = text.len() - json.len();
            text.drain(..start);
            if let Some(raw) = parse(&slot.key, text) {
                return Lookup::Hit(raw);
            }
        }
        Lookup::Miss(Some(stamp))
    }

    /// Stores `result` in `slot`, under the stamp the lookup read.
    pub(super) async fn cache_store(&self, slot: &CacheSlot, stamp: Option<&str>, result: &RawValue) {
        let stored = match (&slot.generation, stamp) {
            (None, _) => self.stores.cache.put(&slot.key, result.get(), slot.ttl).await,
            (Some(_), Some(stamp)) => {
                let text = format!("g:{stamp}:{}", result.get());
                self.stores.cache.put(&slot.key, &text, slot.ttl).await
            }
            // The stamp could not be read: a stored result might be stale.
            (Some(_), None) => return,
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
        self.stores.cache.put(&generation, &stamp, Duration::from_secs(policy.ttl_secs.max(1))).await
    }
}

fn parse(key: &str, text: String) -> Option<Box<RawValue>> {
    match RawValue::from_string(text) {
        Ok(raw) => Some(raw),
        Err(e) => {
            tracing::warn!(key = %logged(key), error = %e, "a cached result is not JSON; calling the method");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::stamped;

    #[test]
    fn stamps_split_from_the_json() {
        assert_eq!(stamped(r#"g:0:{"a":1}"#), Some(("0", r#"{"a":1}"#)));
        assert_eq!(stamped(r#"g:ab-1:"x:y""#), Some(("ab-1", r#""x:y""#)));
        assert_eq!(stamped(r#"{"a":1}"#), None, "an entry without a stamp is never current");
        assert_eq!(stamped("g:0"), None);
    }
}
