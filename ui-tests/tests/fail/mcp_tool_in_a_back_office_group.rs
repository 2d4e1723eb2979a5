// A tool whose groups are none of them published over MCP would be served
// nowhere: a compile error on the attribute.
use mcp::mcp_tool;

rpc::api_group!(pub struct Admin => "admin");
rpc::api_group!(pub struct Reports => "reports");

pub struct BackOffice;

#[rpc::service(groups(Admin, Reports))]
impl BackOffice {
    /// Drops everything.
    #[mcp_tool(destructive_hint = true)]
    pub fn purge(&self) {}

    /// Not a tool: fine in these groups.
    pub fn count(&self) -> u32 {
        0
    }
}

fn main() {}
