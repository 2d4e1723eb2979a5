//! Per-class counters: outcomes (HTTP status, JSON-RPC error code,
//! connection closed, timeout), latencies, response sizes, and a few samples
//! of failures and unexpected answers. Every worker keeps its own [`Stats`];
//! they are merged once at the end, so the hot path takes no lock.

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// How many failure / unexpected samples a class keeps.
const SAMPLES: usize = 3;
/// How many bytes of a response body a sample keeps.
pub const SAMPLE_BYTES: usize = 300;

/// The counters of one traffic class.
#[derive(Debug, Default)]
pub struct ClassStats {
    /// Requests (or connections, for slow clients) attempted.
    pub sent: u64,
    /// Successful valid calls (counted apart from `outcomes` to keep the hot path cheap).
    pub ok: u64,
    /// Outcome key (`"ok"`, `"200 rpc -32602"`, `"413"`, `"closed"`, `"timeout"`, ...) → count.
    pub outcomes: BTreeMap<String, u64>,
    /// Latencies in µs (valid calls only; slow clients: time until the server acted).
    pub latencies_us: Vec<u32>,
    /// Largest response body seen, in bytes.
    pub max_response_bytes: u64,
    /// Bytes sent to the server.
    pub bytes_sent: u64,
    /// Valid calls that got no success: non-2xx, JSON-RPC error, `isError`, no answer.
    pub failures: u64,
    /// Hostile requests whose outcome is not among the class's expected ones.
    pub unexpected: u64,
    /// The first few failures or unexpected outcomes, with a response excerpt.
    pub samples: Vec<String>,
}

impl ClassStats {
    /// Counts one outcome.
    pub fn outcome(&mut self, key: impl Into<String>) {
        *self.outcomes.entry(key.into()).or_insert(0) += 1;
    }

    /// Keeps `sample` if fewer than [`SAMPLES`] are kept.
    pub fn sample(&mut self, sample: impl FnOnce() -> String) {
        if self.samples.len() < SAMPLES {
            self.samples.push(sample());
        }
    }

    fn merge(&mut self, other: ClassStats) {
        self.sent += other.sent;
        self.ok += other.ok;
        for (k, v) in other.outcomes {
            *self.outcomes.entry(k).or_insert(0) += v;
        }
        self.latencies_us.extend(other.latencies_us);
        self.max_response_bytes = self.max_response_bytes.max(other.max_response_bytes);
        self.bytes_sent += other.bytes_sent;
        self.failures += other.failures;
        self.unexpected += other.unexpected;
        for s in other.samples {
            if self.samples.len() < SAMPLES {
                self.samples.push(s);
            }
        }
    }

    /// The class as JSON (latencies as percentiles).
    pub fn report(&mut self) -> Value {
        if self.ok > 0 {
            *self.outcomes.entry("ok".into()).or_insert(0) += std::mem::take(&mut self.ok);
        }
        let mut v = json!({
            "sent": self.sent,
            "outcomes": self.outcomes,
            "max_response_bytes": self.max_response_bytes,
            "bytes_sent": self.bytes_sent,
            "failures": self.failures,
            "unexpected": self.unexpected,
            "samples": self.samples,
        });
        if !self.latencies_us.is_empty() {
            v["latency_us"] = percentiles(&mut self.latencies_us);
        }
        v
    }
}

/// p50 / p90 / p99 / max (and the count) of `values`, in their unit.
pub fn percentiles(values: &mut [u32]) -> Value {
    values.sort_unstable();
    let n = values.len();
    let at = |p: f64| -> u32 {
        if n == 0 {
            return 0;
        }
        let i = ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
        values[i]
    };
    json!({"n": n, "p50": at(0.50), "p90": at(0.90), "p99": at(0.99), "max": at(1.0)})
}

/// All classes of one worker (or, merged, of the run).
#[derive(Debug, Default)]
pub struct Stats {
    /// Class name (`valid.rpc.get`, `invalid.big_array`, ...) → counters.
    pub classes: BTreeMap<&'static str, ClassStats>,
}

impl Stats {
    /// The counters of `class`, created empty on first use.
    pub fn class(&mut self, class: &'static str) -> &mut ClassStats {
        self.classes.entry(class).or_default()
    }

    /// Adds `other`'s counters to these.
    pub fn merge(&mut self, other: Stats) {
        for (k, v) in other.classes {
            self.class(k).merge(v);
        }
    }
}

/// Truncates a response body for a sample, lossily as UTF-8.
pub fn excerpt(body: &[u8]) -> String {
    let cut = &body[..body.len().min(SAMPLE_BYTES)];
    let mut s = String::from_utf8_lossy(cut).into_owned();
    if body.len() > SAMPLE_BYTES {
        s.push_str(&format!("… ({} bytes)", body.len()));
    }
    s
}
