//! `tools/call`: a tool call becomes a call of the core executor, and the
//! outcome becomes a `CallToolResult`.
//!
//! * Unknown tool, malformed params, arguments that fail the input schema:
//!   a JSON-RPC `-32602` error (the method does not run).
//! * Success: the result as JSON text, plus `structuredContent`
//!   `{"result": ...}` when the tool has an `outputSchema`; a method that
//!   returns MCP content has it passed through as `content`.
//! * An error from the method or the pipeline around it: `isError: true`
//!   with the RPC error object as the text.

use std::borrow::Cow;

use rpc::{Call, Environment, Execution, Executor, Params, RpcError, Stage, Transport};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::protocol::ProtocolVersion;
use crate::tools::{Tool, ToolSet};

/// Where a call is served.
#[derive(Debug, Clone, Copy)]
pub struct CallTarget<'a> {
    /// The API group of the endpoint.
    pub group: &'a str,
    /// The API version from the route.
    pub version: u32,
    /// The negotiated protocol revision.
    pub protocol: ProtocolVersion,
}

/// The outcome of a `tools/call`: a serialised `CallToolResult`, or a
/// protocol error; plus the execution (for after-response hooks).
pub struct CallOutcome {
    /// The serialised result or the JSON-RPC error.
    pub result: Result<Vec<u8>, RpcError>,
    /// The core execution, if the method was looked up.
    pub execution: Option<Execution>,
}

/// `tools/call` params (other members, such as `_meta`, are ignored).
#[derive(Deserialize)]
pub struct CallParams<'a> {
    /// The tool name.
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    /// The arguments (absent or `null`: none).
    #[serde(default)]
    pub arguments: Option<Map<String, Value>>,
}

/// Runs `tools/call` with `params` (`None`: the request had none).
pub async fn call_tool(
    executor: &Executor,
    tools: &ToolSet,
    target: CallTarget<'_>,
    params: Option<CallParams<'_>>,
) -> CallOutcome {
    let protocol_error = |e| CallOutcome { result: Err(e), execution: None };
    let Some(CallParams { name, arguments }) = params else {
        return protocol_error(RpcError::invalid_params("tools/call requires params with a `name`"));
    };
    let arguments = arguments.unwrap_or_default();
    let Some(tool) = tools.get(&name) else {
        return protocol_error(RpcError::invalid_params(format!("Unknown tool: {name}")));
    };
    let call = Call::new(&name, target.version, Params::Named(arguments)).scope(target.group).transport(Transport::Mcp);
    let execution = executor.execute(call).await;
    let result = match (&execution.result, execution.stage) {
        (Ok(value), _) => Ok(success(tool, value, target.protocol)),
        (Err(e), Stage::Lookup | Stage::Validation) => Err(e.clone()),
        // The method ran, or something around it refused it: a tool error the model can read.
        (Err(e), _) => Ok(tool_error(e, executor.environment())),
    };
    CallOutcome { result, execution: Some(execution) }
}

fn success(tool: &Tool, value: &RawValue, protocol: ProtocolVersion) -> Vec<u8> {
    let raw = value.get();
    let mut out = Vec::with_capacity(raw.len() * 2 + 96);
    if tool.returns_content {
        out.extend_from_slice(b"{\"content\":");
        if raw.starts_with('[') {
            out.extend_from_slice(raw.as_bytes());
        } else {
            out.push(b'[');
            out.extend_from_slice(raw.as_bytes());
            out.push(b']');
        }
        out.extend_from_slice(b",\"isError\":false}");
        return out;
    }
    out.extend_from_slice(b"{\"content\":[{\"type\":\"text\",\"text\":");
    // A `&str` always serialises.
    let _ = serde_json::to_writer(&mut out, raw);
    out.extend_from_slice(b"}]");
    if protocol.has_structured_output() && tool.has_output_schema() {
        out.extend_from_slice(b",\"structuredContent\":{\"result\":");
        out.extend_from_slice(raw.as_bytes());
        out.push(b'}');
    }
    out.extend_from_slice(b",\"isError\":false}");
    out
}

fn tool_error(error: &RpcError, env: Environment) -> Vec<u8> {
    let text = error.to_json(env).to_string();
    let mut out = Vec::with_capacity(text.len() + 64);
    out.extend_from_slice(b"{\"content\":[{\"type\":\"text\",\"text\":");
    let _ = serde_json::to_writer(&mut out, &text);
    out.extend_from_slice(b"}],\"isError\":true}");
    out
}
