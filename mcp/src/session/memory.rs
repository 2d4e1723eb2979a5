//! The in-process session store.

use std::fmt;
use std::hash::BuildHasher;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use lru::LruCache;
use rpc::clock::{Clock, SystemClock};

use super::{Session, SessionError, SessionStore, StoreFuture};

/// Most shards a store is split into.
const MAX_SHARDS: usize = 16;
/// Fewest sessions per shard: small stores keep one exact LRU order.
const MIN_SHARD_SESSIONS: usize = 4096;
/// Expired sessions a `create` removes from the cold end of its shard.
const PURGE_ON_CREATE: usize = 2;

struct Entry {
    session: Arc<Session>,
    expires: Instant,
}

type Shard = LruCache<String, Entry>;

/// What the store and its purger share.
struct Shared {
    shards: Box<[Mutex<Shard>]>,
    /// Picks a session's shard. Seeded per store; the ids it hashes are the
    /// server's own random ones (a client's made-up id only finds no
    /// session), so a fast hash spreads them as well as SipHash would.
    hasher: foldhash::fast::RandomState,
    clock: Arc<dyn Clock>,
    evicted: AtomicU64,
    purger_started: AtomicBool,
}

/// The in-process session store.
///
/// * Bounded: when full, a new session evicts the least recently used one
///   (the one idle longest) instead of being refused, so a flood of
///   `initialize` cannot lock new clients out; sessions in use stay.
/// * O(1) per operation: sessions sit in LRU lists ([`lru::LruCache`]: a
///   hash map threaded by a recency list) split over up to 16 shards (one per 4,096 sessions), each
///   behind its own lock, so no request scans the store and calls of
///   different sessions rarely wait for each other.
/// * Sliding TTL read from a [`Clock`]: a hit extends the session. Expired
///   sessions are dropped when found, a few at each `create`, and by a
///   background task (on the tokio runtime that first creates a session)
///   that purges the expired ones every [`purge_interval`] in batches of at
///   most [`PURGE_BATCH`](Self::PURGE_BATCH) per lock; it holds only a weak reference and ends
///   once the store is dropped.
///
/// With one TTL for every session (one endpoint per store, the default) the
/// least recently used session of a shard is also the first to expire, so
/// purging only ever looks at the cold end of each list. A store shared by
/// endpoints with different TTLs still purges correctly, but a
/// short-lived session behind a longer-lived, older one waits until it is
/// found, evicted or reaches the cold end.
///
/// [`purge_interval`]: InMemorySessionStore::purge_interval
///
///
pub struct InMemorySessionStore {
    shared: Arc<Shared>,
    max_sessions: usize,
    purge_interval: Duration,
}

impl fmt::Debug for InMemorySessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemorySessionStore")
            .field("sessions", &self.len())
            .field("max_sessions", &self.max_sessions)
            .field("shards", &self.shared.shards.len())
            .field("evicted", &self.evicted())
            .finish_non_exhaustive()
    }
}

impl Default for InMemorySessionStore {
    fn default() -> Self {
        Self::new(Self::DEFAULT_MAX_SESSIONS)
    }
}

impl InMemorySessionStore {
    /// Sessions held by [`default`](Self::default).
    pub const DEFAULT_MAX_SESSIONS: usize = 100_000;
    /// How often expired sessions are purged unless set with
    /// [`purge_interval`](Self::purge_interval).
    pub const DEFAULT_PURGE_INTERVAL: Duration = Duration::from_secs(30);
    /// Expired sessions purged per lock acquisition.
    pub const PURGE_BATCH: usize = 256;

    /// A store holding at most `max_sessions` sessions (at least 1).
    pub fn new(max_sessions: usize) -> Self {
        Self::with_clock(max_sessions, Arc::new(SystemClock))
    }

    /// A store that reads the time from `clock` (tests move a
    /// [`ManualClock`](rpc::clock::ManualClock) instead of sleeping).
    pub fn with_clock(max_sessions: usize, clock: Arc<dyn Clock>) -> Self {
        let max_sessions = max_sessions.max(1);
        let count = (max_sessions / MIN_SHARD_SESSIONS).clamp(1, MAX_SHARDS);
        let shards = (0..count)
            .map(|i| {
                let share = max_sessions / count + usize::from(i < max_sessions % count);
                Mutex::new(LruCache::sparse(NonZeroUsize::new(share).unwrap_or(NonZeroUsize::MIN)))
            })
            .collect();
        let shared = Shared {
            shards,
            hasher: foldhash::fast::RandomState::default(),
            clock,
            evicted: AtomicU64::new(0),
            purger_started: AtomicBool::new(false),
        };
        InMemorySessionStore { shared: Arc::new(shared), max_sessions, purge_interval: Self::DEFAULT_PURGE_INTERVAL }
    }

    /// How often the background task purges expired sessions (default 30 s;
    /// at least 1 ms). Takes effect if set before the first session is created.
    pub fn purge_interval(mut self, every: Duration) -> Self {
        self.purge_interval = every.max(Duration::from_millis(1));
        self
    }

    /// The most sessions the store holds.
    pub fn capacity(&self) -> usize {
        self.max_sessions
    }

