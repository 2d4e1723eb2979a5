//! Valid traffic: keep-alive workers that share one counter of requests and
//! cycle through four calls, each its own class:
//!
//! * `valid.rpc.get` / `valid.rpc.search`: JSON-RPC `Catalog.get` and
//!   `Catalog.search` at `/rpc`;
//! * `valid.mcp.session`: MCP `tools/call` (2025-11-25) with the session the
//!   worker opened once (`initialize` + `notifications/initialized`, counted
//!   as `valid.mcp.initialize`);
//! * `valid.mcp.stateless`: a 2026-07-28 `tools/call` (no session, the
//!   envelope in `params._meta`, the mirrored `Mcp-Method`/`Mcp-Name` headers).
//!
//! A valid call succeeds on a 2xx whose JSON-RPC answer has a `result` (and,
//! over MCP, `isError: false`). Anything else — another status, a JSON-RPC
//! error, a closed connection, a timeout — is a failure, kept with a sample.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use hyper::header::{AUTHORIZATION, HeaderName, HeaderValue};
use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::client::{Client, ClientKind, Outcome, Response, Target, until};
use crate::stats::{Stats, excerpt};

/// The handshake-era revision the session workers negotiate.
pub const PROTOCOL: &str = "2025-11-25";
/// The stateless revision.
pub const STATELESS: &str = "2026-07-28";
/// `Accept` of MCP requests.
pub const ACCEPT_MCP: &str = "application/json, text/event-stream";
/// The MCP endpoint.
pub const MCP_PATH: &str = "/mcp/v1";

/// What the valid workers of one phase share.
pub struct Shared {
    pub target: Target,
    /// Total valid calls of the phase.
    pub total: u64,
    /// Next call index to claim.
    pub next: AtomicU64,
    /// Calls answered (successfully or not): the hostile traffic paces itself on it.
    pub done: AtomicU64,
    /// Per-call deadline.
    pub timeout: Duration,
    /// The tool's hard wall-clock cap: no call starts after it, none runs past it.
    pub cap: Instant,
    /// Set when a worker stopped because of the cap.
    pub capped: AtomicBool,
    /// Workers that finished their setup (connection, MCP session).
    pub ready: AtomicUsize,
    /// The request bodies.
    pub bodies: Arc<Bodies>,
    /// The kinds of call to cycle through.
    pub kinds: Arc<[Kind]>,
    /// The HTTP client of the valid calls.
    pub client: ClientKind,
}

/// A kind of valid call (`--calls`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// JSON-RPC `Catalog.get`.
    #[value(name = "rpc.get")]
    RpcGet,
    /// JSON-RPC `Catalog.search`.
    #[value(name = "rpc.search")]
    RpcSearch,
    /// MCP `tools/call` in a session (2025-11-25).
    #[value(name = "mcp.session")]
    McpSession,
    /// MCP `tools/call`, 2026-07-28 (stateless).
    #[value(name = "mcp.stateless")]
    McpStateless,
}

/// The `initialize` request body (also used by the hostile flood).
pub fn initialize_body(client: &str) -> Bytes {
    Bytes::from(format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{PROTOCOL}","capabilities":{{}},"clientInfo":{{"name":"{client}","version":"1"}}}}}}"#
    ))
}

/// A 2026-07-28 `tools/call` body.
pub fn stateless_body(id: u64, name: &str, arguments: &str) -> Bytes {
    Bytes::from(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments},"_meta":{{"io.modelcontextprotocol/protocolVersion":"{STATELESS}","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"bench-load","version":"1"}}}}}}}}"#
    ))
}

/// Headers of a handshake-era MCP request in `session`.
pub fn session_headers(session: &HeaderValue) -> Vec<(HeaderName, HeaderValue)> {
    vec![
        (hyper::header::ACCEPT, HeaderValue::from_static(ACCEPT_MCP)),
        (HeaderName::from_static("mcp-protocol-version"), HeaderValue::from_static(PROTOCOL)),
        (HeaderName::from_static("mcp-session-id"), session.clone()),
    ]
}

