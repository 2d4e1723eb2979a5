//! Streamable HTTP, 2026-07-28: every POST is a self-contained request
//! whose `_meta` carries its protocol version and the client's
//! capabilities; no `initialize`, no sessions.
//!
//! Checks, in the specification's (and the conformance suite's) order,
//! after `Origin`/`Host` (403), parsing (`-32700`) and the JSON-RPC shape
//! (`-32600`): the mirrored headers `Mcp-Method` and `Mcp-Name` (400,
//! `-32020`); `_meta` with `protocolVersion` and `clientCapabilities` (400,
//! `-32602`); `MCP-Protocol-Version` equal to `_meta`'s (400, `-32020`); a
//! supported version (400, `-32022` with `data: {supported, requested}`);
//! a known method (404, `-32601`); for `tools/call`, the `Mcp-Param-*`
//! headers (400, `-32020`) and the client capabilities the tool needs (400,
//! `-32021`). Every error carries the request id.

use std::borrow::Cow;
use std::sync::Arc;

use http::{HeaderMap, StatusCode};
use rpc::ClientView;
use rpc::jsonrpc::envelope::Request as RpcRequest;
use rpc::jsonrpc::response::write_result;
use rpc::server::Draining;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::exchange::{self, ToolCall};
use super::listen_slots::Refused;
use super::negotiate::{Accepted, accepted};
use super::reply::{self, HttpResponse, stateless_status};
use super::sse::{self, ListenFilter};
use super::{Caller, headers};
use crate::call::ProtocolError;
use crate::endpoint::McpEndpoint;
use crate::notify::Wanted;
use crate::protocol::{METHOD_HEADER, NAME_HEADER, PROTOCOL_VERSION_HEADER, ProtocolVersion, code, meta};
use crate::session::{ClientInfo, KnownCapabilities};
use crate::tools::ToolSet;

/// The parts of `params` the transport reads.
#[derive(Deserialize, Default)]
struct Params<'a> {
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<MetaSlot<'a>>,
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(borrow, default)]
    cursor: Option<Cow<'a, str>>,
    #[serde(default)]
    notifications: Option<Value>,
}

/// `params._meta` as found: the envelope, read in the same pass as the
/// rest of `params`, or a value that is not an object (an error, reported
/// in its turn of the check order).
enum MetaSlot<'a> {
    Object(RequestMeta<'a>),
    NotObject,
}

impl<'de: 'a, 'a> Deserialize<'de> for MetaSlot<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Slot<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Slot<'a> {
            type Value = MetaSlot<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, map: M) -> Result<Self::Value, M::Error> {
                RequestMeta::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(MetaSlot::Object)
            }
            fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(MetaSlot::NotObject)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(MetaSlot::NotObject)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(MetaSlot::NotObject)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(MetaSlot::NotObject)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(MetaSlot::NotObject)
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(MetaSlot::NotObject)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(MetaSlot::NotObject)
            }
        }
        deserializer.deserialize_any(Slot(std::marker::PhantomData))
    }
}

/// The request envelope in `_meta`.
#[derive(Deserialize)]
struct RequestMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    protocol_version: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow, default)]
    client_capabilities: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", borrow, default)]
    client_info: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", borrow, default)]
    log_level: Option<&'a RawValue>,
    #[serde(rename = "progressToken", borrow, default)]
    progress_token: Option<&'a RawValue>,
}

/// Whether a POST belongs to this era: its `_meta` names a protocol
/// version, or, outside a session, its `MCP-Protocol-Version` header names
/// one that is not of the handshake era.
pub(crate) fn is_stateless_request(request: &RpcRequest<'_>, headers: &HeaderMap) -> bool {
    if headers.contains_key(&crate::protocol::SESSION_HEADER) {
        // A request of a session belongs to its session.
        return false;
    }
    if let Some(version) = headers.get(&PROTOCOL_VERSION_HEADER) {
        let version = version.to_str().unwrap_or("");
        if ProtocolVersion::parse_handshake(version).is_none() {
            return true;
        }
    }
    #[derive(Deserialize)]
    struct Probe<'a> {
        #[serde(rename = "_meta", borrow, default)]
        meta: Option<ProbeMeta<'a>>,
    }
    #[derive(Deserialize)]
    struct ProbeMeta<'a> {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
        protocol_version: Option<&'a RawValue>,
    }
    matches!(request.params_as::<Probe<'_>>(), Ok(Some(Probe { meta: Some(ProbeMeta { protocol_version: Some(_) }) })))
}

/// A JSON string, borrowed when it has no escapes; `None` when it is not a string.
fn json_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    match serde_json::from_str::<&str>(raw.get()) {
        Ok(text) => Some(Cow::Borrowed(text)),
        Err(_) => serde_json::from_str::<String>(raw.get()).ok().map(Cow::Owned),
    }
}

