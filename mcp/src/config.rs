//! Configuration of an MCP endpoint: server identity and limits.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value};

pub use crate::server_info::{Icon, ServerInfo};

/// Which protocol eras an endpoint serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Eras {
    /// Both: `initialize` and sessions for 2024-11-05 … 2025-11-25 clients,
    /// stateless requests for 2026-07-28 clients, on the same URL (default).
    #[default]
    Both,
    /// Only the handshake era: a 2026-07-28 request is treated as one
    /// without a session (400), so dual-era clients fall back to `initialize`.
    HandshakeOnly,
    /// Only 2026-07-28: GET and DELETE are 405, `Mcp-Session-Id` and
    /// `Last-Event-ID` are ignored, `initialize`, `ping` and
    /// `logging/setLevel` are unknown methods (404, `-32601`).
    StatelessOnly,
}

impl Eras {
    /// Whether the handshake era is served.
    pub fn handshake(self) -> bool {
        matches!(self, Eras::Both | Eras::HandshakeOnly)
    }

    /// Whether the stateless era is served.
    pub fn stateless(self) -> bool {
        matches!(self, Eras::Both | Eras::StatelessOnly)
    }
}

/// Who may reuse a cached list (2026-07-28 `cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CacheScope {
    /// Any client, and shared caches (the list is the same for everyone).
    #[default]
    Public,
    /// Only the client that asked (the list depends on who asks).
    Private,
}

impl CacheScope {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

/// How `tools/call` reports arguments that fail the tool's input schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum InvalidArguments {
    /// A JSON-RPC `-32602` error (the design reference's choice; default).
    #[default]
    ProtocolError,
    /// A tool result with `isError: true` carrying the same details, so the
    /// model sees its mistake and can retry (the 2025-11-25 specification's
    /// reading, SEP-1303).
    ToolError,
}

/// The longest session TTL (and tool-list cache hint) an endpoint takes: a
/// year. Every session store accepts it (Redis's `PX` included), and
/// `ttlMs` stays far below JavaScript's largest exact integer.
pub const MAX_TTL: Duration = Duration::from_secs(365 * 24 * 3600);

/// Settings of one endpoint (one API group), set through
/// [`McpEndpointBuilder`](crate::McpEndpointBuilder).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpConfig {
    /// `serverInfo`.
    pub server_info: ServerInfo,
    /// `instructions` returned by `initialize`.
    pub instructions: Option<String>,
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// Idle time after which a session expires.
    pub session_ttl: Duration,
    /// Request body limit in bytes (larger bodies get 413).
    pub max_body_bytes: usize,
    /// Limits on the JSON of a body: nesting depth, number of values, the
    /// length of a 2025-03-26 batch.
    pub json_limits: rpc::jsonrpc::JsonLimits,
    /// `_meta` per tool name.
    pub tool_meta: BTreeMap<String, Map<String, Value>>,
    /// The eras served.
    pub eras: Eras,
    /// How long a client may reuse `tools/list` and `server/discover` (`ttlMs`).
    pub list_ttl: Duration,
    /// Who may reuse them (`cacheScope`).
    pub cache_scope: CacheScope,
    /// How invalid tool arguments are reported.
    pub invalid_arguments: InvalidArguments,
    /// Notification frames a request may queue for a slow client before
    /// further progress and log events are dropped.
    pub event_buffer: usize,
    /// Interval of SSE keep-alive comments on streams that stay open.
    pub keep_alive: Duration,
    /// `subscriptions/listen` streams one client may hold open.
    pub max_listen_per_client: usize,
    /// `subscriptions/listen` streams open at once, all clients together.
    pub max_listen_streams: usize,
    /// How the endpoint is listed in the MCP Registry (`server.json`).
    pub registry: Option<crate::documents::server_json::RegistryListing>,
    /// The public base URL documents name (default: the request's host).
    pub public_url: Option<rpc::server::PublicUrl>,
    /// The AI clients served a manifest.
    pub manifests: crate::documents::manifest::Manifests,
    /// How long a method waits for the client's answer to a question
    /// (handshake era, stdio).
    pub ask_timeout: Duration,
    /// How long a 2026-07-28 `requestState` stays valid.
    pub request_state_ttl: Duration,
    /// The key `requestState` is sealed with (random unless set: instances
    /// that share clients need the same one).
    pub request_state_key: crate::state_key::StateKey,
    /// How long a task is kept after its creation (`ttlMs`).
    pub task_ttl: Duration,
    /// How often clients should poll a task (`pollIntervalMs`), and how
    /// often a running task looks for a cancellation made on another instance.
    pub task_poll: Duration,
}

impl McpConfig {
    /// Defaults: 50 tools per page, sessions expire after 1 hour idle, 4 MiB
    /// bodies, JSON nested at most 64 deep with at most 100,000 values,
    /// batches of 100, both eras, lists cacheable publicly for 5
    /// minutes, invalid arguments as `-32602`, 256 queued events per request,
    /// keep-alives every 15 s, 8 listen streams per client and 1,024 in
    /// all, no registry listing, manifests for the
    /// standard clients; questions to clients answered within 5 minutes,
    /// request states valid for 10 minutes under a random key; tasks kept
    /// for an hour, polled every 500 ms.
    pub fn new(server_info: ServerInfo) -> Self {
        McpConfig {
            server_info,
            instructions: None,
            page_size: 50,
            session_ttl: Duration::from_secs(3600),
            max_body_bytes: 4 * 1024 * 1024,
            json_limits: rpc::jsonrpc::JsonLimits::default(),
            tool_meta: BTreeMap::new(),
            eras: Eras::Both,
            list_ttl: Duration::from_secs(300),
            cache_scope: CacheScope::Public,
            invalid_arguments: InvalidArguments::ProtocolError,
            event_buffer: 256,
            keep_alive: Duration::from_secs(15),
            max_listen_per_client: 8,
            max_listen_streams: 1024,
            registry: None,
            public_url: None,
            manifests: crate::documents::manifest::Manifests::standard(),
            ask_timeout: Duration::from_secs(300),
            request_state_ttl: Duration::from_secs(600),
            request_state_key: crate::state_key::StateKey::random(),
            task_ttl: Duration::from_secs(3600),
            task_poll: Duration::from_millis(500),
        }
    }
}
