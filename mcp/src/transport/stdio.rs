//! The stdio transport: newline-delimited JSON-RPC on a byte stream
//! (the process's stdin and stdout), both protocol eras.
//!
//! There is no second implementation of the protocol here. Each line read
//! becomes an in-process HTTP request to the same handler as Streamable
//! HTTP ([`McpEndpoint::handle`]): a `POST` to `/v{version}` with the line as
//! its body. So the same executor runs the tools, with the same validation,
//! limits, sessions and listeners. What the transport adds:
//!
//! * **Headers from the conversation.** Once `initialize` was answered, the
//!   session id it minted and the negotiated revision travel with every
//!   later message (`Mcp-Session-Id`, `MCP-Protocol-Version`). A message
//!   whose `params._meta` names a protocol version (a 2026-07-28 client,
//!   starting with its `server/discover` probe) is self-contained: the
//!   headers 2026-07-28 mirrors from the body (`MCP-Protocol-Version`,
//!   `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) are filled in from that body,
//!   as an HTTP client would send them. Which era a client speaks is
//!   decided per message, as on HTTP.
//! * **Responses as lines.** A JSON response is one line; a
//!   `text/event-stream` response (a call reporting progress or log
//!   messages) is one line per event, written as the events arrive; an
//!   empty response (`202`, a notification) writes nothing. Lines never
//!   contain a raw newline and never interleave (one writer). Nothing but
//!   JSON-RPC messages is written; errors of HTTP-level checks (`413`,
//!   `404`, ...) are written as their JSON-RPC error body.
//! * **Notifications get no answer.** A notification (or a response sent
//!   by the client) never gets a line back, even when it is refused; the
//!   refusal is logged (`tracing`, which a stdio server must send to stderr).
//! * **Concurrency.** Every message runs in its own task, so a client can
//!   send `notifications/cancelled` while a call runs: the transport drops
//!   the call (as closing an HTTP stream does) in either era, and writes no
//!   response for it. At most [`Stdio::max_in_flight`] messages run at
//!   once; beyond that the transport waits before reading more.
//! * **Bounded input.** A line longer than the endpoint's body limit
//!   ([`McpEndpointBuilder::max_body_bytes`](crate::McpEndpointBuilder::max_body_bytes))
//!   is answered with a `-32600` error (id `null`) and the rest of it is
//!   skipped as it arrives, never buffered. Blank lines are ignored; a line
//!   that is not JSON gets the endpoint's `-32700`.
//! * **End of input.** At EOF the transport stops reading, lets the calls
//!   in flight finish (for at most [`Stdio::grace`]; then they are
//!   dropped), ends the session it opened, flushes and returns.
//!
//! There is no token check: the access policy of the endpoint's
//! [`Security`](rpc::Security) still applies (a refusal is written as a
//! JSON-RPC error), so build the stdio endpoint without one; a client that
//! can start the process has its access already. The host check sees
//! `Host: localhost`, which the default host policy allows.
//!
//! ```no_run
//! # async fn run(endpoint: mcp::McpEndpoint) -> std::io::Result<()> {
//! // Serve API version 1 of the endpoint's group on this process's stdin/stdout.
//! mcp::stdio::serve(endpoint, 1, tokio::io::stdin(), tokio::io::stdout()).await
//! # }
//! ```

use std::borrow::Cow;
use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::{AbortHandle, Abortable};
use http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, HOST};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Full};
use rpc::server::body::ResponseBody;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio::task::JoinSet;

use super::headers;
use crate::endpoint::McpEndpoint;
use crate::protocol::{METHOD_HEADER, NAME_HEADER, PARAM_HEADER_PREFIX, PROTOCOL_VERSION_HEADER, SESSION_HEADER, meta};

/// Serves API `version` of `endpoint`'s group on `input`/`output` with the
/// default settings of [`Stdio`], until `input` ends.
///
/// Errors: `InvalidInput` when the group has no tools at `version`; a read
/// error of `input` or a write error of `output` (the client went away).
pub async fn serve<R, W>(endpoint: McpEndpoint, version: u32, input: R, output: W) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    Stdio::new(endpoint, version).serve(input, output).await
}

