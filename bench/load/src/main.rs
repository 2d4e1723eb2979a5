//! `bench-load`: a bounded load test of the catalog example on loopback.
//!
//! One run sends a fixed number of valid calls (JSON-RPC and MCP, see
//! [`valid`]) at a fixed concurrency and, with `--mode mixed`, a hostile mix
//! beside them (see [`hostile`] and [`raw`]): invalid calls, oversized
//! bodies, slow clients, an `initialize` flood, wrong tokens. It samples the
//! server's memory and file descriptors from `/proc/<pid>` before (after a
//! warm-up), during and after a settle period, and writes one JSON report.
//! It stops by itself: every request and slow client has a deadline, and the
//! whole run a hard wall-clock cap (`--max-secs`).
//!
//! `bench/load.sh` runs it twice (attack-free, then mixed) and judges the
//! results; see BENCHMARKS.md, "Load under attack".

mod client;
mod hostile;
mod lean;
mod procfs;
mod raw;
mod stats;
mod valid;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use clap::{Parser, ValueEnum};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::client::{Conn, Target};
use crate::procfs::{CpuMark, CpuWindow, ProcSample};
use crate::stats::Stats;
use crate::valid::Shared;

/// Which traffic a run sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Valid calls only.
    Clean,
    /// Valid calls plus the hostile mix.
    Mixed,
}

