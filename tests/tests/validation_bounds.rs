//! Invalid parameters cost little, whatever their size: a 4 MiB value of
//! the wrong type, 50,000 wrong items, 20,000 unknown parameters are each
//! answered quickly with a small `-32602` (one reason per parameter, short
//! values only, a bounded list of unknown names), in production and dev
//! alike, over `/rpc` and MCP `tools/call`; and a call sent meanwhile is
//! not held up.
//!
//! Inputs are big in bytes but moderate in JSON values (tens of thousands
//! of 80-character strings), so they reach validation even behind a JSON
//! complexity limit.

use std::time::{Duration, Instant};

use e2e_tests::raw_mcp::RawMcp;
use e2e_tests::{TestServer, post_json};
use reqwest::Method;
use rpc::server::Router;
use rpc::{Environment, Executor, JsonRpcService, Registry};
use serde_json::{Map, Value, json};

mod fixtures {
    use schemars::JsonSchema;
    use serde::Deserialize;

    /// A mode.
    #[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum Mode {
        /// Quickly.
        Fast,
        /// Carefully.
        Slow,
    }

    /// Settings.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Settings {
        /// A name.
        pub name: String,
        /// A level.
        pub level: u8,
    }

    /// Methods with parameters that can hold many wrong values.
    pub struct Bulk;

    #[rpc::service]
    impl Bulk {
        /// Adds numbers.
        ///
        /// # Arguments
        /// * `values` - The numbers
        pub fn sum(&self, values: Vec<u8>) -> u64 {
            values.iter().map(|v| u64::from(*v)).sum()
        }

        /// Counts modes.
        ///
        /// # Arguments
        /// * `modes` - The modes, if any
        pub fn modes(&self, modes: Option<Vec<Mode>>) -> usize {
            modes.map_or(0, |m| m.len())
        }

        /// Applies settings.
        ///
        /// # Arguments
        /// * `settings` - The settings
        pub fn configure(&self, settings: Settings) -> String {
            format!("{}:{}", settings.name, settings.level)
        }
    }
}

/// The bound on the whole response to an invalid call.
const SMALL: usize = 4096;
/// The bound on the time to answer one (debug build, loaded machine).
const QUICK: Duration = Duration::from_secs(1);

/// `count` strings of 80 characters (83 bytes of JSON each).
fn padding(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("{i:0>80}")).collect()
}

fn request(method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
}

/// POSTs `body`; the time to the whole response, the status and the body.
async fn timed(url: &str, body: String) -> (Duration, u16, String) {
    let start = Instant::now();
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("request sent");
    let status = response.status().as_u16();
    let text = response.text().await.expect("body read");
    (start.elapsed(), status, text)
}

/// Checks a small, quick `-32602` response; its `data.extra`.
fn small_invalid_params(what: &str, elapsed: Duration, status: u16, text: &str) -> Map<String, Value> {
    eprintln!("{what}: {elapsed:?}, {} bytes", text.len());
    assert_eq!(status, 200, "{what}: {}", &text[..text.len().min(500)]);
    assert!(text.len() < SMALL, "{what}: a response of {} bytes: {}", text.len(), &text[..text.len().min(500)]);
    assert!(elapsed < QUICK, "{what}: answered in {elapsed:?}");
    let response: Value = serde_json::from_str(text).expect("JSON");
    assert_eq!(response["error"]["code"], -32602, "{what}: {response}");
    response["error"]["data"]["extra"].as_object().cloned().unwrap_or_else(|| panic!("{what}: data.extra: {response}"))
}