/// The stdio transport of one endpoint and API version, with its settings;
/// [`serve`](Stdio::serve) runs it.
#[derive(Debug, Clone)]
pub struct Stdio {
    endpoint: McpEndpoint,
    version: u32,
    max_in_flight: usize,
    grace: Duration,
}

impl Stdio {
    /// The transport of API `version` (the `/v{version}` of Streamable HTTP).
    pub fn new(endpoint: McpEndpoint, version: u32) -> Self {
        Stdio { endpoint, version, max_in_flight: 64, grace: Duration::from_secs(5) }
    }

    /// Messages handled at once (default 64); further lines are read once
    /// one of them is done. `notifications/cancelled` is always read.
    pub fn max_in_flight(mut self, messages: usize) -> Self {
        self.max_in_flight = messages.max(1);
        self
    }

    /// How long calls still running at the end of input may take to finish
    /// before they are dropped (default 5 s).
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Reads messages from `input` and writes responses and notifications
    /// to `output` until `input` ends (see the [module](self) documentation).
    ///
    /// Errors: `InvalidInput` when the group has no tools at this version; a
    /// read error of `input` or a write error of `output`.
    pub async fn serve<R, W>(self, input: R, output: W) -> io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let inner = &self.endpoint.inner;
        if inner.tools.version(self.version).is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("group `{}` has no MCP tools at version {}", inner.group, self.version),
            ));
        }
        let limit = inner.config.max_body_bytes;
        let (lines_out, queue) = mpsc::channel(WRITE_QUEUE);
        let mut writer = tokio::spawn(write_lines(output, queue));
        let shared = Arc::new(Shared {
            endpoint: self.endpoint.clone(),
            version: self.version,
            conversation: Mutex::default(),
            running: Mutex::default(),
        });
        let permits = Arc::new(Semaphore::new(self.max_in_flight));
        let mut tasks = JoinSet::new();
        let mut lines = Lines::new(input, limit);
        let mut sequence = 0u64;
        let read: io::Result<()> = loop {
            while let Some(done) = tasks.try_join_next() {
                report(done);
            }
            let line = tokio::select! {
                line = lines.next() => line,
                written = &mut writer => return flatten(written),
            };
            let bytes = match line {
                Ok(Some(Line::Message(bytes))) => bytes,
                Ok(Some(Line::TooLong)) => {
                    tracing::warn!(limit, "stdio: a message longer than the limit was skipped");
                    let error = format!(
                        "{{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{{\"code\":{},\"message\":\"message exceeds {limit} bytes (the rest of the line was skipped)\"}}}}",
                        rpc::error::code::INVALID_REQUEST
                    );
                    if !send(&lines_out, error.into_bytes()).await {
                        break Ok(());
                    }
                    continue;
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            };
            if bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let message = Peeked::of(&bytes);
            if message.kind == Kind::Notification && message.method.as_deref() == Some("notifications/cancelled") {
                shared.cancel(&bytes);
                continue;
            }
            let request = shared.request(&message, bytes);
            let permit = tokio::select! {
                permit = Arc::clone(&permits).acquire_owned() => permit,
                written = &mut writer => return flatten(written),
            };
            let Ok(permit) = permit else { break Ok(()) };
            sequence += 1;
            let (abort, registration) = AbortHandle::new_pair();
            let tracked = match (&message.kind, &message.id) {
                (Kind::Request, Some(id)) => {
                    shared.lock_running().insert(id.clone(), (sequence, abort));
                    Some(Running { shared: Arc::clone(&shared), id: id.clone(), sequence })
                }
                _ => None,
            };
            let exchange = Exchange { shared: Arc::clone(&shared), message, lines: lines_out.clone() };
            tasks.spawn(async move {
                let _permit = permit;
                let _tracked = tracked;
                let _ = Abortable::new(exchange.run(request), registration).await;
            });
        };
        match tokio::time::timeout(self.grace, drain(&mut tasks)).await {
            Ok(()) => {}
            Err(_) => {
                tracing::warn!(calls = tasks.len(), grace = ?self.grace, "stdio: input ended; dropping the calls still running");
                tasks.abort_all();
                drain(&mut tasks).await;
            }
        }
        shared.end_session().await;
        drop(lines_out);
        drop(shared);
        let written = flatten(writer.await);
        read.and(written)
    }
}

