//! The in-process stores: the default, shared by the endpoints of one process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::clock::{Clock, SystemClock};
use crate::future::MaybeReady;
use crate::store::{CacheStore, LockStore, StoreError};

/// The default bound of a [`MemoryCache`]: 64 MiB of keys and values.
pub const DEFAULT_CACHE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Clone)]
struct Entry {
    value: Arc<str>,
    expires_at: Instant,
    ttl: Duration,
}

struct PerEntryTtl;

impl moka::Expiry<String, Entry> for PerEntryTtl {
    fn expire_after_create(&self, _key: &String, entry: &Entry, _created_at: std::time::Instant) -> Option<Duration> {
        Some(entry.ttl)
    }

    fn expire_after_update(
        &self,
        _key: &String,
        entry: &Entry,
        _updated_at: std::time::Instant,
        _current: Option<Duration>,
    ) -> Option<Duration> {
        Some(entry.ttl)
    }
}

/// An in-process result cache bounded in bytes (keys and values), built on
/// moka: when full, the least useful entries go first (TinyLFU). Expiry is
/// decided by a [`Clock`] (a test moves a `ManualClock` instead of
/// sleeping); moka drops expired entries on its own schedule too.
pub struct MemoryCache {
    entries: moka::sync::Cache<String, Entry>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for MemoryCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryCache").field("entries", &self.entries.entry_count()).finish_non_exhaustive()
    }
}

impl MemoryCache {
    /// A cache holding at most about `max_bytes` of keys and values.
    pub fn new(max_bytes: u64) -> Self {
        Self::with_clock(max_bytes, Arc::new(SystemClock))
    }

    /// A cache whose expiry follows `clock`.
    pub fn with_clock(max_bytes: u64, clock: Arc<dyn Clock>) -> Self {
        let entries = moka::sync::Cache::builder()
            .max_capacity(max_bytes)
            .weigher(|key: &String, entry: &Entry| {
                u32::try_from(key.len() + entry.value.len() + 64).unwrap_or(u32::MAX)
            })
            .expire_after(PerEntryTtl)
            .build();
        MemoryCache { entries, clock }
    }

    /// The number of entries (approximate while moka catches up).
    pub fn len(&self) -> u64 {
        self.entries.run_pending_tasks();
        self.entries.entry_count()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl CacheStore for MemoryCache {
    fn get<'a>(&'a self, key: &'a str) -> MaybeReady<'a, Result<Option<String>, StoreError>> {
        let found = match self.entries.get(key) {
            Some(entry) if entry.expires_at > self.clock.now() => Some(entry.value.to_string()),
            Some(_) => {
                self.entries.invalidate(key);
                None
            }
            None => None,
        };
        MaybeReady::ready(Ok(found))
    }

    fn put<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> MaybeReady<'a, Result<(), StoreError>> {
        let expires_at = self.clock.now() + ttl;
        self.entries.insert(key.to_owned(), Entry { value: Arc::from(value), expires_at, ttl });
        MaybeReady::ready(Ok(()))
    }

    fn remove<'a>(&'a self, key: &'a str) -> MaybeReady<'a, Result<(), StoreError>> {
        self.entries.invalidate(key);
        MaybeReady::ready(Ok(()))
    }
}

/// In-process locks with owners and expiry read from a [`Clock`]. Expired
/// locks are dropped when the table grows, so it stays about as large as
/// the number of calls holding a lock.
pub struct MemoryLocks {
    held: Mutex<HashMap<String, Held>>,
    clock: Arc<dyn Clock>,
}

struct Held {
    owner: String,
    expires_at: Instant,
}

/// From this many entries on, an acquire first drops the expired ones.
const PURGE_FROM: usize = 1024;

impl std::fmt::Debug for MemoryLocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryLocks").finish_non_exhaustive()
    }
}

