//! The in-process rate counters: one timestamp per client (the generic
//! cell rate algorithm's "theoretical arrival time"), in a table of
//! bounded size.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::clock::{Clock, SystemClock};
use crate::future::MaybeReady;
use crate::rate::{Rate, RateDecision};
use crate::store::{RateStore, StoreError};

/// The most clients the table holds (about 100 bytes each). A client
/// whose time has come back to the present holds nothing (its entry is
/// the same as none), so only clients over a fraction of their rate right
/// now count; past this many, new clients go uncounted until some drain,
/// and a warning says so.
pub const MAX_CLIENTS: usize = 100_000;

/// In-process rate counters, on a [`Clock`].
pub struct MemoryRates {
    table: Mutex<Table>,
    clock: Arc<dyn Clock>,
    max_clients: usize,
}

struct Table {
    /// Per key: when the client's next request is due.
    due: HashMap<String, Instant>,
    /// Past this size, drained entries are dropped first.
    purge_at: usize,
    /// The last time a full table was reported.
    warned: Option<Instant>,
}

impl std::fmt::Debug for MemoryRates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryRates").field("clients", &self.len()).finish_non_exhaustive()
    }
}

impl Default for MemoryRates {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryRates {
    /// Empty counters on the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// Empty counters on `clock`.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        Self::bounded(clock, MAX_CLIENTS)
    }

    /// Empty counters on `clock` holding at most `max_clients` clients.
    pub fn bounded(clock: Arc<dyn Clock>, max_clients: usize) -> Self {
        let table = Table { due: HashMap::new(), purge_at: 1024.min(max_clients.max(1)), warned: None };
        MemoryRates { table: Mutex::new(table), clock, max_clients: max_clients.max(1) }
    }

    /// How many clients the table holds (drained ones may still count).
    pub fn len(&self) -> usize {
        self.table.lock().unwrap_or_else(|e| e.into_inner()).due.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Counts one request of `key` at `rate`, now.
    pub fn hit_now(&self, key: &str, rate: Rate) -> RateDecision {
        let now = self.clock.now();
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let due = table.due.get(key).copied().filter(|due| *due > now).unwrap_or(now);
        let next = due + rate.interval();
        let ahead = next - now;
        if ahead > rate.period() {
            return RateDecision::Limited { retry_after: ahead - rate.period() };
        }
        if let Some(entry) = table.due.get_mut(key) {
            *entry = next;
            return RateDecision::Allowed;
        }
        if table.due.len() >= table.purge_at {
            table.due.retain(|_, due| *due > now);
            let live = table.due.len();
            table.purge_at = (live * 2).clamp(1024.min(self.max_clients), self.max_clients);
            if live >= self.max_clients {
                if table.warned.is_none_or(|at| now.duration_since(at).as_secs() >= 60) {
                    table.warned = Some(now);
                    tracing::warn!(
                        clients = live,
                        "rate limits: the in-process table is full; new clients go uncounted until some drain"
                    );
                }
                return RateDecision::Allowed;
            }
        }
        table.due.insert(key.to_owned(), next);
        RateDecision::Allowed
    }
}

impl RateStore for MemoryRates {
    fn hit<'a>(&'a self, key: &'a str, rate: Rate) -> MaybeReady<'a, Result<RateDecision, StoreError>> {
        MaybeReady::ready(Ok(self.hit_now(key, rate)))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::clock::ManualClock;

    #[test]
    fn a_burst_then_one_per_interval_and_back_after_the_period() {
        let clock = Arc::new(ManualClock::new());
        let rates = MemoryRates::with_clock(clock.clone());
        let rate = Rate::per_minute(5).unwrap();
        for i in 0..5 {
            assert_eq!(rates.hit_now("a", rate), RateDecision::Allowed, "request {i} of the burst");
        }
        assert_eq!(rates.hit_now("a", rate), RateDecision::Limited { retry_after: Duration::from_secs(12) });
        assert_eq!(rates.hit_now("b", rate), RateDecision::Allowed, "another client has its own count");
        clock.advance(Duration::from_secs(5));
        assert_eq!(rates.hit_now("a", rate), RateDecision::Limited { retry_after: Duration::from_secs(7) });
        clock.advance(Duration::from_secs(7));
        assert_eq!(rates.hit_now("a", rate), RateDecision::Allowed, "one more after an interval");
        assert!(matches!(rates.hit_now("a", rate), RateDecision::Limited { .. }));
        clock.advance(Duration::from_secs(60));
        for _ in 0..5 {
            assert_eq!(rates.hit_now("a", rate), RateDecision::Allowed, "the whole burst after a quiet period");
        }
    }

    #[test]
    fn a_flood_of_clients_leaves_the_table_bounded() {
        let clock = Arc::new(ManualClock::new());
        let rates = MemoryRates::bounded(clock.clone(), 2_000);
        let rate = Rate::per_minute(10).unwrap();
        for i in 0..10_000 {
            assert_eq!(rates.hit_now(&format!("c{i}"), rate), RateDecision::Allowed);
        }
        assert!(rates.len() <= 2_000, "{}", rates.len());
        // Drained clients are dropped at the next purge: the table serves new ones again.
        clock.advance(Duration::from_secs(7));
        for i in 0..3_000 {
            rates.hit_now(&format!("late{i}"), rate);
        }
        assert!(rates.len() <= 2_000, "{}", rates.len());
        assert!((0..1_000).all(|i| rates.table.lock().unwrap().due.contains_key(&format!("late{i}"))));
    }
}
