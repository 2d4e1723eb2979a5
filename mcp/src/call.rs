//! `tools/call`: a tool call becomes a call of the core executor, and the
//! outcome becomes a `CallToolResult` — the same in both eras.
//!
//! * Unknown tool, malformed params: a JSON-RPC `-32602` error (the method
//!   does not run). Arguments that fail the input schema: `-32602` too, or,
//!   with [`InvalidArguments::ToolError`], an `isError: true` result with the
//!   same details.
//! * A tool that needs a client capability the client did not declare
//!   (`#[mcp_tool(requires_client(sampling))]`): `-32021` with
//!   `data.requiredCapabilities`.
//! * Success: the result as JSON text, plus `structuredContent`
//!   `{"result": ...}` when the tool has an `outputSchema`; a method that
//!   returns MCP content has it passed through as `content`. In 2026-07-28,
//!   also `resultType` and the server's identity in `_meta`.
//! * An error from the method or the pipeline around it: `isError: true`
//!   with the RPC error object as the text; in a task, an internal error
//!   (`-32603`, a panic) is a protocol error instead (the task fails).

use std::sync::Arc;

use std::borrow::Cow;

use rpc::{Call, Context, Environment, Execution, Executor, Params, ResultJson, RpcError, Stage, Transport};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::config::InvalidArguments;
use crate::protocol::{ProtocolVersion, code};
use crate::tools::Tool;

/// A JSON-RPC error object as MCP defines it: the code, the message and
/// exactly the `data` the protocol gives the code (`-32021`, `-32022` have
/// fixed shapes), or the RPC error's environment-dependent data.
#[derive(Debug, Clone, PartialEq)]
pub struct ProtocolError {
    /// The JSON-RPC code.
    pub code: i32,
    /// The message.
    pub message: Cow<'static, str>,
    /// The `data` member (boxed: the error travels inside every call's
    /// outcome, which stays small enough to move without a `memcpy` call).
    pub data: Option<Box<Value>>,
}

impl ProtocolError {
    /// An error with no data.
    pub fn new(code: i32, message: impl Into<Cow<'static, str>>) -> Self {
        ProtocolError { code, message: message.into(), data: None }
    }

    /// The error with `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(Box::new(data));
        self
    }

    /// An RPC error, with its data as `env` shows it.
    pub fn from_rpc(error: &RpcError, env: Environment) -> Self {
        ProtocolError {
            code: error.code(),
            message: Cow::Owned(error.message().to_owned()),
            data: Some(Box::new(error.data(env))),
        }
    }

    /// `-32021`: the tool needs client capabilities the request did not declare.
    pub fn missing_capabilities(names: &[&str]) -> Self {
        let required: Map<String, Value> = names.iter().map(|n| ((*n).to_owned(), json!({}))).collect();
        ProtocolError::new(
            code::MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!("Missing required client capability: {}", names.join(", ")),
        )
        .with_data(json!({"requiredCapabilities": required}))
    }

    /// Appends the `{"code","message","data"}` object, serialised (as
    /// [`to_json`](Self::to_json) would give it, without building it).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"code\":");
        // Numbers, a `&str` and a `Value` serialise into a Vec without failing.
        let _ = serde_json::to_writer(&mut *out, &self.code);
        out.extend_from_slice(b",\"message\":");
        let _ = serde_json::to_writer(&mut *out, &*self.message);
        if let Some(data) = &self.data {
            out.extend_from_slice(b",\"data\":");
            let _ = serde_json::to_writer(&mut *out, data);
        }
        out.push(b'}');
    }

    /// The `{"code","message","data"}` object.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("code".into(), json!(self.code));
        obj.insert("message".into(), Value::String(self.message.to_string()));
        if let Some(data) = &self.data {
            obj.insert("data".into(), Value::clone(data));
        }
        Value::Object(obj)
    }
}

