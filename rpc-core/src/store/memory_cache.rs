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

/// What a call result put with [`CacheStore::put_result`] costs (its JSON
/// is held behind an `Arc`'s two counts, so that a hit shares it).
fn result_cost(key: &str, stamp: Option<&str>, json: &RawValue) -> u64 {
    ENTRY_OVERHEAD
        + allocated(key.len())
        + allocated(stamp.map_or(0, str::len))
        + allocated(ARC_COUNTS + json.get().len())
}

/// What a call result put with [`CacheStore::put_result_with_string`]
/// costs: behind the `Arc`, the JSON's box and the room for its string,
/// and the string itself (its exact length), counted whether or not a hit
/// writes it.
fn kept_cost(key: &str, stamp: Option<&str>, json: &RawValue) -> u64 {
    ENTRY_OVERHEAD
        + allocated(key.len())
        + allocated(stamp.map_or(0, str::len))
        + allocated(ARC_COUNTS + std::mem::size_of::<KeptJson>())
        + allocated(json.get().len())
        + allocated(json_string_len(json.get()))
}

/// What an entry holds.
enum Stored {
    /// Text put with [`CacheStore::put`].
    Text(Box<str>),
    /// A call result put with [`CacheStore::put_result`]: JSON checked
    /// when it was put, handed back without reading it again.
    Result { stamp: Option<Box<str>>, json: Arc<RawValue> },
    /// A call result put with [`CacheStore::put_result_with_string`]: the
    /// same, with room for it written as a JSON string.
    Kept { stamp: Option<Box<str>>, kept: Arc<KeptJson> },
}

impl Stored {
    /// The entry's text as it is held (a result's JSON, without its stamp).
    fn as_str(&self) -> &str {
        match self {
            Stored::Text(text) => text,
            Stored::Result { json, .. } => json.get(),
            Stored::Kept { kept, .. } => kept.json().get(),
        }
    }

    /// The entry as text (a result as [`result_text`] writes it).
    fn text(&self) -> String {
        match self {
            Stored::Text(text) => text.to_string(),
            Stored::Result { stamp, json } => result_text(stamp.as_deref(), json),
            Stored::Kept { stamp, kept } => result_text(stamp.as_deref(), kept.json()),
        }
    }

    /// The result, if current under the generation stamp `current` (`None`:
    /// a method without generations).
    fn result(&self, key: &str, current: Option<&str>) -> Option<ResultJson> {
        match (self, current) {
            // Shared, not copied: a hit costs a reference count.
            (Stored::Result { stamp: None, json }, None) => Some(Arc::clone(json).into()),
            (Stored::Result { stamp: Some(stamp), json }, Some(current)) if **stamp == *current => {
                Some(Arc::clone(json).into())
            }
            (Stored::Result { .. }, _) => None,
            (Stored::Kept { stamp: None, kept }, None) => Some(ResultJson::kept(Arc::clone(kept))),
            (Stored::Kept { stamp: Some(stamp), kept }, Some(current)) if **stamp == *current => {
                Some(ResultJson::kept(Arc::clone(kept)))
            }
            (Stored::Kept { .. }, _) => None,
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
        let value = || Stored::Result { stamp: stamp.map(Box::from), json: Arc::from(json.to_owned()) };
        MaybeReady::ready(self.store(key, value, result_cost(key, stamp, json), ttl))
    }

    fn put_result_with_string<'a>(
        &'a self,
        key: &'a str,
        stamp: Option<&'a str>,
        json: &'a RawValue,
        ttl: Duration,
    ) -> MaybeReady<'a, Result<(), StoreError>> {
        let value = || Stored::Kept { stamp: stamp.map(Box::from), kept: Arc::new(KeptJson::new(json.to_owned())) };
        MaybeReady::ready(self.store(key, value, kept_cost(key, stamp, json), ttl))
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