/// Lines queued for the writer before tasks wait.
const WRITE_QUEUE: usize = 64;

/// Waits for every task.
async fn drain(tasks: &mut JoinSet<()>) {
    while let Some(done) = tasks.join_next().await {
        report(done);
    }
}

fn report(done: Result<(), tokio::task::JoinError>) {
    if let Err(e) = done
        && e.is_panic()
    {
        tracing::error!("stdio: a message's task panicked: {e}");
    }
}

fn flatten(written: Result<io::Result<()>, tokio::task::JoinError>) -> io::Result<()> {
    written.map_err(io::Error::other).and_then(|r| r)
}

/// A line for the writer, and who waits until it is written out.
struct Out {
    line: Vec<u8>,
    written: oneshot::Sender<()>,
}

/// The writer: each line then `\n`, flushed whenever the queue is empty.
async fn write_lines<W: AsyncWrite + Unpin>(mut output: W, mut queue: mpsc::Receiver<Out>) -> io::Result<()> {
    let mut waiting = Vec::new();
    while let Some(first) = queue.recv().await {
        let mut next = Some(first);
        while let Some(out) = next {
            output.write_all(&out.line).await?;
            output.write_all(b"\n").await?;
            waiting.push(out.written);
            next = queue.try_recv().ok();
        }
        output.flush().await?;
        for written in waiting.drain(..) {
            let _ = written.send(());
        }
    }
    output.flush().await?;
    output.shutdown().await
}

/// Queues `line` and waits until it is written; `false` when the writer is gone.
async fn send(lines: &mpsc::Sender<Out>, mut line: Vec<u8>) -> bool {
    // A raw newline in valid JSON can only be whitespace between tokens
    // (inside strings it is escaped): a space means the same.
    for byte in &mut line {
        if *byte == b'\n' || *byte == b'\r' {
            *byte = b' ';
        }
    }
    let (written, done) = oneshot::channel();
    lines.send(Out { line, written }).await.is_ok() && done.await.is_ok()
}

/// One line of input.
enum Line {
    /// A message (without its line end).
    Message(Vec<u8>),
    /// A line longer than the limit (skipped).
    TooLong,
}

/// Reads lines of at most `limit` bytes; longer ones are skipped as they arrive.
struct Lines<R> {
    reader: BufReader<R>,
    limit: usize,
    line: Vec<u8>,
    skipping: bool,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    fn new(input: R, limit: usize) -> Self {
        Lines { reader: BufReader::with_capacity(64 * 1024, input), limit, line: Vec::new(), skipping: false }
    }

    /// The next line; `None` at the end of input. A last line without a
    /// line end counts.
    async fn next(&mut self) -> io::Result<Option<Line>> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                self.skipping = false;
                if self.line.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(Line::Message(std::mem::take(&mut self.line))));
            }
            let (chunk, end) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (at, true),
                None => (available.len(), false),
            };
            let consumed = chunk + usize::from(end);
            if self.skipping {
                self.reader.consume(consumed);
                self.skipping = !end;
                continue;
            }
            let mut content = chunk;
            if end && chunk > 0 && available[chunk - 1] == b'\r' {
                content -= 1;
            }
            if self.line.len() + content > self.limit {
                self.reader.consume(consumed);
                self.line = Vec::new();
                self.skipping = !end;
                return Ok(Some(Line::TooLong));
            }
            self.line.extend_from_slice(&available[..chunk]);
            self.reader.consume(consumed);
            if end {
                if self.line.last() == Some(&b'\r') {
                    self.line.pop();
                }
                return Ok(Some(Line::Message(std::mem::take(&mut self.line))));
            }
        }
    }
}

