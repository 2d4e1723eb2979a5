//! One message as a transport hands it to the server: the parsed body, who
//! sent it, and the facts the transport knows around it (a session, the
//! protocol version it named, what the client accepts back, and, over
//! HTTP, the headers that mirror the body).

use std::sync::Arc;

use rpc::Identity;
use rpc::i18n::Language;
use rpc::jsonrpc::envelope::Body;

use super::params::ReadParams;
use serde_json::{Map, Value};
use tokio::sync::watch;

use crate::call::ProtocolError;
use crate::tools::Tool;

/// Who sent a message, and in which language to answer.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// The caller's identity, from the transport's access policy.
    pub identity: Option<Arc<Identity>>,
    /// The negotiated language.
    pub language: Language,
    /// Who the caller is for per-client limits when it has no identity (its
    /// address over HTTP); `None`: the transport has one client (stdio).
    pub client: Option<std::net::IpAddr>,
}

impl Caller {
    /// The subject of the caller's identity: who owns the sessions it opens.
    pub fn owner(&self) -> Option<&str> {
        self.identity.as_deref().map(|i| i.subject.as_str())
    }

    /// The key of per-client limits: the identity when there is one, else
    /// the transport's name for the client.
    pub(crate) fn limit_key(&self) -> String {
        match (self.owner(), &self.client) {
            (Some(subject), _) => format!("id:{subject}"),
            (None, Some(client)) => format!("ip:{client}"),
            (None, None) => "local".to_owned(),
        }
    }
}

/// What the client takes back: one JSON message, and/or a stream of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Accepts {
    /// One JSON message (`application/json`).
    pub json: bool,
    /// A stream of messages (`text/event-stream`; lines over stdio).
    pub stream: bool,
}

impl Accepts {
    /// Both (stdio, and HTTP clients that accept both).
    pub const BOTH: Accepts = Accepts { json: true, stream: true };

    /// Whether a reply of one message can be sent at all.
    pub fn any(self) -> bool {
        self.json || self.stream
    }
}

/// The 2026-07-28 checks of the HTTP headers that mirror the body
/// (`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`, `Mcp-Param-*`; errors
/// `-32020`), made at their places in the specification's check order.
/// Transports without headers (stdio) have none.
pub trait HeaderMirror: Send + Sync {
    /// The routing headers: none twice; `Mcp-Method` present and equal to
    /// the body's method.
    fn method(&self, method: &str) -> Result<(), ProtocolError>;
    /// `Mcp-Name` equal to `params.name`.
    fn name(&self, name: &str) -> Result<(), ProtocolError>;
    /// `MCP-Protocol-Version` present and equal to `_meta`'s protocol
    /// version (`None`: that is not a string).
    fn version(&self, version: Option<&str>) -> Result<(), ProtocolError>;
    /// The `Mcp-Param-*` headers of a `tools/call` of `tool`.
    fn arguments(&self, tool: &Tool, arguments: &Map<String, Value>) -> Result<(), ProtocolError>;
}

/// One message (or batch) for [`McpServer::handle`](super::McpServer::handle).
pub struct Incoming<'a> {
    /// The parsed body ([`McpServer::parse`](super::McpServer::parse)).
    pub body: Body<'a, ReadParams<'a>>,
    /// The API version served (`/v{N}` over HTTP).
    pub version: u32,
    /// Who sent it.
    pub caller: Caller,
    /// The handshake-era session the message names (`Mcp-Session-Id`).
    pub session: Option<&'a str>,
    /// The protocol version the transport names outside the body
    /// (`MCP-Protocol-Version`).
    pub protocol: Option<&'a str>,
    /// Whether `session` and `protocol` are the transport's memory of its
    /// conversation (stdio) rather than what the client named: a message
    /// whose `_meta` names a protocol version is then served in 2026-07-28
    /// whatever the conversation opened before.
    pub remembered: bool,
    /// What the client takes back.
    pub accepts: Accepts,
    /// The 2026-07-28 header checks (HTTP only).
    pub mirror: Option<&'a dyn HeaderMirror>,
    /// Where `notifications/cancelled` of this client find its calls, when
    /// the transport has one conversation per client (stdio); over HTTP a
    /// call is cancelled within its session.
    pub cancel_scope: Option<&'a str>,
    /// Turns true when the server is shutting down: long-lived streams end
    /// gracefully (they clone it; a request that opens none does not).
    pub closing: Option<&'a watch::Receiver<bool>>,
}

impl<'a> Incoming<'a> {
    /// A message of API `version` from `caller`, accepting both JSON and a
    /// stream, with nothing else known.
    /// `body`: as [`McpServer::parse`](super::McpServer::parse) reads it, or
    /// as [`parse_body`](rpc::jsonrpc::envelope::parse_body) does (every
    /// `params` raw, read when served).
    pub fn new(body: impl IntoBody<'a>, version: u32, caller: Caller) -> Self {
        Incoming {
            body: body.into_body(),
            version,
            caller,
            session: None,
            protocol: None,
            remembered: false,
            accepts: Accepts::BOTH,
            mirror: None,
            cancel_scope: None,
            closing: None,
        }
    }
}

/// A parsed body [`Incoming`] takes: with `tools/call`'s `params` read in the
/// envelope's pass ([`McpServer::parse`](super::McpServer::parse)) or all raw.
pub trait IntoBody<'a> {
    /// The body as the server reads it.
    fn into_body(self) -> Body<'a, ReadParams<'a>>;
}

impl<'a> IntoBody<'a> for Body<'a, ReadParams<'a>> {
    fn into_body(self) -> Body<'a, ReadParams<'a>> {
        self
    }
}

impl<'a> IntoBody<'a> for Body<'a> {
    fn into_body(self) -> Body<'a, ReadParams<'a>> {
        self.widen()
    }
}
