// Any `Result` whose error converts into `rpc::RpcError` is fallible, however
// it is spelt; anything else is a value. Nothing is sent as {"Ok": ...}.
use std::fmt;

use serde_json::{Value, json};

use crate::call;

rpc::api_group!(pub struct Api => "api");

#[derive(Debug)]
pub struct Missing(u32);

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "item {} is missing", self.0)
    }
}

impl std::error::Error for Missing {}

impl rpc::ApplicationError for Missing {
    fn code(&self) -> i32 {
        404
    }
}

/// An alias under another name.
pub type Outcome<T> = Result<T, Missing>;

mod deep {
    /// An alias of an alias, in another module.
    pub type Answer<T> = super::Outcome<T>;
}

mod impostor {
    /// A user type that happens to be named `Result`: a value, not a `Result`.
    #[derive(serde::Serialize, schemars::JsonSchema)]
    pub struct Result {
        pub ok: bool,
    }
}

pub struct Svc;

#[rpc::service(groups(Api))]
impl Svc {
    /// Through an alias.
    pub fn alias(&self, fail: bool) -> Outcome<u32> {
        if fail { Err(Missing(1)) } else { Ok(7) }
    }

    /// Through an alias of an alias.
    pub fn nested(&self, fail: bool) -> deep::Answer<String> {
        if fail { Err(Missing(2)) } else { Ok("deep".into()) }
    }

    /// `std::io::Result`: an I/O error is an internal error.
    pub fn io(&self, fail: bool) -> std::io::Result<Vec<u8>> {
        if fail { Err(std::io::Error::other("disk gone")) } else { Ok(vec![1, 2]) }
    }

    /// A full path.
    pub fn full(&self, fail: bool) -> ::core::result::Result<bool, rpc::RpcError> {
        if fail { Err(rpc::RpcError::new(4000, "refused")) } else { Ok(true) }
    }

    /// `rpc::Result`.
    pub async fn later(&self) -> rpc::Result<u8> {
        Ok(3)
    }

    /// A type named `Result` that is not one.
    pub fn impostor(&self) -> impostor::Result {
        impostor::Result { ok: true }
    }

    /// `Result<(), E>`: nothing to return.
    pub fn unit(&self) -> Outcome<()> {
        Ok(())
    }
}

fn result_schema(registry: &rpc::Registry, method: &str) -> Value {
    let method = registry.method(1, method, None).expect("registered");
    method.schemas().result.clone().unwrap_or(Value::Null)
}

pub fn main() {
    let registry = rpc::Registry::builder().service(Svc).build().expect("registry builds");
    assert_eq!(result_schema(&registry, "Svc.alias")["type"], "integer", "the schema of the success type");
    assert_eq!(result_schema(&registry, "Svc.nested")["type"], "string");
    assert_eq!(result_schema(&registry, "Svc.io")["type"], "array");
    assert_eq!(result_schema(&registry, "Svc.full")["type"], "boolean");
    let impostor = result_schema(&registry, "Svc.impostor");
    assert_eq!(impostor["$ref"], "#/$defs/Result", "the struct, not a Result: {impostor}");
    assert_eq!(impostor["$defs"]["Result"]["properties"]["ok"]["type"], "boolean");
    assert_eq!(result_schema(&registry, "Svc.unit"), Value::Null, "no result schema for ()");

    let executor = rpc::Executor::new(registry, rpc::Environment::Prod);
    assert_eq!(call(&executor, "Svc.alias", json!({"fail": false})).expect("ok"), json!(7));
    let error = call(&executor, "Svc.alias", json!({"fail": true})).expect_err("an RPC error, not {\"Err\": ...}");
    assert_eq!((error.code(), error.message()), (404, "item 1 is missing"));
    assert_eq!(call(&executor, "Svc.nested", json!({"fail": false})).expect("ok"), json!("deep"));
    assert_eq!(call(&executor, "Svc.nested", json!({"fail": true})).expect_err("error").code(), 404);
    assert_eq!(call(&executor, "Svc.io", json!({"fail": false})).expect("ok"), json!([1, 2]));
    let io = call(&executor, "Svc.io", json!({"fail": true})).expect_err("error");
    assert_eq!((io.code(), io.message()), (-32603, "Internal error"), "I/O details stay out of production");
    assert_eq!(call(&executor, "Svc.full", json!({"fail": false})).expect("ok"), json!(true));
    assert_eq!(call(&executor, "Svc.full", json!({"fail": true})).expect_err("error").code(), 4000);
    assert_eq!(call(&executor, "Svc.later", Value::Null).expect("ok"), json!(3));
    assert_eq!(call(&executor, "Svc.impostor", Value::Null).expect("ok"), json!({"ok": true}));
    assert_eq!(call(&executor, "Svc.unit", Value::Null).expect("ok"), Value::Null);
}
