//! Answering a `tools/call`, the same in both eras and on every transport:
//! the method gets a request context; when the request asked for progress
//! or log messages and the client takes a stream, the reply becomes a
//! stream as soon as the method reports something (a method that reports
//! nothing still gets one message, with its status); otherwise the call is
//! answered as one message. A 2025-03-26 batch runs its calls through
//! [`run`] too, without a stream.

use std::borrow::Cow;
use std::future::{Future, poll_fn};
use std::sync::Arc;
use std::task::Poll;

use futures_util::future::Abortable;
use rpc::ask::ClientAsker;
use rpc::i18n::Language;
use rpc::{ClientView, Context, Identity, Transport};
use serde_json::value::RawValue;

use super::askers::{Round, StreamAsker};
use super::incoming::Accepts;
use super::reply::{Reply, Status, write_error};
use super::state::Inner;
use super::stream::{self, CallFuture, Finished, Started};
use crate::call::{Arguments, CallTarget, ProtocolError, call_tool};
use crate::notify::{NotificationSink, Wanted};
use crate::protocol::{ProtocolVersion, code};
use crate::tools::Tool;

/// One `tools/call` to answer, borrowing from the request.
pub(crate) struct ToolCall<'a> {
    /// The JSON-RPC id.
    pub id: Cow<'a, RawValue>,
    /// The tool.
    pub name: Cow<'a, str>,
    /// Its arguments.
    pub arguments: Arguments<'a>,
    /// The API version served.
    pub version: u32,
    /// The revision the request is served at.
    pub protocol: ProtocolVersion,
    /// What the method's context tells about the client.
    pub client: ClientView,
    /// What the request asked to be told.
    pub wanted: Wanted,
    /// Where `notifications/cancelled` find the call (a session, a stdio
    /// conversation); `None`: only dropping the reply cancels it.
    pub cancel_scope: Option<Cow<'a, str>>,
    /// Whether a cancelled call gets no reply at all (a transport with one
    /// conversation: stdio), rather than a cancellation error.
    pub silent_cancel: bool,
    /// Who is calling (from the transport's access policy).
    pub identity: Option<Arc<Identity>>,
    /// The client's address (rate limits count by it without an identity).
    pub peer: Option<std::net::IpAddr>,
    /// The size of the request's `params` in bytes.
    pub input_bytes: usize,
    /// The language of the request (the server's identity in 2026-07-28 results).
    pub language: Language,
    /// The session or connection whose client answers the call's questions
    /// on its response stream (handshake era, stdio).
    pub conversation: Option<Cow<'a, str>>,
    /// The input-required round of a 2026-07-28 call.
    pub round: Option<Round>,
    /// How the call asks its client, when neither its round nor its stream
    /// decides (a task).
    pub asker: Option<Arc<dyn ClientAsker>>,
    /// The call runs as a task (or may become one).
    pub task: bool,
    /// The tool, when the caller looked it up already (`None`: [`run`]
    /// looks it up).
    pub tool: Option<&'a Tool>,
}

/// Runs `call` and answers it; `status` gives the outcome class of an error.
pub(crate) async fn answer<'a>(
    inner: &'a Arc<Inner>,
    call: &mut ToolCall<'a>,
    accepts: Accepts,
    status: fn(i32) -> Status,
) -> Reply {
    if !accepts.any() {
        let error = ProtocolError::new(
            rpc::error::code::INVALID_REQUEST,
            "Not Acceptable: the client must accept application/json or text/event-stream",
        );
        return Reply::error(Status::NotAcceptable, Some(&call.id), &error);
    }
    let silent_cancel = call.silent_cancel;
    // A tool that takes a context may ask its client, on a stream. (Found
    // once: `run` takes it from the call.)
    if call.conversation.is_some() && call.tool.is_none() {
        call.tool = inner.tools.version(call.version).and_then(|t| t.get(&call.name));
    }
    let may_ask = call.conversation.is_some() && call.tool.is_some_and(|t| t.takes_context);
    if !(accepts.stream && (call.wanted.any() || may_ask)) {
        let finished = run(inner, call, None).await;
        return plain(status, finished, silent_cancel);
    }
    let mut call = call.take_owned();
    let wanted = std::mem::take(&mut call.wanted);
    let (sink, events) = NotificationSink::channel(wanted, inner.config.event_buffer, &call.name);
    // Boxed: the stream owns the call once it outlives this function.
    let future: CallFuture = rpc::future::in_box(|| run_owned(Arc::clone(inner), call, Some(sink)));
    match stream::start(future, events, inner.config.keep_alive).await {
        Started::Finished { finished, events } if events.is_empty() => plain(status, finished, silent_cancel),
        Started::Finished { finished, events } => {
            Reply::Stream(stream::finished_stream(events, finished, inner.executor.clone()))
        }
        Started::Streaming { call, events, first } => {
            Reply::Stream(stream::call_stream(call, events, first, inner.executor.clone(), inner.config.keep_alive))
        }
    }
}

