//! The methods beyond tools, written once for both eras: the lists of
//! resources, resource templates and prompts, `resources/read`,
//! `prompts/get` and `completion/complete`. Each era reads the params its
//! way and writes the answer its way; here is what the method does.
//!
//! A resource read, a prompt and a completion run their method through the
//! same executor and pipeline as a tool call (validation, cache, locks,
//! events), with the URI's variables, the prompt's arguments or the
//! completion's value as arguments.

use std::sync::Arc;

use rpc::i18n::Language;
use rpc::{Call, ClientView, Context, Execution, Identity, Method, Params, RpcError, Transport};
use serde_json::{Map, Value, json};

use super::askers::Round;
use super::state::Inner;
use crate::call::ProtocolError;
use crate::completion::{self, Reference};
use crate::features::Features;
use crate::protocol::{ProtocolVersion, code};

/// What every one of these methods knows of its request.
pub(crate) struct Asked {
    pub version: u32,
    pub protocol: ProtocolVersion,
    pub language: Language,
    pub client: ClientView,
    pub identity: Option<Arc<Identity>>,
    /// The client's address (rate limits count by it without an identity).
    pub peer: Option<std::net::IpAddr>,
    pub input_bytes: usize,
}

/// A result object, and the executions whose after-response work waits for it.
pub(crate) type Answer = Result<(Vec<u8>, Vec<Execution>), ProtocolError>;

fn invalid_params(message: impl Into<String>) -> ProtocolError {
    ProtocolError::new(rpc::error::code::INVALID_PARAMS, message.into())
}

/// This module's methods.
const METHODS: &[&str] = &[
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
];

/// Whether `method` is one of this module's.
pub(crate) fn is_beyond_tools(method: &str) -> bool {
    METHODS.contains(&method)
}

/// Whether the endpoint serves `method` (one of this module's): a method
/// the server has no capability for is not found, as its capabilities say.
pub(crate) fn serves(inner: &Inner, method: &str) -> bool {
    match method {
        "resources/list" | "resources/templates/list" | "resources/read" => inner.served.resources,
        "resources/subscribe" | "resources/unsubscribe" => inner.served.resources,
        "prompts/list" | "prompts/get" => inner.served.prompts,
        "completion/complete" => inner.served.completions,
        _ => false,
    }
}

/// A list page (`cursor`: the client's, `None` for the first).
pub(crate) fn list(
    features: &Features,
    asked: &Asked,
    method: &str,
    cursor: Option<&str>,
) -> Result<Vec<u8>, ProtocolError> {
    let (language, protocol) = (asked.language, asked.protocol);
    let identity = asked.identity.as_deref();
    let page = match method {
        "resources/list" => features.resources.list().get(identity, language, protocol, cursor),
        "resources/templates/list" => features.resources.templates().get(identity, language, protocol, cursor),
        _ => features.prompts.list().get(identity, language, protocol, cursor),
    };
    page.map(|p| p.to_vec()).ok_or_else(|| invalid_params("Invalid cursor"))
}

/// Runs `method` with `arguments` through the executor; with a `round`,
/// the method may ask the client (2026-07-28), and an `InputRequiredResult`
/// replaces its result when it asked what the round does not answer.
async fn run(
    inner: &Inner,
    asked: &Asked,
    method: &Arc<Method>,
    arguments: Map<String, Value>,
    round: Option<&Round>,
) -> (Result<rpc::ResultJson, ProtocolError>, Vec<Execution>, Option<Vec<u8>>) {
    let mut context =
        Context::for_client(Transport::Mcp, method.name(), asked.client.clone()).with_identity(asked.identity.clone());
    if let Some(round) = round {
        context = context.with_asker(round.asker.clone());
    }
    let call = Call::new(method.name(), asked.version, Params::Named(arguments))
        .resolved(Arc::clone(method))
        .scope(&inner.group)
        .transport(Transport::Mcp)
        .from_client(asked.peer)
        .input_bytes(asked.input_bytes)
        .context(context);
    let execution = inner.executor.execute(call).await;
    let env = inner.executor.environment();
    let result = match &execution.result {
        Ok(value) => Ok(value.clone()),
        Err(e) => Err(ProtocolError::from_rpc(e, env)),
    };
    let executions = if execution.wants_response_sent() { vec![execution] } else { Vec::new() };
    let input_required = round.and_then(|round| {
        let meta = crate::tools::server_info_meta(&inner.texts(asked.language).server_info);
        round.input_required(&inner.config, &meta).map(|mut body| {
            body.push(b'}');
            body
        })
    });
    (result, executions, input_required)
}

