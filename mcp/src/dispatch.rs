//! MCP methods of the handshake era, once a session exists:
//! `ping`, `tools/list`, `tools/call`. (`initialize` creates the session
//! and is handled by the transport.)

use std::borrow::Cow;

use rpc::jsonrpc::envelope::Request;
use rpc::{Execution, RpcError};
use serde::Deserialize;

use crate::call::{CallParams, CallTarget, call_tool};
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
    request: &Request<'_>,
) -> Handled {
    match &*request.method {
        "ping" => Handled::done(Ok(b"{}".to_vec())),
        "tools/list" => Handled::done(list_tools(tools, protocol, request)),
        "tools/call" => {
            let params = match request.params_as::<CallParams<'_>>() {
                Ok(params) => params,
                Err(e) => return Handled::done(Err(e)),
            };
            let target = CallTarget { group: &inner.group, version, protocol };
            let outcome = call_tool(&inner.executor, tools, target, params).await;
            Handled { result: outcome.result, execution: outcome.execution }
        }
        "initialize" => Handled::done(Err(RpcError::invalid_request("the session is already initialized"))),
        other => Handled::done(Err(RpcError::method_not_found(other))),
    }
}

/// `tools/list` params.
#[derive(Deserialize)]
struct ListParams<'a> {
    #[serde(borrow, default)]
    cursor: Option<Cow<'a, str>>,
}

fn list_tools(tools: &ToolSet, protocol: ProtocolVersion, request: &Request<'_>) -> Result<Vec<u8>, RpcError> {
    let cursor = request.params_as::<ListParams<'_>>()?.and_then(|p| p.cursor);
    tools
        .page(protocol, cursor.as_deref())
        .map(|page| page.to_vec())
        .ok_or_else(|| RpcError::invalid_params("Invalid cursor"))
}