/// Where a call is served.
#[derive(Debug, Clone, Copy)]
pub struct CallTarget<'a> {
    /// The API group of the endpoint.
    pub group: &'a str,
    /// The API version from the route.
    pub version: u32,
    /// The protocol revision the request is served at.
    pub protocol: ProtocolVersion,
    /// How invalid arguments are reported.
    pub invalid_arguments: InvalidArguments,
    /// `,"resultType":"complete","_meta":{...}` to close 2026-07-28 results with.
    pub stateless_tail: &'a str,
    /// The size of the request's `params` in bytes: large arguments are
    /// validated without holding up the runtime worker
    /// ([`rpc::Call::input_bytes`]).
    pub input_bytes: usize,
    /// The call runs as a task: an internal error of the method (`-32603`,
    /// a panic included) is a protocol error that fails the task, rather
    /// than a tool error it completes with.
    pub task: bool,
    /// The client's address (rate limits count by it without an identity).
    pub peer: Option<std::net::IpAddr>,
    /// The JSON-RPC id of the request, to write a result as its whole
    /// response (`{"jsonrpc":"2.0","id":…,"result":…}`): the result is
    /// built in its envelope, not copied into one. `None`: the
    /// `CallToolResult` alone.
    pub envelope: Option<&'a RawValue>,
}

/// The outcome of a `tools/call`: a serialised `CallToolResult`, or a
/// protocol error; plus the execution (for after-response listeners).
pub struct CallOutcome {
    /// The serialised result (inside its response when the target named an
    /// [`envelope`](CallTarget::envelope)) or the error.
    pub result: Result<Vec<u8>, ProtocolError>,
    /// The core execution, if the method was looked up.
    pub execution: Option<Execution>,
}

/// `tools/call` params (other members, such as `_meta`, are read elsewhere).
#[derive(Deserialize)]
pub struct CallParams<'a> {
    /// The tool name.
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    /// The arguments (absent or `null`: none).
    #[serde(default)]
    pub arguments: Option<Map<String, Value>>,
}

/// The arguments of a `tools/call`: read into a map, or the raw text of
/// their JSON object, which the executor reads only when it needs to (a
/// repeated call of a cached tool is answered without reading them, see
/// [`rpc::Call::named_raw`]).
#[derive(Debug, Clone)]
pub enum Arguments<'a> {
    /// Read.
    Read(Map<String, Value>),
    /// A JSON object's text, unread.
    Raw(Cow<'a, RawValue>),
}

/// No arguments (also what a call leaves behind when its arguments are
/// taken out of it).
impl Default for Arguments<'_> {
    fn default() -> Self {
        Arguments::Read(Map::new())
    }
}

impl<'a> Arguments<'a> {
    /// The `arguments` member as given: absent or `null` is no arguments,
    /// an object is kept unread; anything else is `-32602`.
    pub fn from_member(member: Option<&'a RawValue>) -> Result<Self, RpcError> {
        match member {
            None => Ok(Arguments::default()),
            Some(raw) if raw.get() == "null" => Ok(Arguments::default()),
            Some(raw) if raw.get().starts_with('{') => Ok(Arguments::Raw(Cow::Borrowed(raw))),
            Some(_) => Err(RpcError::invalid_params("`arguments` must be an object")),
        }
    }

    /// The arguments read (once; they stay read): `-32602` for an object
    /// a parser cannot read (a number beyond `f64`, too deep).
    pub fn read(&mut self) -> Result<&Map<String, Value>, RpcError> {
        if let Arguments::Raw(raw) = self {
            *self = Arguments::Read(rpc::call::read_params(raw)?);
        }
        match self {
            Arguments::Read(map) => Ok(map),
            Arguments::Raw(_) => Err(RpcError::internal("arguments left unread")),
        }
    }

    /// The arguments read, as a map.
    pub fn into_map(self) -> Result<Map<String, Value>, RpcError> {
        match self {
            Arguments::Read(map) => Ok(map),
            Arguments::Raw(raw) => rpc::call::read_params(&raw),
        }
    }

    /// The arguments with everything they borrow copied.
    pub fn into_owned(self) -> Arguments<'static> {
        match self {
            Arguments::Read(map) => Arguments::Read(map),
            Arguments::Raw(raw) => Arguments::Raw(Cow::Owned(raw.into_owned())),
        }
    }
}

