//! Streamable HTTP, handshake era (2024-11-05 to 2025-11-25).
//!
//! * `initialize` negotiates the revision and mints `Mcp-Session-Id`; later
//!   requests must carry it (400 without, 404 when unknown or expired).
//! * A POST carries one JSON-RPC message (a batch under 2025-03-26).
//!   Requests get `application/json`, or `text/event-stream` when the client
//!   accepts only SSE, or when a `tools/call` reports progress or logs (it
//!   asked with `_meta.progressToken`, or set a level with
//!   `logging/setLevel`); notifications and responses get 202.
//! * `notifications/cancelled` stops a call of the same session.
//! * `DELETE` ends the session; `GET` (a server-to-client stream) gets 405.

use std::borrow::Cow;
use std::sync::Arc;

use futures_util::future::join_all;
use http::{HeaderMap, HeaderValue, StatusCode};
use rpc::i18n::Language;
use rpc::jsonrpc::envelope::{self, Message, Request as RpcRequest};
use rpc::jsonrpc::response::join_batch;
use rpc::server::body::status_response;
use rpc::{Context, Execution, LogLevel, RpcError, Transport};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::Caller;
use super::exchange::{self, ToolCall};
use super::negotiate::{Accepted, accepted};
use super::reply::{self, HttpResponse};
use crate::call::{CallTarget, ProtocolError, call_tool};
use crate::endpoint::{Inner, McpEndpoint};
use crate::notify::Wanted;
use crate::protocol::{PROTOCOL_VERSION_HEADER, ProtocolVersion, SESSION_HEADER, code};
use crate::session::KnownCapabilities;
use crate::session::{ClientInfo, Session, SessionError, new_session_id};
use crate::tools::ToolSet;

fn invalid(message: impl Into<Cow<'static, str>>) -> ProtocolError {
    ProtocolError::new(rpc::error::code::INVALID_REQUEST, message)
}

fn not_acceptable(id: Option<&RawValue>) -> HttpResponse {
    let error = invalid("Not Acceptable: the client must accept application/json or text/event-stream");
    reply::error(StatusCode::NOT_ACCEPTABLE, id, &error)
}

/// Handles one message of the handshake era.
pub(crate) async fn single(
    endpoint: &McpEndpoint,
    tools: &ToolSet,
    version: u32,
    headers: &HeaderMap,
    message: Message<'_>,
    caller: Caller,
) -> HttpResponse {
    let inner = &*endpoint.inner;
    let accepted = accepted(headers);
    if let Message::Request(req) = &message
        && req.method == "initialize"
    {
        let Some(id) = req.id else {
            return reply::error(StatusCode::BAD_REQUEST, None, &invalid("`initialize` must be a request with an id"));
        };
        let Some(mode) = accepted.single() else { return not_acceptable(Some(id)) };
        return initialize(inner, tools.endpoint(), id, req, mode, &caller).await;
    }
    let id = match &message {
        Message::Request(req) => req.id,
        Message::Response { .. } => None,
    };
    let (session, protocol) = match session_of(inner, tools.endpoint(), headers, id, caller.owner()).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let Message::Request(req) = message else { return status_response(StatusCode::ACCEPTED) };
    let Some(id) = req.id else {
        notification(inner, &session, &req);
        return status_response(StatusCode::ACCEPTED);
    };
    if req.method == "tools/call" {
        return tool_call(endpoint, &session, version, protocol, id, &req, accepted, caller).await;
    }
    let Some(mode) = accepted.single() else { return not_acceptable(Some(id)) };
    let (result, executions) = plain(inner, tools, &session, version, protocol, &req, &caller).await;
    let mut out = Vec::with_capacity(256);
    reply::write_outcome(&mut out, id, &result);
    reply::message(inner, mode, StatusCode::OK, out, executions)
}

/// `tools/call` params of this era.
#[derive(Deserialize)]
struct CallRequestParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<ProgressMeta<'a>>,
}

#[derive(Deserialize)]
struct ProgressMeta<'a> {
    #[serde(rename = "progressToken", borrow, default)]
    progress_token: Option<&'a RawValue>,
}

