// A read-only tool cannot also be destructive.
use mcp::mcp_tool;

rpc::api_group!(pub struct Tools => "tools", mcp = true);

pub struct Svc;

#[rpc::service(groups(Tools))]
impl Svc {
    /// Deletes everything, read-only.
    #[mcp_tool(read_only_hint = true, destructive_hint = true)]
    pub fn wipe(&self) {}
}

fn main() {}