impl ToolCall<'_> {
    /// The call for a stream or task that outlives the request: what it
    /// borrows copied, what it owns taken (the call left behind is spent).
    pub(crate) fn take_owned(&mut self) -> ToolCall<'static> {
        ToolCall {
            id: Cow::Owned(self.id.clone().into_owned()),
            name: Cow::Owned(self.name.clone().into_owned()),
            cancel_scope: self.cancel_scope.as_deref().map(|s| Cow::Owned(s.to_owned())),
            arguments: std::mem::take(&mut self.arguments).into_owned(),
            version: self.version,
            protocol: self.protocol,
            client: std::mem::take(&mut self.client),
            wanted: std::mem::take(&mut self.wanted),
            silent_cancel: self.silent_cancel,
            identity: self.identity.take(),
            peer: self.peer,
            input_bytes: self.input_bytes,
            language: self.language,
            conversation: self.conversation.as_deref().map(|c| Cow::Owned(c.to_owned())),
            round: self.round.take(),
            asker: self.asker.take(),
            task: self.task,
            tool: None,
        }
    }
}

pub(crate) fn plain(status: fn(i32) -> Status, finished: Finished, silent_cancel: bool) -> Reply {
    let Finished { response, executions, error_code, needs_scopes, retry_after } = finished;
    match response {
        Some(body) if needs_scopes.is_some() => {
            Reply::message(Status::Forbidden, body, executions).needing_scopes(needs_scopes)
        }
        Some(body) if let Some(seconds) = retry_after => {
            Reply::message(Status::TooManyRequests, body, executions).retry_after(seconds)
        }
        Some(body) => Reply::message(error_code.map_or(Status::Ok, status), body, executions),
        None if silent_cancel => Reply::Accepted,
        // Only a stream ends without a response: unreachable for one message.
        None => Reply::Accepted,
    }
}

fn error_finished(id: &RawValue, error: &ProtocolError) -> Finished {
    let mut out = Vec::new();
    write_error(&mut out, Some(id), error);
    Finished {
        response: Some(out),
        executions: Vec::new(),
        error_code: Some(error.code),
        needs_scopes: None,
        retry_after: None,
    }
}

/// [`run`] owning its call and the server, for a future that outlives the
/// request (a stream, a task).
pub(crate) async fn run_owned(
    inner: Arc<Inner>,
    mut call: ToolCall<'static>,
    sink: Option<Arc<NotificationSink>>,
) -> Finished {
    run(&inner, &mut call, sink).await
}