#[allow(clippy::too_many_arguments)] // one request's facts, passed once
async fn tool_call(
    endpoint: &McpEndpoint,
    session: &Arc<Session>,
    version: u32,
    protocol: ProtocolVersion,
    id: &RawValue,
    req: &RpcRequest<'_>,
    accepted: Accepted,
    caller: Caller,
) -> HttpResponse {
    let inner = &endpoint.inner;
    let input_bytes = req.params.map_or(0, |p| p.get().len());
    let params = match rpc::executor::cpu_bound(input_bytes, || req.params_as::<CallRequestParams<'_>>()) {
        Ok(Some(params)) => params,
        Ok(None) => {
            let error = RpcError::invalid_params("tools/call requires params with a `name`");
            return json_error(inner, id, &error);
        }
        Err(error) => return json_error(inner, id, &error),
    };
    let progress_token = match params.meta.and_then(|m| m.progress_token).map(crate::notify::progress_token) {
        None => None,
        Some(Ok(token)) => Some(token),
        Some(Err(error)) => return json_error(inner, id, &error),
    };
    let call = ToolCall {
        id,
        name: params.name,
        arguments: params.arguments.unwrap_or_default(),
        version,
        protocol,
        client: session.client_view(protocol),
        wanted: Wanted { progress_token, log_level: session.log_level },
        session: Some(Arc::clone(session)),
        identity: caller.identity,
        input_bytes,
        language: caller.language,
    };
    exchange::answer(Arc::clone(inner), call, accepted, |_| StatusCode::OK).await
}

fn json_error(inner: &Inner, id: &RawValue, error: &RpcError) -> HttpResponse {
    reply::error(StatusCode::OK, Some(id), &ProtocolError::from_rpc(error, inner.executor.environment()))
}

/// A request answered as one message (also each request of a batch).
async fn plain(
    inner: &Inner,
    tools: &ToolSet,
    session: &Session,
    version: u32,
    protocol: ProtocolVersion,
    req: &RpcRequest<'_>,
    caller: &Caller,
) -> (Result<Vec<u8>, ProtocolError>, Vec<Execution>) {
    let language = caller.language;
    let env = inner.executor.environment();
    let rpc_error = |e: RpcError| (Err(ProtocolError::from_rpc(&e, env)), Vec::new());
    match &*req.method {
        "ping" => (Ok(b"{}".to_vec()), Vec::new()),
        "tools/list" => match list_tools(tools, language, protocol, req) {
            Ok(page) => (Ok(page), Vec::new()),
            Err(e) => rpc_error(e),
        },
        "tools/call" => {
            let input_bytes = req.params.map_or(0, |p| p.get().len());
            let params = match rpc::executor::cpu_bound(input_bytes, || req.params_as::<CallRequestParams<'_>>()) {
                Ok(Some(params)) => params,
                Ok(None) => return rpc_error(RpcError::invalid_params("tools/call requires params with a `name`")),
                Err(e) => return rpc_error(e),
            };
            let target = CallTarget {
                group: &inner.group,
                version,
                protocol,
                invalid_arguments: inner.config.invalid_arguments,
                stateless_tail: &inner.texts(language).stateless_tail,
                input_bytes,
            };
            let tool = tools.get(&params.name);
            let method = tool.map(|t| t.method.name()).unwrap_or_default();
            let context = Context::for_client(Transport::Mcp, method, session.client_view(protocol))
                .with_identity(caller.identity.clone());
            let arguments = params.arguments.unwrap_or_default();
            // Boxed: a batch's futures stay small.
            let outcome = Box::pin(call_tool(&inner.executor, tool, target, &params.name, arguments, context)).await;
            let executions = outcome.execution.filter(rpc::Execution::wants_response_sent).into_iter().collect();
            (outcome.result, executions)
        }
        "logging/setLevel" => (set_level(inner, session, req).await, Vec::new()),
        "initialize" => rpc_error(RpcError::invalid_request("the session is already initialized")),
        other => rpc_error(RpcError::method_not_found(other)),
    }
}