fn mismatch(message: impl Into<Cow<'static, str>>) -> ProtocolError {
    ProtocolError::new(code::HEADER_MISMATCH, message)
}

fn invalid_params(message: impl Into<Cow<'static, str>>) -> ProtocolError {
    ProtocolError::new(rpc::error::code::INVALID_PARAMS, message)
}

/// What the ladder found: the request is served at `protocol` for this client.
struct Admitted<'a> {
    params: Params<'a>,
    input_bytes: usize,
    client: ClientView,
    wanted: Wanted,
}

/// Runs the checks up to the supported version.
fn admit<'a>(request: &'a RpcRequest<'a>, headers: &HeaderMap) -> Result<Admitted<'a>, ProtocolError> {
    if let Some(name) = headers::duplicated(headers) {
        return Err(mismatch(format!("the {name} header appears more than once")));
    }
    match headers::single(headers, &METHOD_HEADER) {
        Ok(Some(method)) if method == request.method => {}
        Ok(Some(_)) => return Err(mismatch("the Mcp-Method header does not match the request's method")),
        Ok(None) => return Err(mismatch("the Mcp-Method header is required")),
        Err(()) => return Err(mismatch("the Mcp-Method header is malformed")),
    }
    let mut params: Params<'a> = match request.params {
        None => Params::default(),
        Some(raw) if raw.get().starts_with('{') => {
            rpc::executor::cpu_bound(raw.get().len(), || serde_json::from_str(raw.get()))
                .map_err(|e| invalid_params(format!("params are not an object of the expected shape: {e}")))?
        }
        Some(_) => return Err(invalid_params("params must be an object carrying `_meta`")),
    };
    if let Some(name) = params.name {
        let Some(body_name) = json_str(name) else {
            return Err(invalid_params("`name` must be a string"));
        };
        match headers::single(headers, &NAME_HEADER) {
            Ok(Some(header)) if header == body_name => {}
            Ok(Some(_)) => return Err(mismatch("the Mcp-Name header does not match the request's `name`")),
            Ok(None) => return Err(mismatch("the Mcp-Name header is required for this method")),
            Err(()) => return Err(mismatch("the Mcp-Name header is malformed")),
        }
    }
    let Some(MetaSlot::Object(envelope)) = params.meta.take() else {
        return Err(invalid_params(format!(
            "params._meta must be an object carrying `{}` and `{}`",
            meta::PROTOCOL_VERSION,
            meta::CLIENT_CAPABILITIES
        )));
    };
    let missing: Vec<&str> = [
        (meta::PROTOCOL_VERSION, envelope.protocol_version.is_none()),
        (meta::CLIENT_CAPABILITIES, envelope.client_capabilities.is_none()),
    ]
    .into_iter()
    .filter_map(|(key, absent)| absent.then_some(key))
    .collect();
    if !missing.is_empty() {
        return Err(invalid_params(format!("params._meta lacks the required {}", missing.join(" and "))));
    }
    let version: Option<Cow<'_, str>> = envelope.protocol_version.and_then(json_str);
    match (headers::single(headers, &PROTOCOL_VERSION_HEADER), &version) {
        (Ok(Some(header)), Some(version)) if header == *version => {}
        (Ok(None), _) => return Err(mismatch("the MCP-Protocol-Version header is required")),
        _ => return Err(mismatch("the MCP-Protocol-Version header does not match params._meta's protocolVersion")),
    }
    let Some(version) = version else {
        return Err(invalid_params("params._meta's protocolVersion must be a string"));
    };
    let Some(protocol) = ProtocolVersion::parse(&version).filter(|v| v.is_stateless()) else {
        let supported: Vec<&str> = ProtocolVersion::STATELESS.iter().map(|v| v.as_str()).collect();
        let requested: String = version.chars().take(128).collect();
        return Err(ProtocolError::new(code::UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
            .with_data(json!({"supported": supported, "requested": requested})));
    };
    if !envelope.client_capabilities.is_some_and(|raw| raw.get().starts_with('{')) {
        return Err(invalid_params("params._meta's clientCapabilities must be an object"));
    }
    let log_level = match envelope.log_level {
        None => None,
        Some(raw) => match serde_json::from_str::<rpc::LogLevel>(raw.get()) {
            Ok(level) => Some(level),
            Err(_) => {
                return Err(invalid_params(format!(
                    "`{}` is not a log level",
                    raw.get().chars().take(32).collect::<String>()
                )));
            }
        },
    };
    let progress_token = envelope
        .progress_token
        .map(crate::notify::progress_token)
        .transpose()
        .map_err(|e| invalid_params(e.message().to_owned()))?;
    let client = client_view(protocol, envelope.client_capabilities, envelope.client_info);
    let input_bytes = request.params.map_or(0, |p| p.get().len());
    Ok(Admitted { params, input_bytes, client, wanted: Wanted { progress_token, log_level } })
}