    fn json(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    fn current(read: ResultRead) -> Option<String> {
        match read {
            ResultRead::Current(json) => Some(json.get().to_owned()),
            ResultRead::Missing(_) => None,
        }
    }

    #[tokio::test]
    async fn a_hit_shares_the_cached_bytes_instead_of_copying_them() {
        let cache = MemoryCache::new(1 << 20);
        let ttl = Duration::from_secs(60);
        let hit = async |key, stamp| match cache.get_result(key, stamp).await.unwrap() {
            ResultRead::Current(json) => json,
            ResultRead::Missing(_) => panic!("{key}: no hit"),
        };
        cache.put_result("r", None, &json(r#"{"a":1}"#), ttl).await.unwrap();
        let (first, second) = (hit("r", None).await, hit("r", None).await);
        assert!(first.is_shared() && first.json_string().is_none(), "no room for a string asked for");
        assert!(std::ptr::eq(first.get(), second.get()), "both hits read the one stored copy");
        cache.put_result("g", Some("0"), &json("[2]"), ttl).await.unwrap();
        let (first, second) = (hit("g", Some("gen")).await, hit("g", Some("gen")).await);
        assert_eq!(first.get(), "[2]");
        assert!(std::ptr::eq(first.get(), second.get()), "with a generation stamp too");
    }

    #[tokio::test]
    async fn a_result_kept_with_its_string_writes_it_once_and_counts_it_from_the_start() {
        let clock = Arc::new(ManualClock::new());
        let cache = MemoryCache::with_clock(1 << 20, clock.clone());
        let ttl = Duration::from_secs(60);
        let text = r#"{"name":"a \"quoted\" \\ name","tab":"\t","é":[1,null]}"#;
        cache.put_result_with_string("k", None, &json(text), ttl).await.unwrap();
        let counted = kept_cost("k", None, &json(text));
        assert_eq!(cache.bytes(), counted, "the string's room is counted before any hit writes it");
        assert!(counted > result_cost("k", None, &json(text)) + text.len() as u64);
        let hit = async |key, stamp| match cache.get_result(key, stamp).await.unwrap() {
            ResultRead::Current(json) => json,
            ResultRead::Missing(_) => panic!("{key}: no hit"),
        };
        let (first, second) = (hit("k", None).await, hit("k", None).await);
        assert_eq!(first.get(), text, "the JSON as it was put");
        let string = first.json_string().expect("kept with room for its string");
        assert_eq!(string, serde_json::to_string(text).unwrap(), "what serde_json writes");
        assert!(std::ptr::eq(string, second.json_string().unwrap()), "written once, then shared");
        assert_eq!(cache.bytes(), counted, "writing it changed nothing counted");
        assert_eq!(cache.get("k").await.unwrap().as_deref(), Some(text), "readable as text too");
        // With a stamp: current under its generation only, as any result.
        cache.put_result_with_string("g", Some("0"), &json("[2]"), ttl).await.unwrap();
        assert_eq!(hit("g", Some("gen")).await.json_string(), Some(r#""[2]""#));
        cache.put("gen", "s2", ttl).await.unwrap();
        assert!(matches!(cache.get_result("g", Some("gen")).await.unwrap(), ResultRead::Missing(Some(s)) if s == "s2"));
        // Put again without a string: the room goes, and so does its count.
        cache.put_result("k", None, &json(text), ttl).await.unwrap();
        assert!(hit("k", None).await.json_string().is_none());
        clock.advance(ttl);
        assert!(matches!(cache.get_result("k", None).await.unwrap(), ResultRead::Missing(None)), "expired");
    }

    #[tokio::test]
    async fn results_kept_with_their_strings_stay_within_the_bound() {
        // Quotes double in the string: each entry counts about 2.2 times its
        // JSON, so fewer fit than without strings, and the bound holds.
        let ttl = Duration::from_secs(60);
        let text = format!("[{}]", vec![r#""x""#; 200].join(","));
        let (plain, kept) = (MemoryCache::new(256 * 1024), MemoryCache::new(256 * 1024));
        for i in 0..1_000 {
            plain.put_result(&format!("k{i}"), None, &json(&text), ttl).await.unwrap();
            kept.put_result_with_string(&format!("k{i}"), None, &json(&text), ttl).await.unwrap();
            if let ResultRead::Current(hit) = kept.get_result(&format!("k{i}"), None).await.unwrap() {
                assert_eq!(hit.json_string().map(str::len), Some(json_string_len(&text)));
            }
        }
        assert!(kept.bytes() <= 256 * 1024 && plain.bytes() <= 256 * 1024);
        let ratio = plain.len() as f64 / kept.len() as f64;
        assert!((1.8..2.6).contains(&ratio), "{} plain entries, {} kept", plain.len(), kept.len());
    }

    #[tokio::test]
    async fn results_come_back_as_they_were_put() {
        let clock = Arc::new(ManualClock::new());
        let cache = MemoryCache::with_clock(1 << 20, clock.clone());
        let ttl = Duration::from_secs(60);
        cache.put_result("r", None, &json(r#"{"a":[1,2]}"#), ttl).await.unwrap();
        assert_eq!(current(cache.get_result("r", None).await.unwrap()).as_deref(), Some(r#"{"a":[1,2]}"#));
        assert_eq!(cache.get("r").await.unwrap().as_deref(), Some(r#"{"a":[1,2]}"#), "readable as text too");
        assert_eq!(cache.bytes(), result_cost("r", None, &json(r#"{"a":[1,2]}"#)));
        // A result with a stamp is current under a generation only.
        assert!(matches!(cache.get_result("r", Some("gen")).await.unwrap(), ResultRead::Missing(Some(s)) if s == "0"));
        // Text put by hand is read and checked.
        cache.put("t", "[1]", ttl).await.unwrap();
        assert_eq!(current(cache.get_result("t", None).await.unwrap()).as_deref(), Some("[1]"));
        cache.put("bad", "[1", ttl).await.unwrap();
        assert!(matches!(cache.get_result("bad", None).await.unwrap(), ResultRead::Missing(None)));
        clock.advance(ttl);
        assert!(matches!(cache.get_result("r", None).await.unwrap(), ResultRead::Missing(None)), "expired");
    }

    #[tokio::test]
    async fn stamped_results_follow_their_generation_in_any_shard() {
        // 16 shards: the generation keys fall in the entry's shard and in others.
        let cache = MemoryCache::new(32 * 1024 * 1024);
        let ttl = Duration::from_secs(60);
        for g in 0..64 {
            let (key, generation) = (format!("entry-{g}"), format!("gen-{g}"));
            cache.put_result(&key, Some("0"), &json("1"), ttl).await.unwrap();
            assert_eq!(current(cache.get_result(&key, Some(&generation)).await.unwrap()).as_deref(), Some("1"));
            cache.put(&generation, "s2", ttl).await.unwrap();
            let read = cache.get_result(&key, Some(&generation)).await.unwrap();
            assert!(matches!(read, ResultRead::Missing(Some(s)) if s == "s2"), "stale after an invalidation");
            cache.put_result(&key, Some("s2"), &json("2"), ttl).await.unwrap();
            assert_eq!(current(cache.get_result(&key, Some(&generation)).await.unwrap()).as_deref(), Some("2"));
            assert_eq!(cache.get(&key).await.unwrap().as_deref(), Some("g:s2:2"));
            // Stamped text put by hand (as a shared store holds it) is read too.
            cache.put(&key, "g:s2:[3]", ttl).await.unwrap();
            assert_eq!(current(cache.get_result(&key, Some(&generation)).await.unwrap()).as_deref(), Some("[3]"));
        }
    }

    #[tokio::test]
    async fn prefix_removal_keeps_the_count_and_spares_longer_names() {
        // 16 shards, so the entries spread over all of them.
        let cache = MemoryCache::new(32 * 1024 * 1024);
        let ttl = Duration::from_secs(60);
        for i in 0..200 {
            cache
                .put_result(&format!("rpc:cache:Catalog.get:v1:j:{{\"id\":{i}}}"), None, &json("1"), ttl)
                .await
                .unwrap();
            cache.put(&format!("rpc:cache:Catalog.getAll:v1:j:{{\"page\":{i}}}"), "[2]", ttl).await.unwrap();
        }
        cache.put("rpc:cache:Catalog.get:v2:j:{}", "3", ttl).await.unwrap();
        let kept: u64 = (0..200)
            .map(|i| entry_cost(&format!("rpc:cache:Catalog.getAll:v1:j:{{\"page\":{i}}}"), "[2]"))
            .sum::<u64>()
            + entry_cost("rpc:cache:Catalog.get:v2:j:{}", "3");
        assert_eq!(cache.remove_prefix("rpc:cache:Catalog.get:v1:").await.unwrap(), 200);
        assert_eq!((cache.len(), cache.bytes()), (201, kept), "the bytes of what went are given back");
        assert!(cache.get("rpc:cache:Catalog.getAll:v1:j:{\"page\":7}").await.unwrap().is_some());
        assert_eq!(cache.remove_prefix("rpc:cache:Catalog.get:v1:").await.unwrap(), 0, "nothing left to remove");
        assert_eq!(cache.remove_prefix("rpc:cache:Catalog.get:v").await.unwrap(), 1, "the other version");
        assert_eq!(cache.remove_prefix("rpc:cache:").await.unwrap(), 200);
        assert_eq!((cache.len(), cache.bytes()), (0, 0));
        // A prefix is text, not a pattern.
        cache.put("a*b", "1", ttl).await.unwrap();
        assert_eq!(cache.remove_prefix("a*").await.unwrap(), 1);
        cache.put("ab", "1", ttl).await.unwrap();
        assert_eq!(cache.remove_prefix("a*").await.unwrap(), 0);
    }

    #[tokio::test]
    async fn a_large_prefix_removal_is_one_walk() {
        let cache = MemoryCache::new(64 * 1024 * 1024);
        let ttl = Duration::from_secs(60);
        for i in 0..100_000 {
            cache.put(&format!("rpc:cache:m:v1:j:{{\"i\":{i}}}"), "1", ttl).await.unwrap();
        }
        cache.put("rpc:cache:n:v1:j:{}", "1", ttl).await.unwrap();
        let started = std::time::Instant::now();
        assert_eq!(cache.remove_prefix("rpc:cache:m:v1:").await.unwrap(), 100_000);
        assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
        assert_eq!((cache.len(), cache.bytes()), (1, entry_cost("rpc:cache:n:v1:j:{}", "1")));
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
