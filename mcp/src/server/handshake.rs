//! The handshake era (2024-11-05 to 2025-11-25).
//!
//! * `initialize` negotiates the revision and opens a session; later
//!   messages must name it (400 without, 404 when unknown or expired).
//! * A message is one JSON-RPC request or notification (a batch under
//!   2025-03-26). Requests get one message, or a stream when the client
//!   takes only streams, or when a `tools/call` reports progress or logs (it
//!   asked with `_meta.progressToken`, or set a level with
//!   `logging/setLevel`); notifications and responses get nothing.
//! * `notifications/cancelled` stops a call of the same session.

use std::borrow::Cow;
use std::sync::Arc;

use futures_util::future::join_all;
use rpc::i18n::Language;
use rpc::jsonrpc::envelope;
use rpc::jsonrpc::raw_json_str;
use rpc::jsonrpc::response::{join_batch, result_body};
use rpc::rate::{self, RateKind};
use rpc::{Execution, Identity, LogLevel, RpcError};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::incoming::Incoming;
use super::methods::{self, Asked};
use super::params::{
    self, CallParams, CancelledParams, CompleteParams, InitializeParams, ListParams, MetaSlot, PromptParams,
    ResourceParams, RpcMessage as Message, RpcRequest, SetLevelParams,
};
use super::reply::{Reply, Status, handshake_status, write_error, write_outcome};
use super::state::Inner;
use super::tool_call::{self, ToolCall};
use crate::call::{Arguments, ProtocolError};
use crate::notify::Wanted;
use crate::protocol::{ProtocolVersion, code};
use crate::session::{ClientInfo, Session, SessionError, new_session_id};
use crate::tools::ToolSet;

fn invalid(message: impl Into<Cow<'static, str>>) -> ProtocolError {
    ProtocolError::new(rpc::error::code::INVALID_REQUEST, message)
}

fn not_acceptable(id: Option<&RawValue>) -> Reply {
    let error = invalid("Not Acceptable: the client must accept application/json or text/event-stream");
    Reply::error(Status::NotAcceptable, id, &error)
}

/// Handles one message of the handshake era.
pub(crate) async fn single(
    inner: &Arc<Inner>,
    tools: &ToolSet,
    incoming: &Incoming<'_>,
    message: &Message<'_>,
) -> Reply {
    if let Message::Request(req) = message
        && req.method == "initialize"
    {
        let Some(id) = req.id else {
            return Reply::error(Status::BadRequest, None, &invalid("`initialize` must be a request with an id"));
        };
        if !incoming.accepts.any() {
            return not_acceptable(Some(id));
        }
        return initialize(inner, tools.endpoint(), id, req, incoming).await;
    }
    let id = match message {
        Message::Request(req) => req.id,
        Message::Response { .. } => None,
    };
    let (session, protocol) = match session_of(inner, tools.endpoint(), incoming, id).await {
        Ok(found) => found,
        Err(reply) => return reply,
    };
    let req = match message {
        Message::Request(req) => req,
        Message::Response { id, result, error } => {
            // The answer to one of the server's questions of this conversation.
            let conversation = incoming.cancel_scope.unwrap_or(&session.id);
            if !inner.pending.answer(conversation, id, *result, *error) {
                tracing::debug!(id = %rpc::logged::logged(id.get()), "a response to no open question");
            }
            return Reply::Accepted;
        }
    };
    let Some(id) = req.id else {
        notification(inner, &session, incoming, req);
        return Reply::Accepted;
    };
    if req.method == "tools/call" {
        return tool_call(inner, &session, incoming, protocol, id, req).await;
    }
    if !incoming.accepts.any() {
        return not_acceptable(Some(id));
    }
    let (out, executions) = plain(inner, tools, &session, incoming, protocol, id, req).await;
    Reply::message(Status::Ok, out, executions)
}

/// A `tools/call` as read: the tool's name, its arguments, the progress token.
type ReadCall<'a> = (Cow<'a, str>, Arguments<'a>, Option<Box<RawValue>>);

