//! Streamable HTTP, handshake era (2024-11-05 to 2025-11-25).
//!
//! * `POST` carries one JSON-RPC message (a batch under 2025-03-26).
//!   Requests get `application/json`, or `text/event-stream` when the client
//!   accepts only SSE; notifications and responses get 202.
//! * `initialize` negotiates the revision and mints `Mcp-Session-Id`; later
//!   requests must carry it (400 without, 404 when unknown or expired).
//! * `DELETE` ends the session; `GET` (a server-to-client stream) gets 405,
//!   since this server sends nothing unprompted.
//! * `Host`/`Origin` outside the allowed names: 403. A group whose method
//!   names are not valid tool names: 500 on every request.

use std::borrow::Cow;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::future::join_all;
use http::{HeaderMap, HeaderValue, Method as HttpMethod, Request, Response, StatusCode, header};
use http_body::Body;
use rpc::jsonrpc::envelope::{self, Message, Request as RpcRequest};
use rpc::jsonrpc::response::{error_body, join_batch, write_error, write_result};
use rpc::server::body::{
    BoxError, ReadError, ResponseBody, full, json_response, notify_when_sent, read_limited, status_response,
};
use rpc::server::route::version_from_path;
use rpc::{Environment, Execution, RpcError};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::negotiate::{ResponseMode, is_json_body, response_mode};
use crate::dispatch;
use crate::endpoint::{Inner, McpEndpoint};
use crate::protocol::{PROTOCOL_VERSION_HEADER, ProtocolVersion, SESSION_HEADER};
use crate::session::{Session, SessionError, new_session_id};
use crate::tools::ToolSet;

/// JSON-RPC code the official SDKs use for a missing session (HTTP 400).
const NO_SESSION: i32 = -32000;
/// JSON-RPC code the official SDKs use for an unknown session (HTTP 404).
const SESSION_NOT_FOUND: i32 = -32001;

type HttpResponse = Response<ResponseBody>;

impl McpEndpoint {
    /// Handles one HTTP request.
    pub async fn handle<B>(&self, request: Request<B>) -> HttpResponse
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let inner = &*self.inner;
        let env = inner.executor.environment();
        if let Err(why) = inner.hosts.check(request.headers()) {
            tracing::warn!(%why, "refused by DNS-rebinding protection");
            return error_response(StatusCode::FORBIDDEN, RpcError::invalid_request(why), env);
        }
        if let Some(why) = inner.tools.broken() {
            let message = if env.is_debug() { why.to_owned() } else { "the MCP endpoint is misconfigured".to_owned() };
            let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": rpc::error::code::INTERNAL_ERROR, "message": message}});
            return json_response(StatusCode::INTERNAL_SERVER_ERROR, body.to_string());
        }
        let path = request.uri().path();
        let Some((version, tools)) = version_from_path(path).and_then(|v| inner.tools.version(v).map(|t| (v, t)))
        else {
            let error = RpcError::invalid_request(format!("group `{}` has no MCP endpoint at `{path}`", inner.group));
            return error_response(StatusCode::NOT_FOUND, error, env);
        };
        match *request.method() {
            HttpMethod::POST => post(inner, tools, version, request).await,
            HttpMethod::DELETE => delete(inner, tools.endpoint(), request.headers()).await,
            HttpMethod::GET => {
                let mut response = status_response(StatusCode::METHOD_NOT_ALLOWED);
                response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST, DELETE"));
                response
            }
            _ => {
                let mut response = status_response(StatusCode::METHOD_NOT_ALLOWED);
                response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST, GET, DELETE"));
                response
            }
        }
    }
}

fn error_response(status: StatusCode, error: RpcError, env: Environment) -> HttpResponse {
    json_response(status, error_body(None, &error, env))
}

fn session_error(status: StatusCode, code: i32, message: &str) -> HttpResponse {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    json_response(status, body.to_string())
}

