// A hand-written input schema file must exist and hold an object schema.
use mcp::mcp_tool;

rpc::api_group!(pub struct Tools => "tools", mcp = true);

pub struct Svc;

#[rpc::service(groups(Tools))]
impl Svc {
    /// Greets.
    #[mcp_tool(input_schema = "schemas/missing.json")]
    pub fn greet(&self, name: String) -> String {
        name
    }

    /// Counts.
    #[mcp_tool(input_schema = r#"{"type": "array"}"#)]
    pub fn count(&self) -> u32 {
        1
    }
}

fn main() {}