/// The `tools/call` of this era: the arguments, the progress token.
fn read_call<'a>(req: &'a RpcRequest<'a>) -> Result<ReadCall<'a>, RpcError> {
    // Those the envelope's pass read are borrowed where they are, not
    // copied out (they are a hundred and fifty bytes).
    let read;
    let params = match &req.early {
        Some(params::ReadParams(params)) => params,
        None => match params::read_params::<CallParams<'_>>(req)? {
            Some(params) => {
                read = params;
                &read
            }
            None => return Err(RpcError::invalid_params("tools/call requires params with a `name`")),
        },
    };
    let Some(name) = params.name.and_then(raw_json_str) else {
        return Err(RpcError::invalid_params("tools/call requires params with a `name`"));
    };
    let arguments = Arguments::from_member(params.arguments)?;
    let progress_token = match &params.meta {
        None => None,
        Some(MetaSlot::NotObject) => return Err(RpcError::invalid_params("`_meta` must be an object")),
        Some(MetaSlot::Object(meta)) => meta.progress_token.map(crate::notify::progress_token).transpose()?,
    };
    Ok((name, arguments, progress_token))
}

async fn tool_call(
    inner: &Arc<Inner>,
    session: &Arc<Session>,
    incoming: &Incoming<'_>,
    protocol: ProtocolVersion,
    id: &RawValue,
    req: &RpcRequest<'_>,
) -> Reply {
    let (name, arguments, progress_token) = match read_call(req) {
        Ok(call) => call,
        Err(error) => return rpc_error(inner, id, &error),
    };
    let mut call = ToolCall {
        id: Cow::Borrowed(id),
        name,
        arguments,
        version: incoming.version,
        protocol,
        client: session.client_view(protocol),
        wanted: Wanted { progress_token, log_level: session.log_level },
        cancel_scope: Some(Cow::Borrowed(incoming.cancel_scope.unwrap_or(&session.id))),
        silent_cancel: incoming.cancel_scope.is_some(),
        identity: incoming.caller.identity.clone(),
        peer: incoming.caller.client,
        input_bytes: params::params_bytes(req),
        language: incoming.caller.language,
        conversation: Some(Cow::Borrowed(incoming.cancel_scope.unwrap_or(&session.id))),
        round: None,
        asker: None,
        task: false,
        tool: None,
    };
    tool_call::answer(inner, &mut call, incoming.accepts, handshake_status).await
}

fn rpc_error(inner: &Inner, id: &RawValue, error: &RpcError) -> Reply {
    Reply::error(Status::Ok, Some(id), &ProtocolError::from_rpc(error, inner.executor.environment()))
}

/// A request answered as one message (also each request of a batch): the
/// response, and the execution whose after-response work waits for it.
async fn plain(
    inner: &Arc<Inner>,
    tools: &ToolSet,
    session: &Session,
    incoming: &Incoming<'_>,
    protocol: ProtocolVersion,
    id: &RawValue,
    req: &RpcRequest<'_>,
) -> (Vec<u8>, Vec<Execution>) {
    let language = incoming.caller.language;
    let env = inner.executor.environment();
    let result = match &*req.method {
        "ping" => Ok(b"{}".to_vec()),
        "tools/list" => match list_tools(tools, incoming.caller.identity.as_deref(), language, protocol, req) {
            // The pre-built page is copied once, into the response.
            Ok(page) => return (result_body(id, &page), Vec::new()),
            Err(e) => Err(ProtocolError::from_rpc(&e, env)),
        },
        "tools/call" => match read_call(req) {
            Ok((name, arguments, _)) => {
                let mut call = ToolCall {
                    id: Cow::Borrowed(id),
                    name,
                    arguments,
                    version: incoming.version,
                    protocol,
                    client: session.client_view(protocol),
                    wanted: Wanted::default(),
                    cancel_scope: None,
                    silent_cancel: false,
                    identity: incoming.caller.identity.clone(),
                    peer: incoming.caller.client,
                    input_bytes: params::params_bytes(req),
                    language,
                    // A batch's answer is one message: no stream to ask on.
                    conversation: None,
                    round: None,
                    asker: None,
                    task: false,
                    tool: None,
                };
                // Boxed: a batch's futures stay small.
                let finished = rpc::future::in_box(|| tool_call::run(inner, &mut call, None)).await;
                // Without a cancel scope the call cannot be cancelled: it has its response.
                return (finished.response.unwrap_or_default(), finished.executions);
            }
            Err(e) => Err(ProtocolError::from_rpc(&e, env)),
        },
        "logging/setLevel" => set_level(inner, session, req).await,
        other if methods::is_beyond_tools(other) => {
            if !methods::serves(inner, other) {
                Err(methods::not_served(other))
            } else {
                let asked = Asked {
                    version: incoming.version,
                    protocol,
                    language,
                    client: session.client_view(protocol),
                    identity: incoming.caller.identity.clone(),
                    peer: incoming.caller.client,
                    input_bytes: params::params_bytes(req),
                };
                // Boxed: the tools/call path keeps a small future.
                match rpc::future::in_box(|| beyond_tools(inner, session, &asked, req)).await {
                    Ok((body, executions)) => return (result_body(id, &body), executions),
                    Err(error) => Err(error),
                }
            }
        }
        "initialize" => {
            Err(ProtocolError::from_rpc(&RpcError::invalid_request("the session is already initialized"), env))
        }
        other => Err(ProtocolError::from_rpc(&RpcError::method_not_found(other), env)),
    };
    let mut out = Vec::new();
    write_outcome(&mut out, id, &result);
    (out, Vec::new())
}