async fn post<B>(inner: &Inner, tools: &ToolSet, version: u32, request: Request<B>) -> HttpResponse
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let env = inner.executor.environment();
    let endpoint = tools.endpoint();
    let (parts, body) = request.into_parts();
    if !is_json_body(&parts.headers) {
        let error = RpcError::invalid_request("Content-Type must be application/json");
        return error_response(StatusCode::UNSUPPORTED_MEDIA_TYPE, error, env);
    }
    let bytes = match read_limited(&parts.headers, body, inner.config.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(ReadError::TooLarge { limit }) => {
            let error = RpcError::invalid_request(format!("request body exceeds {limit} bytes"));
            return error_response(StatusCode::PAYLOAD_TOO_LARGE, error, env);
        }
        Err(ReadError::Io(e)) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                RpcError::invalid_request(format!("unreadable body: {e}")),
                env,
            );
        }
    };
    let parsed = match envelope::parse_body(&bytes, true) {
        Ok(parsed) => parsed,
        Err(error) => return error_response(StatusCode::BAD_REQUEST, error, env),
    };
    let mode = response_mode(&parts.headers);
    match parsed {
        envelope::Body::Single(message) => {
            let message = match message {
                Ok(message) => message,
                Err(invalid) => {
                    return json_response(StatusCode::BAD_REQUEST, error_body(invalid.id, &invalid.error, env));
                }
            };
            if let Message::Request(req) = &message
                && req.method == "initialize"
            {
                let Some(id) = req.id else {
                    let error = RpcError::invalid_request("`initialize` must be a request with an id");
                    return error_response(StatusCode::BAD_REQUEST, error, env);
                };
                let Some(mode) = mode else { return not_acceptable(env) };
                return initialize(inner, endpoint, id, req, mode).await;
            }
            let protocol = match session_of(inner, endpoint, &parts.headers).await {
                Ok((_, protocol)) => protocol,
                Err(response) => return response,
            };
            let Message::Request(req) = message else { return status_response(StatusCode::ACCEPTED) };
            let Some(id) = req.id else {
                notification(&req.method);
                return status_response(StatusCode::ACCEPTED);
            };
            let Some(mode) = mode else { return not_acceptable(env) };
            let handled = dispatch::handle(inner, tools, version, protocol, &req).await;
            let mut out = Vec::with_capacity(256);
            write_response(&mut out, id, &handled.result, env);
            let executions = match handled.execution {
                Some(execution) if inner.executor.has_hooks() => vec![execution],
                _ => Vec::new(),
            };
            respond(inner, mode, out, executions)
        }
        envelope::Body::Batch(items) => {
            let (session, protocol) = match session_of(inner, endpoint, &parts.headers).await {
                Ok(found) => found,
                Err(response) => return response,
            };
            if !session.version().allows_batches() {
                let error = RpcError::invalid_request(format!(
                    "JSON-RPC batches are not part of protocol {} (only 2025-03-26 has them)",
                    session.protocol_version
                ));
                return error_response(StatusCode::BAD_REQUEST, error, env);
            }
            if items.is_empty() || items.len() > inner.config.max_batch {
                let error = RpcError::invalid_request(format!(
                    "a batch holds 1 to {} messages, this one {}",
                    inner.config.max_batch,
                    items.len()
                ));
                return error_response(StatusCode::BAD_REQUEST, error, env);
            }
            batch(inner, tools, version, protocol, items, mode).await
        }
    }
}

