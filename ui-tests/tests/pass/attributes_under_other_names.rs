// `use ... as ...` imports of the method attributes work inside a service,
// as does an attribute the service macro does not know about; the crate
// can also be named explicitly with `crate = "..."` (a path from the crate
// root: this case is the module `attributes_under_other_names` of tests/ui.rs).
use mcp::mcp_prompt as prompt;
use mcp::mcp_resource as resource;
use mcp::mcp_tool as tool;
use rpc::info as meta;

rpc::api_group!(pub struct Mcp => "mcp", mcp = true);

/// A framework that re-exports `rpc`.
mod framework {
    pub use rpc as runtime;
}

pub struct Svc;

#[rpc::service(groups(Mcp))]
impl Svc {
    /// Searches.
    #[tool(title = "Search", read_only_hint = true)]
    pub fn search(&self, #[rpc(default = 3)] limit: u32) -> u32 {
        limit
    }

    /// Renamed through the aliased `info`.
    #[meta(name = "Svc.find")]
    #[tool(idempotent_hint)]
    pub fn lookup(&self) -> u32 {
        1
    }

    /// Hidden through the aliased `info`, with a parameter no JSON can carry.
    #[meta(skip)]
    pub fn internal(&self, _handle: std::rc::Rc<u8>) {}

    /// A resource through the aliased `mcp_resource`.
    #[resource(uri = "svc://items/{id}", mime_type = "text/plain")]
    pub fn item(&self, id: u32) -> String {
        id.to_string()
    }

    /// A prompt through the aliased `mcp_prompt`.
    #[prompt(name = "svc-greeting")]
    pub fn greeting(&self, who: String) -> String {
        format!("Hello {who}")
    }

    /// A completion through its path.
    #[mcp::mcp_complete(prompt = "svc-greeting", argument = "who")]
    pub fn names(&self, value: String) -> Vec<String> {
        vec![value]
    }

    /// Both names of `mcp_tool`: the path one is recognised directly.
    #[mcp::mcp_tool(open_world_hint = false)]
    pub fn world(&self) -> bool {
        false
    }
}

pub struct Other;

#[framework::runtime::service(crate = "crate::attributes_under_other_names::framework::runtime", groups(Mcp))]
impl Other {
    /// Through the re-export.
    #[framework::runtime::info(name = "Other.ping")]
    pub fn pong(&self) -> String {
        "pong".into()
    }
}

pub fn main() {
    Svc.internal(std::rc::Rc::new(0)); // skipped: an ordinary method
    let registry = rpc::Registry::builder().service(Svc).service(Other).build().expect("registry builds");
    let names: Vec<&str> = registry.version(1).expect("v1").iter().map(|m| m.name()).collect();
    assert_eq!(names, ["Other.ping", "Svc.find", "Svc.greeting", "Svc.item", "Svc.names", "Svc.search", "Svc.world"]);
    let item = registry.method(1, "Svc.item", Some("mcp")).expect("item");
    assert!(matches!(item.descriptor().mcp, rpc::McpRole::Resource(spec) if spec.uri == "svc://items/{id}"));
    let greeting = registry.method(1, "Svc.greeting", Some("mcp")).expect("greeting");
    assert!(matches!(greeting.descriptor().mcp, rpc::McpRole::Prompt(spec) if spec.name == Some("svc-greeting")));
    let names = registry.method(1, "Svc.names", Some("mcp")).expect("names");
    assert!(matches!(
        names.descriptor().mcp,
        rpc::McpRole::Completion(spec) if spec.argument == "who" && spec.target == rpc::CompletionTarget::Prompt("svc-greeting")
    ));
    let search = registry.method(1, "Svc.search", Some("mcp")).expect("search");
    assert_eq!(search.descriptor().tool.title, Some("Search"));
    assert_eq!(search.descriptor().tool.read_only_hint, Some(true));
    assert_eq!(search.schemas().input["properties"]["limit"]["default"], 3);
    let find = registry.method(1, "Svc.find", Some("mcp")).expect("find");
    assert_eq!(find.descriptor().tool.idempotent_hint, Some(true));
    assert_eq!(registry.method(1, "Svc.world", None).expect("world").descriptor().tool.open_world_hint, Some(false));
}
