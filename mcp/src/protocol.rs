//! Protocol revisions, the two eras they belong to, and the wire names
//! (headers, `_meta` keys, error codes) the transports share.

use http::HeaderName;
use std::fmt;

/// A protocol revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05: the first dated revision.
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, batches, tool annotations.
    V2025_03_26,
    /// 2025-06-18: structured output, titles, `_meta`; no batches.
    V2025_06_18,
    /// 2025-11-25: icons, server description and website.
    V2025_11_25,
    /// 2026-07-28: stateless (no `initialize`, no sessions); every request
    /// carries its version and the client's capabilities in `_meta`.
    V2026_07_28,
}

/// How a revision is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// `initialize`, then requests within an `Mcp-Session-Id` session
    /// (2024-11-05 to 2025-11-25).
    Handshake,
    /// Self-contained requests, the version in each request's `_meta` (2026-07-28).
    Stateless,
}

impl ProtocolVersion {
    /// Every revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// Every handshake-era revision, oldest first.
    pub const HANDSHAKE: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];

    /// Every stateless-era revision, oldest first.
    pub const STATELESS: [ProtocolVersion; 1] = [ProtocolVersion::V2026_07_28];

    /// The newest handshake revision: the counter-offer for unknown versions.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// Assumed when a request carries no `MCP-Protocol-Version` header and
    /// nothing else tells the version (as the specification says).
    pub const DEFAULT_HEADER: ProtocolVersion = ProtocolVersion::V2025_03_26;

    /// Parses `"2025-06-18"` and the like.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Parses a handshake-era revision.
    pub fn parse_handshake(s: &str) -> Option<Self> {
        Self::parse(s).filter(|v| v.era() == Era::Handshake)
    }

    /// The wire string.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The era the revision belongs to.
    pub const fn era(self) -> Era {
        match self {
            ProtocolVersion::V2026_07_28 => Era::Stateless,
            _ => Era::Handshake,
        }
    }

    /// Index into per-revision tables ([`ALL`](Self::ALL) order).
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// Whether POST bodies may be JSON-RPC batches (2025-03-26 only).
    pub fn allows_batches(self) -> bool {
        self == ProtocolVersion::V2025_03_26
    }

    /// Whether tools have `annotations`.
    pub fn has_tool_annotations(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }

    /// Whether tools have `title`, `outputSchema` and `_meta`, results
    /// `structuredContent`, and `serverInfo` a `title`.
    pub fn has_structured_output(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// Whether `serverInfo` has `description`, `websiteUrl` and `icons`.
    pub fn has_rich_server_info(self) -> bool {
        self >= ProtocolVersion::V2025_11_25
    }

    /// Whether results carry `resultType` and the server's identity in
    /// `_meta`, and lists carry `ttlMs`/`cacheScope` (2026-07-28).
    pub fn is_stateless(self) -> bool {
        self.era() == Era::Stateless
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// HTTP header carrying the session id (handshake era).
pub const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
/// HTTP header carrying the protocol version.
pub const PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// HTTP header mirroring the JSON-RPC method (2026-07-28).
pub const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
/// HTTP header mirroring `params.name` / `params.uri` (2026-07-28).
pub const NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");
/// Prefix of the headers mirroring `x-mcp-header` parameters (2026-07-28).
pub const PARAM_HEADER_PREFIX: &str = "mcp-param-";

/// `_meta` keys of the 2026-07-28 request envelope and results.
pub mod meta {
    /// The request's protocol version.
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// The client's capabilities.
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// The client's identity.
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// The log level a request opts in to.
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// The server's identity, in every result.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// The subscription a listen-stream message belongs to.
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
    /// The request's progress token (both eras).
    pub const PROGRESS_TOKEN: &str = "progressToken";
}

/// MCP error codes beyond JSON-RPC's.
pub mod code {
    /// The SDKs' code for a missing session id (HTTP 400).
    pub const NO_SESSION: i32 = -32000;
    /// The SDKs' code for an unknown or expired session (HTTP 404).
    pub const SESSION_NOT_FOUND: i32 = -32001;
    /// A mirrored header is missing or does not match the body (2026-07-28, HTTP 400).
    pub const HEADER_MISMATCH: i32 = -32020;
    /// The request needs a client capability the client did not declare (HTTP 400).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i32 = -32021;
    /// The requested protocol version is not served (HTTP 400).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
    /// The client cancelled the request (handshake era, `notifications/cancelled`).
    pub const REQUEST_CANCELLED: i32 = -32800;
    /// No resource at the URI (handshake era; 2026-07-28 uses `-32602`, SEP-2164).
    pub const RESOURCE_NOT_FOUND: i32 = -32002;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_orders() {
        assert_eq!(ProtocolVersion::parse("2025-06-18"), Some(ProtocolVersion::V2025_06_18));
        assert_eq!(ProtocolVersion::parse("2026-07-28"), Some(ProtocolVersion::V2026_07_28));
        assert_eq!(ProtocolVersion::parse_handshake("2026-07-28"), None);
        assert_eq!(ProtocolVersion::parse("2099-01-01"), None);
        assert!(ProtocolVersion::V2025_03_26.allows_batches());
        assert!(!ProtocolVersion::V2025_06_18.allows_batches());
        assert!(ProtocolVersion::V2025_11_25.has_structured_output());
        assert!(!ProtocolVersion::V2024_11_05.has_tool_annotations());
        assert!(ProtocolVersion::V2026_07_28.is_stateless() && ProtocolVersion::V2026_07_28.has_rich_server_info());
        for (i, v) in ProtocolVersion::ALL.iter().enumerate() {
            assert_eq!(v.index(), i);
        }
    }
}
