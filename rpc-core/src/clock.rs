//! Time as the stores see it: the system clock in production, a clock a
//! test moves by hand, so expiry is tested without sleeping.
//!
//! ```
//! # extern crate rpc_core as rpc;
//! use std::time::Duration;
//! use rpc::clock::{Clock, ManualClock};
//!
//! let clock = ManualClock::new();
//! let start = clock.now();
//! clock.advance(Duration::from_secs(90));
//! assert_eq!(clock.now() - start, Duration::from_secs(90));
//! ```

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A source of the current time.
pub trait Clock: Send + Sync + 'static {
    /// Now.
    fn now(&self) -> Instant;
}

/// The system's monotonic clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that moves only when told to.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<Instant>,
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl ManualClock {
    /// A clock standing at the moment it was created.
    pub fn new() -> Self {
        ManualClock { now: Mutex::new(Instant::now()) }
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        *now += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }
}