/// What a line is, as far as the transport needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A request: it gets a response.
    Request,
    /// A notification: it never gets one.
    Notification,
    /// A response (the client answering): it never gets one either.
    Response,
    /// A batch, or something that is not a message: whatever the endpoint
    /// answers is written.
    Other,
}

/// The facts of a line the transport acts on.
struct Peeked {
    kind: Kind,
    /// The request id, raw JSON.
    id: Option<String>,
    method: Option<String>,
    /// `MCP-Protocol-Version` and the mirrored headers when the message is
    /// a self-contained 2026-07-28 request.
    stateless: Option<HeaderMap>,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// A member that is present, even as `null`.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

#[derive(Deserialize)]
struct EnvelopeParams<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<HashMap<Cow<'a, str>, &'a RawValue>>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<HashMap<Cow<'a, str>, &'a RawValue>>,
}

impl Peeked {
    fn of(bytes: &[u8]) -> Peeked {
        let other = Peeked { kind: Kind::Other, id: None, method: None, stateless: None };
        let Ok(envelope) = serde_json::from_slice::<Envelope<'_>>(bytes) else { return other };
        let Some(method) = envelope.method else {
            let kind = if envelope.id.is_some() && (envelope.result.is_some() || envelope.error.is_some()) {
                Kind::Response
            } else {
                Kind::Other
            };
            return Peeked { kind, ..other };
        };
        let kind = if envelope.id.is_some() { Kind::Request } else { Kind::Notification };
        let params = envelope.params.and_then(|raw| serde_json::from_str::<EnvelopeParams<'_>>(raw.get()).ok());
        let version = params
            .as_ref()
            .and_then(|p| p.meta.as_ref())
            .and_then(|m| m.get(meta::PROTOCOL_VERSION))
            .map(|raw| serde_json::from_str::<Cow<'_, str>>(raw.get()).unwrap_or(Cow::Borrowed("")));
        let stateless = version.map(|version| {
            let mut headers = HeaderMap::new();
            let mut put = |name: HeaderName, text: &str| {
                if let Some(value) = headers::encode(text) {
                    headers.insert(name, value);
                }
            };
            put(PROTOCOL_VERSION_HEADER, &version);
            put(METHOD_HEADER, &method);
            if let Some(name) = params.as_ref().and_then(|p| p.name.as_deref()) {
                put(NAME_HEADER, name);
            }
            headers
        });
        Peeked { kind, id: envelope.id.map(|id| id.get().to_owned()), method: Some(method.into_owned()), stateless }
    }
}

/// What the transport remembers of a handshake-era conversation.
#[derive(Default)]
struct Conversation {
    session: Option<HeaderValue>,
    protocol: Option<HeaderValue>,
}

/// The state the tasks share.
struct Shared {
    endpoint: McpEndpoint,
    version: u32,
    conversation: Mutex<Conversation>,
    /// The requests running, by raw id: how to stop each (with the
    /// sequence number of its task, as ids may repeat).
    running: Mutex<HashMap<String, (u64, AbortHandle)>>,
}

impl Shared {
    fn lock_running(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, AbortHandle)>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_conversation(&self) -> std::sync::MutexGuard<'_, Conversation> {
        self.conversation.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `notifications/cancelled`: drops the named request's task.
    fn cancel(&self, bytes: &[u8]) {
        #[derive(Deserialize)]
        struct Cancelled<'a> {
            #[serde(borrow)]
            params: Params<'a>,
        }
        #[derive(Deserialize)]
        struct Params<'a> {
            #[serde(rename = "requestId", borrow)]
            request_id: &'a RawValue,
        }
        let Ok(cancelled) = serde_json::from_slice::<Cancelled<'_>>(bytes) else {
            tracing::debug!("stdio: notifications/cancelled without params.requestId");
            return;
        };
        let request = cancelled.params.request_id.get();
        let found = self.lock_running().remove(request);
        if let Some((_, abort)) = &found {
            abort.abort();
        }
        tracing::debug!(request = %rpc::logged::logged(request), cancelled = found.is_some(), "stdio: notifications/cancelled");
    }

    /// The in-process HTTP request carrying `body`.
    fn request(&self, message: &Peeked, body: Vec<u8>) -> Request<Full<Bytes>> {
        let mut headers = match &message.stateless {
            Some(mirrored) => {
                let mut headers = mirrored.clone();
                if message.method.as_deref() == Some("tools/call") {
                    self.mirror_params(&body, &mut headers);
                }
                headers
            }
            None => {
                let mut headers = HeaderMap::new();
                let conversation = self.lock_conversation();
                if let Some(session) = &conversation.session {
                    headers.insert(SESSION_HEADER, session.clone());
                }
                if let Some(protocol) = &conversation.protocol {
                    headers.insert(PROTOCOL_VERSION_HEADER, protocol.clone());
                }
                headers
            }
        };
        headers.insert(HOST, HeaderValue::from_static("localhost"));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        headers.insert(CONTENT_LENGTH, HeaderValue::from(body.len()));
        self.http_request(Method::POST, headers, Full::new(Bytes::from(body)))
    }

    fn http_request(&self, method: Method, headers: HeaderMap, body: Full<Bytes>) -> Request<Full<Bytes>> {
        let mut request = Request::new(body);
        *request.method_mut() = method;
        // `/v{n}` with n > 0 always parses as a URI.
        if let Ok(uri) = format!("/v{}", self.version).parse() {
            *request.uri_mut() = uri;
        }
        *request.headers_mut() = headers;
        request
    }

    /// The `Mcp-Param-*` headers of a 2026-07-28 `tools/call`, from its arguments.
    fn mirror_params(&self, body: &[u8], headers: &mut HeaderMap) {
        #[derive(Deserialize)]
        struct Call<'a> {
            #[serde(borrow)]
            params: EnvelopeParams<'a>,
        }
        let Ok(call) = serde_json::from_slice::<Call<'_>>(body) else { return };
        let (Some(name), Some(arguments)) = (call.params.name, call.params.arguments) else { return };
        let tools = self.endpoint.inner.tools.version(self.version);
        let Some(tool) = tools.and_then(|t| t.get(&name)) else { return };
        for param in &tool.mirrored {
            let Some(raw) = arguments.get(param.param) else { continue };
            let Ok(value) = serde_json::from_str::<serde_json::Value>(raw.get()) else { continue };
            let Some(text) = headers::render(&value) else { continue };
            let Ok(header) = HeaderName::from_bytes(format!("{PARAM_HEADER_PREFIX}{}", param.header).as_bytes()) else {
                continue;
            };
            if let Some(value) = headers::encode(&text) {
                headers.insert(header, value);
            }
        }
    }

    /// Ends the handshake-era session the conversation opened, if any.
    async fn end_session(&self) {
        let Some(session) = self.lock_conversation().session.take() else { return };
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_static("localhost"));
        headers.insert(SESSION_HEADER, session);
        let response = self.endpoint.handle(self.http_request(Method::DELETE, headers, Full::default())).await;
        tracing::debug!(status = %response.status(), "stdio: session ended");
    }
}

