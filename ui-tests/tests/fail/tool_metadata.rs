// Icons are https or data URIs; `meta` is a JSON object; an output schema is JSON.
use mcp::mcp_tool;

rpc::api_group!(pub struct Tools => "tools", mcp = true);

pub struct Svc;

#[rpc::service(groups(Tools))]
impl Svc {
    /// Pings.
    #[mcp_tool(icon = "http://example.com/i.png", meta = r#"["owner"]"#, output_schema = r#"{"type": "#)]
    pub fn ping(&self) -> u32 {
        1
    }
}

fn main() {}
