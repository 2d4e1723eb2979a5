//! The stdio transport: newline-delimited JSON-RPC on a byte stream (the
//! process's stdin and stdout), both protocol eras.
//!
//! Each line is one message for the same [`McpServer`] Streamable HTTP
//! uses: the same executor runs the tools, with the same validation,
//! limits, sessions and listeners. No HTTP request is built: the transport
//! parses the line and hands the server the message with what it
//! remembers of the conversation. What the transport adds:
//!
//! * **The conversation.** Once `initialize` was answered, the session it
//!   opened and the negotiated revision go with every later handshake-era
//!   message. A message whose `params._meta` names a protocol version (a
//!   2026-07-28 client, starting with its `server/discover` probe) is
//!   self-contained and served as such, whatever was opened before. Which
//!   era a client speaks is decided per message, as on HTTP; the
//!   2026-07-28 header checks are HTTP's and do not apply here.
//! * **Replies as lines.** One message is one line; a stream (a call
//!   reporting progress or log messages) is one line per message, written
//!   as they come, but for progress: a progress notification goes out only
//!   once the call has gone on for 50 ms after it ([`Stdio::progress_hold`]),
//!   the latest value then, and none once the response is ready; the
//!   message after a progress notification written waits until 50 ms have
//!   passed since it (a client reading both at once can lose the race
//!   between them: see `progress.rs`). Nothing else is ever written
//!   (keep-alives are dropped). Lines never contain a raw newline and never
//!   interleave (one writer). The answers to the lines of one read come out
//!   in the order the lines were read; a call still running when the next
//!   lines are read answers when it is done.
//! * **The session's own stream.** Once `initialize` opened a session, what
//!   HTTP sends on a session's `GET` stream is written as lines too: a
//!   `notifications/resources/updated` for each resource it subscribed to
//!   (`resources/subscribe`) that changes, when the server has a change hub
//!   ([`McpServer::sends_on_its_own`]). 2026-07-28 clients ask for theirs
//!   with `subscriptions/listen`, a request whose stream is written as any
//!   other. At the end of input these streams end at once (a listen stream
//!   with its last message), without waiting out [`Stdio::grace`].
//! * **Notifications get no answer.** A notification (or a response sent by
//!   the client) never gets a line back, even when it is refused; the
//!   refusal is logged (`tracing`, which a stdio server must send to stderr).
//! * **Concurrency and cancellation.** A message is first handled where it
//!   is read: most (a cached or synchronous call, a list, a ping) are done
//!   then, and cost no task of their own. One that waits (a call doing
//!   I/O, a stream, a question to the client) goes on in a task of its own
//!   while the next lines are read, so a client can send
//!   `notifications/cancelled` while a call runs: the server stops the
//!   call, in either era, and no response is written for it. At most
//!   [`Stdio::max_in_flight`] messages run at once; beyond that the
//!   transport waits before reading more (a cancellation is always read).
//!   As on an HTTP connection, a synchronous method that computes for long
//!   holds up the lines after it: make such a method `async` and move the
//!   work off the runtime (`tokio::task::spawn_blocking`).
//! * **Backpressure.** The answers to the lines of one read go to the
//!   writer together. The writer's queue is bounded (64 entries of at most
//!   64 KB plus one answer): a client that does not read its answers stops
//!   the transport's reading, not its memory.
//! * **Bounded input.** A line longer than the server's message limit is
//!   answered with a `-32600` error (id `null`) and the rest of it is skipped
//!   as it arrives, never buffered. Blank lines are ignored; a line that is
//!   not JSON gets `-32700`.
//! * **End of input.** At EOF the transport stops reading, lets the calls in
//!   flight finish (for at most [`Stdio::grace`]; then they are dropped),
//!   ends the session it opened and its stream, flushes and returns.
//!
//! There is no token check and no host check: a client that can start the
//! process has its access already.
//!
//! ```no_run
//! # async fn run(endpoint: mcp::McpEndpoint) -> std::io::Result<()> {
//! // Serve API version 1 of the endpoint's group on this process's stdin/stdout.
//! mcp::stdio::serve(endpoint.server(), 1, tokio::io::stdin(), tokio::io::stdout()).await
//! # }
//! ```

mod lines;
mod progress;
mod updates;

use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::task::Poll;
use std::time::Duration;

use rpc::jsonrpc::envelope::{Body, Message};
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Semaphore, mpsc, watch};
use tokio::task::JoinSet;

use crate::server::{Caller, Incoming, McpServer, ReadParams, Reply, Status};
use lines::{Batch, Line, Lines, Out, send, write_lines};
use updates::SessionUpdates;

