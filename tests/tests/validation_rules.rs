//! Parameter validation rules (`#[rpc(length(..), range(..), pattern = ..,
//! email, uuid, date, date_time, uri, one_of(..), not_blank, equals = ..,
//! items(..))]`) and the rules of DTO fields (schemars' field attributes):
//! the JSON Schema keywords they put in the input schema (the registry's,
//! the MCP tool's, the OpenRPC document's), and their enforcement
//! (`-32602`, each parameter mapped to its messages) over `/rpc` and MCP
//! `tools/call`.

use e2e_tests::raw_mcp::RawMcp;
use e2e_tests::{TestServer, post_json};
use mcp::McpEndpoint;
use rpc::server::Router;
use rpc::{Environment, Executor, JsonRpcService, Registry};
use serde_json::{Value, json};

mod fixtures {
    use schemars::JsonSchema;
    use serde::Deserialize;

    /// An order line: its fields carry rules through schemars' attributes,
    /// which land in the schema and are enforced like parameters' rules.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)] // its fields matter to the schema and the validator only
    pub struct Line {
        /// Stock-keeping unit.
        #[schemars(length(min = 3, max = 12), pattern(r"^[A-Z0-9-]+$"))]
        pub sku: String,
        /// How many.
        #[schemars(range(min = 1, max = 99))]
        pub qty: u32,
        /// Price each, more than zero.
        #[schemars(extend("exclusiveMinimum" = 0))]
        pub price: f64,
        /// Who to notify.
        #[schemars(email)]
        pub notify: Option<String>,
        /// Labels, each 2 to 8 characters.
        #[schemars(length(max = 4), inner(length(min = 2, max = 8)))]
        #[serde(default)]
        pub labels: Vec<String>,
    }

    rpc::api_group! {
        /// The test tools.
        pub struct Shop => "shop", mcp = true;
    }

    /// A service with every rule.
    pub struct Users;

    #[rpc::service(alias = "Users", groups(Shop))]
    impl Users {
        /// Registers a user.
        ///
        /// # Arguments
        /// * `name` - Login name
        #[allow(clippy::too_many_arguments)]
        pub fn register(
            &self,
            #[rpc(length(min = 3, max = 12), pattern = "^[a-z]+$")] name: String,
            #[rpc(range(min = 18, max = 130))] age: u32,
            #[rpc(email)] email: String,
            #[rpc(one_of("free", "pro"), default = "free")] plan: String,
            #[rpc(not_blank)] bio: Option<String>,
            #[rpc(length(max = 3))] tags: Option<Vec<String>>,
            #[rpc(range(min = 0.5, max = 2.5))] scale: Option<f64>,
        ) -> String {
            let _ = (age, email, plan, bio, tags, scale);
            name
        }

        /// Checks the string formats.
        pub fn formats(
            &self,
            #[rpc(uuid)] id: Option<String>,
            #[rpc(date)] day: Option<String>,
            #[rpc(date_time)] at: Option<String>,
            #[rpc(uri)] link: Option<String>,
            #[rpc(one_of(1, 2, 3))] level: Option<u8>,
            #[rpc(not_blank, pattern = "^[A-Z ]+$")] shout: Option<String>,
        ) -> bool {
            let _ = (id, day, at, link, level, shout);
            true
        }

        /// Rates items: exclusive bounds, a constant, rules on each item.
        pub fn rate(
            &self,
            #[rpc(range(exclusive_min = 0, max = 1))] share: f64,
            #[rpc(equals = "yes")] agreed: String,
            #[rpc(equals = 2)] schema_version: Option<u8>,
            #[rpc(length(max = 3), items(length(min = 2, max = 5), pattern = "^[a-z]+$"))] tags: Vec<String>,
            #[rpc(items(range(min = 1, exclusive_max = 100)))] scores: Option<Vec<u32>>,
        ) -> usize {
            let _ = (share, agreed, schema_version, scores);
            tags.len()
        }

        /// Orders lines.
        pub fn order(&self, #[rpc(length(min = 1, max = 10))] lines: Vec<Line>) -> usize {
            lines.len()
        }

        /// Sets a passcode: ECMA-262 look-ahead, `\d` meaning ASCII digits.
        pub fn passcode(&self, #[rpc(pattern = r"^(?=.*\d)(?=.*[a-z])[a-z\d]{8,}$")] code: String) -> usize {
            code.len()
        }
    }
}