/// Closes a result object: in 2026-07-28, `resultType` and the server's
/// identity (and `extra`, e.g. caching hints) first.
fn close(inner: &Inner, asked: &Asked, out: &mut Vec<u8>, extra: &str) {
    if asked.protocol.is_stateless() {
        out.extend_from_slice(extra.as_bytes());
        out.extend_from_slice(inner.texts(asked.language).stateless_tail.as_bytes());
    }
    out.push(b'}');
}

/// `resources/read` of `uri`.
pub(crate) async fn read(inner: &Inner, features: &Features, asked: &Asked, uri: &str) -> Answer {
    let Some((resource, variables)) = features.resources.find(uri) else {
        let shown: String = uri.chars().take(crate::uri_template::MAX_URI_BYTES).collect();
        let code =
            if asked.protocol.is_stateless() { rpc::error::code::INVALID_PARAMS } else { code::RESOURCE_NOT_FOUND };
        return Err(ProtocolError::new(code, "Resource not found").with_data(json!({"uri": shown})));
    };
    let arguments = crate::arguments::typed(&resource.method, variables);
    let (result, executions, _) = run(inner, asked, &resource.method, arguments, None).await;
    let contents = resource.contents(uri, &result?).map_err(|why| {
        tracing::error!(method = resource.method.name(), "a resource's result is not contents: {why}");
        ProtocolError::new(
            rpc::error::code::INTERNAL_ERROR,
            "the resource's method returned something that is not its contents",
        )
    })?;
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"{\"contents\":");
    let _ = serde_json::to_writer(&mut out, &contents);
    let hints = format!(
        ",\"ttlMs\":{},\"cacheScope\":\"{}\"",
        u64::try_from(inner.config.list_ttl.as_millis()).unwrap_or(u64::MAX),
        inner.config.cache_scope.as_str()
    );
    close(inner, asked, &mut out, &hints);
    Ok((out, executions))
}

/// `prompts/get` of `name` with `arguments` (strings).
pub(crate) async fn get_prompt(
    inner: &Inner,
    features: &Features,
    asked: &Asked,
    name: &str,
    arguments: Option<Value>,
    round: Option<(Option<Value>, Option<&str>)>,
) -> Answer {
    let Some(prompt) = features.prompts.get(name) else {
        let shown: String = name.chars().take(128).collect();
        return Err(invalid_params(format!("Unknown prompt: {shown}")));
    };
    let texts = match arguments {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(map)) => {
            let mut texts = Vec::with_capacity(map.len());
            for (key, value) in map {
                match value {
                    Value::String(text) => texts.push((key, text)),
                    _ => {
                        return Err(invalid_params(format!(
                            "prompt argument `{}` must be a string",
                            rpc::logged::logged(&key)
                        )));
                    }
                }
            }
            texts
        }
        Some(_) => return Err(invalid_params("`arguments` must be an object of strings")),
    };
    let arguments = crate::arguments::typed(&prompt.method, texts);
    // A prompt that takes a context may ask (2026-07-28: in rounds).
    let takes_context = prompt.method.descriptor().params.iter().any(|p| !p.is_param);
    let round = match round.filter(|_| takes_context) {
        Some((responses, state)) => Some(
            Round::open(&inner.config, "prompts/get", name, &arguments, responses, state)
                .map_err(|e| ProtocolError::from_rpc(&e, inner.executor.environment()))?,
        ),
        None => None,
    };
    let (result, executions, input_required) = run(inner, asked, &prompt.method, arguments, round.as_ref()).await;
    if let Some(body) = input_required {
        return Ok((body, executions));
    }
    let messages = prompt.messages(&result?).map_err(|why| {
        tracing::error!(method = prompt.method.name(), "a prompt's result is not messages: {why}");
        ProtocolError::new(
            rpc::error::code::INTERNAL_ERROR,
            "the prompt's method returned something that is not messages",
        )
    })?;
    let mut body = Map::new();
    if let Some(description) = prompt.method.descriptor().summary {
        body.insert("description".into(), json!(description));
    }
    body.insert("messages".into(), messages);
    let mut out = serde_json::to_vec(&Value::Object(body)).unwrap_or_default();
    out.pop();
    close(inner, asked, &mut out, "");
    Ok((out, executions))
}