impl Default for MemoryLocks {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryLocks {
    /// An empty lock table on the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// An empty lock table whose expiry follows `clock`.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        MemoryLocks { held: Mutex::new(HashMap::new()), clock }
    }

    /// The number of locks in the table (expired ones may still count).
    pub fn len(&self) -> usize {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether no lock is in the table.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl LockStore for MemoryLocks {
    fn acquire<'a>(&'a self, key: &'a str, owner: &'a str, ttl: Duration) -> MaybeReady<'a, Result<bool, StoreError>> {
        let now = self.clock.now();
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if held.len() >= PURGE_FROM {
            held.retain(|_, h| h.expires_at > now);
        }
        let taken = match held.get(key) {
            Some(h) if h.expires_at > now => false,
            _ => {
                held.insert(key.to_owned(), Held { owner: owner.to_owned(), expires_at: now + ttl });
                true
            }
        };
        MaybeReady::ready(Ok(taken))
    }

    fn release<'a>(&'a self, key: &'a str, owner: &'a str) -> MaybeReady<'a, Result<bool, StoreError>> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let released = match held.get(key) {
            Some(h) if h.owner == owner => {
                held.remove(key);
                true
            }
            _ => false,
        };
        MaybeReady::ready(Ok(released))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    #[tokio::test]
    async fn cache_entries_expire_by_the_clock() {
        let clock = Arc::new(ManualClock::new());
        let cache = MemoryCache::with_clock(1 << 20, clock.clone());
        cache.put("k", "1", Duration::from_secs(60)).await.unwrap();
        assert_eq!(cache.get("k").await.unwrap().as_deref(), Some("1"));
        clock.advance(Duration::from_secs(59));
        assert_eq!(cache.get("k").await.unwrap().as_deref(), Some("1"));
        clock.advance(Duration::from_secs(1));
        assert_eq!(cache.get("k").await.unwrap(), None, "expired at its TTL");
        cache.put("k", "2", Duration::from_secs(5)).await.unwrap();
        cache.remove("k").await.unwrap();
        assert_eq!(cache.get("k").await.unwrap(), None);
    }

    #[tokio::test]
    async fn the_cache_stays_within_its_bytes() {
        let cache = MemoryCache::new(64 * 1024);
        let value = "x".repeat(1000);
        for i in 0..1000 {
            cache.put(&format!("key-{i}"), &value, Duration::from_secs(60)).await.unwrap();
        }
        assert!(cache.len() <= 64, "{} entries of ~1 KiB in a 64 KiB cache", cache.len());
    }

    #[tokio::test]
    async fn locks_have_one_owner_and_expire() {
        let clock = Arc::new(ManualClock::new());
        let locks = MemoryLocks::with_clock(clock.clone());
        let ttl = Duration::from_secs(30);
        assert!(locks.acquire("m", "a", ttl).await.unwrap());
        assert!(!locks.acquire("m", "b", ttl).await.unwrap(), "held by a");
        assert!(!locks.release("m", "b").await.unwrap(), "only the owner releases");
        assert!(locks.acquire("other", "b", ttl).await.unwrap(), "keys are independent");
        clock.advance(ttl);
        assert!(locks.acquire("m", "b", ttl).await.unwrap(), "a's lock expired");
        assert!(!locks.release("m", "a").await.unwrap(), "a no longer owns it");
        assert!(locks.release("m", "b").await.unwrap());
        assert!(locks.acquire("m", "a", ttl).await.unwrap());
    }

    #[tokio::test]
    async fn expired_locks_do_not_pile_up() {
        let clock = Arc::new(ManualClock::new());
        let locks = MemoryLocks::with_clock(clock.clone());
        for i in 0..(PURGE_FROM * 3) {
            assert!(locks.acquire(&format!("k{i}"), "o", Duration::from_secs(1)).await.unwrap());
            clock.advance(Duration::from_secs(1));
        }
        assert!(locks.len() <= PURGE_FROM + 1, "{}", locks.len());
    }
}
