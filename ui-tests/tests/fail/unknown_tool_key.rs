// A misspelt MCP annotation gets a "did you mean".
use mcp::mcp_tool;

pub struct Svc;

#[rpc::service]
impl Svc {
    /// Ping.
    #[mcp_tool(read_only = true)]
    pub fn ping(&self) {}
}

fn main() {}