/// The only reason given for `param`.
fn only_reason<'a>(extra: &'a Map<String, Value>, param: &str) -> &'a str {
    match extra.get(param).and_then(Value::as_array).map(Vec::as_slice) {
        Some([Value::String(reason)]) => reason,
        _ => panic!("exactly one reason for `{param}`: {extra:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_array_for_an_enum_over_rpc() {
    let body = request("Catalog.list", json!({"sort": padding(50_000)}));
    assert!(body.len() > 4_000_000 && body.len() < 4 << 20, "{} bytes", body.len());
    for env in [Environment::Prod, Environment::Dev] {
        let server = TestServer::catalog(env).await;
        let (elapsed, status, text) = timed(&server.url("/rpc"), body.clone()).await;
        let extra = small_invalid_params(&format!("{env:?}"), elapsed, status, &text);
        assert_eq!(extra.keys().collect::<Vec<_>>(), ["sort"], "{env:?}");
        assert!(only_reason(&extra, "sort").contains("array"), "says what was sent: {extra:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_array_for_an_enum_over_mcp() {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "Catalog.list", "arguments": {"sort": padding(50_000)}}})
    .to_string();
    for env in [Environment::Prod, Environment::Dev] {
        let server = TestServer::catalog(env).await;
        let mut client = RawMcp::new(server.url("/mcp/v1"));
        client.initialize("2025-11-25").await;
        let start = Instant::now();
        let reply = client.send(Method::POST, Some(call.clone()), &[]).await;
        let extra = small_invalid_params(&format!("MCP {env:?}"), start.elapsed(), reply.status, &reply.text);
        assert_eq!(extra.keys().collect::<Vec<_>>(), ["sort"], "{env:?}");
    }
}

/// While invalid calls with many wrong items keep both runtime workers
/// busy, a small call is answered at once. The items are short (the body is
/// 330 kB): validation dominates, not parsing, which happens before the
/// executor (4 MiB take about 100 ms to parse in a debug build).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrent_call_is_not_held_up() {
    let server = bulk(Environment::Prod).await;
    let url = server.url("/rpc");
    let modes: Vec<String> = (0..30_000).map(|i| format!("m{i:06}")).collect();
    let body = request("Bulk.modes", json!({ "modes": modes }));
    assert!(body.len() > 300_000 && body.len() < 400_000, "{} bytes", body.len());
    let huge: Vec<_> = (0..2)
        .map(|_| {
            let (url, body) = (url.clone(), body.clone());
            tokio::spawn(async move {
                for _ in 0..3 {
                    let (_, status, _) = timed(&url, body.clone()).await;
                    assert_eq!(status, 200);
                }
            })
        })
        .collect();
    let small = request("Bulk.sum", json!({"values": [1, 2]}));
    let (mut calls, mut slowest) = (0, Duration::ZERO);
    while !huge.iter().all(|h| h.is_finished()) {
        let start = Instant::now();
        let (status, response) = post_json(&url, &small).await;
        slowest = slowest.max(start.elapsed());
        calls += 1;
        assert_eq!((status, &response["result"]), (200, &json!(3)), "{response}");
    }
    for h in huge {
        h.await.expect("the huge calls were answered");
    }
    eprintln!("{calls} calls meanwhile, the slowest in {slowest:?}");
    assert!(calls >= 2, "calls made meanwhile: {calls}");
    assert!(slowest < Duration::from_millis(300), "the slowest of {calls} calls took {slowest:?}");
}

async fn bulk(env: Environment) -> TestServer {
    let registry = Registry::builder().service(fixtures::Bulk).build().expect("registry");
    TestServer::start(Router::new().nest("/rpc", JsonRpcService::new(Executor::new(registry, env)))).await
}

#[tokio::test]
async fn one_reason_per_parameter_however_many_values_are_wrong() {
    for env in [Environment::Prod, Environment::Dev] {
        let server = bulk(env).await;
        let url = server.url("/rpc");
        let cases = [
            ("Bulk.sum", json!({"values": padding(45_000)}), "values"),
            ("Bulk.modes", json!({"modes": padding(45_000)}), "modes"),
            ("Bulk.configure", json!({"settings": many_members(20_000)}), "settings"),
        ];
        for (method, params, param) in cases {
            let what = format!("{method} {env:?}");
            let (elapsed, status, text) = timed(&url, request(method, params)).await;
            let extra = small_invalid_params(&what, elapsed, status, &text);
            assert_eq!(extra.keys().collect::<Vec<_>>(), [param], "{what}");
            assert!(only_reason(&extra, param).len() <= 300, "{what}: {extra:?}");
        }
        let (status, response) = post_json(&url, &request("Bulk.sum", json!({"values": [1, 2, 300]}))).await;
        let reason = &response["error"]["data"]["extra"]["values"][0];
        assert_eq!(status, 200);
        assert!(reason.as_str().is_some_and(|r| r.contains("/2") && r.contains("300")), "short values shown: {reason}");
    }
}

/// `{"name": "x", "level": 1}` and `count` more members with 100-character names.
fn many_members(count: usize) -> Value {
    let mut members: Map<String, Value> = (0..count).map(|i| (format!("{i:x<100}"), json!(i))).collect();
    members.insert("name".into(), json!("x"));
    members.insert("level".into(), json!(1));
    Value::Object(members)
}

#[tokio::test]
async fn many_unknown_parameters_are_listed_boundedly() {
    let server = bulk(Environment::Prod).await;
    let Value::Object(mut params) = many_members(20_000) else { unreachable!() };
    params.remove("name");
    params.remove("level");
    params.insert("values".into(), json!([1]));
    let (elapsed, status, text) = timed(&server.url("/rpc"), request("Bulk.sum", Value::Object(params))).await;
    assert!(text.len() > 1000, "{text}");
    let extra = small_invalid_params("20,000 unknown parameters", elapsed, status, &text);
    assert!(extra.len() <= 12, "at most about 10 names listed: {} keys", extra.len());
    let listed: Vec<&String> = extra.keys().filter(|k| k.starts_with(|c: char| c.is_ascii_digit())).collect();
    assert!(listed.len() >= 5, "some names are listed: {extra:?}");
    assert!(listed.iter().all(|k| k.len() <= 70), "each name cut short: {extra:?}");
    assert!(text.contains("19990") || text.contains("19,990"), "the rest are counted: {text}");
}
