// A value of the wrong kind says which kind the key takes.
pub struct Svc;

#[rpc::service(version = "2", alias = 5)]
impl Svc {
    /// Ping.
    #[mcp::mcp_tool(read_only_hint = "true", title = false)]
    pub fn ping(&self, #[rpc(description = 3)] n: u32) -> u32 {
        n
    }
}

fn main() {}