/// Removes a finished (or dropped) request from [`Shared::running`].
struct Running {
    shared: Arc<Shared>,
    id: String,
    sequence: u64,
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut running = self.shared.lock_running();
        if running.get(&self.id).is_some_and(|(sequence, _)| *sequence == self.sequence) {
            running.remove(&self.id);
        }
    }
}

/// One message's exchange with the endpoint.
struct Exchange {
    shared: Arc<Shared>,
    message: Peeked,
    lines: mpsc::Sender<Out>,
}

impl Exchange {
    async fn run(self, request: Request<Full<Bytes>>) {
        let response = self.shared.endpoint.handle(request).await;
        let (parts, mut body) = response.into_parts();
        let event_stream = parts
            .headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if event_stream {
            self.stream(&mut body).await;
        } else {
            self.single(parts.status, &parts.headers, &mut body).await;
        }
        // The rest of the body (its end runs the after-response listeners,
        // now that the client has the response).
        while body.frame().await.is_some() {}
    }

    /// A JSON (or empty) response: one line, or none.
    async fn single(&self, status: StatusCode, headers: &HeaderMap, body: &mut ResponseBody) {
        let expected = body.size_hint().exact();
        let mut json = Vec::new();
        while expected.is_none_or(|n| (json.len() as u64) < n) {
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        json.extend_from_slice(&data);
                    }
                }
                Some(Err(never)) => match never {},
                None => break,
            }
        }
        let Message { kind, id, method, .. } = self.message.as_parts();
        if matches!(kind, Kind::Notification | Kind::Response) {
            if !status.is_success() {
                let shown = rpc::logged::logged_bytes(&json);
                let method = method.map(rpc::logged::logged);
                tracing::warn!(%status, method = ?method, reply = %shown, "stdio: a notification or response was refused");
            }
            return;
        }
        if method == Some("initialize") && status == StatusCode::OK {
            self.remember_session(headers, &json);
        }
        let trimmed = json.trim_ascii_start();
        let line = if trimmed.starts_with(b"{\"jsonrpc\"") || trimmed.starts_with(b"[") {
            json
        } else if json.is_empty() && status.is_success() {
            return;
        } else {
            refusal(status, id, &json)
        };
        send(&self.lines, line).await;
    }

    /// An SSE response: each event's data as a line, as it arrives.
    async fn stream(&self, body: &mut ResponseBody) {
        let mut events = Events::default();
        loop {
            match body.frame().await {
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else { continue };
                    for line in events.feed(&data) {
                        if !send(&self.lines, line).await {
                            return;
                        }
                    }
                }
                Some(Err(never)) => match never {},
                None => break,
            }
        }
        if let Some(line) = events.finish() {
            send(&self.lines, line).await;
        }
    }

    /// After `initialize`: the session id and the negotiated revision go
    /// with every later message.
    fn remember_session(&self, headers: &HeaderMap, json: &[u8]) {
        #[derive(Deserialize)]
        struct Initialized<'a> {
            #[serde(borrow)]
            result: Result<'a>,
        }
        #[derive(Deserialize)]
        struct Result<'a> {
            #[serde(rename = "protocolVersion", borrow)]
            protocol_version: Cow<'a, str>,
        }
        let Some(session) = headers.get(SESSION_HEADER) else { return };
        let protocol = serde_json::from_slice::<Initialized<'_>>(json)
            .ok()
            .and_then(|i| HeaderValue::from_str(&i.result.protocol_version).ok());
        let mut conversation = self.shared.lock_conversation();
        conversation.session = Some(session.clone());
        conversation.protocol = protocol;
    }
}

