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

use crate::client::{Conn, Outcome, Response, Target, until};
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
fn check(response: &Response, mcp: bool) -> Result<(), String> {
    let body = message(response);
    if !response.status.is_success() {
        return Err(match rpc_error_code(body) {
            Some(code) => format!("{} rpc {code}", response.status.as_u16()),
            None => response.status.as_u16().to_string(),
        });
    }
    if mcp {
        match serde_json::from_slice::<Envelope<ToolResult>>(body) {
            Ok(Envelope { result: Some(r), .. }) if !r.is_error => Ok(()),
            Ok(Envelope { result: Some(_), .. }) => Err("isError".into()),
            Ok(Envelope { error: Some(e), .. }) => Err(format!("rpc {}", e.code)),
            Ok(_) | Err(_) => Err("bad_json".into()),
        }
    } else {
        match serde_json::from_slice::<Envelope<IgnoredAny>>(body) {
            Ok(Envelope { result: Some(_), error: None }) => Ok(()),
            Ok(Envelope { error: Some(e), .. }) => Err(format!("rpc {}", e.code)),
            Ok(_) | Err(_) => Err("bad_json".into()),
        }
    }
}

/// One valid worker: its connection and MCP session.
struct Worker {
    shared: Arc<Shared>,
    conn: Option<Conn>,
    session: Option<HeaderValue>,
    stats: Stats,
    bearer: Vec<(HeaderName, HeaderValue)>,
}

impl Worker {
    /// The open connection, (re)opened if needed.
    async fn conn(&mut self, deadline: Instant) -> Result<&mut Conn, Outcome> {
        if self.conn.as_ref().is_none_or(Conn::is_closed) {
            self.conn = Some(Conn::open(self.shared.target.addr, deadline).await?);
        }
        self.conn.as_mut().ok_or(Outcome::Connect)
    }

    /// Sends one valid call of `class` and counts it.
    async fn call(
        &mut self,
        class: &'static str,
        path: &str,
        mut headers: Vec<(HeaderName, HeaderValue)>,
        body: Bytes,
        mcp: bool,
    ) -> Option<Response> {
        let deadline = until(self.shared.timeout, self.shared.cap);
        headers.extend(self.bearer.iter().cloned());
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
                match check(&response, mcp) {
                    Ok(()) => {
                        stats.outcome("ok");
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
        let headers = vec![(hyper::header::ACCEPT, HeaderValue::from_static(ACCEPT_MCP))];
        let Some(response) =
            self.call("valid.mcp.initialize", MCP_PATH, headers, initialize_body("bench-load"), false).await
        else {
            return;
        };
        let Some(session) = response.headers.get("mcp-session-id").cloned() else {
            let stats = self.stats.class("valid.mcp.initialize");
            stats.failures += 1;
            stats.outcome("no_session_id");
            return;
        };
        let mut headers = session_headers(&session);
        headers.extend(self.bearer.iter().cloned());
        let deadline = until(self.shared.timeout, self.shared.cap);
        let body = Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        let shared = self.shared.clone();
        let result = match self.conn(deadline).await {
            Ok(conn) => conn.post(&shared.target, MCP_PATH, &headers, body, deadline).await,
            Err(e) => Err(e),
        };
        let stats = self.stats.class("valid.mcp.initialized");
        stats.sent += 1;
        match result {
            Ok(r) if r.status.is_success() => stats.outcome("ok"),
            Ok(r) => {
                stats.failures += 1;
                stats.sample(|| format!("HTTP {}: {}", r.status, excerpt(&r.body)));
                stats.outcome(r.status.as_u16().to_string());
            }
            Err(outcome) => {
                stats.failures += 1;
                stats.outcome(outcome.key());
            }
        }
        self.session = Some(session);
    }

    /// Call number `i`: the kind cycles rpc.get, rpc.search, mcp.session, mcp.stateless.
    async fn call_number(&mut self, i: u64) {
        let id = i % 100 + 1;
        let get = (i / 4).is_multiple_of(2);
        let (tool, arguments) = if get {
            ("Catalog.get", format!(r#"{{"id":{id}}}"#))
        } else {
            ("Catalog.search", format!(r#"{{"query":"n{id}","limit":5}}"#))
        };
        match i % 4 {
            0 => {
                let body = Bytes::from(format!(
                    r#"{{"jsonrpc":"2.0","id":{i},"method":"Catalog.get","params":{{"id":{id}}}}}"#
                ));
                self.call("valid.rpc.get", "/rpc", Vec::new(), body, false).await;
            }
            1 => {
                let body = Bytes::from(format!(
                    r#"{{"jsonrpc":"2.0","id":{i},"method":"Catalog.search","params":{{"query":"n{id}"}}}}"#
                ));
                self.call("valid.rpc.search", "/rpc", Vec::new(), body, false).await;
            }
            2 => {
                if self.session.is_none() {
                    self.open_session().await;
                }
                let Some(session) = self.session.clone() else {
                    let stats = self.stats.class("valid.mcp.session");
                    stats.sent += 1;
                    stats.failures += 1;
                    stats.outcome("no_session");
                    return;
                };
                let body = Bytes::from(format!(
                    r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
                ));
                let response = self.call("valid.mcp.session", MCP_PATH, session_headers(&session), body, true).await;
                // A lost session is a failure (counted above); open a new one for the next call.
                if response.is_some_and(|r| r.status == hyper::StatusCode::NOT_FOUND) {
                    self.session = None;
                }
            }
            _ => {
                let body = stateless_body(i, tool, &arguments);
                self.call("valid.mcp.stateless", MCP_PATH, stateless_headers(tool), body, true).await;
            }
        }
    }
}

/// Runs one valid worker: setup (connection, MCP session), then — once `go`
/// turns true — calls until the shared counter reaches the total or the cap.
pub async fn worker(shared: Arc<Shared>, mut go: watch::Receiver<bool>) -> Stats {
    let bearer = shared.target.bearer.clone().map(|b| vec![(AUTHORIZATION, b)]).unwrap_or_default();
    let mut w = Worker { shared: shared.clone(), conn: None, session: None, stats: Stats::default(), bearer };
    w.open_session().await;
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
