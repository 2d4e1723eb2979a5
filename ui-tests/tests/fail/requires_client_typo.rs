// `requires_client(..)` names client capabilities: a typo would make the
// tool uncallable by every client.
use mcp::mcp_tool;

rpc::api_group!(pub struct Tools => "tools", mcp = true);

pub struct Svc;

#[rpc::service(groups(Tools))]
impl Svc {
    /// A misspelt capability, an unknown one, a repeated one.
    #[mcp_tool(requires_client(smapling, telepathy, elicitation, elicitation))]
    pub fn a(&self) {}
}

fn main() {}
