// `scopes(...)` of `#[rpc::info]` and `#[mcp_tool]`: OAuth scope tokens,
// one per string, each once, in one place, and not on a hidden method.
use mcp::mcp_tool;

rpc::api_group!(pub struct Tools => "tools", mcp = true);

pub struct Svc;

#[rpc::service(groups(Tools))]
impl Svc {
    /// Two scopes in one string.
    #[rpc::info(scopes("catalog:read catalog:write"))]
    pub fn a(&self) {}

    /// Not a scope token, and a duplicate.
    #[mcp_tool(scopes("caf\u{e9}", "catalog:write", "catalog:write", ""))]
    pub fn b(&self) {}

    /// Scopes in both attributes.
    #[rpc::info(scopes("catalog:read"))]
    #[mcp_tool(scopes("catalog:write"))]
    pub fn c(&self) {}

    /// Scopes in the resource's attribute and in `#[rpc::info]`.
    #[mcp::mcp_resource(uri = "svc://e", scopes("svc:read"))]
    #[rpc::info(scopes("svc:read"))]
    pub fn e(&self) -> String {
        String::new()
    }

    /// Scopes on a hidden method.
    #[rpc::info(skip, scopes("catalog:read"))]
    pub fn d(&self) {}
}

pub struct Admin;

// A bad scope of the whole service, and a method repeating a service scope.
#[rpc::service(groups(Tools), scopes("admin:all", "admin all"))]
impl Admin {
    /// Repeats the service's scope.
    #[rpc::info(scopes("admin:all", "admin:extra"))]
    pub fn f(&self) {}
}

fn main() {}