/// Serves API `version` of `server`'s group on `input`/`output` with the
/// default settings of [`Stdio`], until `input` ends.
///
/// Errors: `InvalidInput` when the group has no tools at `version`; a read
/// error of `input` or a write error of `output` (the client went away).
pub async fn serve<R, W>(server: impl Into<McpServer>, version: u32, input: R, output: W) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    Stdio::new(server, version).serve(input, output).await
}

/// The stdio transport of one server and API version, with its settings;
/// [`serve`](Stdio::serve) runs it.
#[derive(Debug, Clone)]
pub struct Stdio {
    server: McpServer,
    version: u32,
    max_in_flight: usize,
    grace: Duration,
    progress_hold: Duration,
}

/// Entries (a message, or the answers of one read) queued for the writer
/// before the reading loop and the tasks wait.
const WRITE_QUEUE: usize = 64;

/// What the transport remembers of a handshake-era conversation.
#[derive(Default)]
struct Conversation {
    session: Option<Arc<str>>,
    protocol: Option<Arc<str>>,
}

/// What every message's task shares.
struct Shared {
    server: McpServer,
    version: u32,
    /// The scope `notifications/cancelled` of this client find its calls in.
    scope: String,
    conversation: Mutex<Conversation>,
    lines: mpsc::Sender<Out>,
    /// [`Stdio::progress_hold`].
    progress_hold: Duration,
    /// The stream of the session `initialize` opened, written as lines.
    updates: Mutex<Option<SessionUpdates>>,
    /// Set at the end of input: the `subscriptions/listen` streams end (with
    /// their last message) instead of waiting out the grace period.
    ending: watch::Sender<bool>,
    ended: watch::Receiver<bool>,
}

