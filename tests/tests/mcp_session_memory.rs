//! The resident memory of this process while it is flooded: clients open
//! sessions with 4 MiB `clientInfo` and `capabilities` (memory must not grow
//! with the sessions), and distinct cached calls fill the result cache
//! (memory must stay within the cache's bound). Its own test binary, whose
//! tests take turns, so nothing else runs in the process while one measures.

use e2e_tests::TestServer;
use rpc::Environment;
use serde_json::{Value, json};

/// `VmRSS` of this process, in bytes.
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("a VmRSS line");
    let kib: u64 = line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("VmRSS in kB");
    kib * 1024
}

fn initialize(capabilities: Value, client_info: Value) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": client_info
    }})
    .to_string()
}

async fn post(client: &reqwest::Client, url: &str, body: &str) -> u16 {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_owned())
        .send()
        .await
        .expect("request sent");
    let status = response.status().as_u16();
    let _ = response.bytes().await;
    status
}

/// One measurement at a time.
static ALONE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const MIB: u64 = 1024 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_with_huge_client_info_do_not_grow_memory() {
    let _alone = ALONE.lock().await;
    let server = TestServer::catalog(Environment::Prod).await;
    let url = server.url("/mcp/v1");
    let client = reqwest::Client::new();
    // Big in bytes, moderate in values (45,000 strings): what a JSON
    // complexity limit lets through.
    let pad: Vec<String> = (0..45_000).map(|i| format!("{i:0>80}")).collect();
    let strings = initialize(json!({}), json!({"name": "x", "version": "1", "pad": pad}));
    let capabilities = initialize(json!({"sampling": {}, "pad": pad}), json!({"name": "x", "version": "1"}));
    // The attacker's shape: 2 million values (a complexity limit may refuse it first).
    // Built as text: as a `Value` it would take 64 MiB of this process's memory.
    let zeros = initialize(json!({}), json!({"name": "x", "version": "1", "pad": "PAD"}))
        .replace(r#""PAD""#, &format!("[{}0]", "0,".repeat(2_000_000)));
    assert!(strings.len() > 3_700_000 && capabilities.len() > 3_700_000 && zeros.len() > 4_000_000);

    for _ in 0..2 {
        assert_eq!(post(&client, &url, &strings).await, 200, "warm-up");
    }
    let before = resident_bytes();
    for _ in 0..20 {
        assert_eq!(post(&client, &url, &strings).await, 200);
        assert_eq!(post(&client, &url, &capabilities).await, 200);
    }
    for _ in 0..5 {
        // The status is not checked: a server with a complexity limit refuses this body.
        post(&client, &url, &zeros).await;
    }
    let grown = resident_bytes().saturating_sub(before);
    eprintln!("45 sessions opened with 4 MiB each: resident memory grew by {} KiB", grown / 1024);
    // Kept as sent, these sessions would hold about 240 MiB of strings and
    // 700 MiB of zeros; what remains here is allocator slack.
    assert!(grown < 64 * MIB, "resident memory grew by {} MiB", grown / MIB);
}

/// A flood of distinct cached calls (`Catalog.search` with a new query each
/// time, as batches of random queries would) fills the in-process cache to
/// its bound and no further, in resident memory: each entry is counted for
/// what it costs (its node, links and hash-table share, and allocator
/// rounding), not for its key and value alone (which let a 64 MiB cache
/// take some 300 MB).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_cached_calls_stays_within_the_cache_bound() {
    let _alone = ALONE.lock().await;
    const BOUND: u64 = 24 * MIB;
    const CALLS: usize = 250_000;
    let cache = std::sync::Arc::new(rpc::store::MemoryCache::new(BOUND));
    let executor =
        rpc::Executor::new(catalog::registry().expect("registry"), Environment::Prod).with_cache_store(cache.clone());
    let call = |i: usize| {
        let mut params = serde_json::Map::new();
        params.insert("query".into(), json!(format!("no product is named {i:08}")));
        rpc::Call::new("Catalog.search", 1, rpc::Params::Named(params))
    };
    // Warm-up: the allocator's and the runtime's own first use.
    for i in 0..2_000 {
        assert!(executor.execute(call(i)).await.result.is_ok());
    }
    let before = resident_bytes();
    let started = std::time::Instant::now();
    for i in 2_000..CALLS {
        let execution = executor.execute(call(i)).await;
        assert_eq!(execution.result.map(|r| r.get().to_owned()).ok().as_deref(), Some("[]"));
    }
    within_bound("cached calls", CALLS, started, &cache, before, BOUND);
}

mod quotes {
    rpc::api_group!(pub struct Texts => "texts");

    /// Hands its text back: a result that doubles its quotes as a string.
    pub struct Echo;

    #[rpc::service(groups(Texts))]
    impl Echo {
        /// `text`, cached.
        #[rpc::cache(ttl = 600, env(prod))]
        pub fn echo(&self, text: String) -> String {
            text
        }
    }
}

/// The same flood, of results cached for MCP's text content: each entry is
/// counted with room for its result written as a JSON string, and a hit
/// writes that string into it, so memory stays within the bound with every
/// string written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_results_kept_with_their_strings_stays_within_the_cache_bound() {
    let _alone = ALONE.lock().await;
    const BOUND: u64 = 16 * MIB;
    const CALLS: usize = 40_000;
    let cache = std::sync::Arc::new(rpc::store::MemoryCache::new(BOUND));
    let registry = rpc::Registry::builder().service(quotes::Echo).build().expect("registry");
    let executor = rpc::Executor::new(registry, Environment::Prod).with_cache_store(cache.clone());
    // About 600 bytes of JSON, a third of them quotes, each escaped twice.
    let quoted = r#""x","#.repeat(100);
    let call = |text: &str| {
        let mut params = serde_json::Map::new();
        params.insert("text".into(), json!(text));
        let mut call = rpc::Call::new("Echo.echo", 1, rpc::Params::Named(params));
        call.result_as_string = true;
        call
    };
    let flood = async |from: usize, to: usize| {
        for i in from..to {
            let text = format!("{i:08}{quoted}");
            let miss = executor.execute(call(&text)).await.result.expect("a result");
            assert!(!miss.is_shared(), "the first call runs the method");
            let hit = executor.execute(call(&text)).await.result.expect("a result");
            let string = hit.json_string().expect("kept with room for its string");
            assert_eq!(string.len(), rpc::jsonrpc::json_string_len(hit.get()));
        }
    };
    flood(0, 1_000).await; // warm-up
    let before = resident_bytes();
    let started = std::time::Instant::now();
    flood(1_000, CALLS).await;
    within_bound("results kept with their strings", CALLS, started, &cache, before, BOUND);
}

/// Checks a flood of `calls` (started at `started`, with `before` bytes
/// resident) left `cache` within `bound`, counted and resident.
fn within_bound(
    what: &str,
    calls: usize,
    started: std::time::Instant,
    cache: &rpc::store::MemoryCache,
    before: u64,
    bound: u64,
) {
    let grown = resident_bytes().saturating_sub(before);
    eprintln!(
        "{calls} {what} in {:?}: {} entries, {} KiB counted, resident memory grew by {} KiB (bound {} KiB)",
        started.elapsed(),
        cache.len(),
        cache.bytes() / 1024,
        grown / 1024,
        bound / 1024
    );
    assert!(cache.bytes() <= bound);
    assert!((cache.len() as usize) < calls / 2, "the flood went past the bound: {} entries kept", cache.len());
    assert!(grown < bound + bound / 4, "resident memory grew by {} MiB for a {} MiB cache", grown / MIB, bound / MIB);
}
