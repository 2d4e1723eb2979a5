// The tool-name check also holds for a name given through a `use ... as ...` import.
use rpc::info as meta;

rpc::api_group!(pub struct Mcp => "mcp", mcp = true);

pub struct Svc;

#[rpc::service(groups(Mcp))]
impl Svc {
    /// Ping.
    #[meta(name = "say hello")]
    pub fn hello(&self) -> String {
        "hi".into()
    }
}

fn main() {}