/// `tools/list` params.
#[derive(Deserialize)]
struct ListParams<'a> {
    #[serde(borrow, default)]
    cursor: Option<Cow<'a, str>>,
}

pub(crate) fn list_tools(
    tools: &ToolSet,
    language: Language,
    protocol: ProtocolVersion,
    req: &RpcRequest<'_>,
) -> Result<Vec<u8>, RpcError> {
    let cursor = req.params_as::<ListParams<'_>>()?.and_then(|p| p.cursor);
    tools
        .page(language, protocol, cursor.as_deref())
        .map(|page| page.to_vec())
        .ok_or_else(|| RpcError::invalid_params("Invalid cursor"))
}

#[derive(Deserialize)]
struct SetLevelParams<'a> {
    #[serde(borrow)]
    level: Cow<'a, str>,
}

/// `logging/setLevel`: the session's log messages from now on are at this
/// level or above.
async fn set_level(inner: &Inner, session: &Session, req: &RpcRequest<'_>) -> Result<Vec<u8>, ProtocolError> {
    let env = inner.executor.environment();
    let level = match req.params_as::<SetLevelParams<'_>>() {
        Ok(Some(params)) => params.level.parse::<LogLevel>().map_err(RpcError::invalid_params),
        Ok(None) => Err(RpcError::invalid_params("logging/setLevel requires params with a `level`")),
        Err(e) => Err(e),
    }
    .map_err(|e| ProtocolError::from_rpc(&e, env))?;
    let mut updated = session.clone();
    updated.log_level = Some(level);
    match inner.sessions.update(updated).await {
        Ok(_) => Ok(b"{}".to_vec()),
        Err(e) => Err(ProtocolError::from_rpc(&RpcError::internal(e), env)),
    }
}

#[derive(Deserialize)]
struct CancelledParams<'a> {
    #[serde(rename = "requestId", borrow)]
    request_id: &'a RawValue,
}

fn notification(inner: &Inner, session: &Session, req: &RpcRequest<'_>) {
    match &*req.method {
        "notifications/cancelled" => {
            if let Ok(Some(params)) = req.params_as::<CancelledParams<'_>>() {
                let cancelled = inner.inflight.cancel(&session.id, params.request_id.get());
                let request = rpc::logged::logged(params.request_id.get());
                tracing::debug!(request = %request, cancelled, "notifications/cancelled");
            }
        }
        "notifications/initialized" | "notifications/roots/list_changed" => {}
        other => tracing::debug!(method = %rpc::logged::logged(other), "ignoring notification"),
    }
}

/// Runs a 2025-03-26 batch: every request concurrently, responses in one array.
pub(crate) async fn batch(
    endpoint: &McpEndpoint,
    tools: &ToolSet,
    version: u32,
    headers: &HeaderMap,
    items: Vec<&RawValue>,
    caller: Caller,
) -> HttpResponse {
    let inner = &*endpoint.inner;
    let (session, protocol) = match session_of(inner, tools.endpoint(), headers, None, caller.owner()).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    if !session.version().allows_batches() {
        let error = invalid(format!(
            "JSON-RPC batches are not part of protocol {} (only 2025-03-26 has them)",
            session.protocol_version
        ));
        return reply::error(StatusCode::BAD_REQUEST, None, &error);
    }
    // A batch longer than the limit was refused before it was parsed
    // (`parse_body_with`, the same `json_limits`): only an empty one is left.
    if items.is_empty() {
        let max_batch = inner.config.json_limits.max_batch;
        let error = invalid(format!("a batch holds 1 to {max_batch} messages, this one 0"));
        return reply::error(StatusCode::BAD_REQUEST, None, &error);
    }
    let env = inner.executor.environment();
    let session = &session;
    let caller = &caller;
    let results = join_all(items.into_iter().map(|raw| async move {
        match envelope::parse_message(raw, true) {
            Err(invalid) => {
                let mut out = Vec::new();
                reply::write_error(&mut out, invalid.id, &ProtocolError::from_rpc(&invalid.error, env));
                (Some(out), None)
            }
            Ok(Message::Response { .. }) => (None, None),
            Ok(Message::Request(req)) if req.method == "initialize" => {
                let error = invalid("`initialize` cannot be part of a batch");
                (
                    req.id.map(|id| {
                        let mut out = Vec::new();
                        reply::write_error(&mut out, Some(id), &error);
                        out
                    }),
                    None,
                )
            }
            Ok(Message::Request(req)) => match req.id {
                None => {
                    notification(inner, session, &req);
                    (None, None)
                }
                Some(id) => {
                    let (result, executions) = plain(inner, tools, session, version, protocol, &req, caller).await;
                    let mut out = Vec::with_capacity(256);
                    reply::write_outcome(&mut out, id, &result);
                    (Some(out), executions.into_iter().next())
                }
            },
        }
    }))
    .await;
    let (out, executions) = join_batch(results);
    let Some(out) = out else {
        inner.executor.response_sent(executions);
        return status_response(StatusCode::ACCEPTED);
    };
    let Some(mode) = accepted(headers).single() else { return not_acceptable(None) };
    reply::message(inner, mode, StatusCode::OK, out, executions)
}

