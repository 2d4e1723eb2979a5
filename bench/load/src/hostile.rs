//! Hostile traffic, run beside the valid calls: a fixed list of jobs
//! (invalid calls, oversized bodies, an `initialize` flood, wrong or missing
//! tokens), shuffled with a fixed seed and released in step with the valid
//! calls' progress, so the attack covers the whole measured run; plus the
//! slow clients (see [`crate::raw`]), all opened at the start.
//!
//! Each class has the outcomes it expects (e.g. `413` or `closed` for an
//! oversized body); any other outcome is counted as `unexpected` with a
//! sample. Hostile outcomes never fail the run by themselves: the run fails
//! on what they do to the valid calls and to the server.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use hyper::header::{AUTHORIZATION, HeaderName, HeaderValue};
use tokio::time::Instant;

use crate::client::{Conn, until};
use crate::raw::{self, Slow};
use crate::stats::{Stats, excerpt};
use crate::valid::{self, ACCEPT_MCP, MCP_PATH, Shared};

/// Sizes of the hostile mix (from the command line).
#[derive(Debug, Clone)]
pub struct Mix {
    /// Requests of each invalid kind.
    pub invalid: u64,
    /// Oversized bodies of each kind (Content-Length, chunked).
    pub oversized: u64,
    /// `initialize` requests of the flood.
    pub flood: u64,
    /// Requests of each token kind (wrong, missing); only with a token.
    pub auth: u64,
    /// Slow connections of each kind (slowloris, short body, idle).
    pub slow: u64,
    /// Clients that pipeline calls and never read their responses.
    pub non_readers: u64,
    /// How long a slow client holds its connection at most.
    pub slow_hold: Duration,
    /// Pause between two bytes of a slowloris client.
    pub dribble: Duration,
    /// Concurrent hostile request workers.
    pub workers: usize,
    /// Size of the wrong-typed array, bytes.
    pub big_array_bytes: usize,
    /// Nesting depth of the deeply nested params.
    pub nest_depth: usize,
    /// Calls in the oversized batch.
    pub batch_len: usize,
    /// Size of the oversized bodies, bytes.
    pub oversized_bytes: usize,
}

/// One kind of hostile request.
#[derive(Debug, Clone, Copy)]
enum Job {
    Malformed,
    UnknownMethod,
    WrongType,
    BigArray,
    McpBigArray,
    DeepNesting,
    Batch,
    BadSession,
    ContentLength,
    Chunked,
    Initialize,
    WrongToken,
    MissingToken,
}

impl Job {
    /// Class name and the outcomes it expects (an outcome matches an entry
    /// equal to it or to its first words, so `"413"` covers `"413 rpc -32600"`).
    fn class(self) -> (&'static str, &'static [&'static str]) {
        match self {
            Job::Malformed => ("invalid.malformed_json", &["200 rpc -32700", "400 rpc -32700"]),
            Job::UnknownMethod => ("invalid.unknown_method", &["200 rpc -32601"]),
            Job::WrongType => ("invalid.wrong_type", &["200 rpc -32602"]),
            // The JSON limits (values, depth) refuse these before parsing (-32600);
            // a server without them answers -32602 after validation.
            Job::BigArray => ("invalid.big_array", &["200 rpc -32600", "200 rpc -32602", "413"]),
            Job::McpBigArray => {
                ("invalid.mcp_big_array", &["400 rpc -32600", "400 rpc -32602", "200 rpc -32602", "413"])
            }
            Job::DeepNesting => {
                ("invalid.deep_nesting", &["200 rpc -32600", "200 rpc -32700", "200 rpc -32602", "400", "413"])
            }
            Job::Batch => ("invalid.oversized_batch", &["200 rpc -32600", "400", "413"]),
            Job::BadSession => ("invalid.unknown_session", &["404 rpc -32001", "404", "400"]),
            Job::ContentLength => ("oversized.content_length", &["413", "closed"]),
            Job::Chunked => ("oversized.chunked", &["413", "closed"]),
            Job::Initialize => ("flood.initialize", &["200", "429", "503"]),
            Job::WrongToken => ("auth.wrong_token", &["401", "403"]),
            Job::MissingToken => ("auth.missing_token", &["401", "403"]),
        }
    }
}

/// Whether `outcome` is one of `expected`.
fn expected(outcome: &str, expected: &[&str]) -> bool {
    expected.iter().any(|e| outcome == *e || outcome.strip_prefix(e).is_some_and(|rest| rest.starts_with(' ')))
}

/// The request bodies, built once.
struct Payloads {
    big_array: Bytes,
    mcp_big_array: Bytes,
    deep: Bytes,
    batch: Bytes,
    initialize: Bytes,
    get: Bytes,
    stateless_get: Bytes,
}

impl Payloads {
    fn new(mix: &Mix) -> Payloads {
        let mut array = String::with_capacity(mix.big_array_bytes + 16);
        array.push('[');
        let mut i = 0u64;
        while array.len() < mix.big_array_bytes {
            if i > 0 {
                array.push(',');
            }
            array.push_str(&(i % 10).to_string());
            i += 1;
        }
        array.push(']');
        let big_array = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{{"id":{array}}}}}"#);
        let mcp_big_array = valid::stateless_body(1, "Catalog.get", &format!(r#"{{"id":{array}}}"#));
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{{"id":{}{}}}}}"#,
            "[".repeat(mix.nest_depth),
            "]".repeat(mix.nest_depth)
        );
        let calls: Vec<String> = (0..mix.batch_len)
            .map(|i| {
                format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"Catalog.get","params":{{"id":{}}}}}"#, i % 100 + 1)
            })
            .collect();
        Payloads {
            big_array: Bytes::from(big_array),
            mcp_big_array,
            deep: Bytes::from(deep),
            batch: Bytes::from(format!("[{}]", calls.join(","))),
            initialize: valid::initialize_body("bench-load-flood"),
            get: Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":7}}"#),
            stateless_get: valid::stateless_body(1, "Catalog.get", r#"{"id":7}"#),
        }
    }
}