fn registry() -> Registry {
    Registry::builder().service(fixtures::Users).build().expect("registry builds")
}

fn register_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 3, "maxLength": 12, "pattern": "^[a-z]+$", "description": "Login name"},
            "age": {"type": "integer", "format": "uint32", "minimum": 18, "maximum": 130},
            "email": {"type": "string", "format": "email"},
            "plan": {"type": "string", "enum": ["free", "pro"], "default": "free"},
            "bio": {"type": ["string", "null"], "minLength": 1, "pattern": "\\S"},
            "tags": {"type": ["array", "null"], "items": {"type": "string"}, "maxItems": 3},
            "scale": {"type": ["number", "null"], "format": "double", "minimum": 0.5, "maximum": 2.5}
        },
        "required": ["name", "age", "email"],
        "additionalProperties": false
    })
}

/// The input schema as MCP publishes it: non-standard formats dropped.
fn standard(mut schema: Value) -> Value {
    rpc::schema::standard_formats(&mut schema);
    schema
}

#[test]
fn the_input_schema_carries_the_rules() {
    let registry = registry();
    let register = registry.method(1, "Users.register", None).expect("Users.register");
    assert_eq!(register.schemas().input, standard(register_schema()));
    let formats = registry.method(1, "Users.formats", None).expect("Users.formats");
    let p = &formats.schemas().input["properties"];
    assert_eq!(p["id"]["format"], "uuid");
    assert_eq!(p["day"]["format"], "date");
    assert_eq!(p["at"]["format"], "date-time");
    assert_eq!(p["link"]["format"], "uri");
    assert_eq!(p["level"]["enum"], json!([1, 2, 3, null]), "an Option keeps null among its choices");
    assert_eq!(p["shout"]["allOf"], json!([{"pattern": "^[A-Z ]+$"}, {"pattern": "\\S"}]));
    assert!(p["shout"].get("pattern").is_none(), "{}", p["shout"]);
}

async fn server() -> TestServer {
    let executor = Executor::new(registry(), Environment::Dev);
    let endpoint = McpEndpoint::builder::<fixtures::Shop>(executor.clone()).build();
    TestServer::start(Router::new().nest("/mcp", endpoint).nest("/rpc", JsonRpcService::new(executor))).await
}

async fn call(server: &TestServer, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let (status, reply) = post_json(&server.url("/rpc"), &body).await;
    assert_eq!(status, 200, "{reply}");
    reply
}

/// The messages of the `-32602` error for `param` (`data.extra` maps each parameter to its messages).
fn refused(reply: &Value, param: &str) -> Vec<String> {
    assert_eq!(reply["error"]["code"], -32602, "refused: {reply}");
    let messages =
        reply["error"]["data"]["extra"][param].as_array().unwrap_or_else(|| panic!("`{param}` is listed: {reply}"));
    messages.iter().map(|m| m.as_str().unwrap_or_default().to_owned()).collect()
}

fn good() -> Value {
    json!({"name": "alice", "age": 30, "email": "alice@example.com"})
}

fn with(key: &str, value: Value) -> Value {
    let mut params = good();
    params[key] = value;
    params
}

#[tokio::test]
async fn each_rule_is_enforced() {
    let server = server().await;
    let ok = call(&server, "Users.register", good()).await;
    assert_eq!(ok["result"], "alice", "{ok}");
    let all = json!({"name": "bob", "age": 18, "email": "b@x.org", "plan": "pro", "bio": " hi ", "tags": ["a", "b", "c"], "scale": 2.5});
    assert_eq!(call(&server, "Users.register", all).await["result"], "bob");
    let none = with("bio", Value::Null);
    assert_eq!(call(&server, "Users.register", none).await["result"], "alice", "null is a valid Option");

    let cases = [
        ("name", json!("ab"), "\"ab\" is shorter than 3 characters"),
        ("name", json!("abcdefghijklm"), "is longer than 12 characters"),
        ("name", json!("Alice"), "does not match \"^[a-z]+$\""),
        ("age", json!(17), "17 is less than the minimum of 18"),
        ("age", json!(131), "131 is greater than the maximum of 130"),
        ("email", json!("not-an-email"), "is not a \"email\""),
        ("plan", json!("gold"), "\"gold\" is not one of"),
        ("bio", json!("   "), "does not match \"\\S\""),
        ("bio", json!(""), "shorter than 1 character"),
        ("tags", json!(["a", "b", "c", "d"]), "has more than 3 items"),
        ("scale", json!(3), "greater than the maximum of 2.5"),
    ];
    for (param, value, expected) in cases {
        let reply = call(&server, "Users.register", with(param, value.clone())).await;
        let messages = refused(&reply, param);
        assert!(
            messages.iter().any(|m| m.contains(expected)),
            "{param} = {value}: expected a message with {expected:?}, got {messages:?}"
        );
    }
}

