// `task` is `optional` or `required`; a near miss gets a "did you mean".
use mcp::mcp_tool;

rpc::api_group!(pub struct Tools => "tools", mcp = true);

pub struct Svc;

#[rpc::service(groups(Tools))]
impl Svc {
    /// Works long.
    #[mcp_tool(task = requried)]
    pub async fn work(&self) {}
}

fn main() {}