/// Runs `tool` (looked up by `name`; `None`: there is none) with
/// `arguments`; the method gets `context`.
#[allow(clippy::manual_async_fn, reason = "an async fn's future would hold its arguments twice")]
pub fn call_tool<'a>(
    executor: &'a Executor,
    tool: Option<&'a Tool>,
    target: CallTarget<'a>,
    name: &'a str,
    arguments: Arguments<'a>,
    context: Context,
) -> impl Future<Output = CallOutcome> + Send + 'a {
    // An `async` block, not an `async fn`, which would copy its arguments
    // into locals (its future, inside every caller's, holding them twice);
    // the call is built inside the expression that hands it to the
    // executor, so that its storage is not kept beside the executor's
    // future.
    let mut arguments = arguments;
    async move {
        let env = executor.environment();
        let refuse = async |rpc: RpcError, e: ProtocolError| {
            executor.report_refusal(name, target.version, Transport::Mcp, context.identity(), &rpc).await;
            CallOutcome { result: Err(e), execution: None }
        };
        let Some(tool) = tool else {
            let error = RpcError::invalid_params(format!("Unknown tool: {name}"));
            let protocol = ProtocolError::from_rpc(&error, env);
            return refuse(error, protocol).await;
        };
        let required = tool.method.descriptor().tool.requires_client;
        let missing: Vec<&str> = required.iter().copied().filter(|c| !context.client_has(c)).collect();
        if !missing.is_empty() {
            let protocol = ProtocolError::missing_capabilities(&missing);
            let error = RpcError::new(protocol.code, format!("the client lacks capabilities: {}", missing.join(", ")));
            return refuse(error, protocol).await;
        }
        let execution = executor
            .execute({
                // Set in place: a builder call moves the whole call (hundreds
                // of bytes) in and out.
                let mut call = match &mut arguments {
                    Arguments::Read(map) => Call::new(name, target.version, Params::Named(std::mem::take(map))),
                    Arguments::Raw(raw) => {
                        let mut call = Call::new(name, target.version, Params::None);
                        call.raw_named = Some(&**raw);
                        call
                    }
                };
                call.resolved = Some(Arc::clone(&tool.method));
                call.scope = Some(target.group);
                call.transport = Transport::Mcp;
                (call.metered, call.peer) = (true, target.peer);
                call.input_bytes = target.input_bytes;
                call.context = Some(context);
                // Its text content: a cached result keeps it written.
                call.result_as_string = !tool.returns_content;
                call
            })
            .await;
        let result = match (&execution.result, execution.stage) {
            (Ok(value), _) => Ok(success(tool, value, target)),
            (Err(e), Stage::Lookup | Stage::Access | Stage::RateLimit) => Err(ProtocolError::from_rpc(e, env)),
            (Err(e), Stage::Validation) => match target.invalid_arguments {
                InvalidArguments::ProtocolError => Err(ProtocolError::from_rpc(e, env)),
                InvalidArguments::ToolError => Ok(tool_error(e, env, target)),
            },
            (Err(e), _) if target.task && e.code() == rpc::error::code::INTERNAL_ERROR => {
                Err(ProtocolError::from_rpc(e, env))
            }
            // The method ran, or something around it refused it: a tool error the model can read.
            (Err(e), _) => Ok(tool_error(e, env, target)),
        };
        CallOutcome { result, execution: Some(execution) }
    }
}

/// A buffer for a result object of `len` bytes before [`close`], with room
/// for what `close` writes; its response's head written first when the
/// target names an [`envelope`](CallTarget::envelope).
fn open(len: usize, target: CallTarget<'_>) -> Vec<u8> {
    let head = target.envelope.map_or(0, rpc::jsonrpc::response::result_head_len);
    let mut out = Vec::with_capacity(head + len + close_len(target));
    if let Some(id) = target.envelope {
        rpc::jsonrpc::response::write_result_head(&mut out, id);
    }
    out
}

