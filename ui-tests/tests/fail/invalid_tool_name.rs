// `Bad:ping` is not a valid MCP tool name, and `Mcp` is published over MCP.
rpc::api_group!(pub struct Mcp => "mcp", mcp = true);

pub struct Bad;

#[rpc::service(alias = "Bad", separator = ":", groups(Mcp))]
impl Bad {
    /// Ping.
    pub fn ping(&self) -> String {
        "pong".into()
    }

    /// Pong: the same separator, reported once for the block.
    pub fn pong(&self) -> String {
        "ping".into()
    }
}

fn main() {}