/// A borrowed view of [`Peeked`].
struct Message<'a> {
    kind: Kind,
    id: Option<&'a str>,
    method: Option<&'a str>,
}

impl Peeked {
    fn as_parts(&self) -> Message<'_> {
        Message { kind: self.kind, id: self.id.as_deref(), method: self.method.as_deref() }
    }
}

/// A JSON-RPC error for a response that is not JSON-RPC (an access
/// policy's `{"error": "..."}`, an empty error status).
fn refusal(status: StatusCode, id: Option<&str>, body: &[u8]) -> Vec<u8> {
    #[derive(Deserialize)]
    struct Refused {
        error: String,
    }
    let why = serde_json::from_slice::<Refused>(body)
        .map(|r| r.error)
        .unwrap_or_else(|_| status.canonical_reason().unwrap_or("refused").to_owned());
    let error = serde_json::json!({
        "code": rpc::error::code::INVALID_REQUEST,
        "message": format!("{why} (HTTP {})", status.as_u16()),
    });
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.unwrap_or("null").as_bytes());
    out.extend_from_slice(b",\"error\":");
    out.extend_from_slice(error.to_string().as_bytes());
    out.push(b'}');
    out
}

/// Server-Sent Events parsed back into their `data`: one JSON message per event.
#[derive(Default)]
struct Events {
    /// The current (incomplete) SSE line.
    pending: Vec<u8>,
    /// The current event's data.
    data: Vec<u8>,
    has_data: bool,
}