/// The job list: every kind its number of times, shuffled with a fixed seed.
fn jobs(mix: &Mix, with_token: bool) -> Vec<Job> {
    use Job::*;
    let mut jobs = Vec::new();
    for kind in [Malformed, UnknownMethod, WrongType, BigArray, McpBigArray, DeepNesting, Batch, BadSession] {
        jobs.extend(std::iter::repeat_n(kind, mix.invalid as usize));
    }
    for kind in [ContentLength, Chunked] {
        jobs.extend(std::iter::repeat_n(kind, mix.oversized as usize));
    }
    jobs.extend(std::iter::repeat_n(Initialize, mix.flood as usize));
    if with_token {
        for kind in [WrongToken, MissingToken] {
            jobs.extend(std::iter::repeat_n(kind, mix.auth as usize));
        }
    }
    // Fisher–Yates with xorshift64: the same order on every run.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in (1..jobs.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        jobs.swap(i, (state % (i as u64 + 1)) as usize);
    }
    jobs
}

/// Runs the whole hostile mix beside the valid calls of `shared`; returns
/// when every job and slow client is done (each bounded by its own deadline
/// and by the cap), with the seconds the jobs (not the slow clients) took.
pub async fn run(shared: Arc<Shared>, mix: Mix, hold_cap: Instant) -> (Stats, f64) {
    let start = Instant::now();
    let mut slow = Vec::new();
    for kind in [Slow::Slowloris, Slow::ShortBody, Slow::Idle] {
        for _ in 0..mix.slow {
            let (target, hold, dribble) = (shared.target.clone(), mix.slow_hold, mix.dribble);
            slow.push(tokio::spawn(async move { raw::slow(&target, kind, until(hold, hold_cap), dribble).await }));
        }
    }
    for _ in 0..mix.non_readers {
        let (target, hold) = (shared.target.clone(), mix.slow_hold);
        slow.push(tokio::spawn(async move { raw::non_reader(&target, until(hold, hold_cap)).await }));
    }
    let jobs = Arc::new(jobs(&mix, shared.target.bearer.is_some()));
    let payloads = Arc::new(Payloads::new(&mix));
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..mix.workers.max(1) {
        let (shared, jobs, payloads, next, mix) =
            (shared.clone(), jobs.clone(), payloads.clone(), next.clone(), mix.clone());
        workers.push(tokio::spawn(async move { worker(shared, jobs, payloads, next, mix).await }));
    }
    let mut stats = Stats::default();
    let mut jobs_s = 0.0;
    let n = workers.len();
    for (i, handle) in workers.into_iter().chain(slow).enumerate() {
        match handle.await {
            Ok(s) => stats.merge(s),
            Err(e) => stats.class("tool.panicked").sample(|| e.to_string()),
        }
        if i + 1 == n {
            jobs_s = start.elapsed().as_secs_f64();
        }
    }
    (stats, jobs_s)
}

