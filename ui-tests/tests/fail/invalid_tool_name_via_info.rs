// A renamed method must still be a valid tool name in an MCP group.
rpc::api_group!(pub struct Mcp => "mcp", mcp = true);

pub struct Svc;

#[rpc::service(groups(Mcp))]
impl Svc {
    /// Ping.
    #[rpc::info(name = "say hello")]
    pub fn hello(&self) -> String {
        "hi".into()
    }
}

fn main() {}
