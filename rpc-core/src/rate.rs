//! Rate limits: how many calls (and, over MCP, how many new sessions) one
//! client may start in a period, counted per identity (the access
//! policy's subject) or, for callers without one, per address (an IPv6
//! address by its /64, the block one host is usually given).
//!
//! A [`Rate`] of `n` per period lets `n` requests through at once and then
//! one every `period / n` (the generic cell rate algorithm: one timestamp
//! per client, no window edges to game). The counters live in the
//! executor's [`RateStore`](crate::store::RateStore): in the process by
//! default, in Redis when instances share one, so a client spreading its
//! calls over the instances behind a load balancer gets no more.
//!
//! ```
//! # extern crate rpc_core as rpc;
//! let limits = rpc::rate::RateLimits::new()
//!     .calls("600/min".parse().unwrap())
//!     .sessions("30/min".parse().unwrap());
//! assert_eq!(limits.calls.unwrap().to_string(), "600/min");
//! ```

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;
use std::time::Duration;

use crate::identity::Identity;

/// `count` requests per `period`: a burst of `count`, then one every
/// `period / count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    count: u32,
    period: Duration,
}

/// Why a rate is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidRate(String);

impl fmt::Display for InvalidRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidRate {}

impl Rate {
    /// `count` (at least 1) per `period` (from 1 ms to a day).
    pub fn new(count: u32, period: Duration) -> Result<Rate, InvalidRate> {
        if count == 0 {
            return Err(InvalidRate("a rate lets at least one request through: write e.g. `1/min`".into()));
        }
        if period < Duration::from_millis(1) || period > Duration::from_secs(86_400) {
            return Err(InvalidRate("a rate's period is from 1 ms to a day".into()));
        }
        Ok(Rate { count, period })
    }

    /// `count` per second.
    pub fn per_second(count: u32) -> Result<Rate, InvalidRate> {
        Rate::new(count, Duration::from_secs(1))
    }

    /// `count` per minute.
    pub fn per_minute(count: u32) -> Result<Rate, InvalidRate> {
        Rate::new(count, Duration::from_secs(60))
    }

    /// How many requests may go through at once.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The period the count is for.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// The time one request costs: `period / count`.
    pub fn interval(&self) -> Duration {
        self.period / self.count
    }
}

impl FromStr for Rate {
    type Err = InvalidRate;

    /// `N/s`, `N/min`, `N/h` (also `sec`, `second`, `m`, `minute`, `hour`).
    fn from_str(text: &str) -> Result<Rate, InvalidRate> {
        let usage = || {
            InvalidRate(format!("`{}` is not a rate: write e.g. `600/min`, `10/s` or `5000/h`", text.escape_debug()))
        };
        let (count, unit) = text.trim().split_once('/').ok_or_else(usage)?;
        let count: u32 = count.trim().parse().map_err(|_| usage())?;
        let period = match unit.trim() {
            "s" | "sec" | "second" => Duration::from_secs(1),
            "m" | "min" | "minute" => Duration::from_secs(60),
            "h" | "hour" => Duration::from_secs(3600),
            _ => return Err(usage()),
        };
        Rate::new(count, period)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.period.as_millis() {
            1_000 => write!(f, "{}/s", self.count),
            60_000 => write!(f, "{}/min", self.count),
            3_600_000 => write!(f, "{}/h", self.count),
            ms => write!(f, "{}/{ms}ms", self.count),
        }
    }
}

/// What a rate store answers for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateDecision {
    /// The request goes through (and was counted).
    Allowed,
    /// Over the rate: the next request goes through after this long (the
    /// refused one was not counted).
    Limited {
        /// How long to wait.
        retry_after: Duration,
    },
}

/// What is limited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RateKind {
    /// Calls of methods (each call of a batch counts).
    Calls,
    /// New MCP sessions (`initialize`).
    Sessions,
}

impl RateKind {
    fn tag(self) -> &'static str {
        match self {
            RateKind::Calls => "call",
            RateKind::Sessions => "init",
        }
    }
}