/// Resources, prompts and completion in this era: the params read here,
/// the methods in [`methods`].
async fn beyond_tools(inner: &Inner, session: &Session, asked: &Asked, req: &RpcRequest<'_>) -> methods::Answer {
    let env = inner.executor.environment();
    let features = inner.features.version(asked.version);
    let params_error = |e: RpcError| ProtocolError::from_rpc(&e, env);
    match &*req.method {
        "resources/list" | "resources/templates/list" | "prompts/list" => {
            let cursor = req.params_as::<ListParams<'_>>().map_err(params_error)?.and_then(|p| p.cursor);
            methods::list(features, asked, &req.method, cursor.as_deref()).map(|page| (page, Vec::new()))
        }
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            let params = req.params_as::<ResourceParams<'_>>().map_err(params_error)?.unwrap_or_default();
            let Some(uri) = params.uri.and_then(raw_json_str) else {
                return Err(params_error(RpcError::invalid_params("params.uri must be a string")));
            };
            match &*req.method {
                "resources/read" => methods::read(inner, features, asked, &uri).await,
                method => {
                    let on = method == "resources/subscribe";
                    methods::subscribe(inner, features, session, &uri, on).await.map(|body| (body, Vec::new()))
                }
            }
        }
        "prompts/get" => {
            let params = req.params_as::<PromptParams<'_>>().map_err(params_error)?.unwrap_or_default();
            let Some(name) = params.name.and_then(raw_json_str) else {
                return Err(params_error(RpcError::invalid_params("params.name must be a string")));
            };
            methods::get_prompt(inner, features, asked, &name, params.arguments, None).await
        }
        _ => {
            let params = req.params_as::<CompleteParams<'_>>().map_err(params_error)?.unwrap_or_default();
            methods::complete(inner, features, asked, params.reference, params.argument, params.context).await
        }
    }
}

