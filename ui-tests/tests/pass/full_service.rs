// Everything the macros accept, together; `use mcp::mcp_tool` stays used.
use mcp::mcp_tool;

rpc::api_group!(pub struct Mcp => "mcp", mcp = true);
rpc::api_group!(pub struct Admin => "admin");

pub struct Svc;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Item {
    pub id: u32,
}

#[rpc::service(alias = "Svc", separator = "_", version = 1, groups(Mcp, Admin))]
impl Svc {
    /// Search.
    ///
    /// # Arguments
    /// * `query` - What to find
    #[mcp_tool(
        title = "Search",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint,
        open_world_hint = false
    )]
    pub async fn search(
        &self,
        query: String,
        #[rpc(default = 5, description = "How many")] limit: u32,
        tag: Option<String>,
    ) -> Vec<Item> {
        let _ = (query, tag);
        (0..limit).map(|id| Item { id }).collect()
    }

    /// Admin only.
    #[rpc::info(name = "admin.reset", groups(Admin))]
    #[deprecated = "use something else"]
    pub fn reset(&self) -> Result<(), rpc::RpcError> {
        Ok(())
    }

    /// Not exposed.
    #[rpc::info(skip)]
    pub fn helper(&mut self) {}

    fn private_helper(&self) {}

    /// A constructor is not a method.
    pub fn new() -> Self {
        Svc
    }
}

pub fn main() {
    Svc::new().private_helper();
    Svc::new().helper(); // skipped methods stay ordinary methods
    let registry = rpc::Registry::builder().service(Svc).build().expect("registry builds");
    let search = registry.method(1, "Svc_search", Some("mcp")).expect("search is in the mcp group");
    assert_eq!(search.descriptor().tool.read_only_hint, Some(true));
    assert!(registry.method(1, "admin.reset", Some("mcp")).is_none());
    assert!(registry.method(1, "admin.reset", Some("admin")).is_some());
}
