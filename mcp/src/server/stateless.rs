//! 2026-07-28: every request is self-contained; its `_meta` carries its
//! protocol version and the client's capabilities; no `initialize`, no
//! sessions.
//!
//! Checks, in the specification's (and the conformance suite's) order,
//! after parsing (`-32700`) and the JSON-RPC shape (`-32600`): the
//! mirrored routing headers (HTTP only, `-32020`); `_meta` with
//! `protocolVersion` and `clientCapabilities` (`-32602`); the
//! `MCP-Protocol-Version` header equal to `_meta`'s (HTTP only, `-32020`);
//! a supported version (`-32022` with `data: {supported, requested}`); a
//! known method (404, `-32601`); for `tools/call`, the `Mcp-Param-*`
//! headers (HTTP only, `-32020`) and the client capabilities the tool needs
//! (`-32021`). Every error carries the request id.

use std::borrow::Cow;
use std::sync::Arc;

use rpc::ClientView;
use rpc::jsonrpc::raw_json_str;
use rpc::jsonrpc::response::result_body;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::askers::Round;
use super::incoming::Incoming;
use super::listen::listen;
use super::methods::{self, Asked};
use super::params::{
    self, CallParams, CompleteParams, EnvelopeOnly, ListParams, ListenParams, MetaSlot, PromptParams, ResourceParams,
    RpcRequest, TaskParams, WithMeta,
};
use super::reply::{Reply, Status, stateless_status};
use super::state::Inner;
use super::tool_call::{self, ToolCall};
use crate::call::{Arguments, ProtocolError};
use crate::notify::Wanted;
use crate::protocol::{ProtocolVersion, code, meta};
use crate::session::{ClientInfo, KnownCapabilities};
use crate::tools::ToolSet;

fn invalid_params(message: impl Into<Cow<'static, str>>) -> ProtocolError {
    ProtocolError::new(rpc::error::code::INVALID_PARAMS, message)
}

/// What the checks found: the request is served for this client.
pub(crate) struct Admitted<P> {
    pub params: P,
    pub input_bytes: usize,
    pub client: ClientView,
    pub wanted: Wanted,
}

impl<P> Admitted<P> {
    /// The same findings, for the params `params` makes of these.
    fn map<Q>(self, params: impl FnOnce(P) -> Q) -> Admitted<Q> {
        let Admitted { params: read, input_bytes, client, wanted } = self;
        Admitted { params: params(read), input_bytes, client, wanted }
    }
}

/// Runs the checks up to the supported version, reading `params` as `P`.
fn admit<'a, P: WithMeta<'a>>(
    request: &'a RpcRequest<'a>,
    incoming: &Incoming<'_>,
) -> Result<Admitted<P>, ProtocolError> {
    if let Some(mirror) = incoming.mirror {
        mirror.method(&request.method)?;
    }
    let mut params: P = match request.params {
        None => request.early.as_ref().and_then(P::early).unwrap_or_default(),
        Some(raw) if raw.get().starts_with('{') => {
            rpc::executor::cpu_bound(raw.get().len(), || serde_json::from_str(raw.get()))
                .map_err(|e| invalid_params(format!("params are not an object of the expected shape: {e}")))?
        }
        Some(_) => return Err(invalid_params("params must be an object carrying `_meta`")),
    };
    let meta = params.take_meta();
    Ok(check(request, incoming, params.name(), meta.as_ref())?.map(|()| params))
}

