//! Answering a `tools/call` in either era: the method gets a request
//! context; when the request asked for progress or log messages and the
//! client accepts SSE, the response becomes an SSE stream as soon as the
//! method reports something (a method that reports nothing still gets a
//! plain JSON response, with its HTTP status); otherwise the call is
//! answered as one message.

use std::borrow::Cow;
use std::future::{Future, poll_fn};
use std::sync::Arc;
use std::task::Poll;

use futures_util::future::Abortable;
use http::StatusCode;
use rpc::i18n::Language;
use rpc::security::Identity;
use rpc::{ClientView, Context, Transport};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::negotiate::Accepted;
use super::reply::{self, HttpResponse};
use super::sse::{self, Finished, Started};
use crate::call::{CallTarget, ProtocolError, call_tool};
use crate::endpoint::Inner;
use crate::notify::{NotificationSink, Wanted};
use crate::protocol::{ProtocolVersion, code};
use crate::session::Session;

/// One `tools/call` to answer, borrowing from the request.
pub(crate) struct ToolCall<'a> {
    /// The JSON-RPC id.
    pub id: &'a RawValue,
    /// The tool.
    pub name: Cow<'a, str>,
    /// Its arguments.
    pub arguments: Map<String, Value>,
    /// The API version (from the route).
    pub version: u32,
    /// The revision the request is served at.
    pub protocol: ProtocolVersion,
    /// What the method's context tells about the client.
    pub client: ClientView,
    /// What the request asked to be told.
    pub wanted: Wanted,
    /// The session whose `notifications/cancelled` may stop the call
    /// (handshake era).
    pub session: Option<Arc<Session>>,
    /// Who is calling (from the endpoint's access policy).
    pub identity: Option<Arc<Identity>>,
    /// The size of the request's `params` in bytes.
    pub input_bytes: usize,
    /// The language of the request (the server's identity in 2026-07-28 results).
    pub language: Language,
}

/// What [`run`] needs of a [`ToolCall`] (owned when the call outlives the
/// request, on a stream): the call and where its events go, if anywhere.
struct Run<'a> {
    id: Cow<'a, RawValue>,
    name: Cow<'a, str>,
    arguments: Map<String, Value>,
    version: u32,
    protocol: ProtocolVersion,
    client: ClientView,
    sink: Option<Arc<NotificationSink>>,
    session: Option<Arc<Session>>,
    identity: Option<Arc<Identity>>,
    input_bytes: usize,
    language: Language,
}

/// Runs `call` and answers it; `status` maps an error code to the HTTP
/// status of a plain response.
pub(crate) async fn answer(
    inner: Arc<Inner>,
    call: ToolCall<'_>,
    accepted: Accepted,
    status: fn(i32) -> StatusCode,
) -> HttpResponse {
    let Some(single) = accepted.single() else {
        let error = ProtocolError::new(
            rpc::error::code::INVALID_REQUEST,
            "Not Acceptable: the client must accept application/json or text/event-stream",
        );
        return reply::error(StatusCode::NOT_ACCEPTABLE, Some(call.id), &error);
    };
    let ToolCall { id, name, arguments, version, protocol, client, wanted, session, identity, input_bytes, language } =
        call;
    if !(accepted.sse && wanted.any()) {
        let id = Cow::Borrowed(id);
        let run_call = Run {
            id,
            name,
            arguments,
            version,
            protocol,
            client,
            sink: None,
            session,
            identity,
            input_bytes,
            language,
        };
        let finished = run(Arc::clone(&inner), run_call).await;
        return plain(&inner, single, status, finished);
    }
    let (sink, events) = NotificationSink::channel(wanted, inner.config.event_buffer, &name);
    let (id, name) = (Cow::Owned(id.to_owned()), Cow::Owned(name.into_owned()));
    let run_call = Run {
        id,
        name,
        arguments,
        version,
        protocol,
        client,
        sink: Some(sink),
        session,
        identity,
        input_bytes,
        language,
    };
    // Boxed: the stream's body owns the call once it outlives this function.
    let future: sse::CallFuture = Box::pin(run(Arc::clone(&inner), run_call));
    match sse::start(future, events, inner.config.keep_alive).await {
        Started::Finished { finished, events } if events.is_empty() => plain(&inner, single, status, finished),
        Started::Finished { finished, events } => {
            sse::response(sse::finished_body(events, finished, inner.executor.clone()))
        }
        Started::Streaming { call, events, first } => {
            let body = sse::call_body(call, events, first, inner.executor.clone(), inner.config.keep_alive);
            sse::response(body)
        }
    }
}

fn plain(
    inner: &Inner,
    mode: super::negotiate::ResponseMode,
    status: fn(i32) -> StatusCode,
    finished: Finished,
) -> HttpResponse {
    let Finished { response, executions, error_code } = finished;
    let status = error_code.map_or(StatusCode::OK, status);
    reply::message(inner, mode, status, response.unwrap_or_default(), executions)
}

fn error_finished(id: &RawValue, error: &ProtocolError) -> Finished {
    let mut out = Vec::new();
    reply::write_error(&mut out, Some(id), error);
    Finished { response: Some(out), executions: Vec::new(), error_code: Some(error.code) }
}

/// Runs the call. A call of a session that does not finish at its first
/// poll is registered for `notifications/cancelled` (a synchronous method,
/// the common case, never is: it cannot be cancelled anyway).
async fn run(inner: Arc<Inner>, call: Run<'_>) -> Finished {
    let Run { id, name, arguments, version, protocol, client, sink, session, identity, input_bytes, language } = call;
    let streaming = sink.is_some();
    let Some(tools) = inner.tools.version(version) else {
        return error_finished(&id, &ProtocolError::new(rpc::error::code::INTERNAL_ERROR, "no tools at this version"));
    };
    let target = CallTarget {
        group: &inner.group,
        version,
        protocol,
        invalid_arguments: inner.config.invalid_arguments,
        stateless_tail: &inner.texts(language).stateless_tail,
        input_bytes,
    };
    let tool = tools.get(&name);
    // The context names the method by its registered (static) name; an
    // unknown tool gets no context (its call fails at the lookup).
    let method = tool.map(|t| t.method.name()).unwrap_or_default();
    let context = match sink {
        Some(sink) => Context::with_sink(Transport::Mcp, method, client, sink),
        None => Context::for_client(Transport::Mcp, method, client),
    }
    .with_identity(identity);
    let mut call = std::pin::pin!(call_tool(&inner.executor, tool, target, &name, arguments, context));
    let outcome = match poll_fn(|cx| Poll::Ready(call.as_mut().poll(cx))).await {
        Poll::Ready(outcome) => Some(outcome),
        Poll::Pending => match &session {
            None => Some(call.await),
            Some(session) => {
                let (registration, _registered) = inner.inflight.register(&session.id, id.get());
                Abortable::new(call, registration).await.ok()
            }
        },
    };
    let Some(outcome) = outcome else {
        // Cancelled: a stream ends without a response; a JSON exchange
        // still needs a body.
        if streaming {
            return Finished { response: None, executions: Vec::new(), error_code: None };
        }
        return error_finished(&id, &ProtocolError::new(code::REQUEST_CANCELLED, "Request cancelled"));
    };
    let mut out = Vec::with_capacity(256);
    reply::write_outcome(&mut out, &id, &outcome.result);
    let error_code = outcome.result.as_ref().err().map(|e| e.code);
    let executions = match outcome.execution {
        Some(execution) if execution.wants_response_sent() => vec![execution],
        _ => Vec::new(),
    };
    Finished { response: Some(out), executions, error_code }
}
