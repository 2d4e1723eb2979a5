// A method published over MCP without a description warns (denied here to snapshot it).
#![deny(deprecated)]

rpc::api_group!(pub struct Mcp => "mcp", mcp = true);
rpc::api_group!(pub struct Internal => "internal");

pub struct Svc;

#[rpc::service(groups(Mcp))]
impl Svc {
    pub fn bare(&self) -> u32 {
        1
    }

    #[rpc::info(groups(Internal))]
    pub fn internal_only(&self) -> u32 {
        2
    }
}

fn main() {}
