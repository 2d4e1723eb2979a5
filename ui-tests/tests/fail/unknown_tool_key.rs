// A misspelt MCP annotation gets a "did you mean".
use mcp::mcp_tool;

rpc::api_group!(pub struct Tools => "tools", mcp = true);

pub struct Svc;

#[rpc::service(groups(Tools))]
impl Svc {
    /// Ping.
    #[mcp_tool(read_only = true)]
    pub fn ping(&self) {}
}

fn main() {}
