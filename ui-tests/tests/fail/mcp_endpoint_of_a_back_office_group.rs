// An MCP endpoint serves a group declared `mcp = true` only: serving a
// back-office group to AI agents is a type error on the builder call.
rpc::api_group!(pub struct Admin => "admin");

pub struct Back;

#[rpc::service(groups(Admin))]
impl Back {
    /// Drops everything.
    pub fn purge(&self) {}
}

fn main() {
    let registry = rpc::Registry::builder().service(Back).build().unwrap();
    let executor = rpc::Executor::new(registry, rpc::Environment::Prod);
    let _endpoint = mcp::McpEndpoint::builder::<Admin>(executor).build();
}
