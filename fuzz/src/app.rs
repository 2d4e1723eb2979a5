//! Targets `mcp_request` and `rpc_request`: a [`Script`] of HTTP requests
//! driven through the whole catalog application
//! (`catalog::app(Environment::Prod)`, the `Router` mounting `/rpc` and
//! `/mcp`), in-process, on a current-thread runtime whose clock is paused
//! (so a stream that never ends is seen at once, not after real seconds).
//!
//! Every answer must be well-formed ([`wellformed::check`]) and its body must
//! end within [`DEADLINE`] of (virtual) time. Sessions the script opened are
//! deleted at its end, so the application shared by all inputs carries no
//! state from one input to the next.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Request, Uri};
use http_body::{Body, Frame};
use rpc::Environment;
use rpc::server::Router;
use serde_json::Value as Json;
use serde_json::value::RawValue;

use crate::script::{Delivery, Exchange, Focus, HeaderOp, Script, Value};
use crate::wellformed::{self, Collected, Sent};

/// How long (virtual time) a response may take to end.
pub const DEADLINE: Duration = Duration::from_secs(120);

/// The application, built once.
fn app() -> &'static Router {
    static APP: OnceLock<Router> = OnceLock::new();
    APP.get_or_init(|| {
        let app = catalog::app(Environment::Prod).expect("the catalog's registry builds");
        // Long-lived streams (a session's GET, subscriptions/listen) end at
        // once, so every answer is whole within the deadline.
        catalog::changes().close();
        app
    })
}

/// Runs one input of the MCP target.
pub fn run_mcp(data: &[u8]) {
    run(data, Focus::Mcp);
}

/// Runs one input of the RPC target.
pub fn run_rpc(data: &[u8]) {
    run(data, Focus::Rpc);
}

/// Decodes `data` as a script and runs it; panics on a malformed answer.
pub fn run(data: &[u8], focus: Focus) {
    statuses(data, focus);
}

/// Runs `data` as [`run`] does; the statuses of the script's requests (a
/// request that could not be built, such as one with an invalid method
/// token, has none).
pub fn statuses(data: &[u8], focus: Focus) -> Vec<u16> {
    let script = Script::decode(data, focus);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(play(&script))
}

/// What a script has learnt from the server so far.
#[derive(Default)]
struct State {
    /// The last session id the server gave.
    session: Option<String>,
    /// The revision that session negotiated.
    protocol: Option<String>,
    /// Every session id the server gave (deleted at the end).
    sessions: Vec<String>,
}

async fn play(script: &Script) -> Vec<u16> {
    let mut state = State::default();
    let mut statuses = Vec::new();
    if let Some(version) = script.handshake {
        let initialize = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{"sampling":{{}}}},"clientInfo":{{"name":"fuzz","version":"1.0"}}}}}}"#
        );
        let got = send(&mut state, &plain("POST", "/mcp/v1", initialize.as_bytes())).await;
        if let Some(protocol) = got.and_then(|got| negotiated(&got.body)) {
            state.protocol = Some(protocol);
        }
        send(&mut state, &plain("POST", "/mcp/v1", br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)).await;
    }
    for exchange in &script.exchanges {
        statuses.extend(send(&mut state, exchange).await.map(|got| got.status));
    }
    for session in std::mem::take(&mut state.sessions) {
        let mut delete = plain("DELETE", "/mcp/v1", b"");
        delete.headers.push(HeaderOp::Insert("mcp-session-id".into(), Value::Bytes(session.into_bytes())));
        delete.flags |= crate::script::SESSIONLESS;
        send(&mut state, &delete).await;
    }
    statuses
}

/// A request with the standard headers and nothing else.
fn plain(verb: &'static str, path: &str, body: &[u8]) -> Exchange {
    Exchange {
        verb,
        path: path.to_owned(),
        flags: crate::script::STANDARD,
        headers: Vec::new(),
        body: body.to_vec(),
        delivery: Delivery::Whole,
    }
}

/// The `protocolVersion` an `initialize` response negotiated.
fn negotiated(body: &[u8]) -> Option<String> {
    let json: Json = serde_json::from_slice(body).ok()?;
    json["result"]["protocolVersion"].as_str().map(str::to_owned)
}

/// Sends one request and checks the answer (panicking with the request
/// and the answer when it is malformed); returns the answer.
async fn send(state: &mut State, exchange: &Exchange) -> Option<Collected> {
    let (request, size) = build(state, exchange)?;
    let described =
        format!("{} {} {:?} {:?}", request.method(), request.uri(), request.headers(), excerpt(&exchange.body));
    let sent = Sent { method: exchange.verb, body: &exchange.body, size };
    let got = wellformed::exchange(app().clone(), request, DEADLINE, sent.max_response())
        .await
        .unwrap_or_else(|why| panic!("{why}\nrequest: {described}"));
    if let Err(why) = wellformed::check_or_describe(&sent, &got, &described) {
        panic!("{why}");
    }
    if std::env::var_os("FUZZ_SHOW").is_some() {
        eprintln!("{described}\n=> {} {:?}\n{}\n", got.status, got.headers, excerpt(&got.body));
    }
    if let Some(id) = got.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) {
        state.session = Some(id.to_owned());
        state.sessions.push(id.to_owned());
    }
    Some(got)
}

fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(4096)]);
    if body.len() > 4096 { format!("{text}... ({} bytes)", body.len()) } else { text.into_owned() }
}

/// What the body says, for the mirrored headers.
struct Mirror {
    method: Option<String>,
    name: Option<String>,
    version: Option<String>,
}