/// Waits until job `j` of `n` is due: when the valid calls are that far along.
async fn pace(shared: &Shared, j: usize, n: usize) {
    let due = (j as u128 * shared.total as u128 / n.max(1) as u128) as u64;
    while shared.done.load(Ordering::Relaxed) < due
        && shared.next.load(Ordering::Relaxed) < shared.total
        && Instant::now() < shared.cap
    {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// One hostile worker: takes the next job, waits until it is due, runs it.
async fn worker(shared: Arc<Shared>, jobs: Arc<Vec<Job>>, p: Arc<Payloads>, next: Arc<AtomicUsize>, mix: Mix) -> Stats {
    let mut stats = Stats::default();
    let mut conn: Option<Conn> = None;
    let target = &shared.target;
    let bearer: Vec<(HeaderName, HeaderValue)> =
        target.bearer.clone().map(|b| vec![(AUTHORIZATION, b)]).unwrap_or_default();
    loop {
        let j = next.fetch_add(1, Ordering::Relaxed);
        let Some(&job) = jobs.get(j) else { break };
        pace(&shared, j, jobs.len()).await;
        if Instant::now() >= shared.cap {
            shared.capped.store(true, Ordering::SeqCst);
            break;
        }
        let (class, expect) = job.class();
        let deadline = until(shared.timeout, shared.cap);
        if let Job::ContentLength | Job::Chunked = job {
            let chunked = matches!(job, Job::Chunked);
            let (key, sent) = raw::oversized(target, chunked, mix.oversized_bytes, deadline).await;
            let s = stats.class(class);
            s.sent += 1;
            s.bytes_sent += sent;
            if !expected(&key, expect) {
                s.unexpected += 1;
                s.sample(|| key.clone());
            }
            s.outcome(key);
            continue;
        }
        let rpc = |body: &Bytes| ("/rpc", Vec::new(), body.clone());
        let stateless = |body: &Bytes| (MCP_PATH, valid::stateless_headers("Catalog.get"), body.clone());
        let (path, mut headers, body) = match job {
            Job::Malformed => {
                rpc(&Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":"#))
            }
            Job::UnknownMethod => {
                rpc(&Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"Catalog.nope","params":{}}"#))
            }
            Job::WrongType => {
                rpc(&Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":"seven"}}"#))
            }
            Job::BigArray => rpc(&p.big_array),
            Job::McpBigArray => stateless(&p.mcp_big_array),
            Job::DeepNesting => rpc(&p.deep),
            Job::Batch => rpc(&p.batch),
            Job::BadSession => {
                let session = HeaderValue::from_static("00000000000000000000000000000000");
                let body = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":7}}}"#);
                (MCP_PATH, valid::session_headers(&session), body)
            }
            Job::Initialize => {
                (MCP_PATH, vec![(hyper::header::ACCEPT, HeaderValue::from_static(ACCEPT_MCP))], p.initialize.clone())
            }
            Job::WrongToken | Job::MissingToken => {
                // Alternate the two endpoints.
                let (path, mut headers, body) =
                    if j.is_multiple_of(2) { rpc(&p.get) } else { stateless(&p.stateless_get) };
                if let Job::WrongToken = job {
                    headers.push((AUTHORIZATION, HeaderValue::from_static("Bearer wrong-token-0123456789")));
                }
                (path, headers, body)
            }
            Job::ContentLength | Job::Chunked => continue,
        };
        if !matches!(job, Job::WrongToken | Job::MissingToken) {
            headers.extend(bearer.iter().cloned());
        }
        let s = stats.class(class);
        s.sent += 1;
        s.bytes_sent += body.len() as u64;
        if conn.as_ref().is_none_or(Conn::is_closed) {
            conn = match Conn::open(target.addr, deadline).await {
                Ok(c) => Some(c),
                Err(outcome) => {
                    s.outcome(outcome.key());
                    s.unexpected += 1;
                    s.sample(|| format!("{outcome:?} opening a connection"));
                    continue;
                }
            };
        }
        let Some(c) = conn.as_mut() else { continue };
        let key = match c.post(target, path, &headers, body, deadline).await {
            Ok(r) => {
                s.max_response_bytes = s.max_response_bytes.max(r.body.len() as u64);
                let mut key = r.status.as_u16().to_string();
                if let Some(code) = valid::rpc_error_code(valid::message(&r)) {
                    key = format!("{key} rpc {code}");
                }
                if !expected(&key, expect) {
                    s.unexpected += 1;
                    s.sample(|| format!("{key}: {}", excerpt(&r.body)));
                }
                key
            }
            Err(outcome) => {
                conn = None;
                let key = outcome.key();
                if !expected(&key, expect) {
                    s.unexpected += 1;
                    s.sample(|| format!("{outcome:?}"));
                }
                key
            }
        };
        s.outcome(key);
    }
    stats
}
