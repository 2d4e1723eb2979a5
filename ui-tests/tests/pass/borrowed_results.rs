// Methods may return values that borrow their service, sync or async,
// plain or in a `Result` (whose error is then located at the return type).
use std::borrow::Cow;
use std::fmt;

use serde_json::{Value, json};

use crate::call;

rpc::api_group!(pub struct Api => "api");

pub struct Names {
    name: String,
}

#[derive(Debug)]
pub struct Empty;

impl fmt::Display for Empty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no name")
    }
}

impl std::error::Error for Empty {}

impl rpc::ApplicationError for Empty {
    fn code(&self) -> i32 {
        404
    }
}

#[rpc::service(groups(Api))]
impl Names {
    /// The name, borrowed.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name, borrowed, later.
    pub async fn name_later(&self) -> &str {
        tokio::task::yield_now().await;
        &self.name
    }

    /// The name, borrowed through a type with a lifetime, later.
    pub async fn cow_later(&self) -> Cow<'_, str> {
        tokio::task::yield_now().await;
        Cow::Borrowed(&self.name)
    }

    /// The name, or an error when `empty`, later.
    pub async fn checked_later(&self, empty: bool) -> Result<&str, Empty> {
        tokio::task::yield_now().await;
        if empty { Err(Empty) } else { Ok(&self.name) }
    }
}

pub fn main() {
    let registry = rpc::Registry::builder().service(Names { name: "ada".to_owned() }).build().expect("registry builds");
    let executor = rpc::Executor::new(registry, rpc::Environment::Dev);
    for method in ["Names.name", "Names.name_later", "Names.cow_later"] {
        assert_eq!(call(&executor, method, Value::Null).expect(method), json!("ada"), "{method}");
    }
    assert_eq!(call(&executor, "Names.checked_later", json!({"empty": false})).expect("ok"), json!("ada"));
    let error = call(&executor, "Names.checked_later", json!({"empty": true})).expect_err("an error");
    assert_eq!((error.code(), error.message()), (404, "no name"));
    // Where `checked_later`'s return type is written.
    let data = error.data(rpc::Environment::Dev);
    let location = data["location"].as_str().unwrap_or_else(|| panic!("a location: {data}"));
    let source = include_str!("borrowed_results.rs");
    let line = source.lines().position(|l| l.contains("fn checked_later(")).expect("the method") + 1;
    let column = source.lines().nth(line - 1).and_then(|l| l.find("Result<&str")).expect("its return type") + 1;
    assert!(location.ends_with(&format!("borrowed_results.rs:{line}:{column}")), "{location}");
}