/// The checks of [`admit`] on `params` read already: their `name` (the
/// methods that have one) and their `_meta`.
fn check<'a>(
    request: &'a RpcRequest<'a>,
    incoming: &Incoming<'_>,
    name: Option<&'a RawValue>,
    meta: Option<&MetaSlot<'a>>,
) -> Result<Admitted<()>, ProtocolError> {
    if let Some(name) = name {
        let Some(body_name) = raw_json_str(name) else {
            return Err(invalid_params("`name` must be a string"));
        };
        if let Some(mirror) = incoming.mirror {
            mirror.name(&body_name)?;
        }
    }
    let Some(MetaSlot::Object(envelope)) = meta else {
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
    let version: Option<Cow<'_, str>> = envelope.protocol_version.and_then(raw_json_str);
    if let Some(mirror) = incoming.mirror {
        mirror.version(version.as_deref())?;
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
    let input_bytes = params::params_bytes(request);
    Ok(Admitted { params: (), input_bytes, client, wanted: Wanted { progress_token, log_level } })
}

/// [`admit`] for `tools/call`: params the envelope's pass read are checked
/// and borrowed where they are, not copied out (they are a hundred and
/// fifty bytes); others are read into `read`.
fn admit_call<'a>(
    request: &'a RpcRequest<'a>,
    incoming: &Incoming<'_>,
    read: &'a mut Option<CallParams<'a>>,
) -> Result<Admitted<&'a CallParams<'a>>, ProtocolError> {
    if let Some(params::ReadParams(params)) = &request.early {
        if let Some(mirror) = incoming.mirror {
            mirror.method(&request.method)?;
        }
        return Ok(check(request, incoming, params.name, params.meta.as_ref())?.map(|()| &**params));
    }
    Ok(admit::<CallParams<'a>>(request, incoming)?.map(|params| &*read.insert(params)))
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
        // The same client sends the same facts each time: its view is kept.
        return super::recent_clients::view_of(protocol, capabilities, info, || {
            ClientView::from_raw(
                Some(protocol.as_str().into()),
                capabilities.map(ToOwned::to_owned),
                info.map(ToOwned::to_owned),
            )
        });
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
    inner: &Arc<Inner>,
    tools: &ToolSet,
    incoming: &Incoming<'_>,
    request: &RpcRequest<'_>,
) -> Reply {
    let fail = |id, error: ProtocolError| Reply::error(stateless_status(error.code), Some(id), &error);
    match route(inner, tools, incoming, request) {
        Route::Answered(reply) => reply,
        Route::Call(id) => {
            let mut read = None;
            match admit_call(request, incoming, &mut read) {
                Ok(admitted) => rpc::future::outlined(call(inner, tools, id, admitted, incoming)).await,
                Err(error) => fail(id, error),
            }
        }
        // Boxed: the tools/call path keeps a small future.
        Route::BeyondTools(id) => rpc::future::in_box(|| beyond_tools(inner, id, request, incoming)).await,
        Route::Task(id) => match admit::<TaskParams<'_>>(request, incoming) {
            Ok(admitted) => rpc::future::in_box(|| task_method(inner, id, &request.method, admitted, incoming)).await,
            Err(error) => fail(id, error),
        },
    }
}

/// Where [`handle`] takes a request.
enum Route<'a> {
    /// Answered already.
    Answered(Reply),
    /// `tools/call`, with the request's id.
    Call(&'a RawValue),
    /// A method beyond tools ([`methods::is_beyond_tools`]).
    BeyondTools(&'a RawValue),
    /// `tasks/get`, `tasks/update` or `tasks/cancel`, the tasks extension served.
    Task(&'a RawValue),
}

/// What [`handle`] does not wait for: the request's checks and the answers
/// made at once. A function of its own, not inlined: the refusals' and the
/// lists' values are not laid out in the stack frame of every call.
#[inline(never)]
fn route<'a>(inner: &Arc<Inner>, tools: &ToolSet, incoming: &Incoming<'_>, request: &'a RpcRequest<'a>) -> Route<'a> {
    let language = incoming.caller.language;
    let Some(id) = request.id else {
        // The core protocol defines no client notifications at this
        // revision; they are acknowledged and dropped.
        return Route::Answered(Reply::Accepted);
    };
    let fail = |error: ProtocolError| Route::Answered(Reply::error(stateless_status(error.code), Some(id), &error));
    if id.get() == "null" {
        return fail(ProtocolError::new(rpc::error::code::INVALID_REQUEST, "the request id must not be null"));
    }
    if !incoming.accepts.any() {
        let error = ProtocolError::new(
            rpc::error::code::INVALID_REQUEST,
            "Not Acceptable: the client must accept application/json and text/event-stream",
        );
        return Route::Answered(Reply::error(Status::NotAcceptable, Some(id), &error));
    }
    if matches!(
        &*request.method,
        "initialize" | "ping" | "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe"
    ) {
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
    let ok = |body: &[u8]| Route::Answered(Reply::message(Status::Ok, result_body(id, body), Vec::new()));
    match &*request.method {
        "tools/call" => Route::Call(id),
        "server/discover" => match admit::<EnvelopeOnly<'_>>(request, incoming) {
            Ok(_) => ok(&inner.texts(language).discover),
            Err(error) => fail(error),
        },
        "tools/list" => match admit::<ListParams<'_>>(request, incoming) {
            Ok(admitted) => match tools.page(
                incoming.caller.identity.as_deref(),
                language,
                ProtocolVersion::V2026_07_28,
                admitted.params.cursor.as_deref(),
            ) {
                Some(page) => ok(&page),
                None => fail(invalid_params("Invalid cursor")),
            },
            Err(error) => fail(error),
        },
        method if methods::is_beyond_tools(method) => Route::BeyondTools(id),
        "tasks/get" | "tasks/update" | "tasks/cancel" if inner.served.tasks => Route::Task(id),
        "subscriptions/listen" if inner.list_changes.is_some() => match admit::<ListenParams<'_>>(request, incoming) {
            Ok(admitted) => Route::Answered(listen(inner, id, admitted.params.notifications, incoming)),
            Err(error) => fail(error),
        },
        other => {
            if let Err(error) = admit::<EnvelopeOnly<'_>>(request, incoming) {
                return fail(error);
            }
            let shown: String = other.chars().take(64).collect();
            fail(ProtocolError::new(rpc::error::code::METHOD_NOT_FOUND, format!("Method not found: {shown}")))
        }
    }
}

