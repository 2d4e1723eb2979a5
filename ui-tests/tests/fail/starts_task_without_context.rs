// A method that starts its task needs the context to do it.
use mcp::mcp_tool;

rpc::api_group!(pub struct Tools => "tools", mcp = true);

pub struct Svc;

#[rpc::service(groups(Tools))]
impl Svc {
    /// Works long.
    #[mcp_tool(task = required, starts_task)]
    pub async fn work(&self) {}
}

fn main() {}
