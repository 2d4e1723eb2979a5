//! Protocol revisions and the facts that differ between them.

use std::fmt;

/// A protocol revision served through the `initialize` handshake.
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
}

impl ProtocolVersion {
    /// Every handshake-era revision, oldest first.
    pub const HANDSHAKE: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];

    /// The newest handshake revision: the counter-offer for unknown versions.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// Assumed when a request carries no `MCP-Protocol-Version` header and
    /// nothing else tells the version (as the specification says).
    pub const DEFAULT_HEADER: ProtocolVersion = ProtocolVersion::V2025_03_26;

    /// Parses `"2025-06-18"` and the like.
    pub fn parse(s: &str) -> Option<Self> {
        Self::HANDSHAKE.into_iter().find(|v| v.as_str() == s)
    }

    /// The wire string.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
        }
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
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// HTTP header carrying the session id.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// HTTP header carrying the negotiated protocol version.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

#[cfg(test)]
mod tests {
    use super::ProtocolVersion;

    #[test]
    fn parses_and_orders() {
        assert_eq!(ProtocolVersion::parse("2025-06-18"), Some(ProtocolVersion::V2025_06_18));
        assert_eq!(ProtocolVersion::parse("2026-07-28"), None);
        assert!(ProtocolVersion::V2025_03_26.allows_batches());
        assert!(!ProtocolVersion::V2025_06_18.allows_batches());
        assert!(ProtocolVersion::V2025_11_25.has_structured_output());
        assert!(!ProtocolVersion::V2024_11_05.has_tool_annotations());
    }
}
