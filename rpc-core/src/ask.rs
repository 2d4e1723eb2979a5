//! Asking the client during a call: a method awaits an answer from the
//! client (MCP: `elicitation/create`, `sampling/createMessage`,
//! `roots/list`) through its [`Context`](crate::Context). The transport
//! decides how: a request on the call's response stream (the MCP handshake
//! era, stdio), or a round trip of the whole request with
//! `inputRequests`/`inputResponses` (MCP 2026-07-28). JSON-RPC over `/rpc`
//! cannot ask: the call fails with [`cannot_ask`].

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::error::RpcError;

/// How a transport asks its client.
pub trait ClientAsker: Send + Sync + 'static {
    /// Sends the client `method` with `params` and waits for its answer:
    /// the result, or the client's error. `key` names the question within
    /// the call (the same question keeps its key when the call runs again).
    fn ask(&self, key: &str, method: &str, params: Value) -> BoxFuture<'static, Result<Value, RpcError>>;

    /// Turns the call into a task that goes on after its request is
    /// answered (MCP's tasks extension): `true` once the task exists;
    /// `false` where the call cannot become one (the transport, the
    /// client or the tool does not take tasks): it then goes on as a plain
    /// call. Questions asked afterwards are the task's.
    fn start_task(&self) -> BoxFuture<'static, Result<bool, RpcError>> {
        Box::pin(std::future::ready(Ok(false)))
    }
}

/// The code of the error an unanswered question gives the method in an
/// input-required round (MCP 2026-07-28): the request is answered with the
/// questions instead, so it reaches no client; it is logged at `debug`, as
/// the expected step it is.
pub const INPUT_REQUIRED: i32 = -32031;

/// The code of a call that asked what its transport cannot ask.
pub const CANNOT_ASK: i32 = -32030;

/// The error of a call whose transport cannot ask the client (`method`).
pub fn cannot_ask(method: &str) -> RpcError {
    RpcError::new(
        CANNOT_ASK,
        format!(
            "the method asks the client ({method}), which this request cannot carry: call it over MCP, \
             from a client that takes an event stream"
        ),
    )
}
