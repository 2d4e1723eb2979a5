//! The in-process result cache: the default, shared by the endpoints of one
//! process, bounded by what its entries really cost in memory.

use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use lru::LruCache;
use serde_json::value::RawValue;

use crate::clock::{Clock, SystemClock};
use crate::future::MaybeReady;
use crate::jsonrpc::json_string_len;
use crate::result_json::{KeptJson, ResultJson};
use crate::store::results::{self, FIRST_STAMP, ResultRead, result_text};
use crate::store::{CacheStore, StoreError};

/// The default bound of a [`MemoryCache`]: 64 MiB of memory.
pub const DEFAULT_CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// Most shards a cache is split into (each behind its own lock).
const MAX_SHARDS: usize = 16;
/// Fewest bytes per shard: a small cache keeps one exact LRU order.
const MIN_SHARD_BYTES: u64 = 1024 * 1024;

/// What an entry costs beyond its key's and value's own allocations: the
/// LRU node (the key's handle, the value's (text, or a result's stamp and
/// JSON), the expiry, two links: 88 bytes, 96 as the allocator rounds
/// them), the hash table's share (a bucket of two pointers and a control
/// byte at a load factor between 7/16 and 7/8, and twice that while the
/// table grows), and the allocator's fragmentation as entries of every size
/// come and go. Measured against resident memory by the cache flood test
/// (`tests/tests/mcp_session_memory.rs`).
const ENTRY_OVERHEAD: u64 = 224;

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

const ARC_COUNTS: usize = 2 * std::mem::size_of::<usize>();

/// What a call result put with [`CacheStore::put_result`] costs: its JSON
/// is held behind an `Arc`'s two counts, so that a hit shares it. Put with
/// [`CacheStore::put_result_with_string`] (`with_string`), the `Arc` holds
/// the JSON's box and the room for its string, and the string itself is
/// counted at its exact length whether or not a hit writes it.
fn result_cost(key: &str, stamp: Option<&str>, json: &RawValue, with_string: bool) -> u64 {
    let held = match with_string {
        false => allocated(ARC_COUNTS + json.get().len()),
        true => {
            allocated(ARC_COUNTS + std::mem::size_of::<KeptJson>())
                + allocated(json.get().len())
                + allocated(json_string_len(json.get()))
        }
    };
    ENTRY_OVERHEAD + allocated(key.len()) + allocated(stamp.map_or(0, str::len)) + held
}

/// What an entry holds.
enum Stored {
    /// Text put with [`CacheStore::put`].
    Text(Box<str>),
    /// A call result put with [`CacheStore::put_result`] or
    /// [`CacheStore::put_result_with_string`]: JSON checked when it was
    /// put, handed back shared without reading it again.
    Result { stamp: Option<Box<str>>, json: ResultJson },
}

impl Stored {
    /// The entry's text as it is held (a result's JSON, without its stamp).
    fn as_str(&self) -> &str {
        match self {
            Stored::Text(text) => text,
            Stored::Result { json, .. } => json.get(),
        }
    }

    /// The entry as text (a result as [`result_text`] writes it).
    fn text(&self) -> String {
        match self {
            Stored::Text(text) => text.to_string(),
            Stored::Result { stamp, json } => result_text(stamp.as_deref(), json),
        }
    }

    /// The result, if current under the generation stamp `current` (`None`:
    /// a method without generations).
    fn result(&self, key: &str, current: Option<&str>) -> Option<ResultJson> {
        match (self, current) {
            // Shared, not copied: a hit costs a reference count.
            (Stored::Result { stamp: None, json }, None) => Some(json.clone()),
            (Stored::Result { stamp: Some(stamp), json }, Some(current)) if **stamp == *current => Some(json.clone()),
            (Stored::Result { .. }, _) => None,
            (Stored::Text(text), current) => {
                let generation = current.map(|c| Some(c.to_owned()));
                match results::read_text(key, Some(text.to_string()), generation) {
                    ResultRead::Current(json) => Some(json),
                    ResultRead::Missing(_) => None,
                }
            }
        }
    }
}

