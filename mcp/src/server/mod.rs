//! The MCP server of one API group, transport-free: it takes one parsed
//! JSON-RPC message (or batch) with what the transport knows around it
//! ([`Incoming`]) and returns a [`Reply`]: nothing, one message, or a
//! stream of messages. Streamable HTTP ([`McpEndpoint`](crate::McpEndpoint))
//! and stdio ([`stdio`](crate::stdio)) are adapters at its edges, so a
//! method is written once for both eras and both transports.
//!
//! ```
//! # rpc::api_group!(pub struct Tools => "tools", mcp = true);
//! # pub struct Clock;
//! # #[rpc::service(groups(Tools))]
//! # impl Clock {
//! #     /// The answer.
//! #     pub fn answer(&self) -> u32 { 42 }
//! # }
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use mcp::server::{Caller, Incoming, Reply};
//!
//! let registry = rpc::Registry::builder().service(Clock).build().unwrap();
//! let server = mcp::McpEndpoint::builder::<Tools>(rpc::Executor::new(registry, rpc::Environment::Prod))
//!     .build()
//!     .server();
//! let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Clock.answer","_meta":{
//!     "io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
//! let parsed = server.parse(body).unwrap();
//! let Reply::Message(message) = server.handle(&Incoming::new(parsed, 1, Caller::default())).await else { panic!() };
//! assert!(String::from_utf8(message.body).unwrap().contains(r#""structuredContent":{"result":42}"#));
//! # }
//! ```

mod askers;
mod cancel;
mod handshake;
mod incoming;
mod listen;
pub(crate) mod listen_slots;
mod methods;
mod params;
pub(crate) mod pending;
mod queued_tasks;
mod recent_clients;
mod reply;
pub(crate) mod request_state;
mod session_stream;
pub(crate) mod state;
mod stateless;
mod stream;
pub(crate) mod task_registry;
pub(crate) mod tasks;
mod tool_call;

use std::sync::Arc;

use rpc::Execution;
use rpc::i18n::{Language, Translations};
use rpc::jsonrpc::envelope::{Body, Message};

pub use params::ReadParams;

pub use incoming::{Accepts, Caller, HeaderMirror, Incoming, IntoBody};
pub use reply::{Frame, Message as ReplyMessage, MessageStream, Reply, Status};

pub(crate) use cancel::InFlight;
pub(crate) use reply::write_error as write_error_body;
pub(crate) use state::{Inner, Served, ServerTexts};

use crate::call::ProtocolError;
use crate::protocol::ProtocolVersion;
use crate::tools::ToolSet;
use params::CancelledParams;
use reply::stateless_status;

/// The MCP server of one API group (built by
/// [`McpEndpointBuilder`](crate::McpEndpointBuilder); take it from an
/// endpoint with [`McpEndpoint::server`](crate::McpEndpoint::server)).
/// Cheap to clone.
#[derive(Clone)]
pub struct McpServer {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").field("group", &self.inner.group).finish_non_exhaustive()
    }
}

fn invalid(message: impl Into<std::borrow::Cow<'static, str>>) -> ProtocolError {
    ProtocolError::new(rpc::error::code::INVALID_REQUEST, message)
}

impl From<crate::McpEndpoint> for McpServer {
    fn from(endpoint: crate::McpEndpoint) -> Self {
        endpoint.server
    }
}