/// Closes a result object: `}` or, in 2026-07-28, the stateless fields
/// first; then its response, when it has one.
fn close(out: &mut Vec<u8>, target: CallTarget<'_>) {
    if target.protocol.is_stateless() {
        out.extend_from_slice(target.stateless_tail.as_bytes());
    }
    out.push(b'}');
    if target.envelope.is_some() {
        out.push(b'}');
    }
}

/// The bytes [`close`] writes for `target`.
fn close_len(target: CallTarget<'_>) -> usize {
    let tail = if target.protocol.is_stateless() { target.stateless_tail.len() } else { 0 };
    tail + 1 + usize::from(target.envelope.is_some())
}

const CONTENT: &[u8] = b"{\"content\":";
const TEXT_CONTENT: &[u8] = b"{\"content\":[{\"type\":\"text\",\"text\":";
const STRUCTURED: &[u8] = b",\"structuredContent\":{\"result\":";
const NOT_AN_ERROR: &[u8] = b",\"isError\":false";

/// A result's `CallToolResult`, in a buffer of exactly its size (a full
/// buffer becomes the response's `Bytes` without another allocation).
fn success(tool: &Tool, value: &ResultJson, target: CallTarget<'_>) -> Vec<u8> {
    let raw = value.get();
    if tool.returns_content {
        let listed = raw.starts_with('[');
        let brackets = if listed { 0 } else { 2 };
        let mut out = open(CONTENT.len() + raw.len() + brackets + NOT_AN_ERROR.len(), target);
        out.extend_from_slice(CONTENT);
        if listed {
            out.extend_from_slice(raw.as_bytes());
        } else {
            out.push(b'[');
            out.extend_from_slice(raw.as_bytes());
            out.push(b']');
        }
        out.extend_from_slice(NOT_AN_ERROR);
        close(&mut out, target);
        debug_assert_eq!(out.len(), out.capacity(), "a result's size reckoned exactly");
        return out;
    }
    let structured = target.protocol.has_structured_output() && tool.has_output_schema();
    let structured_len = if structured { STRUCTURED.len() + raw.len() + 1 } else { 0 };
    // Kept with a cached result (written by its first hit), else written now.
    let kept = value.json_string();
    let text_len = kept.map_or_else(|| rpc::jsonrpc::json_string_len(raw), str::len);
    let mut out = open(TEXT_CONTENT.len() + text_len + 2 + structured_len + NOT_AN_ERROR.len(), target);
    out.extend_from_slice(TEXT_CONTENT);
    match kept {
        Some(string) => out.extend_from_slice(string.as_bytes()),
        None => rpc::jsonrpc::write_json_string(&mut out, raw),
    }
    out.extend_from_slice(b"}]");
    if structured {
        out.extend_from_slice(STRUCTURED);
        out.extend_from_slice(raw.as_bytes());
        out.push(b'}');
    }
    out.extend_from_slice(NOT_AN_ERROR);
    close(&mut out, target);
    debug_assert_eq!(out.len(), out.capacity(), "a result's size reckoned exactly");
    out
}

fn tool_error(error: &RpcError, env: Environment, target: CallTarget<'_>) -> Vec<u8> {
    let text = error.to_json(env).to_string();
    let mut out = open(text.len() + 64, target);
    out.extend_from_slice(TEXT_CONTENT);
    rpc::jsonrpc::write_json_string(&mut out, &text);
    out.extend_from_slice(b"}],\"isError\":true");
    close(&mut out, target);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_json_is_the_object() {
        for error in [
            ProtocolError::new(-32602, "bad \"id\"\n"),
            ProtocolError::new(-32603, "x").with_data(json!({"b": [1, {"c": null}], "a": "é"})),
            ProtocolError::missing_capabilities(&["sampling", "roots"]),
        ] {
            let mut out = Vec::new();
            error.write_json(&mut out);
            assert_eq!(serde_json::from_slice::<Value>(&out).unwrap(), error.to_json());
            assert_eq!(out, serde_json::to_vec(&error.to_json()).unwrap(), "same bytes, same member order");
        }
    }
}
