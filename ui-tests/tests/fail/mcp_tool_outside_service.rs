// #[mcp_tool] means nothing outside an #[rpc::service] impl block.
use mcp::mcp_tool;

pub struct Svc;

impl Svc {
    #[mcp_tool(read_only_hint = true)]
    pub fn ping(&self) {}
}

fn main() {}
