//! MCP methods of the handshake era, once a session exists:
//! `ping`, `tools/list`, `tools/call`. (`initialize` creates the session
//! and is handled by the transport.)

use rpc::{Execution, Params, RpcError};
use serde_json::Value;

use crate::call::{CallTarget, call_tool};
use crate::endpoint::Inner;
use crate::protocol::ProtocolVersion;
use crate::tools::ToolSet;

/// The result of one request: the serialised `result` or an error, and the
/// core execution for after-response hooks.
pub struct Handled {
    /// Serialised `result` member, or the error.
    pub result: Result<Vec<u8>, RpcError>,
    /// The execution of a `tools/call`.
    pub execution: Option<Execution>,
}

impl Handled {
    fn done(result: Result<Vec<u8>, RpcError>) -> Self {
        Handled { result, execution: None }
    }
}

/// Handles one request of a session at protocol `protocol`, API version `version`.
pub(crate) async fn handle(
    inner: &Inner,
    tools: &ToolSet,
    version: u32,
    protocol: ProtocolVersion,
    method: &str,
    params: Params,
) -> Handled {
    match method {
        "ping" => Handled::done(Ok(b"{}".to_vec())),
        "tools/list" => Handled::done(list_tools(tools, protocol, params)),
        "tools/call" => {
            let target = CallTarget { group: &inner.group, version, protocol };
            let outcome = call_tool(&inner.executor, tools, target, params).await;
            Handled { result: outcome.result, execution: outcome.execution }
        }
        "initialize" => Handled::done(Err(RpcError::invalid_request("the session is already initialized"))),
        other => Handled::done(Err(RpcError::method_not_found(other))),
    }
}

fn list_tools(tools: &ToolSet, protocol: ProtocolVersion, params: Params) -> Result<Vec<u8>, RpcError> {
    let cursor = match &params {
        Params::Named(map) => match map.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(c.as_str()),
            Some(_) => return Err(RpcError::invalid_params("Invalid cursor: `cursor` must be a string")),
        },
        Params::None => None,
        Params::Positional(_) => return Err(RpcError::invalid_params("tools/list params must be an object")),
    };
    tools.page(protocol, cursor).map(|page| page.to_vec()).ok_or_else(|| RpcError::invalid_params("Invalid cursor"))
}
