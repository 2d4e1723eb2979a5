// Only `mcp` in Cargo.toml: the service macro is `mcp::rpc::service`.
use mcp::rpc;

rpc::api_group!(pub struct Tools => "tools", mcp = true);

pub struct Clock;

#[rpc::service(groups(Tools))]
impl Clock {
    /// The answer.
    #[mcp::mcp_tool(read_only_hint = true)]
    pub fn answer(&self, #[rpc(default = 42)] value: u32) -> u32 {
        value
    }
}

pub fn main() {
    let registry = rpc::Registry::builder().service(Clock).build().expect("registry builds");
    let answer = registry.method(1, "Clock.answer", Some("tools")).expect("the tool");
    assert_eq!(answer.schemas().input["properties"]["value"]["default"], 42);
    let _endpoint = mcp::McpEndpoint::builder::<Tools>(rpc::Executor::new(registry, rpc::Environment::Prod)).build();
}