/// `clientInfo` and `clientCapabilities` up to this size are kept as sent
/// and parsed only if a method reads them (the common case costs nothing);
/// larger ones are reduced at once to what is used.
const LAZY_CLIENT_FACTS: usize = 4096;

/// What the method's context tells about the client: its `_meta` facts as
/// sent, or, when they are large, only what is used (the `clientInfo`
/// fields a session would keep, the known capability names).
fn client_view(protocol: ProtocolVersion, capabilities: Option<&RawValue>, info: Option<&RawValue>) -> ClientView {
    let large = |raw: Option<&RawValue>| raw.is_some_and(|r| r.get().len() > LAZY_CLIENT_FACTS);
    if !large(capabilities) && !large(info) {
        return ClientView::from_raw(
            Some(protocol.as_str().into()),
            capabilities.map(ToOwned::to_owned),
            info.map(ToOwned::to_owned),
        );
    }
    let info = info.and_then(|raw| ClientInfo::parse(raw.get())).map(|i| i.to_json());
    let capabilities = capabilities.map(|raw| {
        if raw.get().len() <= LAZY_CLIENT_FACTS {
            serde_json::from_str(raw.get()).unwrap_or(Value::Null)
        } else {
            let names = serde_json::from_str::<KnownCapabilities>(raw.get()).map(|k| k.0).unwrap_or_default();
            Value::Object(names.into_iter().map(|n| (n.to_owned(), json!({}))).collect())
        }
    });
    ClientView::new(Some(protocol.as_str().into()), capabilities, info)
}

/// Handles one 2026-07-28 request (`id`) or notification (no `id`).
pub(crate) async fn handle(
    endpoint: &McpEndpoint,
    tools: &ToolSet,
    version: u32,
    headers: &HeaderMap,
    extensions: &http::Extensions,
    request: RpcRequest<'_>,
    caller: Caller,
) -> HttpResponse {
    let language = caller.language;
    let Some(id) = request.id else {
        // The core protocol defines no client notifications over HTTP at
        // this revision; they are acknowledged and dropped.
        return rpc::server::body::status_response(StatusCode::ACCEPTED);
    };
    let fail = |error: ProtocolError| reply::error(stateless_status(error.code), Some(id), &error);
    if id.get() == "null" {
        return fail(ProtocolError::new(rpc::error::code::INVALID_REQUEST, "the request id must not be null"));
    }
    let accepted = accepted(headers);
    let Some(mode) = accepted.single() else {
        let error = ProtocolError::new(
            rpc::error::code::INVALID_REQUEST,
            "Not Acceptable: the client must accept application/json and text/event-stream",
        );
        return reply::error(StatusCode::NOT_ACCEPTABLE, Some(id), &error);
    };
    if matches!(&*request.method, "initialize" | "ping" | "logging/setLevel") {
        // Handshake-era methods: not part of this revision. `initialize`
        // learns which versions to use instead.
        let mut error = ProtocolError::new(
            rpc::error::code::METHOD_NOT_FOUND,
            format!("Method not found: {} (not part of protocol 2026-07-28)", request.method),
        );
        if request.method == "initialize" {
            let supported: Vec<&str> = ProtocolVersion::STATELESS.iter().map(|v| v.as_str()).collect();
            error = error.with_data(json!({"supported": supported}));
        }
        return fail(error);
    }
    let admitted = match admit(&request, headers) {
        Ok(admitted) => admitted,
        Err(error) => return fail(error),
    };
    let inner = &endpoint.inner;
    let ok = |body: &[u8]| {
        let mut out = Vec::with_capacity(body.len() + 48);
        write_result(&mut out, id, body);
        reply::message(inner, mode, StatusCode::OK, out, Vec::new())
    };
    match &*request.method {
        "server/discover" => ok(&inner.texts(language).discover),
        "tools/list" => match tools.page(language, ProtocolVersion::V2026_07_28, admitted.params.cursor.as_deref()) {
            Some(page) => ok(page),
            None => fail(invalid_params("Invalid cursor")),
        },
        "tools/call" => call(endpoint, tools, version, id, admitted, headers, accepted, caller).await,
        "subscriptions/listen" if inner.list_changes.is_some() => {
            listen(endpoint, id, admitted, accepted, extensions, &caller)
        }
        other => {
            let shown: String = other.chars().take(64).collect();
            fail(ProtocolError::new(rpc::error::code::METHOD_NOT_FOUND, format!("Method not found: {shown}")))
        }
    }
}