/// Runs the call. A call with a cancel scope that does not finish at its
/// first poll is registered for `notifications/cancelled` (a synchronous
/// method, the common case, never is: it cannot be cancelled anyway).
/// The call is borrowed, not moved into the future (it is hundreds of
/// bytes); what the method's context takes (arguments, client, identity,
/// asker) is taken out of it.
pub(crate) async fn run(inner: &Arc<Inner>, call: &mut ToolCall<'_>, sink: Option<Arc<NotificationSink>>) -> Finished {
    let arguments = std::mem::take(&mut call.arguments);
    let client = std::mem::take(&mut call.client);
    let identity = call.identity.take();
    let asker = call.asker.take();
    let (id, name, cancel_scope, conversation, round) =
        (&*call.id, &*call.name, call.cancel_scope.as_deref(), call.conversation.as_deref(), call.round.as_ref());
    let (version, protocol, silent_cancel, language) = (call.version, call.protocol, call.silent_cancel, call.language);
    let streaming = sink.is_some();
    let tool = match call.tool {
        Some(tool) => Some(tool),
        None => match inner.tools.version(version) {
            Some(tools) => tools.get(name),
            None => {
                let error = ProtocolError::new(rpc::error::code::INTERNAL_ERROR, "no tools at this version");
                return error_finished(id, &error);
            }
        },
    };
    let target = CallTarget {
        group: &inner.group,
        version,
        protocol,
        invalid_arguments: inner.config.invalid_arguments,
        stateless_tail: &inner.texts(language).stateless_tail,
        input_bytes: call.input_bytes,
        task: call.task,
        peer: call.peer,
        // A result is written inside its response (see below).
        envelope: Some(id),
    };
    // The context names the method by its registered (static) name; an
    // unknown tool gets no context (its call fails at the lookup).
    let method = tool.map(|t| t.method.name()).unwrap_or_default();
    let asker: Option<Arc<dyn ClientAsker>> = match (round, &sink, conversation) {
        _ if asker.is_some() => asker,
        (Some(round), _, _) => Some(round.asker.clone()),
        (None, Some(sink), Some(conversation)) => Some(Arc::new(StreamAsker {
            sink: Arc::clone(sink),
            pending: Arc::clone(&inner.pending),
            conversation: conversation.to_owned(),
            timeout: inner.config.ask_timeout,
        })),
        _ => None,
    };
    let mut context = match sink {
        Some(sink) => Context::with_sink(Transport::Mcp, method, client, sink),
        None => Context::for_client(Transport::Mcp, method, client),
    }
    .with_identity(identity);
    if let Some(asker) = asker {
        context = context.with_asker(asker);
    }
    let mut call = std::pin::pin!(call_tool(&inner.executor, tool, target, name, arguments, context));
    let outcome = match poll_fn(|cx| Poll::Ready(call.as_mut().poll(cx))).await {
        Poll::Ready(outcome) => Some(outcome),
        Poll::Pending => match cancel_scope {
            None => Some(call.await),
            Some(scope) => {
                let (registration, _registered) = inner.inflight.register(scope, id.get());
                Abortable::new(call, registration).await.ok()
            }
        },
    };
    let Some(outcome) = outcome else {
        // Cancelled: a stream ends without a response, and so does a
        // conversation that asked for no answer; an HTTP exchange still
        // needs a body.
        if streaming || silent_cancel {
            return Finished {
                response: None,
                executions: Vec::new(),
                error_code: None,
                needs_scopes: None,
                retry_after: None,
            };
        }
        return error_finished(id, &ProtocolError::new(code::REQUEST_CANCELLED, "Request cancelled"));
    };
    // Questions without answers: the call asks for input, whatever it returned.
    let asked = round.as_ref().and_then(|round| {
        let meta = crate::tools::server_info_meta(&inner.texts(language).server_info);
        round.input_required(&inner.config, &meta)
    });
    let (out, error_code) = match (asked, outcome.result) {
        (Some(mut body), _) => {
            body.push(b'}');
            (rpc::jsonrpc::response::result_body(id, &body), None)
        }
        // Written in its response already (the target's envelope).
        (None, Ok(response)) => (response, None),
        (None, Err(error)) => {
            let mut out = Vec::new();
            write_error(&mut out, Some(id), &error);
            (out, Some(error.code))
        }
    };
    let needs_scopes = match &outcome.execution {
        Some(execution) if execution.stage == rpc::Stage::Access => {
            execution.method.as_ref().map(|m| m.descriptor().scopes)
        }
        _ => None,
    };
    let retry_after = outcome.execution.as_ref().and_then(rpc::Execution::retry_after);
    let executions = match outcome.execution {
        Some(execution) if execution.wants_response_sent() => vec![execution],
        _ => Vec::new(),
    };
    Finished { response: Some(out), executions, error_code, needs_scopes, retry_after }
}
