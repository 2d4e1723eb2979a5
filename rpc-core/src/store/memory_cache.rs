//! The in-process result cache: the default, shared by the endpoints of one
//! process, bounded by what its entries really cost in memory.

use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use lru::LruCache;

use crate::clock::{Clock, SystemClock};
use crate::future::MaybeReady;
use crate::store::{CacheStore, StoreError};

/// The default bound of a [`MemoryCache`]: 64 MiB of memory.
pub const DEFAULT_CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// Most shards a cache is split into (each behind its own lock).
const MAX_SHARDS: usize = 16;
/// Fewest bytes per shard: a small cache keeps one exact LRU order.
const MIN_SHARD_BYTES: u64 = 1024 * 1024;

/// What an entry costs beyond its key's and value's own allocations: the
/// LRU node (key and value handles, the expiry, two links: 72 bytes, 80 as
/// the allocator rounds them), the hash table's share (a bucket of two
/// pointers and a control byte at a load factor between 7/16 and 7/8, and
/// twice that while the table grows), and the allocator's fragmentation as
/// entries of every size come and go. Measured against resident memory by
/// the cache flood test (`tests/tests/mcp_session_memory.rs`).
const ENTRY_OVERHEAD: u64 = 208;

/// The bytes the allocator takes for a block of `len` bytes: glibc's
/// malloc adds a word of header and rounds to 16 bytes, 32 at least.
fn allocated(len: usize) -> u64 {
    if len == 0 {
        return 0;
    }
    let len = u64::try_from(len).unwrap_or(u64::MAX);
    (len.saturating_add(8).saturating_add(15) & !15).max(32)
}

/// What one entry of the cache costs: [`ENTRY_OVERHEAD`] and the blocks
/// holding its key and value.
pub(crate) fn entry_cost(key: &str, value: &str) -> u64 {
    ENTRY_OVERHEAD + allocated(key.len()) + allocated(value.len())
}

struct Entry {
    value: Box<str>,
    expires_at: Instant,
    cost: u64,
}

struct Shard {
    entries: LruCache<Box<str>, Entry>,
    bytes: u64,
}

/// An in-process result cache bounded in bytes of memory: each entry
/// counts for its key, its value and what the cache spends to hold them
/// (node, links, hash table, allocator rounding), so the bound holds in the
/// process's resident memory. When full, the least recently used entries
/// go first. Entries are split over up to 16 shards (one per MiB of the
/// bound), each an LRU list behind its own lock. Expiry is decided by a
/// [`Clock`] (a test moves a `ManualClock` instead of sleeping); an expired
/// entry is dropped when it is found, and otherwise makes room for new ones
/// as it ages to the cold end of its list.
pub struct MemoryCache {
    shards: Box<[Mutex<Shard>]>,
    shard_bytes: u64,
    hasher: RandomState,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for MemoryCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryCache")
            .field("entries", &self.len())
            .field("bytes", &self.bytes())
            .field("max_bytes", &(self.shard_bytes * self.shards.len() as u64))
            .finish_non_exhaustive()
    }
}

impl MemoryCache {
    /// A cache holding at most about `max_bytes` of memory.
    pub fn new(max_bytes: u64) -> Self {
        Self::with_clock(max_bytes, Arc::new(SystemClock))
    }

    /// A cache whose expiry follows `clock`.
    pub fn with_clock(max_bytes: u64, clock: Arc<dyn Clock>) -> Self {
        let shards = usize::try_from(max_bytes / MIN_SHARD_BYTES).unwrap_or(MAX_SHARDS).clamp(1, MAX_SHARDS);
        let shard_bytes = max_bytes / shards as u64;
        let shards = (0..shards).map(|_| Mutex::new(Shard { entries: LruCache::unbounded(), bytes: 0 })).collect();
        MemoryCache { shards, shard_bytes, hasher: RandomState::new(), clock }
    }

