// A hand-written input schema names the method's parameters, no others.
use mcp::mcp_tool;

rpc::api_group!(pub struct Tools => "tools", mcp = true);

pub struct Svc;

#[rpc::service(groups(Tools))]
impl Svc {
    /// Greets.
    #[mcp_tool(input_schema = r#"{"type": "object", "properties": {"nmae": {"type": "string"}}}"#)]
    pub fn greet(&self, name: String) -> String {
        name
    }
}

fn main() {}