impl Stdio {
    /// The transport of API `version` (the `/v{version}` of Streamable HTTP).
    pub fn new(server: impl Into<McpServer>, version: u32) -> Self {
        Stdio {
            server: server.into(),
            version,
            max_in_flight: 64,
            grace: Duration::from_secs(5),
            progress_hold: progress::HOLD,
        }
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

    /// How long a progress notification waits before it is written, while
    /// the call still runs (default 50 ms; see the module documentation).
    /// `Duration::ZERO` writes it at the next turn, unless the call's next
    /// message is ready already: a progress notification the response
    /// overtakes is never written.
    pub fn progress_hold(mut self, hold: Duration) -> Self {
        self.progress_hold = hold;
        self
    }

    /// Reads messages from `input` and writes replies to `output` until
    /// `input` ends (see the [module](self) documentation).
    ///
    /// Errors: `InvalidInput` when the group has no tools at this version; a
    /// read error of `input` or a write error of `output`.
    pub async fn serve<R, W>(self, input: R, output: W) -> io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        if self.server.tools(self.version).is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("group `{}` has no MCP tools at version {}", self.server.group(), self.version),
            ));
        }
        let limit = self.server.max_message_bytes();
        let (lines_out, queue) = mpsc::channel(WRITE_QUEUE);
        let server = self.server.clone();
        let mut writer = tokio::spawn(write_lines(output, queue, move |executions| server.sent(executions)));
        let (ending, ended) = watch::channel(false);
        static CONVERSATIONS: AtomicU64 = AtomicU64::new(1);
        let shared = Arc::new(Shared {
            server: self.server.clone(),
            version: self.version,
            scope: format!("stdio-{}", CONVERSATIONS.fetch_add(1, Ordering::Relaxed)),
            conversation: Mutex::default(),
            lines: lines_out,
            progress_hold: self.progress_hold,
            updates: Mutex::default(),
            ending,
            ended,
        });
        let permits = Arc::new(Semaphore::new(self.max_in_flight));
        let mut tasks = JoinSet::new();
        let mut lines = Lines::new(input, limit);
        // The answers of the messages done at once, until the next read.
        let mut batch = Batch::default();
        let mut spare = None;
        let read: io::Result<()> = loop {
            while let Some(done) = tasks.try_join_next() {
                report(done);
            }
            if (batch.is_full() || !lines.has_line()) && !batch.flush(&shared.lines).await {
                break Ok(());
            }
            // Lines first: a ready line is read without polling the writer
            // (a writer gone is found by the next flush, or here once no
            // line is waiting), and without `select!`'s random draw.
            let line = tokio::select! {
                biased;
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
                    batch.push(Out::new(error.into_bytes(), Vec::new()));
                    continue;
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            };
            if bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if is_cancellation(&bytes) {
                // Handled at once, whatever else runs: it stops a call. (A
                // notification: it has no answer.)
                if let Some(answer) = shared.exchange(&bytes).await {
                    batch.push(answer);
                }
                continue;
            }
            let permit = match Arc::clone(&permits).try_acquire_owned() {
                Ok(permit) => permit,
                Err(_) => {
                    // The answers gathered go out before the wait.
                    if !batch.flush(&shared.lines).await {
                        break Ok(());
                    }
                    let permit = tokio::select! {
                        permit = Arc::clone(&permits).acquire_owned() => permit,
                        written = &mut writer => return flatten(written),
                    };
                    let Ok(permit) = permit else { break Ok(()) };
                    permit
                }
            };
            let exchanging = Arc::clone(&shared);
            let make = move || async move {
                let _permit = permit;
                exchanging.exchange(&bytes).await
            };
            // Boxed: the task then holds a pointer, not the whole exchange
            // (kilobytes), which tokio would move at every stage of the
            // task. The box of the last message done here is used again.
            let mut exchange = match spare.take() {
                Some(mut slot) => {
                    Pin::set(&mut slot, rpc::future::outlined(make()));
                    slot
                }
                None => rpc::future::in_box(make),
            };
            // Most messages (a cached or synchronous call, a list) are done
            // at the first poll: run here, they cost no task, no hand-over
            // to a worker thread and no wake-up, and their answers go to the
            // writer together. One that waits (a call doing I/O, a stream)
            // goes on as a task of its own, with the permit it took, so the
            // next lines are read.
            match poll_once(exchange.as_mut()).await {
                Ok(Poll::Ready(answer)) => {
                    if let Some(answer) = answer {
                        batch.push(answer);
                    }
                    spare = Some(exchange);
                }
                Ok(Poll::Pending) => {
                    // The answers to the lines before it go out first: the
                    // task may write as soon as it runs.
                    if !batch.flush(&shared.lines).await {
                        break Ok(());
                    }
                    let lines = shared.lines.clone();
                    tasks.spawn(async move {
                        if let Some(answer) = exchange.await {
                            send(&lines, answer).await;
                        }
                    });
                }
                Err(panic) => tracing::error!("stdio: a message's handling panicked: {}", panic_text(&*panic)),
            }
        };
        // A writer gone by now has its error to tell.
        batch.flush(&shared.lines).await;
        let _ = shared.ending.send(true);
        shared.close_updates().await;
        match tokio::time::timeout(self.grace, drain(&mut tasks)).await {
            Ok(()) => {}
            Err(_) => {
                tracing::warn!(calls = tasks.len(), grace = ?self.grace, "stdio: input ended; dropping the calls still running");
                tasks.abort_all();
                drain(&mut tasks).await;
            }
        }
        shared.end_session().await;
        drop(shared);
        let written = flatten(writer.await);
        read.and(written)
    }
}

/// Whether a line is `notifications/cancelled` (read without building it;
/// a line that does not hold the method's name is not read at all: one
/// written with escapes inside the name is handled in turn, as any other
/// notification).
fn is_cancellation(bytes: &[u8]) -> bool {
    // Built once: a searcher's set-up costs more than searching a line.
    static NAME: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b"notifications/cancelled"));
    if NAME.find(bytes).is_none() {
        return false;
    }
    #[derive(Deserialize)]
    struct Probe<'a> {
        #[serde(borrow, default)]
        method: Option<&'a str>,
        #[serde(default)]
        id: Option<serde::de::IgnoredAny>,
    }
    matches!(
        serde_json::from_slice::<Probe<'_>>(bytes),
        Ok(Probe { method: Some("notifications/cancelled"), id: None })
    )
}

