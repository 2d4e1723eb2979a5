// A skipped method has no name, groups or tool annotations.
pub struct Svc;

#[rpc::service]
impl Svc {
    /// Hidden.
    #[rpc::info(name = "Svc.visible", skip)]
    #[mcp::mcp_tool(read_only_hint = true)]
    pub fn hidden(&self) {}
}

fn main() {}
