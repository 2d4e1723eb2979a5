// A method with an MCP attribute must be in a group published over MCP, or
// it is served nowhere; a method carrying the framework's attributes must be
// a `pub fn` with `&self`, and the error says so on what is wrong.
use mcp::{mcp_prompt, mcp_tool};

rpc::api_group!(pub struct Admin => "admin");

pub struct NoGroup;

#[rpc::service]
impl NoGroup {
    /// A tool in no group (one error for the block).
    #[mcp_tool(read_only_hint = true)]
    pub fn a(&self) {}

    /// Another.
    #[mcp_prompt]
    pub fn b(&self) -> String {
        String::new()
    }
}

pub struct BackOffice;

#[rpc::service(groups(Admin))]
impl BackOffice {
    /// Restricted visibility.
    #[rpc::lock]
    pub(crate) fn locked(&self) {}

    /// No receiver.
    #[rpc::info(name = "BackOffice.make")]
    pub fn make() -> u32 {
        1
    }
}

fn main() {}