/// Headers of a 2026-07-28 `tools/call` of tool `name`.
pub fn stateless_headers(name: &'static str) -> Vec<(HeaderName, HeaderValue)> {
    vec![
        (hyper::header::ACCEPT, HeaderValue::from_static(ACCEPT_MCP)),
        (HeaderName::from_static("mcp-protocol-version"), HeaderValue::from_static(STATELESS)),
        (HeaderName::from_static("mcp-method"), HeaderValue::from_static("tools/call")),
        (HeaderName::from_static("mcp-name"), HeaderValue::from_static(name)),
    ]
}

#[derive(Deserialize)]
struct RpcError {
    code: i64,
}

#[derive(Deserialize)]
struct Envelope<R> {
    #[serde(default)]
    id: Option<u64>,
    result: Option<R>,
    error: Option<RpcError>,
}

#[derive(Deserialize)]
struct ToolResult {
    #[serde(rename = "isError", default)]
    is_error: bool,
}

/// The JSON-RPC message of a response: the body, or the last `data:` line of
/// an SSE stream.
pub fn message(response: &Response) -> &[u8] {
    let sse = response
        .headers
        .get(hyper::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !sse {
        return &response.body;
    }
    let body: &[u8] = &response.body;
    body.rsplit(|&b| b == b'\n')
        .filter_map(|line| line.strip_prefix(b"data:"))
        .find(|data| data.iter().any(|b| !b.is_ascii_whitespace()))
        .unwrap_or(body)
}

/// The JSON-RPC error code of a response body, if it has one.
pub fn rpc_error_code(body: &[u8]) -> Option<i64> {
    match serde_json::from_slice::<Envelope<IgnoredAny>>(body) {
        Ok(Envelope { error: Some(e), .. }) => Some(e.code),
        _ => None,
    }
}

/// Checks a valid call's answer: `Ok` or the key of the failure.
/// A success must also carry the request's `id` (a response meant for
/// another request would otherwise pass).
fn check(response: &Response, mcp: bool, id: u64) -> Result<(), String> {
    let body = message(response);
    if !response.status.is_success() {
        return Err(match rpc_error_code(body) {
            Some(code) => format!("{} rpc {code}", response.status.as_u16()),
            None => response.status.as_u16().to_string(),
        });
    }
    if mcp {
        match serde_json::from_slice::<Envelope<ToolResult>>(body) {
            Ok(Envelope { result: Some(_), id: got, .. }) if got != Some(id) => Err("wrong_id".into()),
            Ok(Envelope { result: Some(r), .. }) if !r.is_error => Ok(()),
            Ok(Envelope { result: Some(_), .. }) => Err("isError".into()),
            Ok(Envelope { error: Some(e), .. }) => Err(format!("rpc {}", e.code)),
            Ok(_) | Err(_) => Err("bad_json".into()),
        }
    } else {
        match serde_json::from_slice::<Envelope<IgnoredAny>>(body) {
            Ok(Envelope { result: Some(_), id: got, .. }) if got != Some(id) => Err("wrong_id".into()),
            Ok(Envelope { result: Some(_), error: None, .. }) => Ok(()),
            Ok(Envelope { error: Some(e), .. }) => Err(format!("rpc {}", e.code)),
            Ok(_) | Err(_) => Err("bad_json".into()),
        }
    }
}

/// Request headers, shared without copying.
type Headers = Arc<[(HeaderName, HeaderValue)]>;

/// The bodies of the valid calls, built once: for each product id 1–100,
/// a `get` and a `search` of each kind (JSON-RPC, MCP session, MCP
/// stateless). Calls cycle through them, so no call formats anything.
pub struct Bodies {
    rpc_get: Vec<Bytes>,
    rpc_search: Vec<Bytes>,
    /// `[get, search]` tools/call bodies for a session.
    session: [Vec<Bytes>; 2],
    /// `[get, search]` 2026-07-28 tools/call bodies.
    stateless: [Vec<Bytes>; 2],
}

/// The tools the MCP calls alternate between.
const TOOLS: [&str; 2] = ["Catalog.get", "Catalog.search"];

impl Bodies {
    /// Builds every body.
    pub fn new() -> Bodies {
        let ids = 1..=100u64;
        let rpc = |method: &str, params: &dyn Fn(u64) -> String| -> Vec<Bytes> {
            ids.clone()
                .map(|id| {
                    Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{}}}"#, params(id)))
                })
                .collect()
        };
        let get = |id: u64| format!(r#"{{"id":{id}}}"#);
        let search = |id: u64| format!(r#"{{"query":"n{id}","limit":5}}"#);
        let args: [&dyn Fn(u64) -> String; 2] = [&get, &search];
        let session = |t: usize| -> Vec<Bytes> {
            ids.clone()
                .map(|id| {
                    Bytes::from(format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{}","arguments":{}}}}}"#,
                        TOOLS[t],
                        args[t](id)
                    ))
                })
                .collect()
        };
        let stateless =
            |t: usize| -> Vec<Bytes> { ids.clone().map(|id| stateless_body(id, TOOLS[t], &args[t](id))).collect() };
        Bodies {
            rpc_get: rpc("Catalog.get", &get),
            rpc_search: rpc("Catalog.search", &|id| format!(r#"{{"query":"n{id}"}}"#)),
            session: [session(0), session(1)],
            stateless: [stateless(0), stateless(1)],
        }
    }
}

/// `extra` plus the bearer token, if any.
fn with_bearer(target: &Target, mut extra: Vec<(HeaderName, HeaderValue)>) -> Headers {
    if let Some(b) = &target.bearer {
        extra.push((AUTHORIZATION, b.clone()));
    }
    extra.into()
}

/// One valid worker: its connection, its MCP session, its headers.
struct Worker {
    shared: Arc<Shared>,
    conn: Option<Client>,
    stats: Stats,
    rpc: Headers,
    initialize: Headers,
    /// Headers of calls in the worker's session, once it has one.
    session: Option<Headers>,
    /// `[get, search]` headers of stateless calls.
    stateless: [Headers; 2],
}

impl Worker {
    fn new(shared: Arc<Shared>) -> Worker {
        let t = &shared.target;
        Worker {
            conn: None,
            stats: Stats::default(),
            rpc: with_bearer(t, Vec::new()),
            initialize: with_bearer(t, vec![(hyper::header::ACCEPT, HeaderValue::from_static(ACCEPT_MCP))]),
            session: None,
            stateless: [with_bearer(t, stateless_headers(TOOLS[0])), with_bearer(t, stateless_headers(TOOLS[1]))],
            shared,
        }
    }

    /// The open connection, (re)opened if needed.
    async fn conn(&mut self, deadline: Instant) -> Result<&mut Client, Outcome> {
        if self.conn.as_mut().is_none_or(|c| c.is_closed()) {
            self.conn = Some(Client::open(self.shared.client, self.shared.target.addr, deadline).await?);
        }
        self.conn.as_mut().ok_or(Outcome::Connect)
    }

    /// Sends one valid call of `class` (JSON-RPC id `id`) and counts it.
    async fn call(
        &mut self,
        class: &'static str,
        path: &str,
        headers: Headers,
        body: Bytes,
        mcp: bool,
        id: u64,
    ) -> Option<Response> {
        let deadline = until(self.shared.timeout, self.shared.cap);
        let sent = body.len() as u64;
        let start = Instant::now();
        let shared = self.shared.clone();
        let result = match self.conn(deadline).await {
            Ok(conn) => conn.post(&shared.target, path, &headers, body, deadline).await,
            Err(e) => Err(e),
        };
        let elapsed = start.elapsed();
        let stats = self.stats.class(class);
        stats.sent += 1;
        stats.bytes_sent += sent;
        match result {
            Ok(response) => {
                stats.max_response_bytes = stats.max_response_bytes.max(response.body.len() as u64);
                match check(&response, mcp, id) {
                    Ok(()) => {
                        stats.ok += 1;
                        stats.latencies_us.push(elapsed.as_micros().min(u32::MAX as u128) as u32);
                    }
                    Err(key) => {
                        stats.failures += 1;
                        stats.sample(|| format!("{key}: HTTP {}: {}", response.status, excerpt(&response.body)));
                        stats.outcome(key);
                    }
                }
                Some(response)
            }
            Err(outcome) => {
                stats.failures += 1;
                stats.sample(|| format!("{outcome:?} after {elapsed:?}"));
                stats.outcome(outcome.key());
                self.conn = None;
                None
            }
        }
    }

    /// Opens an MCP session (`initialize`, then `notifications/initialized`).
    async fn open_session(&mut self) {
        self.session = None;
        let headers = self.initialize.clone();
        let Some(response) =
            self.call("valid.mcp.initialize", MCP_PATH, headers, initialize_body("bench-load"), false, 0).await
        else {
            return;
        };
        let Some(session) = response.headers.get("mcp-session-id").cloned() else {
            let stats = self.stats.class("valid.mcp.initialize");
            stats.failures += 1;
            stats.outcome("no_session_id");
            return;
        };
        let headers = with_bearer(&self.shared.target, session_headers(&session));
        let body = Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        // 202 Accepted and no body: not a JSON-RPC answer, so checked here.
        let deadline = until(self.shared.timeout, self.shared.cap);
        let shared = self.shared.clone();
        let result = match self.conn(deadline).await {
            Ok(conn) => conn.post(&shared.target, MCP_PATH, &headers, body, deadline).await,
            Err(e) => Err(e),
        };
        let stats = self.stats.class("valid.mcp.initialized");
        stats.sent += 1;
        match result {
            Ok(r) if r.status.is_success() => stats.ok += 1,
            Ok(r) => {
                stats.failures += 1;
                stats.sample(|| format!("HTTP {}: {}", r.status, excerpt(&r.body)));
                stats.outcome(r.status.as_u16().to_string());
            }
            Err(outcome) => {
                stats.failures += 1;
                stats.outcome(outcome.key());
                self.conn = None;
            }
        }
        self.session = Some(headers);
    }

    /// Call number `i`: the kind cycles through `kinds` (by default rpc.get,
    /// rpc.search, mcp.session, mcp.stateless); MCP calls alternate `get` and
    /// `search`; ids cycle 1–100.
    async fn call_number(&mut self, i: u64) {
        let bodies = &self.shared.bodies;
        let id = (i % 100) as usize;
        // The JSON-RPC id of every body is its product id.
        let rid = id as u64 + 1;
        let kinds = &self.shared.kinds;
        let n = kinds.len().max(1) as u64;
        let tool = ((i / n) % 2) as usize;
        match kinds.get((i % n) as usize).copied().unwrap_or(Kind::RpcGet) {
            Kind::RpcGet => {
                let body = bodies.rpc_get[id].clone();
                self.call("valid.rpc.get", "/rpc", self.rpc.clone(), body, false, rid).await;
            }
            Kind::RpcSearch => {
                let body = bodies.rpc_search[id].clone();
                self.call("valid.rpc.search", "/rpc", self.rpc.clone(), body, false, rid).await;
            }
            Kind::McpSession => {
                let body = bodies.session[tool][id].clone();
                if self.session.is_none() {
                    self.open_session().await;
                }
                let Some(headers) = self.session.clone() else {
                    let stats = self.stats.class("valid.mcp.session");
                    stats.sent += 1;
                    stats.failures += 1;
                    stats.outcome("no_session");
                    return;
                };
                let response = self.call("valid.mcp.session", MCP_PATH, headers, body, true, rid).await;
                // A lost session is a failure (counted above); open a new one for the next call.
                if response.is_some_and(|r| r.status == hyper::StatusCode::NOT_FOUND) {
                    self.session = None;
                }
            }
            Kind::McpStateless => {
                let body = bodies.stateless[tool][id].clone();
                self.call("valid.mcp.stateless", MCP_PATH, self.stateless[tool].clone(), body, true, rid).await;
            }
        }
    }
}

/// Runs one valid worker: setup (connection, MCP session), then — once `go`
/// turns true — calls until the shared counter reaches the total or the cap.
pub async fn worker(shared: Arc<Shared>, mut go: watch::Receiver<bool>) -> Stats {
    let mut w = Worker::new(shared.clone());
    // A session only for workers that call through one.
    if shared.kinds.contains(&Kind::McpSession) {
        w.open_session().await;
    }
    shared.ready.fetch_add(1, Ordering::SeqCst);
    if go.wait_for(|go| *go).await.is_err() {
        return w.stats;
    }
    loop {
        let i = shared.next.fetch_add(1, Ordering::Relaxed);
        if i >= shared.total {
            break;
        }
        if Instant::now() >= shared.cap {
            shared.capped.store(true, Ordering::SeqCst);
            break;
        }
        w.call_number(i).await;
        shared.done.fetch_add(1, Ordering::Relaxed);
    }
    w.stats
}
