// `rpc-core` as `my_rpc` and `mcp` as `my_mcp`: every attribute under those
// names, and under `use ... as ...` imports of them.
use my_mcp::mcp_tool as tool;
use my_rpc::info as meta;
use serde_json::{Value, json};

my_rpc::api_group!(pub struct Mcp => "mcp", mcp = true);

pub struct Svc;

impl Svc {
    const DEFAULT_LIMIT: u32 = 4;
}

#[my_rpc::service(groups(Mcp))]
impl Svc {
    /// Searches.
    ///
    /// # Arguments
    /// * `limit` - How many
    #[my_mcp::mcp_tool(read_only_hint = true)]
    pub fn search(&self, #[my_rpc(default = Self::DEFAULT_LIMIT)] limit: u32) -> Vec<u32> {
        (0..limit).collect()
    }

    /// Renamed.
    #[my_rpc::info(name = "Svc.find")]
    pub fn lookup(&self, #[rpc(default = 1)] id: u32) -> Result<u32, my_rpc::RpcError> {
        if id == 0 { Err(my_rpc::RpcError::new(4004, "no zero")) } else { Ok(id) }
    }

    /// Through the imports.
    #[tool(idempotent_hint)]
    #[meta(name = "Svc.imported")]
    pub async fn via_use(&self) -> String {
        "imported".into()
    }

    /// Hidden.
    #[meta(skip)]
    pub fn helper(&self) {}
}

pub fn main() {
    Svc.helper(); // an ordinary method: the macro leaves skipped ones alone
    let registry = my_rpc::Registry::builder().service(Svc).build().expect("registry builds");
    let names: Vec<&str> = registry.version(1).expect("v1").iter().map(|m| m.name()).collect();
    assert_eq!(names, ["Svc.find", "Svc.imported", "Svc.search"]);
    let search = registry.method(1, "Svc.search", Some("mcp")).expect("search");
    assert_eq!(search.descriptor().tool.read_only_hint, Some(true));
    assert_eq!(search.schemas().input["properties"]["limit"]["default"], json!(4));
    assert_eq!(search.schemas().input["properties"]["limit"]["description"], json!("How many"));
    assert_eq!(
        registry.method(1, "Svc.imported", None).expect("imported").descriptor().tool.idempotent_hint,
        Some(true)
    );

    let executor = my_rpc::Executor::new(registry, my_rpc::Environment::Test);
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let run = |method: &str, params: Value| {
        let params = match params {
            Value::Object(map) => my_rpc::Params::Named(map),
            _ => my_rpc::Params::None,
        };
        runtime
            .block_on(executor.execute(my_rpc::Call::new(method, 1, params)))
            .result
            .map(|raw| serde_json::from_str::<Value>(raw.get()).expect("JSON"))
    };
    assert_eq!(run("Svc.search", Value::Null).expect("ok"), json!([0, 1, 2, 3]));
    assert_eq!(run("Svc.find", json!({"id": 9})).expect("ok"), json!(9));
    assert_eq!(run("Svc.find", json!({"id": 0})).expect_err("an RPC error").code(), 4004);
    assert_eq!(run("Svc.imported", Value::Null).expect("ok"), json!("imported"));
}