/// Runs a 2025-03-26 batch: every request concurrently, responses in one array.
async fn batch(
    inner: &Inner,
    tools: &ToolSet,
    version: u32,
    protocol: ProtocolVersion,
    items: Vec<&RawValue>,
    mode: Option<ResponseMode>,
) -> HttpResponse {
    let env = inner.executor.environment();
    let results = join_all(items.into_iter().map(|raw| async move {
        match envelope::parse_message(raw, true) {
            Err(invalid) => (Some(error_body(invalid.id, &invalid.error, env)), None),
            Ok(Message::Response { .. }) => (None, None),
            Ok(Message::Request(req)) if req.method == "initialize" => {
                let error = RpcError::invalid_request("`initialize` cannot be part of a batch");
                (req.id.map(|id| error_body(Some(id), &error, env)), None)
            }
            Ok(Message::Request(req)) => match req.id {
                None => {
                    notification(&req.method);
                    (None, None)
                }
                Some(id) => {
                    let handled = dispatch::handle(inner, tools, version, protocol, &req).await;
                    let mut out = Vec::with_capacity(256);
                    write_response(&mut out, id, &handled.result, env);
                    (Some(out), handled.execution)
                }
            },
        }
    }))
    .await;
    let (out, executions) = join_batch(results);
    let Some(out) = out else {
        inner.executor.response_sent(&executions);
        return status_response(StatusCode::ACCEPTED);
    };
    let Some(mode) = mode else { return not_acceptable(env) };
    respond(inner, mode, out, executions)
}

fn notification(method: &str) {
    match method {
        "notifications/initialized" | "notifications/cancelled" | "notifications/roots/list_changed" => {}
        other => tracing::debug!(method = other, "ignoring notification"),
    }
}

fn not_acceptable(env: Environment) -> HttpResponse {
    let error =
        RpcError::invalid_request("Not Acceptable: the client must accept application/json or text/event-stream");
    error_response(StatusCode::NOT_ACCEPTABLE, error, env)
}

fn write_response(out: &mut Vec<u8>, id: &RawValue, result: &Result<Vec<u8>, RpcError>, env: Environment) {
    match result {
        Ok(body) => write_result(out, id, body),
        Err(error) => write_error(out, Some(id), error, env),
    }
}

/// A 200 response carrying `body` as JSON or as one SSE event; hooks run
/// after it is sent.
fn respond(inner: &Inner, mode: ResponseMode, body: Vec<u8>, executions: Vec<Execution>) -> HttpResponse {
    let mut response = match mode {
        ResponseMode::Json => json_response(StatusCode::OK, body),
        ResponseMode::Sse => {
            let mut event = Vec::with_capacity(body.len() + 24);
            event.extend_from_slice(b"event: message\ndata: ");
            event.extend_from_slice(&body);
            event.extend_from_slice(b"\n\n");
            let mut response = Response::new(full(event));
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
            response
        }
    };
    notify_when_sent(&mut response, &inner.executor, executions);
    response
}

/// `initialize` params (`capabilities` is not used: this server sends
/// nothing that depends on client capabilities).
#[derive(Deserialize)]
struct InitializeParams<'a> {
    #[serde(rename = "protocolVersion", borrow)]
    protocol_version: Cow<'a, str>,
    #[serde(rename = "clientInfo", default)]
    client_info: Option<Value>,
}