async fn call(
    inner: &Arc<Inner>,
    tools: &ToolSet,
    id: &RawValue,
    admitted: Admitted<&CallParams<'_>>,
    incoming: &Incoming<'_>,
) -> Reply {
    let fail = |error: ProtocolError| Reply::error(stateless_status(error.code), Some(id), &error);
    let Admitted { params, input_bytes, client, wanted } = admitted;
    let Some(name) = params.name.and_then(raw_json_str) else {
        return fail(invalid_params("tools/call requires params with a `name`"));
    };
    let Ok(mut arguments) = Arguments::from_member(params.arguments) else {
        return fail(invalid_params("`arguments` must be an object"));
    };
    let env = inner.executor.environment();
    let tool = tools.get(&name);
    // Only a tool with mirrored parameters has its arguments read here.
    if let (Some(mirror), Some(tool)) = (incoming.mirror, tool.filter(|t| !t.mirrored.is_empty())) {
        let checked = match arguments.read() {
            Ok(read) => mirror.arguments(tool, read),
            Err(error) => Err(ProtocolError::from_rpc(&error, env)),
        };
        if let Err(error) = checked {
            return fail(error);
        }
    }
    // A tool that takes tasks runs as one for a client that takes them.
    let as_task = match tool.map(|t| t.method.descriptor().tool) {
        Some(hints) if hints.task != rpc::TaskSupport::Forbidden => {
            if super::tasks::client_takes_tasks(&client) {
                Some(hints.starts_task)
            } else if hints.task == rpc::TaskSupport::Required {
                return fail(super::tasks::tasks_required(&name));
            } else {
                None
            }
        }
        _ => None,
    };
    // A tool that may ask the client gets an input-required round.
    let round = match tool.filter(|t| t.takes_context) {
        None => None,
        Some(_) => match arguments.read().and_then(|read| {
            Round::open(
                &inner.config,
                "tools/call",
                &name,
                read,
                params.input_responses.as_deref().cloned(),
                params.request_state.as_deref(),
            )
        }) {
            Ok(round) => Some(round),
            Err(error) => return fail(ProtocolError::from_rpc(&error, env)),
        },
    };
    let mut call = ToolCall {
        id: Cow::Borrowed(id),
        name,
        arguments,
        version: incoming.version,
        protocol: ProtocolVersion::V2026_07_28,
        client,
        wanted,
        cancel_scope: incoming.cancel_scope.map(Cow::Borrowed),
        silent_cancel: incoming.cancel_scope.is_some(),
        identity: incoming.caller.identity.clone(),
        peer: incoming.caller.client,
        input_bytes,
        language: incoming.caller.language,
        conversation: None,
        round,
        asker: None,
        task: false,
        tool,
    };
    if let Some(starts_task) = as_task {
        return rpc::future::in_box(|| super::tasks::answer(inner, call, starts_task)).await;
    }
    tool_call::answer(inner, &mut call, incoming.accepts, stateless_status).await
}