impl Shared {
    fn lock_conversation(&self) -> std::sync::MutexGuard<'_, Conversation> {
        self.conversation.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One message to the server. Its answer is returned (to be written in
    /// turn); a stream's messages are queued for the writer as they come.
    /// `None` when there is nothing (more) to write.
    async fn exchange(&self, bytes: &[u8]) -> Option<Out> {
        let body = match self.server.parse(bytes) {
            Ok(body) => body,
            Err(error) => {
                let mut line = Vec::with_capacity(128);
                let env = self.server.inner.executor.environment();
                crate::server::write_error_body(&mut line, None, &crate::call::ProtocolError::from_rpc(&error, env));
                return Some(Out::new(line, Vec::new()));
            }
        };
        // A notification or a client's response never gets a line back.
        // (The method's name is kept for the log of a refused notification.)
        let (silent, method) = match &body {
            Body::Single(Ok(Message::Request(request))) if request.id.is_none() => {
                (true, Some(request.method.to_string()))
            }
            Body::Single(Ok(Message::Response { .. })) => (true, None),
            _ => (false, None),
        };
        let (session, protocol) = {
            let conversation = self.lock_conversation();
            (conversation.session.clone(), conversation.protocol.clone())
        };
        let mut incoming = Incoming::new(body, self.version, Caller::default());
        incoming.session = session.as_deref();
        incoming.protocol = protocol.as_deref();
        incoming.remembered = true;
        incoming.cancel_scope = Some(&self.scope);
        incoming.closing = Some(&self.ended);
        match self.server.handle(&incoming).await {
            Reply::Accepted => None,
            Reply::Message(message) if silent => {
                if message.status != Status::Ok {
                    let shown = rpc::logged::logged_bytes(&message.body);
                    let method = method.as_deref().map(rpc::logged::logged);
                    tracing::warn!(status = ?message.status, method = ?method, reply = %shown, "stdio: a notification or response was refused");
                }
                None
            }
            Reply::Message(message) => {
                if message.session.is_some() {
                    self.remember(message.session.clone(), &message.body);
                    self.open_updates().await;
                }
                Some(Out::new(message.body, message.executions))
            }
            Reply::Stream(stream) => {
                // Nothing goes out while the reading loop polls this the
                // first time: it hands the answers gathered before this
                // line to the writer first (see `serve`), so that lines come
                // out in the order they were read.
                tokio::task::yield_now().await;
                progress::forward(stream, &self.lines, self.progress_hold).await;
                None
            }
        }
    }

    /// After `initialize`: the session and the negotiated revision go with
    /// every later handshake-era message.
    fn remember(&self, session: Option<String>, response: &[u8]) {
        #[derive(Deserialize)]
        struct Initialized {
            result: InitializeResult,
        }
        #[derive(Deserialize)]
        struct InitializeResult {
            #[serde(rename = "protocolVersion")]
            protocol_version: String,
        }
        let protocol = serde_json::from_slice::<Initialized>(response).ok().map(|i| i.result.protocol_version);
        let mut conversation = self.lock_conversation();
        conversation.session = session.map(Arc::from);
        conversation.protocol = protocol.map(Arc::from);
    }

    /// Opens the stream of the session just remembered (ending the one of
    /// a session opened before, if any).
    async fn open_updates(&self) {
        let (session, protocol) = {
            let conversation = self.lock_conversation();
            (conversation.session.clone(), conversation.protocol.clone())
        };
        let Some(session) = session else { return };
        let opened = SessionUpdates::open(&self.server, self.version, session, protocol, self.lines.clone());
        let before = std::mem::replace(&mut *self.updates.lock().unwrap_or_else(PoisonError::into_inner), opened);
        if let Some(before) = before {
            before.close().await;
        }
    }

    /// Ends the session's stream, if one is open.
    async fn close_updates(&self) {
        let open = self.updates.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(open) = open {
            open.close().await;
        }
    }

    /// Ends the handshake-era session the conversation opened, if any.
    async fn end_session(&self) {
        let Some(session) = self.lock_conversation().session.take() else { return };
        let mut incoming =
            Incoming::new(Body::<'_, ReadParams<'_>>::Batch(Vec::new()), self.version, Caller::default());
        incoming.session = Some(&session);
        let reply = self.server.end_session(incoming).await;
        tracing::debug!(?reply, "stdio: session ended");
    }
}

/// Polls `future` once, catching a panic as a task would.
async fn poll_once<F: Future + ?Sized>(mut future: Pin<&mut F>) -> std::thread::Result<Poll<F::Output>> {
    std::future::poll_fn(|cx| Poll::Ready(catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))))).await
}

/// What a panic said, when it said it with a string.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancellations_are_told_apart() {
        assert!(is_cancellation(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#));
        assert!(!is_cancellation(br#"{"jsonrpc":"2.0","id":1,"method":"notifications/cancelled"}"#));
        assert!(!is_cancellation(br#"{"jsonrpc":"2.0","method":"tools/call"}"#));
        assert!(!is_cancellation(b"not json"));
        // The name inside a call's arguments is not the method.
        assert!(!is_cancellation(
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"q":"notifications/cancelled"}}}"#
        ));
        assert!(is_cancellation(br#"{"params":{"requestId":"a"},"method":"notifications/cancelled","jsonrpc":"2.0"}"#));
    }
}