impl McpServer {
    /// Handles one message (or batch). The era is told per message: a
    /// request whose `_meta` names a protocol version, or that names one
    /// outside the handshake era without a session, is a 2026-07-28 request;
    /// `initialize`, messages of a session and batches belong to the
    /// handshake era. A server configured for one era only
    /// ([`Eras`](crate::Eras)) serves everything there.
    pub async fn handle(&self, incoming: &Incoming<'_>) -> Reply {
        let inner = &self.inner;
        let env = inner.executor.environment();
        let Some(tools) = inner.tools.version(incoming.version) else {
            let error = invalid(format!("group `{}` has no MCP endpoint at this path", inner.group));
            return Reply::error(Status::NotFound, None, &error);
        };
        if let Some(scope) = incoming.cancel_scope
            && let Body::Single(Ok(Message::Request(req))) = &incoming.body
            && req.id.is_none()
            && req.method == "notifications/cancelled"
        {
            // A transport with one conversation per client: its calls of
            // either era are found in its scope.
            match req.params_as::<CancelledParams<'_>>() {
                Ok(Some(params)) => {
                    let cancelled = inner.inflight.cancel(scope, params.request_id.get());
                    tracing::debug!(request = %rpc::logged::logged(params.request_id.get()), cancelled, "notifications/cancelled");
                }
                _ => tracing::debug!("notifications/cancelled without params.requestId"),
            }
            return Reply::Accepted;
        }
        let eras = inner.config.eras;
        match &incoming.body {
            Body::Single(Err(invalid)) => {
                Reply::error(Status::BadRequest, invalid.id, &ProtocolError::from_rpc(&invalid.error, env))
            }
            Body::Single(Ok(Message::Request(req)))
                if eras.stateless() && (!eras.handshake() || is_stateless(req, incoming)) =>
            {
                stateless::handle(inner, tools, incoming, req).await
            }
            Body::Single(Ok(message)) if eras.handshake() => handshake::single(inner, tools, incoming, message).await,
            // Boxed: batches are rare, and their future is large.
            Body::Batch(items) if eras.handshake() => {
                rpc::future::in_box(|| handshake::batch(inner, tools, incoming, items)).await
            }
            Body::Single(Ok(Message::Response { id, .. })) => {
                let error = invalid("this endpoint takes requests and notifications, not responses");
                Reply::error(stateless_status(error.code), Some(id), &error)
            }
            _ => {
                let error = invalid("the body must be a single JSON-RPC request or notification, not a batch");
                Reply::error(Status::BadRequest, None, &error)
            }
        }
    }

    /// Ends the handshake-era session `incoming.session` names (its owner
    /// only): [`Reply::Accepted`] when it ended, else the error (no session
    /// named, not found, the store failed). `incoming.body` is not read.
    pub async fn end_session(&self, incoming: Incoming<'_>) -> Reply {
        let Some(tools) = self.inner.tools.version(incoming.version) else {
            let error = invalid(format!("group `{}` has no MCP endpoint at this path", self.inner.group));
            return Reply::error(Status::NotFound, None, &error);
        };
        handshake::end_session(&self.inner, tools.endpoint(), &incoming).await
    }

    /// Opens the handshake-era session's own stream (HTTP `GET` with
    /// `Mcp-Session-Id`): `notifications/resources/updated` for the resources
    /// it subscribed to, keep-alives; it ends with the session. Offered only
    /// when [`sends_on_its_own`](Self::sends_on_its_own).
    pub async fn open_session_stream(&self, incoming: Incoming<'_>) -> Reply {
        let Some(tools) = self.inner.tools.version(incoming.version) else {
            let error = invalid(format!("group `{}` has no MCP endpoint at this path", self.inner.group));
            return Reply::error(Status::NotFound, None, &error);
        };
        session_stream::open(&self.inner, tools.endpoint(), &incoming).await
    }

    /// Whether the server has anything to send outside a request (a change
    /// hub is configured): only then is a session's own stream offered.
    pub fn sends_on_its_own(&self) -> bool {
        self.inner.list_changes.is_some()
    }

    /// Runs the after-response work of `executions` (listeners, cache
    /// relations): call it once a [`ReplyMessage`] was sent.
    pub fn sent(&self, executions: Vec<Execution>) {
        if !executions.is_empty() {
            self.inner.executor.response_sent(executions);
        }
    }

    /// The API group served.
    pub fn group(&self) -> &str {
        &self.inner.group
    }

    /// The translations the server's texts come from (and its languages).
    pub fn translations(&self) -> &Translations {
        &self.inner.translations
    }

    /// The tools of API `version`, if the group has that version.
    pub fn tools(&self, version: u32) -> Option<&ToolSet> {
        self.inner.tools.version(version)
    }

    /// The request body limit, in bytes (a transport refuses longer messages).
    pub fn max_message_bytes(&self) -> usize {
        self.inner.config.max_body_bytes
    }

    /// Parses a message (or batch) for [`handle`](Self::handle) within the
    /// server's [`json_limits`](Self::json_limits): `tools/call`'s `params` read in
    /// the same pass ([`ReadParams`]). Invalid JSON is a `-32700` error, a body
    /// beyond the limits `-32600`.
    pub fn parse<'a>(&self, bytes: &'a [u8]) -> Result<Body<'a, ReadParams<'a>>, rpc::RpcError> {
        rpc::jsonrpc::envelope::parse_body_reading(bytes, true, self.json_limits())
    }

    /// The limits on a message's JSON (depth, values, batch length).
    pub fn json_limits(&self) -> &rpc::jsonrpc::JsonLimits {
        &self.inner.config.json_limits
    }

    /// The serialised `tools/list` result of API `version` that `identity`
    /// sees in `language` at `protocol` for `cursor`, as the server sends
    /// it: written once, on its first request (the `Bytes` share that
    /// buffer). `None` for a version without tools or an invalid cursor.
    pub fn tools_list(
        &self,
        version: u32,
        identity: Option<&rpc::Identity>,
        language: Language,
        protocol: ProtocolVersion,
        cursor: Option<&str>,
    ) -> Option<bytes::Bytes> {
        self.inner.tools.version(version)?.page(identity, language, protocol, cursor)
    }

    /// Ends the open `subscriptions/listen` streams gracefully (call it when
    /// shutting down a server that is not `rpc::server::serve`, which does
    /// it by itself).
    pub fn close_streams(&self) {
        if let Some(changes) = &self.inner.list_changes {
            changes.close();
        }
    }
}

/// Whether a request belongs to 2026-07-28: its `_meta` names a protocol
/// version, or, outside a session the client named, the version the
/// transport names is not of the handshake era. A conversation the
/// transport remembers (stdio) never makes a self-contained request one of
/// its session.
fn is_stateless(request: &params::RpcRequest<'_>, incoming: &Incoming<'_>) -> bool {
    if !incoming.remembered {
        if incoming.session.is_some() {
            // A request of a session belongs to its session.
            return false;
        }
        if incoming.protocol.is_some_and(|v| ProtocolVersion::parse_handshake(v).is_none()) {
            return true;
        }
    }
    params::request_names_a_version(request)
}
