//! Which transport a call came through.

/// Which transport a call came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// `POST /rpc`.
    JsonRpc,
    /// MCP `tools/call`.
    Mcp,
}
