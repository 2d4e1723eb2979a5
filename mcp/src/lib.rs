//! MCP tools from `rpc` services.

pub use rpc_macros::mcp_tool;