/// `tasks/get`, `tasks/update`, `tasks/cancel`, for clients that declare
/// the tasks extension.
async fn task_method(
    inner: &Arc<Inner>,
    id: &RawValue,
    method: &str,
    admitted: Admitted<TaskParams<'_>>,
    incoming: &Incoming<'_>,
) -> Reply {
    let fail = |error: ProtocolError| Reply::error(stateless_status(error.code), Some(id), &error);
    if !super::tasks::client_takes_tasks(&admitted.client) {
        return fail(super::tasks::extension_required(format!(
            "{method} needs the extension {} in the client's capabilities",
            crate::tasks::EXTENSION
        )));
    }
    let Some(task_id) = admitted.params.task_id.and_then(raw_json_str) else {
        return fail(invalid_params("params.taskId must be a string"));
    };
    let owner = incoming.caller.identity.as_ref().map(|i| i.subject.as_str());
    let texts = inner.texts(incoming.caller.language);
    let ack = || format!("{{{}}}", &texts.stateless_tail[1..]).into_bytes();
    let answer = match method {
        "tasks/get" => {
            let meta = crate::tools::server_info_meta(&texts.server_info);
            super::tasks::get(inner, owner, &task_id, &meta).await
        }
        "tasks/update" => {
            super::tasks::update(inner, owner, &task_id, admitted.params.input_responses).await.map(|()| ack())
        }
        _ => super::tasks::cancel(inner, owner, &task_id).await.map(|()| ack()),
    };
    match answer {
        Ok(body) => Reply::message(Status::Ok, result_body(id, &body), Vec::new()),
        Err(error) => fail(error),
    }
}

/// Resources, prompts and completion in this era: admitted as every
/// request, then the methods in [`methods`].
async fn beyond_tools(inner: &Arc<Inner>, id: &RawValue, request: &RpcRequest<'_>, incoming: &Incoming<'_>) -> Reply {
    let fail = |error: ProtocolError| Reply::error(stateless_status(error.code), Some(id), &error);
    let asked = |client: ClientView, input_bytes: usize| Asked {
        version: incoming.version,
        protocol: ProtocolVersion::V2026_07_28,
        language: incoming.caller.language,
        client,
        identity: incoming.caller.identity.clone(),
        peer: incoming.caller.client,
        input_bytes,
    };
    let method = &*request.method;
    let features = inner.features.version(incoming.version);
    let answer = match method {
        "resources/list" | "resources/templates/list" | "prompts/list" => {
            match admit::<ListParams<'_>>(request, incoming) {
                Err(error) => Err(error),
                Ok(_) if !methods::serves(inner, method) => Err(methods::not_served(method)),
                Ok(admitted) => {
                    let asked = asked(admitted.client, admitted.input_bytes);
                    methods::list(features, &asked, method, admitted.params.cursor.as_deref())
                        .map(|page| (page, Vec::new()))
                }
            }
        }
        "resources/read" => match admit::<ResourceParams<'_>>(request, incoming) {
            Err(error) => Err(error),
            Ok(_) if !methods::serves(inner, method) => Err(methods::not_served(method)),
            Ok(admitted) => match admitted.params.uri.and_then(raw_json_str) {
                None => Err(invalid_params("params.uri must be a string")),
                Some(uri) => methods::read(inner, features, &asked(admitted.client, admitted.input_bytes), &uri).await,
            },
        },
        "prompts/get" => match admit::<PromptParams<'_>>(request, incoming) {
            Err(error) => Err(error),
            Ok(_) if !methods::serves(inner, method) => Err(methods::not_served(method)),
            Ok(admitted) => match admitted.params.name.and_then(raw_json_str) {
                None => Err(invalid_params("params.name must be a string")),
                Some(name) => {
                    let asked = asked(admitted.client, admitted.input_bytes);
                    let round = (admitted.params.input_responses, admitted.params.request_state.as_deref());
                    methods::get_prompt(inner, features, &asked, &name, admitted.params.arguments, Some(round)).await
                }
            },
        },
        _ => match admit::<CompleteParams<'_>>(request, incoming) {
            Err(error) => Err(error),
            Ok(_) if !methods::serves(inner, method) => Err(methods::not_served(method)),
            Ok(admitted) => {
                let asked = asked(admitted.client, admitted.input_bytes);
                let CompleteParams { reference, argument, context, .. } = admitted.params;
                methods::complete(inner, features, &asked, reference, argument, context).await
            }
        },
    };
    match answer {
        Ok((body, executions)) => Reply::message(Status::Ok, result_body(id, &body), executions),
        Err(error) => fail(error),
    }
}
