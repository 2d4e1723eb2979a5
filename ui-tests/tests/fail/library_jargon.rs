// Mistakes that got the attribute library's words ("unexpected type
// `non-word`", "unexpected meta-item format `word`") now get a message.
use mcp::mcp_tool;

rpc::api_group!(pub struct Mcp => "mcp", mcp = true);

pub struct Svc;

#[rpc::service(groups("mcp"))]
impl Svc {
    /// A bare `default`.
    pub fn a(&self, #[rpc(default)] limit: u32) -> u32 {
        limit
    }

    /// A bare title.
    #[mcp_tool("Search")]
    pub fn b(&self) {}

    /// A quoted capability.
    #[mcp_tool(requires_client("sampling"))]
    pub fn c(&self) {}
}

fn main() {}