impl Events {
    /// The events `chunk` completes.
    fn feed(&mut self, chunk: &[u8]) -> Vec<Vec<u8>> {
        let mut done = Vec::new();
        for &byte in chunk {
            if byte != b'\n' {
                self.pending.push(byte);
                continue;
            }
            let mut line = std::mem::take(&mut self.pending);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.is_empty() {
                if let Some(event) = self.dispatch() {
                    done.push(event);
                }
            } else if let Some(data) = line.strip_prefix(b"data:") {
                if self.has_data {
                    self.data.push(b' ');
                }
                self.data.extend_from_slice(data.strip_prefix(b" ").unwrap_or(data));
                self.has_data = true;
            }
            // `event:`, `id:`, `retry:` and comments (keep-alives) carry nothing to forward.
        }
        done
    }

    fn dispatch(&mut self) -> Option<Vec<u8>> {
        let data = std::mem::take(&mut self.data);
        std::mem::replace(&mut self.has_data, false).then_some(data).filter(|d| !d.trim_ascii().is_empty())
    }

    /// An event the stream ended without closing.
    fn finish(&mut self) -> Option<Vec<u8>> {
        if !self.pending.is_empty() {
            let _ = self.feed(b"\n");
        }
        self.dispatch()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_bounded() {
        let input: &[u8] = b"{\"a\":1}\r\n\n0123456789abcdef\nshort\nlast";
        let mut lines = Lines::new(input, 10);
        let mut seen = Vec::new();
        while let Some(line) = lines.next().await.unwrap() {
            seen.push(match line {
                Line::Message(m) => String::from_utf8(m).unwrap(),
                Line::TooLong => "<too long>".to_owned(),
            });
        }
        assert_eq!(seen, ["{\"a\":1}", "", "<too long>", "short", "last"]);
    }

    #[tokio::test]
    async fn ten_megabytes_without_a_line_end_are_skipped_not_held() {
        let input = vec![b'x'; 10 << 20];
        let mut lines = Lines::new(input.as_slice(), 4096);
        assert!(matches!(lines.next().await.unwrap(), Some(Line::TooLong)));
        assert!(lines.line.capacity() <= 4096, "the partial line is released");
        assert!(lines.next().await.unwrap().is_none(), "the rest is skipped up to the end of input");
    }

    #[test]
    fn events_become_lines() {
        let mut events = Events::default();
        assert!(events.feed(b"event: message\ndata: {\"a\"").is_empty());
        assert_eq!(
            events.feed(b":1}\n\n: keep-alive\n\ndata: [1,\ndata: 2]\n\n"),
            [b"{\"a\":1}".to_vec(), b"[1, 2]".to_vec()]
        );
        assert_eq!(events.feed(b"data: {}"), Vec::<Vec<u8>>::new());
        assert_eq!(events.finish(), Some(b"{}".to_vec()));
    }

    #[test]
    fn peeking() {
        let request = Peeked::of(br#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#);
        assert_eq!((request.kind, request.id.as_deref()), (Kind::Request, Some("null")));
        assert!(request.stateless.is_none());
        let note = Peeked::of(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(note.kind, Kind::Notification);
        let response = Peeked::of(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
        assert_eq!(response.kind, Kind::Response);
        assert_eq!(Peeked::of(b"[1]").kind, Kind::Other);
        assert_eq!(Peeked::of(b"not json").kind, Kind::Other);
        let modern = Peeked::of(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"caf\u00e9","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#.as_bytes(),
        );
        let headers = modern.stateless.unwrap();
        assert_eq!(headers[&PROTOCOL_VERSION_HEADER], "2026-07-28");
        assert_eq!(headers[&METHOD_HEADER], "tools/call");
        assert_eq!(headers::decode(headers[&NAME_HEADER].as_bytes()).as_deref(), Some("café"));
    }
}