#[allow(clippy::too_many_arguments)] // one request's facts, passed once
async fn call(
    endpoint: &McpEndpoint,
    tools: &ToolSet,
    version: u32,
    id: &RawValue,
    admitted: Admitted<'_>,
    headers: &HeaderMap,
    accepted: Accepted,
    caller: Caller,
) -> HttpResponse {
    let fail = |error: ProtocolError| reply::error(stateless_status(error.code), Some(id), &error);
    let Some(name) = admitted.params.name.and_then(json_str) else {
        return fail(invalid_params("tools/call requires params with a `name`"));
    };
    let arguments: Map<String, Value> = match admitted.params.arguments {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(_) => return fail(invalid_params("`arguments` must be an object")),
    };
    if let Some(tool) = tools.get(&name)
        && let Err(why) = headers::check_params(&tool.mirrored, &arguments, headers)
    {
        return fail(mismatch(why));
    }
    let call = ToolCall {
        id,
        name,
        arguments,
        version,
        protocol: ProtocolVersion::V2026_07_28,
        client: admitted.client,
        wanted: admitted.wanted,
        session: None,
        identity: caller.identity,
        input_bytes: admitted.input_bytes,
        language: caller.language,
    };
    exchange::answer(Arc::clone(&endpoint.inner), call, accepted, stateless_status).await
}

/// `subscriptions/listen`: a long-lived stream of the list changes the
/// client asked for.
fn listen(
    endpoint: &McpEndpoint,
    id: &RawValue,
    admitted: Admitted<'_>,
    accepted: Accepted,
    extensions: &http::Extensions,
    caller: &Caller,
) -> HttpResponse {
    let inner = &endpoint.inner;
    let Some(changes) = &inner.list_changes else {
        let error = ProtocolError::new(rpc::error::code::METHOD_NOT_FOUND, "Method not found: subscriptions/listen");
        return reply::error(StatusCode::NOT_FOUND, Some(id), &error);
    };
    if !accepted.sse {
        let error = ProtocolError::new(
            rpc::error::code::INVALID_REQUEST,
            "Not Acceptable: subscriptions/listen answers with a text/event-stream",
        );
        return reply::error(StatusCode::NOT_ACCEPTABLE, Some(id), &error);
    }
    // A client is its identity when it has one, else its address.
    let client = match (caller.owner(), extensions.get::<rpc::server::PeerAddr>()) {
        (Some(subject), _) => format!("id:{subject}"),
        (None, Some(peer)) => format!("ip:{}", peer.0.ip()),
        (None, None) => "local".to_owned(),
    };
    let slot = match inner.listen_slots.take(&client) {
        Ok(slot) => slot,
        Err(refused) => {
            let message = match refused {
                Refused::Client(limit) => {
                    format!("Too many subscriptions/listen streams: at most {limit} per client; close one first")
                }
                Refused::Endpoint(limit) => {
                    format!("Too many subscriptions/listen streams: the server has its {limit} open; retry later")
                }
            };
            let error = ProtocolError::new(rpc::error::code::INVALID_REQUEST, message);
            let mut response = reply::error(StatusCode::TOO_MANY_REQUESTS, Some(id), &error);
            response.headers_mut().insert(http::header::RETRY_AFTER, http::HeaderValue::from_static("5"));
            return response;
        }
    };
    let asked = admitted.params.notifications.unwrap_or(Value::Null);
    let wants = |field: &str| asked.get(field).and_then(Value::as_bool).unwrap_or(false);
    // Only tool-list changes exist on this endpoint: other kinds are left
    // out of the acknowledgement (the client learns they are not served).
    let filter = ListenFilter { tools: wants("toolsListChanged"), prompts: false, resources: false };
    let mut honoured = Map::new();
    if filter.tools {
        honoured.insert("toolsListChanged".into(), Value::Bool(true));
    }
    let mut params = Map::new();
    params.insert(
        "_meta".into(),
        json!({ meta::SUBSCRIPTION_ID: serde_json::from_str::<Value>(id.get()).unwrap_or(Value::Null) }),
    );
    params.insert("notifications".into(), Value::Object(honoured));
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": params});
    let mut closed = vec![changes.closed()];
    if let Some(draining) = extensions.get::<Draining>() {
        closed.push(draining.receiver());
    }
    let body = sse::listen_body(
        id.get().to_owned(),
        serde_json::to_vec(&ack).unwrap_or_default(),
        filter,
        changes.subscribe(),
        closed,
        inner.config.keep_alive,
        slot,
    );
    sse::response(body)
}
