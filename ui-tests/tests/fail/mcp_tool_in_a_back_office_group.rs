// A tool whose groups are none of them published over MCP would be served
// nowhere: a compile error on the attribute, once for the tools that share
// those groups (on the first, naming how many more there are).
use mcp::mcp_tool;

rpc::api_group!(pub struct Admin => "admin");
rpc::api_group!(pub struct Reports => "reports");

pub struct BackOffice;

#[rpc::service(groups(Admin, Reports))]
impl BackOffice {
    /// Drops everything.
    #[mcp_tool(destructive_hint = true)]
    pub fn purge(&self) {}

    /// Rebuilds the reports (the same groups: no second error).
    #[mcp_tool(idempotent_hint = true)]
    pub fn rebuild(&self) {}

    /// Not a tool: fine in these groups.
    pub fn count(&self) -> u32 {
        0
    }
}

fn main() {}
