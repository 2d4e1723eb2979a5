// Defaults are expressions of the impl block: `Self::CONST`, associated
// functions, private constants, and `Self` in types.
use serde_json::{Value, json};

rpc::api_group!(pub struct Api => "api");

pub struct Svc {
    greeting: String,
}

impl Svc {
    /// The default page size.
    pub const DEFAULT_LIMIT: u32 = 25;
    const PREFIX: &'static str = "item-";

    fn default_names() -> Vec<String> {
        vec![format!("{}a", Self::PREFIX), format!("{}b", Self::PREFIX)]
    }
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, PartialEq, Debug, Clone, Copy)]
pub enum Mode {
    Fast,
    Careful,
}

impl Mode {
    pub const DEFAULT: Mode = Mode::Careful;
}

#[rpc::service(groups(Api))]
impl Svc {
    /// Lists.
    ///
    /// # Arguments
    /// * `limit` - How many
    /// * `names` - Which
    /// * `mode` - How
    pub fn list(
        &self,
        #[rpc(default = Self::DEFAULT_LIMIT)] limit: u32,
        #[rpc(default = Self::default_names())] names: Vec<String>,
        #[rpc(default = Mode::DEFAULT)] mode: Mode,
    ) -> (u32, Vec<String>, Mode) {
        (limit, names, mode)
    }

    /// Greets.
    pub fn greet(&self, #[rpc(default = Self::PREFIX)] who: String) -> String {
        format!("{} {who}", self.greeting)
    }
}

pub fn main() {
    let registry = rpc::Registry::builder().service(Svc { greeting: "hello".into() }).build().expect("registry builds");
    let list = registry.method(1, "Svc.list", None).expect("registered");
    let properties = &list.schemas().input["properties"];
    assert_eq!(properties["limit"]["default"], json!(25));
    assert_eq!(properties["names"]["default"], json!(["item-a", "item-b"]));
    assert_eq!(properties["mode"]["default"], json!("Careful"));
    assert!(list.schemas().input.get("required").is_none(), "every parameter has a default");

    let executor = rpc::Executor::new(registry, rpc::Environment::Test);
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let run = |method: &str| {
        let call = rpc::Call::new(method, 1, rpc::Params::None);
        let raw = runtime.block_on(executor.execute(call)).result.expect("the call succeeds");
        serde_json::from_str::<Value>(raw.get()).expect("JSON")
    };
    assert_eq!(run("Svc.list"), json!([25, ["item-a", "item-b"], "Careful"]));
    assert_eq!(run("Svc.greet"), json!("hello item-"));
}