impl Mirror {
    /// Read as members of raw values, so an `id` that `f64` cannot hold
    /// does not hide the rest.
    fn of(body: &[u8]) -> Mirror {
        if body.len() > 64 * 1024 {
            // Not read, for the fuzzer's speed: a large body goes without mirrored headers.
            return Mirror { method: None, name: None, version: None };
        }
        fn members(raw: Option<&RawValue>) -> std::collections::HashMap<String, &RawValue> {
            raw.and_then(|r| serde_json::from_str(r.get()).ok()).unwrap_or_default()
        }
        let text = |raw: Option<&&RawValue>| raw.and_then(|r| serde_json::from_str::<String>(r.get()).ok());
        let whole: Option<&RawValue> = serde_json::from_slice(body).ok();
        let message = members(whole);
        let params = members(message.get("params").copied());
        let meta = members(params.get("_meta").copied());
        Mirror {
            method: text(message.get("method")),
            name: text(params.get("name")),
            version: text(meta.get("io.modelcontextprotocol/protocolVersion")),
        }
    }
}

/// A header value as a client would send it: plain visible ASCII as it
/// is, anything else in the `=?base64?...?=` form.
fn mirrored(value: &str) -> Vec<u8> {
    if value.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        value.as_bytes().to_vec()
    } else {
        format!("=?base64?{}?=", B64.encode(value)).into_bytes()
    }
}

fn resolve(value: &Value, mirror: &Mirror, state: &State) -> Vec<u8> {
    let or_empty = |v: &Option<String>| v.as_deref().map(mirrored).unwrap_or_default();
    match value {
        Value::Bytes(bytes) => bytes.clone(),
        Value::MirrorMethod => or_empty(&mirror.method),
        Value::MirrorName => or_empty(&mirror.name),
        Value::MirrorVersion => or_empty(&mirror.version),
        Value::Session => state.session.clone().unwrap_or_default().into_bytes(),
        Value::Base64(inner) => format!("=?base64?{}?=", B64.encode(resolve(inner, mirror, state))).into_bytes(),
    }
}

/// A header value from any bytes: the bytes `HeaderValue` refuses
/// (controls other than tab, DEL) are dropped.
fn header_value(bytes: &[u8]) -> HeaderValue {
    let kept: Vec<u8> = bytes.iter().copied().filter(|&b| b == b'\t' || (b >= 0x20 && b != 0x7f)).collect();
    HeaderValue::from_bytes(&kept).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The request of `exchange` and its size (target, headers, body).
fn build(state: &State, exchange: &Exchange) -> Option<(Request<Chunks>, usize)> {
    let mirror = Mirror::of(&exchange.body);
    let mut headers = HeaderMap::new();
    if exchange.standard() {
        let mut put = |name: &'static str, value: &[u8]| {
            headers.insert(HeaderName::from_static(name), header_value(value));
        };
        put("host", b"localhost");
        put("content-type", b"application/json");
        put("accept", b"application/json, text/event-stream");
        if let Some(version) = &mirror.version {
            put("mcp-protocol-version", &mirrored(version));
            if let Some(method) = &mirror.method {
                put("mcp-method", &mirrored(method));
            }
            if let Some(name) = &mirror.name {
                put("mcp-name", &mirrored(name));
            }
        } else if let Some(session) = state.session.as_deref().filter(|_| !exchange.sessionless()) {
            put("mcp-session-id", session.as_bytes());
            if let Some(protocol) = state.protocol.as_deref().filter(|p| *p >= "2025-06-18") {
                put("mcp-protocol-version", protocol.as_bytes());
            }
        }
    }
    for op in &exchange.headers {
        match op {
            HeaderOp::Append(name, value) | HeaderOp::Insert(name, value) => {
                let name = HeaderName::from_bytes(name.as_bytes()).ok()?;
                let value = header_value(&resolve(value, &mirror, state));
                if matches!(op, HeaderOp::Insert(..)) {
                    headers.insert(name, value);
                } else {
                    headers.append(name, value);
                }
            }
            HeaderOp::Remove(name) => {
                headers.remove(name.as_str());
            }
        }
    }
    let target = match exchange.authority() {
        Some(authority) => format!("http://{authority}{}", exchange.path),
        None => exchange.path.clone(),
    };
    let uri = Uri::try_from(target.as_str()).or_else(|_| Uri::try_from(exchange.path.as_str())).ok()?;
    let method = http::Method::from_bytes(exchange.verb.as_bytes()).ok()?;
    let size =
        target.len() + headers.iter().map(|(n, v)| n.as_str().len() + v.len()).sum::<usize>() + exchange.body.len();
    let body = Chunks::new(&exchange.body, exchange.delivery, exchange.failing());
    let mut request = Request::builder().method(method).uri(uri).body(body).ok()?;
    *request.headers_mut() = headers;
    Some((request, size))
}

/// A request body delivered whole or in chunks, failing at its end if asked.
pub struct Chunks {
    chunks: VecDeque<Bytes>,
    fail: bool,
}

impl Chunks {
    fn new(body: &[u8], delivery: Delivery, fail: bool) -> Chunks {
        let chunks = match delivery {
            Delivery::Whole if body.is_empty() => VecDeque::new(),
            Delivery::Whole => VecDeque::from([Bytes::copy_from_slice(body)]),
            Delivery::Chunks(size) => body.chunks(size).map(Bytes::copy_from_slice).collect(),
        };
        Chunks { chunks, fail }
    }
}

impl Body for Chunks {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(chunk) = self.chunks.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(chunk))));
        }
        if std::mem::take(&mut self.fail) {
            return Poll::Ready(Some(Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "the client went away",
            ))));
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty() && !self.fail
    }
}