/// `initialize` params, read without building what is not kept: the
/// capabilities' names only (their values are skipped), `clientInfo` as
/// raw JSON for [`ClientInfo::parse`], every other member skipped.
#[derive(Deserialize)]
struct InitializeParams<'a> {
    #[serde(rename = "protocolVersion", borrow)]
    protocol_version: Cow<'a, str>,
    #[serde(default)]
    capabilities: Option<KnownCapabilities>,
    #[serde(rename = "clientInfo", borrow, default)]
    client_info: Option<&'a RawValue>,
}

async fn initialize(
    inner: &Inner,
    endpoint: &str,
    id: &RawValue,
    request: &RpcRequest<'_>,
    mode: super::negotiate::ResponseMode,
    caller: &Caller,
) -> HttpResponse {
    let env = inner.executor.environment();
    let reply_error = |error: RpcError| reply::error(StatusCode::OK, Some(id), &ProtocolError::from_rpc(&error, env));
    let params = match request.params_as::<InitializeParams<'_>>() {
        Ok(Some(params)) => params,
        Ok(None) => {
            return reply_error(RpcError::invalid_params(
                "initialize requires params {protocolVersion, capabilities, clientInfo}",
            ));
        }
        Err(e) => return reply_error(e),
    };
    let negotiated = ProtocolVersion::parse_handshake(&params.protocol_version).unwrap_or(ProtocolVersion::LATEST);
    let id_string = match new_session_id() {
        Ok(id) => id,
        Err(e) => return reply_error(RpcError::internal(e)),
    };
    let capabilities = params.capabilities.map(|c| c.0).unwrap_or_default();
    let session = Session::new(id_string.clone(), endpoint, negotiated)
        .with_client_info(params.client_info.and_then(|raw| ClientInfo::parse(raw.get())))
        .with_client_capabilities(capabilities.into_iter().map(str::to_owned).collect())
        .with_owner(caller.owner().map(str::to_owned));
    match inner.sessions.create(session, inner.config.session_ttl).await {
        Ok(()) => {}
        Err(SessionError::Full) => {
            let error = ProtocolError::new(code::NO_SESSION, "too many open sessions");
            return reply::error(StatusCode::SERVICE_UNAVAILABLE, Some(id), &error);
        }
        Err(e) => {
            tracing::warn!(error = %e, "a session could not be created: initialize refused");
            let error = ProtocolError::new(code::NO_SESSION, "Session store unavailable; retry later");
            return reply::error(StatusCode::SERVICE_UNAVAILABLE, Some(id), &error);
        }
    }
    let mut result = Map::new();
    result.insert("protocolVersion".into(), json!(negotiated.as_str()));
    result.insert("capabilities".into(), json!({"tools": {"listChanged": false}, "logging": {}}));
    let texts = inner.texts(caller.language);
    result.insert("serverInfo".into(), texts.server_info.to_json(negotiated));
    if let Some(instructions) = &texts.instructions {
        result.insert("instructions".into(), json!(instructions));
    }
    let body = serde_json::to_vec(&Value::Object(result)).unwrap_or_default();
    let mut out = Vec::with_capacity(body.len() + 48);
    reply::write_outcome(&mut out, id, &Ok(body));
    let mut response = reply::message(inner, mode, StatusCode::OK, out, Vec::new());
    if let Ok(value) = HeaderValue::from_str(&id_string) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

