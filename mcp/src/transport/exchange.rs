//! Answering a `tools/call` in either era: the method gets a request
//! context; when the request asked for progress or log messages and the
//! client accepts SSE, the response becomes an SSE stream as soon as the
//! method reports something (a method that reports nothing still gets a
//! plain JSON response, with its HTTP status); otherwise the call is
//! answered as one message.

use std::sync::Arc;

use futures_util::future::{AbortRegistration, Abortable};
use http::StatusCode;
use rpc::{ClientView, Context, Transport};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::inflight::Registered;
use super::negotiate::Accepted;
use super::reply::{self, HttpResponse};
use super::sse::{self, Finished, Started};
use crate::call::{CallTarget, ProtocolError, call_tool};
use crate::endpoint::Inner;
use crate::notify::{NotificationSink, Wanted};
use crate::protocol::{ProtocolVersion, code};

/// One `tools/call` to answer.
pub(crate) struct ToolCall {
    /// The JSON-RPC id.
    pub id: Box<RawValue>,
    /// The tool.
    pub name: String,
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
    /// Cancellation by `notifications/cancelled` (handshake era).
    pub cancel: Option<(AbortRegistration, Registered)>,
}

/// Runs `call` and answers it; `status` maps an error code to the HTTP
/// status of a plain response.
pub(crate) async fn answer(
    inner: Arc<Inner>,
    call: ToolCall,
    accepted: Accepted,
    status: fn(i32) -> StatusCode,
) -> HttpResponse {
    let Some(single) = accepted.single() else {
        let error = ProtocolError::new(
            rpc::error::code::INVALID_REQUEST,
            "Not Acceptable: the client must accept application/json or text/event-stream",
        );
        return reply::error(StatusCode::NOT_ACCEPTABLE, Some(&call.id), &error);
    };
    let streaming = accepted.sse && call.wanted.any();
    let (context, events) = if streaming {
        let (sink, events) = NotificationSink::channel(call.wanted, inner.config.event_buffer, &call.name);
        (Context::with_sink(Transport::Mcp, call.name.clone(), call.client, sink), Some(events))
    } else {
        (Context::for_client(Transport::Mcp, call.name.clone(), call.client), None)
    };
    let future = run(
        Arc::clone(&inner),
        call.id,
        call.name,
        call.arguments,
        call.version,
        call.protocol,
        context,
        call.cancel,
        streaming,
    );
    let Some(events) = events else {
        let finished = future.await;
        return plain(&inner, single, status, finished);
    };
    match sse::start(Box::pin(future), events, inner.config.keep_alive).await {
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

#[allow(clippy::too_many_arguments)]
async fn run(
    inner: Arc<Inner>,
    id: Box<RawValue>,
    name: String,
    arguments: Map<String, Value>,
    version: u32,
    protocol: ProtocolVersion,
    context: Context,
    cancel: Option<(AbortRegistration, Registered)>,
    streaming: bool,
) -> Finished {
    let Some(tools) = inner.tools.version(version) else {
        let error = ProtocolError::new(rpc::error::code::INTERNAL_ERROR, "no tools at this version");
        let mut out = Vec::new();
        reply::write_error(&mut out, Some(&id), &error);
        return Finished { response: Some(out), executions: Vec::new(), error_code: Some(error.code) };
    };
    let target = CallTarget {
        group: &inner.group,
        version,
        protocol,
        invalid_arguments: inner.config.invalid_arguments,
        stateless_tail: &inner.stateless_tail,
    };
    let call = call_tool(&inner.executor, tools, target, &name, arguments, context);
    let outcome = match cancel {
        Some((registration, guard)) => {
            let outcome = Abortable::new(call, registration).await.ok();
            drop(guard);
            outcome
        }
        None => Some(call.await),
    };
    let Some(outcome) = outcome else {
        // Cancelled: a stream ends without a response; a JSON exchange
        // still needs a body.
        if streaming {
            return Finished { response: None, executions: Vec::new(), error_code: None };
        }
        let error = ProtocolError::new(code::REQUEST_CANCELLED, "Request cancelled");
        let mut out = Vec::new();
        reply::write_error(&mut out, Some(&id), &error);
        return Finished { response: Some(out), executions: Vec::new(), error_code: Some(error.code) };
    };
    let mut out = Vec::with_capacity(256);
    reply::write_outcome(&mut out, &id, &outcome.result);
    let error_code = outcome.result.as_ref().err().map(|e| e.code);
    let executions = match outcome.execution {
        Some(execution) if inner.executor.has_hooks() => vec![execution],
        _ => Vec::new(),
    };
    Finished { response: Some(out), executions, error_code }
}