/// `completion/complete`: `reference` (`{"type": "ref/prompt", "name"}` or
/// `{"type": "ref/resource", "uri"}`), `argument` (`{"name", "value"}`),
/// `context` (`{"arguments": {...}}`).
pub(crate) async fn complete(
    inner: &Inner,
    features: &Features,
    asked: &Asked,
    reference: Option<Value>,
    argument: Option<Value>,
    context: Option<Value>,
) -> Answer {
    let reference = match reference.as_ref().and_then(|r| r.get("type")).and_then(Value::as_str) {
        Some("ref/prompt") => match reference.as_ref().and_then(|r| r.get("name")).and_then(Value::as_str) {
            Some(name) if features.prompts.get(name).is_some() => Reference::Prompt(name.to_owned()),
            Some(name) => return Err(invalid_params(format!("Unknown prompt: {}", rpc::logged::logged(name)))),
            None => return Err(invalid_params("`ref.name` must name a prompt")),
        },
        Some("ref/resource") => match reference.as_ref().and_then(|r| r.get("uri")).and_then(Value::as_str) {
            Some(uri) if features.resources.template(uri).is_some() => Reference::Resource(uri.to_owned()),
            Some(uri) => {
                return Err(invalid_params(format!("Unknown resource template: {}", rpc::logged::logged(uri))));
            }
            None => return Err(invalid_params("`ref.uri` must name a resource template")),
        },
        _ => {
            return Err(invalid_params(
                "`ref` must be {\"type\": \"ref/prompt\", \"name\"} or {\"type\": \"ref/resource\", \"uri\"}",
            ));
        }
    };
    let (Some(name), Some(value)) = (
        argument.as_ref().and_then(|a| a.get("name")).and_then(Value::as_str),
        argument.as_ref().and_then(|a| a.get("value")).and_then(Value::as_str),
    ) else {
        return Err(invalid_params("`argument` must be {\"name\": ..., \"value\": ...} with strings"));
    };
    let Some(provider) = features.completions.provider(&reference, name) else {
        // Nothing to suggest for this argument.
        let mut out = serde_json::to_vec(&json!({"completion": completion::completion(None).unwrap_or_default()}))
            .unwrap_or_default();
        out.pop();
        close(inner, asked, &mut out, "");
        return Ok((out, Vec::new()));
    };
    let mut texts: Vec<(String, String)> =
        match context.as_ref().and_then(|c| c.get("arguments")).and_then(Value::as_object) {
            Some(given) => given
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .filter(|(k, _)| k != "value")
                .collect(),
            None => Vec::new(),
        };
    texts.push(("value".into(), value.to_owned()));
    let arguments = crate::arguments::typed(provider, texts);
    let (result, executions, _) = run(inner, asked, provider, arguments, None).await;
    let completion = completion::completion(Some(&result?)).map_err(|why| {
        tracing::error!(method = provider.name(), "{why}");
        ProtocolError::new(rpc::error::code::INTERNAL_ERROR, "the completion method did not return a list of strings")
    })?;
    let mut out = serde_json::to_vec(&json!({"completion": completion})).unwrap_or_default();
    out.pop();
    close(inner, asked, &mut out, "");
    Ok((out, executions))
}

/// Refusal of a method the endpoint does not serve.
pub(crate) fn not_served(method: &str) -> ProtocolError {
    let shown: String = method.chars().take(64).collect();
    ProtocolError::new(rpc::error::code::METHOD_NOT_FOUND, format!("Method not found: {shown}"))
}

/// The most resources one session subscribes to.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 32;

/// A subscription as a session keeps it: a digest of the URI (a session
/// stays small whatever the URIs' length).
pub(crate) fn subscription_key(uri: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(uri.as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// `resources/subscribe` (`on`) or `resources/unsubscribe` of `uri`, for
/// the handshake-era session `session`.
pub(crate) async fn subscribe(
    inner: &Inner,
    features: &Features,
    session: &crate::session::Session,
    uri: &str,
    on: bool,
) -> Result<Vec<u8>, ProtocolError> {
    if on && features.resources.find(uri).is_none() {
        let shown: String = uri.chars().take(crate::uri_template::MAX_URI_BYTES).collect();
        return Err(ProtocolError::new(code::RESOURCE_NOT_FOUND, "Resource not found").with_data(json!({"uri": shown})));
    }
    let key = subscription_key(uri);
    let mut updated = session.clone();
    let present = updated.subscriptions.contains(&key);
    match (on, present) {
        (true, true) | (false, false) => return Ok(b"{}".to_vec()),
        (true, false) if updated.subscriptions.len() >= MAX_SUBSCRIPTIONS => {
            return Err(invalid_params(format!(
                "a session subscribes to at most {MAX_SUBSCRIPTIONS} resources: unsubscribe from one first"
            )));
        }
        (true, false) => updated.subscriptions.push(key),
        (false, true) => updated.subscriptions.retain(|k| *k != key),
    }
    match inner.sessions.update(updated).await {
        Ok(_) => Ok(b"{}".to_vec()),
        Err(e) => Err(ProtocolError::from_rpc(&RpcError::internal(e), inner.executor.environment())),
    }
}