/// A bounded load test: valid JSON-RPC/MCP calls, optionally mixed with hostile clients.
#[derive(Debug, Parser)]
#[command(name = "bench-load")]
struct Cli {
    /// Server address (loopback).
    #[arg(long)]
    addr: SocketAddr,
    /// Server process id, for /proc sampling (RSS, fds, CPU).
    #[arg(long)]
    pid: Option<u32>,
    /// clean: valid calls only; mixed: plus the hostile mix.
    #[arg(long, value_enum, default_value = "mixed")]
    mode: Mode,
    /// Valid calls in the measured run.
    #[arg(long, default_value_t = 100_000)]
    requests: u64,
    /// The kinds of valid call, cycled in this order.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "rpc.get,rpc.search,mcp.session,mcp.stateless")]
    calls: Vec<valid::Kind>,
    /// HTTP client of the valid calls: hyper, or lean (less than half of hyper's user-space work per call).
    #[arg(long, value_enum, default_value = "hyper")]
    client: client::ClientKind,
    /// Concurrent valid workers (one keep-alive connection each).
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Valid calls of the warm-up (on their own connections, closed before the baseline sample).
    #[arg(long, default_value_t = 5_000)]
    warmup: u64,
    /// Send `Authorization: Bearer <TOKEN>` on valid calls (and test wrong/missing tokens).
    #[arg(long)]
    token: Option<String>,
    /// Per-request deadline, milliseconds.
    #[arg(long, default_value_t = 10_000)]
    timeout_ms: u64,
    /// Hard wall-clock cap of warm-up + run, seconds (the settle period comes after).
    #[arg(long, default_value_t = 300)]
    max_secs: u64,
    /// Seconds to wait after the run before the final memory sample.
    #[arg(long, default_value_t = 5)]
    settle_secs: u64,
    /// Interval of the memory samples during the run, milliseconds.
    #[arg(long, default_value_t = 250)]
    sample_ms: u64,
    /// Requests of each invalid kind (8 kinds).
    #[arg(long, default_value_t = 50)]
    invalid: u64,
    /// Oversized bodies of each kind (Content-Length, chunked).
    #[arg(long, default_value_t = 20)]
    oversized: u64,
    /// `initialize` requests of the flood (sessions never reused).
    #[arg(long, default_value_t = 1_000)]
    flood: u64,
    /// Requests of each token kind (wrong, missing); only with --token.
    #[arg(long, default_value_t = 50)]
    auth: u64,
    /// Slow connections of each kind (slowloris, short body, idle).
    #[arg(long, default_value_t = 10)]
    slow: u64,
    /// Seconds a slow client holds its connection at most.
    #[arg(long, default_value_t = 15)]
    slow_secs: u64,
    /// Clients that pipeline calls with large responses (and a 1 MiB
    /// progress token) and never read; they hold on for --slow-secs.
    #[arg(long, default_value_t = 0)]
    non_readers: u64,
    /// Milliseconds between two bytes of a slowloris client.
    #[arg(long, default_value_t = 500)]
    dribble_ms: u64,
    /// Concurrent hostile request workers.
    #[arg(long, default_value_t = 4)]
    hostile_workers: usize,
    /// Size of the wrong-typed array, KiB.
    #[arg(long, default_value_t = 1024)]
    big_array_kib: usize,
    /// Nesting depth of the deeply nested params.
    #[arg(long, default_value_t = 100_000)]
    nest_depth: usize,
    /// Calls in the oversized batch.
    #[arg(long, default_value_t = 1_000)]
    batch_len: usize,
    /// Size of the oversized bodies, MiB.
    #[arg(long, default_value_t = 5)]
    oversized_mib: usize,
    /// Write the JSON report here (default: stdout).
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // One thread: the tool is pinned to one CPU, the server to another.
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bench-load: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let report = match runtime.block_on(run(&cli)) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("bench-load: {e}");
            return ExitCode::FAILURE;
        }
    };
    let text = match serde_json::to_string_pretty(&report) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("bench-load: {e}");
            return ExitCode::FAILURE;
        }
    };
    match &cli.out {
        Some(path) => {
            if let Err(e) = std::fs::write(path, text + "\n") {
                eprintln!("bench-load: writing {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
        None => println!("{text}"),
    }
    ExitCode::SUCCESS
}

/// Runs `total` valid calls on `concurrency` workers; `hostile` runs beside
/// them once all workers are set up. Returns the merged statistics, the
/// valid calls' wall time, and the hostile statistics.
async fn phase(
    shared: Arc<Shared>,
    concurrency: usize,
    hostile: Option<(hostile::Mix, Instant)>,
    pid: Option<u32>,
) -> (Stats, CpuWindow, Stats, f64) {
    let (go_tx, go_rx) = watch::channel(false);
    let workers: Vec<_> =
        (0..concurrency).map(|_| tokio::spawn(valid::worker(shared.clone(), go_rx.clone()))).collect();
    // Wait for every worker's setup (bounded by the cap).
    while shared.ready.load(Ordering::SeqCst) < concurrency && Instant::now() < shared.cap {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let start = CpuMark::now(pid);
    let _ = go_tx.send(true);
    let attack = hostile.map(|(mix, hold_cap)| tokio::spawn(hostile::run(shared.clone(), mix, hold_cap)));
    let mut stats = Stats::default();
    // Every call is bounded by the cap; the extra margin only guards against a bug here.
    let last = shared.cap + Duration::from_secs(15);
    for w in workers {
        match tokio::time::timeout_at(last, w).await {
            Ok(Ok(s)) => stats.merge(s),
            Ok(Err(e)) => stats.class("tool.panicked").sample(|| e.to_string()),
            Err(_) => stats.class("tool.stuck").outcome("valid worker"),
        }
    }
    let window = start.until(&CpuMark::now(pid));
    let mut hostile_stats = Stats::default();
    let mut jobs_s = 0.0;
    if let Some(a) = attack {
        match tokio::time::timeout_at(last, a).await {
            Ok(Ok((s, t))) => (hostile_stats, jobs_s) = (s, t),
            Ok(Err(e)) => hostile_stats.class("tool.panicked").sample(|| e.to_string()),
            Err(_) => hostile_stats.class("tool.stuck").outcome("hostile"),
        }
    }
    (stats, window, hostile_stats, jobs_s)
}

/// The classes of the measured valid calls (latency and throughput).
const CALL_CLASSES: [&str; 4] = ["valid.rpc.get", "valid.rpc.search", "valid.mcp.session", "valid.mcp.stateless"];

/// A memory sample as JSON.
fn sample_json(s: &Option<ProcSample>) -> Value {
    match s {
        Some(s) => json!({"rss_kib": s.rss_kib, "hwm_kib": s.hwm_kib, "fds": s.fds, "cpu_s": s.cpu_s}),
        None => Value::Null,
    }
}

/// One valid call on a fresh connection: is the server still answering?
async fn health(target: &Target) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut conn = Conn::open(target.addr, deadline).await.map_err(|e| format!("{e:?}"))?;
    let mut headers = Vec::new();
    if let Some(b) = &target.bearer {
        headers.push((hyper::header::AUTHORIZATION, b.clone()));
    }
    let body = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":7}}"#);
    let r = conn.post(target, "/rpc", &headers, body, deadline).await.map_err(|e| format!("{e:?}"))?;
    if r.status.is_success() && valid::rpc_error_code(&r.body).is_none() {
        Ok(())
    } else {
        Err(format!("HTTP {}: {}", r.status, stats::excerpt(&r.body)))
    }
}

/// The whole run: wait for the server, warm up, baseline sample, measured
/// phase (with periodic samples), settle, final sample, report.
async fn run(cli: &Cli) -> Result<Value, String> {
    let target = Target::new(cli.addr, cli.token.as_deref())?;
    let started = Instant::now();
    let cap = started + Duration::from_secs(cli.max_secs);
    let timeout = Duration::from_millis(cli.timeout_ms);
    let pid = cli.pid;
    let sample = move || pid.and_then(procfs::sample);

    // The server must be up: one valid call within 10 s.
    let mut up = Err(String::new());
    for _ in 0..50 {
        up = health(&target).await;
        if up.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    up.map_err(|e| format!("server at {} does not answer a valid call: {e}", cli.addr))?;

    let bodies = Arc::new(valid::Bodies::new());
    let kinds: Arc<[valid::Kind]> = cli.calls.clone().into();
    let new_shared = |total: u64| {
        Arc::new(Shared {
            target: target.clone(),
            total,
            next: AtomicU64::new(0),
            done: AtomicU64::new(0),
            timeout,
            cap,
            capped: AtomicBool::new(false),
            ready: AtomicUsize::new(0),
            bodies: bodies.clone(),
            kinds: kinds.clone(),
            client: cli.client,
        })
    };
    let warm = new_shared(cli.warmup);
    let (warm_stats, _, _, _) = phase(warm.clone(), cli.concurrency, None, pid).await;
    let warm_failures: u64 = warm_stats.classes.values().map(|c| c.failures).sum();
    // The warm-up's connections are closed; give the server a moment to see it.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = sample();
    if pid.is_some() && before.is_none() {
        return Err("the server process is gone after the warm-up".into());
    }

    // Periodic samples during the run.
    let running = Arc::new(AtomicBool::new(true));
    let sampler = {
        let running = running.clone();
        let every = Duration::from_millis(cli.sample_ms.max(10));
        tokio::spawn(async move {
            let mut series = Vec::new();
            while running.load(Ordering::Relaxed) {
                series.push(sample());
                tokio::time::sleep(every).await;
            }
            series
        })
    };
    let shared = new_shared(cli.requests);
    let mix = hostile::Mix {
        invalid: cli.invalid,
        oversized: cli.oversized,
        flood: cli.flood,
        auth: cli.auth,
        slow: cli.slow,
        non_readers: cli.non_readers,
        slow_hold: Duration::from_secs(cli.slow_secs),
        dribble: Duration::from_millis(cli.dribble_ms.max(1)),
        workers: cli.hostile_workers,
        big_array_bytes: cli.big_array_kib * 1024,
        nest_depth: cli.nest_depth,
        batch_len: cli.batch_len,
        oversized_bytes: cli.oversized_mib * 1024 * 1024,
    };
    let t0 = CpuMark::now(pid);
    let hostile = (cli.mode == Mode::Mixed).then_some((mix, cap));
    let (mut valid_stats, valid_window, mut hostile_stats, hostile_jobs_s) =
        phase(shared.clone(), cli.concurrency, hostile, pid).await;
    let run_window = t0.until(&CpuMark::now(pid));
    let valid_wall = valid_window.wall_s;
    running.store(false, Ordering::Relaxed);
    let series: Vec<ProcSample> = sampler.await.unwrap_or_default().into_iter().flatten().collect();
    let end = sample();

    // Settle, then the final sample (the last of one per second).
    let mut after = sample();
    for _ in 0..cli.settle_secs {
        tokio::time::sleep(Duration::from_secs(1)).await;
        after = sample();
    }
    let alive =
        pid.is_none_or(|p| std::path::Path::new(&format!("/proc/{p}")).exists()) && after.is_some() == pid.is_some();
    let health_after = health(&target).await;

    // Valid calls: all classes together, then per class.
    let mut all_lat: Vec<u32> = Vec::new();
    let (mut ok, mut failures, mut sent) = (0u64, 0u64, 0u64);
    let mut failure_samples = Vec::new();
    for (name, c) in &valid_stats.classes {
        if name.starts_with("valid.") {
            failures += c.failures;
            failure_samples.extend(c.samples.iter().map(|s| format!("{name}: {s}")));
        }
        // The measured calls; the session setup (initialize) is not one.
        if CALL_CLASSES.contains(name) {
            all_lat.extend_from_slice(&c.latencies_us);
            ok += c.ok;
            sent += c.sent;
        }
    }
    let measured = cli.requests.min(shared.next.load(Ordering::SeqCst));
    let peak_rss = series.iter().map(|s| s.rss_kib).chain(end.map(|s| s.rss_kib)).max();
    let peak_fds = series.iter().map(|s| s.fds).chain(end.map(|s| s.fds)).max();
    let first = series.first().map(|s| s.at);
    let compact: Vec<Value> = series
        .iter()
        .map(|s| json!([first.map_or(0, |f| s.at.duration_since(f).as_millis() as u64), s.rss_kib, s.fds]))
        .collect();
    let mut classes = serde_json::Map::new();
    for (name, c) in valid_stats.classes.iter_mut().chain(hostile_stats.classes.iter_mut()) {
        classes.insert((*name).to_string(), c.report());
    }
    let capped = shared.capped.load(Ordering::SeqCst) || warm.capped.load(Ordering::SeqCst);
    Ok(json!({
        "mode": match cli.mode { Mode::Clean => "clean", Mode::Mixed => "mixed" },
        "config": {
            "addr": cli.addr.to_string(), "requests": cli.requests, "concurrency": cli.concurrency,
            "client": format!("{:?}", cli.client),
            "calls": cli.calls.iter().map(|k| format!("{k:?}")).collect::<Vec<_>>(),
            "warmup": cli.warmup, "token": cli.token.is_some(), "timeout_ms": cli.timeout_ms,
            "max_secs": cli.max_secs, "settle_secs": cli.settle_secs,
            "invalid_each": cli.invalid, "oversized_each": cli.oversized, "flood": cli.flood,
            "auth_each": if cli.token.is_some() { cli.auth } else { 0 }, "slow_each": cli.slow, "non_readers": cli.non_readers,
            "slow_secs": cli.slow_secs, "dribble_ms": cli.dribble_ms, "hostile_workers": cli.hostile_workers,
            "big_array_kib": cli.big_array_kib, "nest_depth": cli.nest_depth, "batch_len": cli.batch_len,
            "oversized_mib": cli.oversized_mib,
        },
        "capped": capped,
        "warmup_failures": warm_failures,
        "run_wall_s": run_window.wall_s,
        // When the last hostile request (slow clients aside) was answered, from the start of the run.
        "hostile_jobs_s": hostile_jobs_s,
        "valid": {
            "requests": measured, "sent": sent, "ok": ok, "failures": failures,
            "wall_s": valid_wall,
            "throughput_rps": if valid_wall > 0.0 { ok as f64 / valid_wall } else { 0.0 },
            "latency_us": stats::percentiles(&mut all_lat),
            "failure_samples": failure_samples,
        },
        "classes": classes,
        "server": {
            "pid": pid, "alive_after": alive,
            "health_after": match &health_after { Ok(()) => "ok".to_string(), Err(e) => e.clone() },
            "before": sample_json(&before), "end": sample_json(&end), "after": sample_json(&after),
            "peak_rss_kib": peak_rss, "peak_fds": peak_fds,
            "series_ms_rss_fds": compact,
        },
        // CPU while the valid calls ran (is the tool the bottleneck?) and over the whole run.
        "cpu_valid_window": valid_window.to_json(),
        "cpu_run": run_window.to_json(),
    }))
}