/// The limits an executor applies (see
/// [`Executor::with_rate_limits`](crate::Executor::with_rate_limits)):
/// none by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateLimits {
    /// Calls per client (over `/rpc` and MCP, each call of a batch).
    pub calls: Option<Rate>,
    /// New MCP sessions (`initialize`) per client.
    pub sessions: Option<Rate>,
}

impl RateLimits {
    /// No limits.
    pub fn new() -> Self {
        RateLimits::default()
    }

    /// At most `rate` calls per client.
    pub fn calls(mut self, rate: Rate) -> Self {
        self.calls = Some(rate);
        self
    }

    /// At most `rate` new MCP sessions per client.
    pub fn sessions(mut self, rate: Rate) -> Self {
        self.sessions = Some(rate);
        self
    }

    /// The rate of `kind`, if limited.
    pub fn of(&self, kind: RateKind) -> Option<Rate> {
        match kind {
            RateKind::Calls => self.calls,
            RateKind::Sessions => self.sessions,
        }
    }

    /// Whether anything is limited.
    pub fn is_empty(&self) -> bool {
        self.calls.is_none() && self.sessions.is_none()
    }
}

/// The store key counting `kind` for a client: its identity's subject,
/// else its address (IPv6 by its /64); `None` for a caller the transport
/// does not name (stdio's one client, calls the server makes itself).
pub fn rate_key(kind: RateKind, identity: Option<&Identity>, peer: Option<IpAddr>) -> Option<String> {
    let tag = kind.tag();
    match (identity, peer) {
        (Some(identity), _) => Some(format!("rpc:rate:{tag}:id:{}", identity.subject)),
        (None, Some(IpAddr::V4(v4))) => Some(format!("rpc:rate:{tag}:ip:{v4}")),
        (None, Some(IpAddr::V6(v6))) => match v6.to_ipv4_mapped() {
            Some(v4) => Some(format!("rpc:rate:{tag}:ip:{v4}")),
            None => {
                let s = v6.segments();
                Some(format!("rpc:rate:{tag}:ip:{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3]))
            }
        },
        (None, None) => None,
    }
}

/// Seconds to announce in `Retry-After` for `wait` (rounded up, at least 1).
pub fn retry_after_secs(wait: Duration) -> u32 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    u32::try_from(secs.max(1)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_and_print() {
        assert_eq!("600/min".parse::<Rate>().unwrap(), Rate::per_minute(600).unwrap());
        assert_eq!(" 10 / s ".parse::<Rate>().unwrap(), Rate::per_second(10).unwrap());
        assert_eq!("5000/hour".parse::<Rate>().unwrap().to_string(), "5000/h");
        assert_eq!(Rate::per_minute(5).unwrap().interval(), Duration::from_secs(12));
        for bad in ["", "10", "0/min", "-1/s", "10/fortnight", "x/s", "99999999999/s"] {
            let error = bad.parse::<Rate>().unwrap_err().to_string();
            assert!(error.contains("rate"), "{bad}: {error}");
        }
        assert!(Rate::new(1, Duration::from_secs(86_401)).is_err());
    }

    #[test]
    fn clients_are_counted_by_identity_else_by_address() {
        let alice = Identity::new("alice");
        let v4: IpAddr = "192.0.2.7".parse().unwrap();
        assert_eq!(rate_key(RateKind::Calls, Some(&alice), Some(v4)).unwrap(), "rpc:rate:call:id:alice");
        assert_eq!(rate_key(RateKind::Sessions, None, Some(v4)).unwrap(), "rpc:rate:init:ip:192.0.2.7");
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        assert_eq!(rate_key(RateKind::Calls, None, Some(a)), rate_key(RateKind::Calls, None, Some(b)), "one /64");
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(rate_key(RateKind::Calls, None, Some(mapped)).unwrap(), "rpc:rate:call:ip:192.0.2.7");
        assert_eq!(rate_key(RateKind::Calls, None, None), None);
        assert_eq!(retry_after_secs(Duration::from_millis(1)), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(12_001)), 13);
    }
}