#[tokio::test]
async fn formats_are_enforced() {
    let server = server().await;
    let good = json!({
        "id": "67e55044-10b1-426f-9247-bb680e5fe0c8",
        "day": "2026-12-01",
        "at": "2026-12-01T10:00:00Z",
        "link": "https://example.com/a?b=c",
        "level": 2,
        "shout": "HELLO"
    });
    assert_eq!(call(&server, "Users.formats", good).await["result"], true);
    assert_eq!(call(&server, "Users.formats", json!({})).await["result"], true, "absent Options are fine");
    let nulls = json!({"id": null, "day": null, "at": null, "link": null, "level": null, "shout": null});
    assert_eq!(call(&server, "Users.formats", nulls).await["result"], true, "null Options are fine");
    let bad = [
        ("id", json!("not-a-uuid")),
        ("day", json!("2026-13-45")),
        ("at", json!("yesterday")),
        ("link", json!("no scheme")),
        ("level", json!(4)),
        ("shout", json!("   ")),
        ("shout", json!("lower")),
    ];
    for (param, value) in bad {
        let reply = call(&server, "Users.formats", json!({ param: value })).await;
        let messages = refused(&reply, param);
        assert!(!messages.is_empty(), "{param} = {value}: {reply}");
    }
}

/// Exclusive bounds, `equals` and `items(..)`: in the schema, and enforced.
#[tokio::test]
async fn exclusive_bounds_constants_and_item_rules() {
    let registry = registry();
    let method = registry.method(1, "Users.rate", None).expect("Users.rate");
    let p = &method.schemas().input["properties"];
    assert_eq!(p["share"]["exclusiveMinimum"], 0);
    assert_eq!(p["share"]["maximum"], 1);
    assert_eq!(p["agreed"]["const"], "yes");
    assert_eq!(p["schema_version"]["enum"], json!([2, null]), "an Option keeps null: {}", p["schema_version"]);
    assert_eq!(p["tags"]["maxItems"], 3);
    assert_eq!(p["tags"]["items"], json!({"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"}));
    assert_eq!(p["scores"]["items"]["minimum"], 1);
    assert_eq!(p["scores"]["items"]["exclusiveMaximum"], 100);

    let server = server().await;
    let good = json!({"share": 0.5, "agreed": "yes", "tags": ["ab", "cde"], "scores": [1, 99], "schema_version": 2});
    assert_eq!(call(&server, "Users.rate", good.clone()).await["result"], 2);
    let bad = [
        ("share", json!(0), "less than or equal to the minimum of 0"),
        ("share", json!(1.5), "greater than the maximum of 1"),
        ("agreed", json!("no"), "\"yes\" was expected"),
        ("schema_version", json!(3), "is not one of"),
        ("tags", json!(["a"]), "shorter than 2 characters"),
        ("tags", json!(["abcdef"]), "longer than 5 characters"),
        ("tags", json!(["AB"]), "does not match"),
        ("tags", json!(["ab", "cd", "ef", "gh"]), "has more than 3 items"),
        ("scores", json!([0]), "less than the minimum of 1"),
        ("scores", json!([100]), "greater than or equal to the maximum of 100"),
    ];
    for (param, value, expected) in bad {
        let mut params = good.clone();
        params[param] = value.clone();
        let reply = call(&server, "Users.rate", params).await;
        let messages = refused(&reply, param);
        assert!(
            messages.iter().any(|m| m.contains(expected)),
            "{param} = {value}: expected {expected:?} in {messages:?}"
        );
    }
}