/// The session a request belongs to and the protocol revision the request
/// is served at, or the error response (carrying `id` when known): 400
/// without a session id or with an unsupported `MCP-Protocol-Version`, 404
/// for an unknown or expired session, or one another caller opened (the
/// same answer: a session id is not a credential).
///
/// The revision is the `MCP-Protocol-Version` header; without it, 2025-03-26
/// (as the specification says: clients of later revisions must send the
/// header), or 2024-11-05 for a session that negotiated that.
#[allow(clippy::result_large_err)] // the error is the response itself, built once per failure
async fn session_of(
    inner: &Inner,
    endpoint: &str,
    headers: &HeaderMap,
    id: Option<&RawValue>,
    owner: Option<&str>,
) -> Result<(Arc<Session>, ProtocolVersion), HttpResponse> {
    let refuse = |status, code, message: String| Err(reply::error(status, id, &ProtocolError::new(code, message)));
    let Some(session_id) = headers.get(&SESSION_HEADER) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            code::NO_SESSION,
            "Bad Request: Mcp-Session-Id header is required".to_owned(),
        );
    };
    let session_id = session_id.to_str().unwrap_or("");
    let header_version = match headers.get(&PROTOCOL_VERSION_HEADER) {
        None => None,
        Some(value) => {
            let value = value.to_str().unwrap_or("");
            match ProtocolVersion::parse_handshake(value) {
                Some(version) => Some(version),
                None => {
                    let supported: Vec<&str> = ProtocolVersion::HANDSHAKE.iter().map(|v| v.as_str()).collect();
                    let shown: String = value.chars().take(64).collect();
                    return refuse(
                        StatusCode::BAD_REQUEST,
                        code::NO_SESSION,
                        format!(
                            "Bad Request: unsupported MCP-Protocol-Version `{shown}` in this session (supported: {})",
                            supported.join(", ")
                        ),
                    );
                }
            }
        }
    };
    match inner.sessions.get(session_id, inner.config.session_ttl).await {
        Ok(Some(session)) if session.endpoint == endpoint && session.belongs_to(owner) => {
            let version = header_version.unwrap_or_else(|| session.version().min(ProtocolVersion::DEFAULT_HEADER));
            Ok((session, version))
        }
        Ok(_) => refuse(StatusCode::NOT_FOUND, code::SESSION_NOT_FOUND, "Session not found".to_owned()),
        Err(e) => {
            tracing::warn!(error = %e, "a session could not be read: request refused");
            refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                code::NO_SESSION,
                "Session store unavailable; retry later".to_owned(),
            )
        }
    }
}

/// `DELETE`: ends the session.
pub(crate) async fn delete(inner: &Inner, endpoint: &str, headers: &HeaderMap, caller: &Caller) -> HttpResponse {
    let session = match session_of(inner, endpoint, headers, None, caller.owner()).await {
        Ok((session, _)) => session,
        Err(response) => return response,
    };
    let not_found =
        || reply::error(StatusCode::NOT_FOUND, None, &ProtocolError::new(code::SESSION_NOT_FOUND, "Session not found"));
    match inner.sessions.remove(&session.id).await {
        Ok(true) => status_response(StatusCode::OK),
        Ok(false) => not_found(),
        Err(e) => {
            tracing::warn!(error = %e, "a session could not be removed");
            let error = ProtocolError::new(code::NO_SESSION, "Session store unavailable; retry later");
            reply::error(StatusCode::SERVICE_UNAVAILABLE, None, &error)
        }
    }
}