pub(crate) fn list_tools(
    tools: &ToolSet,
    identity: Option<&Identity>,
    language: Language,
    protocol: ProtocolVersion,
    req: &RpcRequest<'_>,
) -> Result<bytes::Bytes, RpcError> {
    let cursor = req.params_as::<ListParams<'_>>()?.and_then(|p| p.cursor);
    tools
        .page(identity, language, protocol, cursor.as_deref())
        .ok_or_else(|| RpcError::invalid_params("Invalid cursor"))
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

fn notification(inner: &Inner, session: &Session, incoming: &Incoming<'_>, req: &RpcRequest<'_>) {
    match &*req.method {
        "notifications/cancelled" => {
            if let Ok(Some(params)) = req.params_as::<CancelledParams<'_>>() {
                let scope = incoming.cancel_scope.unwrap_or(&session.id);
                let cancelled = inner.inflight.cancel(scope, params.request_id.get());
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
    inner: &Arc<Inner>,
    tools: &ToolSet,
    incoming: &Incoming<'_>,
    items: &[Result<Message<'_>, envelope::Invalid<'_>>],
) -> Reply {
    let (session, protocol) = match session_of(inner, tools.endpoint(), incoming, None).await {
        Ok(found) => found,
        Err(reply) => return reply,
    };
    if !session.version().allows_batches() {
        let error = invalid(format!(
            "JSON-RPC batches are not part of protocol {} (only 2025-03-26 has them)",
            session.protocol_version
        ));
        return Reply::error(Status::BadRequest, None, &error);
    }
    // A batch longer than the limit was refused before it was parsed (the
    // same `json_limits`): only an empty one is left.
    if items.is_empty() {
        let max_batch = inner.config.json_limits.max_batch;
        let error = invalid(format!("a batch holds 1 to {max_batch} messages, this one 0"));
        return Reply::error(Status::BadRequest, None, &error);
    }
    let env = inner.executor.environment();
    let session = &session;
    let results = join_all(items.iter().map(|message| async move {
        match message {
            Err(invalid) => {
                let mut out = Vec::new();
                write_error(&mut out, invalid.id, &ProtocolError::from_rpc(&invalid.error, env));
                (Some(out), None)
            }
            Ok(Message::Response { id, result, error }) => {
                let conversation = incoming.cancel_scope.unwrap_or(&session.id);
                inner.pending.answer(conversation, id, *result, *error);
                (None, None)
            }
            Ok(Message::Request(req)) if req.method == "initialize" => {
                let error = self::invalid("`initialize` cannot be part of a batch");
                (
                    req.id.map(|id| {
                        let mut out = Vec::new();
                        write_error(&mut out, Some(id), &error);
                        out
                    }),
                    None,
                )
            }
            Ok(Message::Request(req)) => match req.id {
                None => {
                    notification(inner, session, incoming, req);
                    (None, None)
                }
                Some(id) => {
                    let (out, executions) = plain(inner, tools, session, incoming, protocol, id, req).await;
                    (Some(out), executions.into_iter().next())
                }
            },
        }
    }))
    .await;
    let (out, executions) = join_batch(results);
    let Some(out) = out else {
        inner.executor.response_sent(executions);
        return Reply::Accepted;
    };
    if !incoming.accepts.any() {
        return not_acceptable(None);
    }
    Reply::message(Status::Ok, out, executions)
}

async fn initialize(
    inner: &Inner,
    endpoint: &str,
    id: &RawValue,
    request: &RpcRequest<'_>,
    incoming: &Incoming<'_>,
) -> Reply {
    let env = inner.executor.environment();
    let reply_error = |error: RpcError| Reply::error(Status::Ok, Some(id), &ProtocolError::from_rpc(&error, env));
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
    let caller = &incoming.caller;
    if let Some(wait) = inner.executor.throttle(RateKind::Sessions, caller.identity.as_deref(), caller.client).await {
        let error = ProtocolError::from_rpc(&RpcError::rate_limited("new sessions", wait), env);
        return Reply::error(Status::TooManyRequests, Some(id), &error).retry_after(rate::retry_after_secs(wait));
    }
    let id_string = match new_session_id() {
        Ok(id) => id,
        Err(e) => return reply_error(RpcError::internal(e)),
    };
    let capabilities = params.capabilities.map(|c| c.0).unwrap_or_default();
    let session = Session::new(id_string.clone(), endpoint, negotiated)
        .with_client_info(params.client_info.and_then(|raw| ClientInfo::parse(raw.get())))
        .with_client_capabilities(capabilities.into_iter().map(str::to_owned).collect())
        .with_owner(incoming.caller.owner().map(str::to_owned));
    match inner.sessions.create(session, inner.config.session_ttl).await {
        Ok(()) => {}
        Err(SessionError::Full) => {
            let error = ProtocolError::new(code::NO_SESSION, "too many open sessions");
            return Reply::error(Status::ServiceUnavailable, Some(id), &error);
        }
        Err(e) => {
            tracing::warn!(error = %e, "a session could not be created: initialize refused");
            let error = ProtocolError::new(code::NO_SESSION, "Session store unavailable; retry later");
            return Reply::error(Status::ServiceUnavailable, Some(id), &error);
        }
    }
    let mut result = Map::new();
    result.insert("protocolVersion".into(), json!(negotiated.as_str()));
    result.insert("capabilities".into(), inner.served.capabilities(true));
    let texts = inner.texts(incoming.caller.language);
    result.insert("serverInfo".into(), texts.server_info.to_json(negotiated));
    if let Some(instructions) = &texts.instructions {
        result.insert("instructions".into(), json!(instructions));
    }
    let body = serde_json::to_vec(&Value::Object(result)).unwrap_or_default();
    Reply::message(Status::Ok, result_body(id, &body), Vec::new()).with_session(id_string)
}

/// The session a message belongs to and the protocol revision the message
/// is served at, or the error reply (carrying `id` when known): 400 without
/// a session id or with an unsupported protocol version, 404 for an unknown
/// or expired session, or one another caller opened (the same answer: a
/// session id is not a credential).
///
/// The revision is the one the transport names (`MCP-Protocol-Version`);
/// without it, 2025-03-26 (as the specification says: clients of later
/// revisions must send the header), or 2024-11-05 for a session that
/// negotiated that.
pub(crate) async fn session_of(
    inner: &Inner,
    endpoint: &str,
    incoming: &Incoming<'_>,
    id: Option<&RawValue>,
) -> Result<(Arc<Session>, ProtocolVersion), Reply> {
    let refuse = |status, code, message: String| Err(Reply::error(status, id, &ProtocolError::new(code, message)));
    let Some(session_id) = incoming.session else {
        // A transport that remembers its conversation (stdio) has no header
        // to name: its client has not initialized yet.
        let message = if incoming.remembered {
            "Bad Request: no session yet: send `initialize` first (a 2026-07-28 client names its protocol \
             version in `params._meta` instead)"
        } else {
            "Bad Request: Mcp-Session-Id header is required"
        };
        return refuse(Status::BadRequest, code::NO_SESSION, message.to_owned());
    };
    let named_version = match incoming.protocol {
        None => None,
        Some(value) => match ProtocolVersion::parse_handshake(value) {
            Some(version) => Some(version),
            None => {
                let supported: Vec<&str> = ProtocolVersion::HANDSHAKE.iter().map(|v| v.as_str()).collect();
                let shown: String = value.chars().take(64).collect();
                return refuse(
                    Status::BadRequest,
                    code::NO_SESSION,
                    format!(
                        "Bad Request: unsupported MCP-Protocol-Version `{shown}` in this session (supported: {})",
                        supported.join(", ")
                    ),
                );
            }
        },
    };
    match inner.sessions.get(session_id, inner.config.session_ttl).await {
        Ok(Some(session)) if session.endpoint == endpoint && session.belongs_to(incoming.caller.owner()) => {
            let version = named_version.unwrap_or_else(|| session.version().min(ProtocolVersion::DEFAULT_HEADER));
            Ok((session, version))
        }
        Ok(_) => refuse(Status::NotFound, code::SESSION_NOT_FOUND, "Session not found".to_owned()),
        Err(e) => {
            tracing::warn!(error = %e, "a session could not be read: request refused");
            refuse(Status::ServiceUnavailable, code::NO_SESSION, "Session store unavailable; retry later".to_owned())
        }
    }
}

/// Ends the session `session_id` of `endpoint` (HTTP `DELETE`; stdio at the
/// end of input): `Accepted` when it ended.
pub(crate) async fn end_session(inner: &Inner, endpoint: &str, incoming: &Incoming<'_>) -> Reply {
    let session = match session_of(inner, endpoint, incoming, None).await {
        Ok((session, _)) => session,
        Err(reply) => return reply,
    };
    match inner.sessions.remove(&session.id).await {
        Ok(true) => Reply::Accepted,
        Ok(false) => {
            Reply::error(Status::NotFound, None, &ProtocolError::new(code::SESSION_NOT_FOUND, "Session not found"))
        }
        Err(e) => {
            tracing::warn!(error = %e, "a session could not be removed");
            let error = ProtocolError::new(code::NO_SESSION, "Session store unavailable; retry later");
            Reply::error(Status::ServiceUnavailable, None, &error)
        }
    }
}
