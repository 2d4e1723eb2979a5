//! Configuration of an MCP endpoint: server identity and limits.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::protocol::ProtocolVersion;

/// An icon (`serverInfo.icons`, 2025-11-25): `Icon::new(src)`, then
/// optionally [`mime_type`](Icon::mime_type) and [`size`](Icon::size).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Icon {
    /// URI of the icon.
    pub src: String,
    /// MIME type.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub sizes: Vec<String>,
}

impl Icon {
    /// An icon at URI `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Icon { src: src.into(), mime_type: None, sizes: Vec::new() }
    }

    /// Its MIME type, e.g. `image/png`.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// One of its sizes, e.g. `48x48` or `any`.
    pub fn size(mut self, size: impl Into<String>) -> Self {
        self.sizes.push(size.into());
        self
    }
}

/// The server's identity (`serverInfo`): `ServerInfo::new(name, version)`,
/// then optionally [`title`](ServerInfo::title),
/// [`description`](ServerInfo::description),
/// [`website_url`](ServerInfo::website_url) and [`icon`](ServerInfo::icon).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerInfo {
    /// Programmatic name.
    pub name: String,
    /// Version of the implementation.
    pub version: String,
    /// Display name (2025-06-18+).
    pub title: Option<String>,
    /// Description (2025-11-25).
    pub description: Option<String>,
    /// Website (2025-11-25).
    pub website_url: Option<String>,
    /// Icons (2025-11-25).
    pub icons: Vec<Icon>,
}

impl ServerInfo {
    /// A server named `name` at `version`, nothing else set.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServerInfo {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            website_url: None,
            icons: Vec::new(),
        }
    }

    /// A display name (2025-06-18+).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// A description (2025-11-25+).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The project's website (2025-11-25+).
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.website_url = Some(url.into());
        self
    }

    /// Adds an icon (2025-11-25+).
    pub fn icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// `serverInfo` as revision `version` defines it.
    pub fn to_json(&self, version: ProtocolVersion) -> Value {
        let mut obj = Map::new();
        obj.insert("name".into(), Value::String(self.name.clone()));
        if version.has_structured_output()
            && let Some(title) = &self.title
        {
            obj.insert("title".into(), Value::String(title.clone()));
        }
        obj.insert("version".into(), Value::String(self.version.clone()));
        if version.has_rich_server_info() {
            if let Some(d) = &self.description {
                obj.insert("description".into(), Value::String(d.clone()));
            }
            if let Some(w) = &self.website_url {
                obj.insert("websiteUrl".into(), Value::String(w.clone()));
            }
            if !self.icons.is_empty() {
                obj.insert("icons".into(), serde_json::to_value(&self.icons).unwrap_or(Value::Null));
            }
        }
        Value::Object(obj)
    }
}

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
}

impl McpConfig {
    /// Defaults: 50 tools per page, sessions expire after 1 hour idle, 4 MiB
    /// bodies, JSON nested at most 64 deep with at most 100,000 values,
    /// batches of 100, both eras, lists cacheable publicly for 5
    /// minutes, invalid arguments as `-32602`, 256 queued events per request,
    /// keep-alives every 15 s, 8 listen streams per client and 1,024 in
    /// all, no registry listing, manifests for the
    /// standard clients.
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
        }
    }
}