async fn initialize(
    inner: &Inner,
    endpoint: &str,
    id: &RawValue,
    request: &RpcRequest<'_>,
    mode: ResponseMode,
) -> HttpResponse {
    let env = inner.executor.environment();
    let reply_error = |error: RpcError| {
        let mut out = Vec::new();
        write_response(&mut out, id, &Err(error), env);
        json_response(StatusCode::OK, out)
    };
    let params = match request.params_as::<InitializeParams<'_>>() {
        Ok(Some(params)) => params,
        Ok(None) => {
            return reply_error(RpcError::invalid_params(
                "initialize requires params {protocolVersion, capabilities, clientInfo}",
            ));
        }
        Err(e) => return reply_error(e),
    };
    let requested = &*params.protocol_version;
    let negotiated = ProtocolVersion::parse(requested).unwrap_or(ProtocolVersion::LATEST);
    let id_string = match new_session_id() {
        Ok(id) => id,
        Err(e) => return reply_error(RpcError::internal(e)),
    };
    let session = Session::new(id_string.clone(), endpoint, negotiated).with_client_info(params.client_info);
    match inner.sessions.create(session, inner.config.session_ttl).await {
        Ok(()) => {}
        Err(SessionError::Full) => {
            return session_error(StatusCode::SERVICE_UNAVAILABLE, NO_SESSION, "too many open sessions");
        }
        Err(e) => return reply_error(RpcError::internal(e)),
    }
    let mut result = Map::new();
    result.insert("protocolVersion".into(), json!(negotiated.as_str()));
    result.insert("capabilities".into(), json!({"tools": {"listChanged": false}}));
    result.insert("serverInfo".into(), inner.config.server_info.to_json(negotiated));
    if let Some(instructions) = &inner.config.instructions {
        result.insert("instructions".into(), json!(instructions));
    }
    let body = serde_json::to_vec(&Value::Object(result)).unwrap_or_default();
    let mut out = Vec::with_capacity(body.len() + 48);
    write_response(&mut out, id, &Ok(body), env);
    let mut response = respond(inner, mode, out, Vec::new());
    if let Ok(value) = HeaderValue::from_str(&id_string) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

/// The session a request belongs to and the protocol revision the request
/// is served at, or the error response: 400 without a session id or with an
/// unsupported `MCP-Protocol-Version`, 404 for an unknown or expired session.
///
/// The revision is the `MCP-Protocol-Version` header; without it, 2025-03-26
/// (as the specification says: clients of later revisions must send the
/// header), or 2024-11-05 for a session that negotiated that.
async fn session_of(
    inner: &Inner,
    endpoint: &str,
    headers: &HeaderMap,
) -> Result<(Arc<Session>, ProtocolVersion), HttpResponse> {
    let Some(id) = headers.get(SESSION_HEADER) else {
        return Err(session_error(
            StatusCode::BAD_REQUEST,
            NO_SESSION,
            "Bad Request: Mcp-Session-Id header is required",
        ));
    };
    let id = id.to_str().unwrap_or("");
    let header_version = match headers.get(PROTOCOL_VERSION_HEADER) {
        None => None,
        Some(value) => {
            let value = value.to_str().unwrap_or("");
            match ProtocolVersion::parse(value) {
                Some(version) => Some(version),
                None => {
                    let supported: Vec<&str> = ProtocolVersion::HANDSHAKE.iter().map(|v| v.as_str()).collect();
                    let message = format!(
                        "Bad Request: unsupported MCP-Protocol-Version `{value}` (supported: {})",
                        supported.join(", ")
                    );
                    return Err(session_error(StatusCode::BAD_REQUEST, NO_SESSION, &message));
                }
            }
        }
    };
    match inner.sessions.get(id, inner.config.session_ttl).await {
        Ok(Some(session)) if session.endpoint == endpoint => {
            let version = header_version.unwrap_or_else(|| session.version().min(ProtocolVersion::DEFAULT_HEADER));
            Ok((session, version))
        }
        Ok(_) => Err(session_error(StatusCode::NOT_FOUND, SESSION_NOT_FOUND, "Session not found")),
        Err(e) => Err(session_error(StatusCode::SERVICE_UNAVAILABLE, NO_SESSION, &e.to_string())),
    }
}

async fn delete(inner: &Inner, endpoint: &str, headers: &HeaderMap) -> HttpResponse {
    let session = match session_of(inner, endpoint, headers).await {
        Ok((session, _)) => session,
        Err(response) => return response,
    };
    match inner.sessions.remove(&session.id).await {
        Ok(true) => status_response(StatusCode::OK),
        Ok(false) => session_error(StatusCode::NOT_FOUND, SESSION_NOT_FOUND, "Session not found"),
        Err(e) => session_error(StatusCode::SERVICE_UNAVAILABLE, NO_SESSION, &e.to_string()),
    }
}

impl<B> tower::Service<Request<B>> for McpEndpoint
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = HttpResponse;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(request).await) })
    }
}
