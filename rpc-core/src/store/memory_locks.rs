//! The in-process locks: the default, shared by the endpoints of one process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::clock::{Clock, SystemClock};
use crate::future::MaybeReady;
use crate::store::{LockStore, StoreError};

/// In-process locks with owners and expiry read from a [`Clock`]. Expired
/// locks are dropped when the table grows, so it stays about as large as
/// the number of calls holding a lock.
pub struct MemoryLocks {
    held: Mutex<HashMap<String, Held>>,
    clock: Arc<dyn Clock>,
}

struct Held {
    owner: String,
    /// `None`: a TTL beyond the clock's range, never reached.
    expires_at: Option<Instant>,
}

impl Held {
    fn live(&self, now: Instant) -> bool {
        self.expires_at.is_none_or(|at| at > now)
    }
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
            held.retain(|_, h| h.live(now));
        }
        let taken = match held.get(key) {
            Some(h) if h.live(now) => false,
            _ => {
                held.insert(key.to_owned(), Held { owner: owner.to_owned(), expires_at: now.checked_add(ttl) });
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

    fn extend<'a>(&'a self, key: &'a str, owner: &'a str, ttl: Duration) -> MaybeReady<'a, Result<bool, StoreError>> {
        let now = self.clock.now();
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let extended = match held.get_mut(key) {
            Some(h) if h.owner == owner && h.live(now) => {
                h.expires_at = now.checked_add(ttl);
                true
            }
            _ => false,
        };
        MaybeReady::ready(Ok(extended))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

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
    async fn only_the_owner_extends_and_only_a_live_lock() {
        let clock = Arc::new(ManualClock::new());
        let locks = MemoryLocks::with_clock(clock.clone());
        assert!(locks.acquire("m", "a", Duration::from_secs(2)).await.unwrap());
        clock.advance(Duration::from_secs(1));
        assert!(locks.extend("m", "a", Duration::from_secs(2)).await.unwrap());
        assert!(!locks.extend("m", "b", Duration::from_secs(60)).await.unwrap());
        clock.advance(Duration::from_millis(1500));
        assert!(!locks.acquire("m", "b", Duration::from_secs(2)).await.unwrap(), "extended from when it was asked");
        clock.advance(Duration::from_secs(1));
        assert!(!locks.extend("m", "a", Duration::from_secs(2)).await.unwrap(), "expired: not extended");
        assert!(locks.acquire("m", "b", Duration::from_secs(2)).await.unwrap());
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