struct Entry {
    value: Stored,
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
    /// Picks a key's shard: the LRU lists' own hasher (foldhash, seeded at
    /// random per cache), as cheap as their lookup; a shard chosen by a key
    /// only decides which lock and list it goes to.
    hasher: lru::DefaultHasher,
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
        MemoryCache { shards, shard_bytes, hasher: lru::DefaultHasher::default(), clock }
    }

    fn index(&self, key: &str) -> usize {
        (self.hasher.hash_one(key) as usize) % self.shards.len()
    }

    fn lock(&self, index: usize) -> MutexGuard<'_, Shard> {
        self.shards[index].lock().unwrap_or_else(|e| e.into_inner())
    }

    fn shard(&self, key: &str) -> MutexGuard<'_, Shard> {
        self.lock(self.index(key))
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
        with_live(&mut self.shard(key), key, now, Stored::text)
    }

    /// The result under `key`, current under the stamp under `generation`.
    /// Both shards are held at once (the lower index locked first, the only
    /// place two are held), so an invalidation cannot come in between.
    fn current_result(&self, key: &str, generation: &str, now: Instant) -> ResultRead {
        let (k, g) = (self.index(key), self.index(generation));
        if k == g {
            let mut shard = self.lock(k);
            let stamp = with_live(&mut shard, generation, now, Stored::text).unwrap_or_else(|| FIRST_STAMP.to_owned());
            return match with_live(&mut shard, key, now, |stored| stored.result(key, Some(&stamp))).flatten() {
                Some(json) => ResultRead::Current(json),
                None => ResultRead::Missing(Some(stamp)),
            };
        }
        let (mut first, mut second) = (self.lock(k.min(g)), self.lock(k.max(g)));
        let (entries, stamps) = if k < g { (&mut *first, &mut *second) } else { (&mut *second, &mut *first) };
        let mut read = |current: &str| match with_live(entries, key, now, |stored| stored.result(key, Some(current))) {
            Some(Some(json)) => ResultRead::Current(json),
            _ => ResultRead::Missing(Some(current.to_owned())),
        };
        with_live(stamps, generation, now, |stamp| read(stamp.as_str())).unwrap_or_else(|| read(FIRST_STAMP))
    }

    /// Stores `value` (costing `cost`) under `key` for `ttl`.
    fn store(&self, key: &str, value: impl FnOnce() -> Stored, cost: u64, ttl: Duration) -> Result<(), StoreError> {
        if cost > self.shard_bytes {
            // Larger than a shard: never cached (and an older value goes).
            let mut shard = self.shard(key);
            if let Some(gone) = shard.entries.pop(key) {
                shard.bytes -= gone.cost;
            }
            return Ok(());
        }
        let Some(expires_at) = self.clock.now().checked_add(ttl) else {
            return Err(StoreError::new(format!("a cache TTL of {ttl:?} is out of range")));
        };
        let entry = Entry { value: value(), expires_at, cost };
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
        Ok(())
    }
}

impl MemoryCache {
    /// Stores a call result (with room for its string: `with_string`).
    fn store_result(
        &self,
        key: &str,
        stamp: Option<&str>,
        json: &RawValue,
        ttl: Duration,
        with_string: bool,
    ) -> Result<(), StoreError> {
        let value = || Stored::Result { stamp: stamp.map(Box::from), json: ResultJson::cached(json, with_string) };
        self.store(key, value, result_cost(key, stamp, json, with_string), ttl)
    }
}

/// `f` of the entry under `key` in `shard`, unless it is absent or expired
/// (an expired one is dropped).
fn with_live<R>(shard: &mut Shard, key: &str, now: Instant, f: impl FnOnce(&Stored) -> R) -> Option<R> {
    match shard.entries.get(key) {
        Some(entry) if entry.expires_at > now => return Some(f(&entry.value)),
        Some(_) => {}
        None => return None,
    }
    if let Some(gone) = shard.entries.pop(key) {
        shard.bytes -= gone.cost;
    }
    None
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
        MaybeReady::ready(self.store(key, || Stored::Text(Box::from(value)), entry_cost(key, value), ttl))
    }

    fn get_result<'a>(
        &'a self,
        key: &'a str,
        generation: Option<&'a str>,
    ) -> MaybeReady<'a, Result<ResultRead, StoreError>> {
        let now = self.clock.now();
        let read = match generation {
            Some(generation) => self.current_result(key, generation, now),
            None => match with_live(&mut self.shard(key), key, now, |stored| stored.result(key, None)) {
                Some(Some(json)) => ResultRead::Current(json),
                _ => ResultRead::Missing(None),
            },
        };
        MaybeReady::ready(Ok(read))
    }

    fn put_result<'a>(
        &'a self,
        key: &'a str,
        stamp: Option<&'a str>,
        json: &'a RawValue,
        ttl: Duration,
    ) -> MaybeReady<'a, Result<(), StoreError>> {
        MaybeReady::ready(self.store_result(key, stamp, json, ttl, false))
    }

    fn put_result_with_string<'a>(
        &'a self,
        key: &'a str,
        stamp: Option<&'a str>,
        json: &'a RawValue,
        ttl: Duration,
    ) -> MaybeReady<'a, Result<(), StoreError>> {
        MaybeReady::ready(self.store_result(key, stamp, json, ttl, true))
    }

    fn remove<'a>(&'a self, key: &'a str) -> MaybeReady<'a, Result<(), StoreError>> {
        let mut shard = self.shard(key);
        if let Some(gone) = shard.entries.pop(key) {
            shard.bytes -= gone.cost;
        }
        MaybeReady::ready(Ok(()))
    }

    fn remove_prefix<'a>(&'a self, prefix: &'a str) -> MaybeReady<'a, Result<u64, StoreError>> {
        MaybeReady::ready(Ok(self.remove_starting_with(prefix)))
    }
}

impl MemoryCache {
    /// Removes every entry whose key starts with `prefix`, one shard at a
    /// time (each lock held for one walk of its list, nothing collected):
    /// how many were removed.
    fn remove_starting_with(&self, prefix: &str) -> u64 {
        let mut removed = 0;
        for index in 0..self.shards.len() {
            let mut shard = self.lock(index);
            let Shard { entries, bytes } = &mut *shard;
            entries.retain(|key, entry| {
                if key.starts_with(prefix) {
                    *bytes -= entry.cost;
                    removed += 1;
                    false
                } else {
                    true
                }
            });
        }
        removed
    }
}

#[cfg(test)]
#[path = "memory_cache_tests.rs"]
mod tests;
