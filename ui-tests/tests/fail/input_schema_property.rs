// A hand-written input schema names the method's parameters, no others.
use mcp::mcp_tool;

pub struct Svc;

#[rpc::service]
impl Svc {
    /// Greets.
    #[mcp_tool(input_schema = r#"{"type": "object", "properties": {"nmae": {"type": "string"}}}"#)]
    pub fn greet(&self, name: String) -> String {
        name
    }
}

fn main() {}