    fn shard(&self, key: &str) -> MutexGuard<'_, Shard> {
        let index = (self.hasher.hash_one(key) as usize) % self.shards.len();
        self.shards[index].lock().unwrap_or_else(|e| e.into_inner())
    }

    fn all(&self) -> impl Iterator<Item = MutexGuard<'_, Shard>> {
        self.shards.iter().map(|s| s.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The number of entries (expired ones not yet dropped included).
    pub fn len(&self) -> u64 {
        self.all().map(|s| s.entries.len() as u64).sum()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The memory the entries are counted for, in bytes (at most the bound).
    pub fn bytes(&self) -> u64 {
        self.all().map(|s| s.bytes).sum()
    }
}

impl MemoryCache {
    fn lookup(&self, key: &str, now: Instant) -> Option<String> {
        let mut shard = self.shard(key);
        match shard.entries.get(key) {
            Some(entry) if entry.expires_at > now => Some(entry.value.to_string()),
            Some(_) => {
                if let Some(gone) = shard.entries.pop(key) {
                    shard.bytes -= gone.cost;
                }
                None
            }
            None => None,
        }
    }
}

impl CacheStore for MemoryCache {
    fn get<'a>(&'a self, key: &'a str) -> MaybeReady<'a, Result<Option<String>, StoreError>> {
        MaybeReady::ready(Ok(self.lookup(key, self.clock.now())))
    }

    fn get_with_generation<'a>(
        &'a self,
        key: &'a str,
        generation: &'a str,
    ) -> MaybeReady<'a, Result<crate::store::WithGeneration, StoreError>> {
        let now = self.clock.now();
        MaybeReady::ready(Ok((self.lookup(key, now), self.lookup(generation, now))))
    }

    fn put<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> MaybeReady<'a, Result<(), StoreError>> {
        let cost = entry_cost(key, value);
        if cost > self.shard_bytes {
            // Larger than a shard: never cached (and an older value goes).
            let mut shard = self.shard(key);
            if let Some(gone) = shard.entries.pop(key) {
                shard.bytes -= gone.cost;
            }
            return MaybeReady::ready(Ok(()));
        }
        let Some(expires_at) = self.clock.now().checked_add(ttl) else {
            return MaybeReady::ready(Err(StoreError::new(format!("a cache TTL of {ttl:?} is out of range"))));
        };
        let entry = Entry { value: Box::from(value), expires_at, cost };
        let mut shard = self.shard(key);
        if let Some(old) = shard.entries.put(Box::from(key), entry) {
            shard.bytes -= old.cost;
        }
        shard.bytes += cost;
        while shard.bytes > self.shard_bytes {
            match shard.entries.pop_lru() {
                Some((_, gone)) => shard.bytes -= gone.cost,
                None => break,
            }
        }
        MaybeReady::ready(Ok(()))
    }

    fn remove<'a>(&'a self, key: &'a str) -> MaybeReady<'a, Result<(), StoreError>> {
        let mut shard = self.shard(key);
        if let Some(gone) = shard.entries.pop(key) {
            shard.bytes -= gone.cost;
        }
        MaybeReady::ready(Ok(()))
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
        assert_eq!((cache.len(), cache.bytes()), (0, 0), "dropped when found");
        cache.put("k", "2", Duration::from_secs(5)).await.unwrap();
        cache.remove("k").await.unwrap();
        assert_eq!(cache.get("k").await.unwrap(), None);
        assert!(cache.put("k", "2", Duration::MAX).await.is_err(), "a TTL past the clock's range");
    }

    #[tokio::test]
    async fn the_cache_stays_within_its_bytes() {
        let cache = MemoryCache::new(64 * 1024);
        let value = "x".repeat(1000);
        for i in 0..1000 {
            cache.put(&format!("key-{i}"), &value, Duration::from_secs(60)).await.unwrap();
        }
        assert!(cache.bytes() <= 64 * 1024, "{} bytes counted", cache.bytes());
        assert!((50..=64).contains(&cache.len()), "{} entries of ~1.2 KiB in a 64 KiB cache", cache.len());
        assert!(cache.get("key-999").await.unwrap().is_some(), "the newest stays");
        assert!(cache.get("key-0").await.unwrap().is_none(), "the oldest went");
    }

    #[tokio::test]
    async fn small_entries_count_for_what_holding_them_costs() {
        let cache = MemoryCache::new(1024 * 1024);
        for i in 0..100_000 {
            cache.put(&format!("k{i}"), "[]", Duration::from_secs(60)).await.unwrap();
        }
        // An entry of 2-byte values and short keys costs well over 100 bytes.
        assert!(cache.len() < 1024 * 1024 / 150, "{} entries in 1 MiB", cache.len());
        assert!(cache.bytes() <= 1024 * 1024);
    }

    #[tokio::test]
    async fn replacing_and_oversized_entries_keep_the_count() {
        let cache = MemoryCache::new(64 * 1024);
        for _ in 0..10 {
            cache.put("same", &"y".repeat(500), Duration::from_secs(60)).await.unwrap();
        }
        assert_eq!((cache.len(), cache.bytes()), (1, entry_cost("same", &"y".repeat(500))));
        cache.put("same", &"z".repeat(100_000), Duration::from_secs(60)).await.unwrap();
        assert_eq!((cache.len(), cache.bytes()), (0, 0), "too large to keep: the old value goes too");
    }

    #[test]
    fn allocation_sizes() {
        assert_eq!(allocated(0), 0);
        assert_eq!(allocated(1), 32);
        assert_eq!(allocated(24), 32);
        assert_eq!(allocated(25), 48);
        assert_eq!(allocated(usize::MAX), !15);
    }
}