    /// Number of stored sessions (expired ones included until purged).
    pub fn len(&self) -> usize {
        self.shared.shards.iter().map(|shard| lock(shard).len()).sum()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many sessions that had not expired were evicted to make room
    /// for new ones since the store was created (a sign of a flood of
    /// `initialize`, or of a store too small for its clients).
    pub fn evicted(&self) -> u64 {
        self.shared.evicted.load(Ordering::Relaxed)
    }

    /// Removes every expired session now, a batch of at most
    /// [`PURGE_BATCH`](Self::PURGE_BATCH) per lock; returns how many were removed. The
    /// background task does the same every [`purge_interval`](Self::purge_interval).
    pub fn purge_expired(&self) -> usize {
        let now = self.shared.clock.now();
        let mut removed = 0;
        for shard in self.shared.shards.iter() {
            loop {
                let (n, more) = purge_batch(shard, now, InMemorySessionStore::PURGE_BATCH);
                removed += n;
                if !more {
                    break;
                }
            }
        }
        removed
    }

    fn shard(&self, id: &str) -> MutexGuard<'_, Shard> {
        let shards = &self.shared.shards;
        let index =
            if shards.len() == 1 { 0 } else { (self.shared.hasher.hash_one(id) % shards.len() as u64) as usize };
        lock(&shards[index])
    }

    /// Starts the purger on the current tokio runtime, once.
    fn start_purger(&self) {
        if self.shared.purger_started.load(Ordering::Relaxed) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        if self.shared.purger_started.swap(true, Ordering::AcqRel) {
            return;
        }
        runtime.spawn(purge_periodically(Arc::downgrade(&self.shared), self.purge_interval));
    }
}

/// A shard's lock. An operation that panicked midway cannot have left the
/// map inconsistent (each is one insert, lookup or removal), so poisoning
/// is ignored.
fn lock(shard: &Mutex<Shard>) -> MutexGuard<'_, Shard> {
    shard.lock().unwrap_or_else(|e| e.into_inner())
}

/// `now + ttl`, or as late as representable.
fn deadline(now: Instant, ttl: Duration) -> Instant {
    now.checked_add(ttl).or_else(|| now.checked_add(Duration::from_secs(u64::from(u32::MAX)))).unwrap_or(now)
}

/// Removes up to `limit` expired sessions from the cold end of `shard`;
/// the count, and whether more may be expired.
fn purge_batch(shard: &Mutex<Shard>, now: Instant, limit: usize) -> (usize, bool) {
    let mut dropped = Vec::new();
    let more = {
        let mut sessions = lock(shard);
        loop {
            if dropped.len() == limit {
                break true;
            }
            match sessions.peek_lru() {
                Some((_, entry)) if entry.expires <= now => dropped.extend(sessions.pop_lru()),
                _ => break false,
            }
        }
    };
    // Sessions are freed after the lock is released.
    (dropped.len(), more)
}

/// The purger: every `every`, each shard's expired sessions, a batch per
/// lock, yielding between batches. Ends when the store is gone.
async fn purge_periodically(store: Weak<Shared>, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await; // the first tick is immediate
    loop {
        ticks.tick().await;
        let mut index = 0;
        loop {
            let Some(shared) = store.upgrade() else { return };
            let Some(shard) = shared.shards.get(index) else { break };
            let (_, more) = purge_batch(shard, shared.clock.now(), InMemorySessionStore::PURGE_BATCH);
            drop(shared);
            if !more {
                index += 1;
            }
            tokio::task::yield_now().await;
        }
    }
}

impl SessionStore for InMemorySessionStore {
    fn create(&self, session: Session, ttl: Duration) -> StoreFuture<'_, Result<(), SessionError>> {
        self.start_purger();
        let now = self.shared.clock.now();
        let session = Arc::new(session);
        let key = session.id.clone();
        let entry = Entry { session: Arc::clone(&session), expires: deadline(now, ttl) };
        let displaced = {
            let mut shard = self.shard(&key);
            let mut expired = Vec::new();
            while expired.len() < PURGE_ON_CREATE && shard.peek_lru().is_some_and(|(_, oldest)| oldest.expires <= now) {
                expired.extend(shard.pop_lru());
            }
            let displaced = shard.push(key, entry);
            drop(shard);
            displaced
        };
        if let Some((id, entry)) = displaced
            && id != session.id
            && entry.expires > now
        {
            self.shared.evicted.fetch_add(1, Ordering::Relaxed);
        }
        StoreFuture::ready(Ok(()))
    }

    fn get<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, Result<Option<Arc<Session>>, SessionError>> {
        let now = self.shared.clock.now();
        let mut shard = self.shard(id);
        let found = match shard.get_mut(id) {
            Some(entry) if entry.expires > now => {
                entry.expires = deadline(now, ttl);
                Some(Arc::clone(&entry.session))
            }
            Some(_) => {
                shard.pop(id);
                None
            }
            None => None,
        };
        StoreFuture::ready(Ok(found))
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<bool, SessionError>> {
        let removed = self.shard(id).pop(id);
        StoreFuture::ready(Ok(removed.is_some()))
    }

    fn update(&self, session: Session) -> StoreFuture<'_, Result<bool, SessionError>> {
        let now = self.shared.clock.now();
        let mut shard = self.shard(&session.id);
        let updated = match shard.peek_mut(session.id.as_str()) {
            Some(entry) if entry.expires > now => {
                entry.session = Arc::new(session);
                true
            }
            Some(_) => {
                shard.pop(session.id.as_str());
                false
            }
            None => false,
        };
        StoreFuture::ready(Ok(updated))
    }
}

#[cfg(test)]
#[path = "memory_tests.rs"]
mod tests;
