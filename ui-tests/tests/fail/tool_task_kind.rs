// `task` is `optional` or `required`; a near miss gets a "did you mean".
use mcp::mcp_tool;

pub struct Svc;

#[rpc::service]
impl Svc {
    /// Works long.
    #[mcp_tool(task = requried)]
    pub async fn work(&self) {}
}

fn main() {}