/// A DTO's field rules (schemars' attributes) are published in the schema
/// and enforced, each refusal naming the parameter.
#[tokio::test]
async fn dto_field_rules_are_enforced() {
    let server = server().await;
    let line = json!({"sku": "AB-12", "qty": 2, "price": 9.5, "notify": "a@b.org", "labels": ["red", "xl"]});
    assert_eq!(call(&server, "Users.order", json!({"lines": [line.clone()]})).await["result"], 1);
    let bad = [
        ("sku", json!("ab"), "shorter than 3 characters"),
        ("sku", json!("ab-12"), "does not match"),
        ("qty", json!(0), "less than the minimum of 1"),
        ("qty", json!(100), "greater than the maximum of 99"),
        ("price", json!(0), "less than or equal to the minimum of 0"),
        ("notify", json!("nobody"), "is not a \"email\""),
        ("labels", json!(["x"]), "shorter than 2 characters"),
        ("labels", json!(["a1", "b2", "c3", "d4", "e5"]), "has more than 4 items"),
    ];
    for (field, value, expected) in bad {
        let mut wrong = line.clone();
        wrong[field] = value.clone();
        let reply = call(&server, "Users.order", json!({"lines": [line.clone(), wrong]})).await;
        let messages = refused(&reply, "lines");
        assert!(
            messages.iter().any(|m| m.contains(expected)),
            "{field} = {value}: expected {expected:?} in {messages:?}"
        );
    }
    let registry = registry();
    let order = registry.method(1, "Users.order", None).expect("Users.order");
    let text = order.schemas().input.to_string();
    for keyword in [r#""exclusiveMinimum":0"#, r#""pattern":"^[A-Z0-9-]+$""#, r#""minimum":1"#, r#""maxItems":4"#] {
        assert!(text.contains(keyword), "{keyword} in {text}");
    }
}

/// Patterns are ECMA-262, as published: a look-ahead works, and `\d` is
/// ASCII only, as in every JavaScript client (Rust's `\d` would take `٣`).
#[tokio::test]
async fn patterns_are_ecma_262() {
    let server = server().await;
    assert_eq!(call(&server, "Users.passcode", json!({"code": "abcdefg1"})).await["result"], 8);
    for bad in ["abcdefgh", "12345678", "abcdefg\u{663}", "abc1"] {
        let reply = call(&server, "Users.passcode", json!({ "code": bad })).await;
        let messages = refused(&reply, "code");
        assert!(messages.iter().any(|m| m.contains("does not match")), "{bad:?}: {messages:?}");
    }
}

#[tokio::test]
async fn mcp_publishes_and_enforces_the_rules() {
    let server = server().await;
    let mut client = RawMcp::new(server.url("/mcp"));
    client.initialize("2025-06-18").await;
    let reply = client.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})).await;
    let tools = reply.json["result"]["tools"].as_array().cloned().unwrap_or_default();
    let register = tools.iter().find(|t| t["name"] == "Users.register").unwrap_or_else(|| panic!("{tools:?}"));
    // MCP writes `Option<T>`'s type arrays as `anyOf` branches.
    let mut expected = standard(register_schema());
    rpc::schema::single_types(&mut expected);
    assert_eq!(register["inputSchema"], expected);

    let bad = client.call("Users.register", with("name", json!("ab"))).await;
    let text = bad.to_string();
    assert!(text.contains("shorter than 3 characters"), "refused over MCP: {text}");
    let good = client.call("Users.register", good()).await;
    assert!(good.get("error").is_none() && good["result"]["isError"] != true, "{good}");
}

#[test]
fn openrpc_params_carry_the_rules() {
    let service = JsonRpcService::new(Executor::new(registry(), Environment::Dev));
    let doc = service.openrpc_document(1, rpc::Language::DEFAULT).expect("the v1 document");
    let method = doc["methods"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["name"] == "Users.register"))
        .unwrap_or_else(|| panic!("Users.register in {doc}"));
    let name = method["params"].as_array().and_then(|p| p.iter().find(|p| p["name"] == "name")).expect("name");
    let schema = &name["schema"];
    assert_eq!((schema["minLength"].clone(), schema["maxLength"].clone()), (json!(3), json!(12)), "{name}");
    assert_eq!(schema["pattern"], "^[a-z]+$");
    let plan = method["params"].as_array().and_then(|p| p.iter().find(|p| p["name"] == "plan")).expect("plan");
    assert_eq!(plan["schema"]["enum"], json!(["free", "pro"]), "{plan}");
}
