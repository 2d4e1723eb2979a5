// Attributes under `use ... as ...` names report errors at the right place too.
use mcp::mcp_tool as tool;

rpc::api_group!(pub struct Tools => "tools", mcp = true);

pub struct Svc;

#[rpc::service(groups(Tools))]
impl Svc {
    /// Ping.
    #[tool(read_only = true)]
    pub fn ping(&self) {}

    /// Not a method.
    #[tool(read_only_hint = true)]
    fn private(&self) {}
}

fn main() {}
