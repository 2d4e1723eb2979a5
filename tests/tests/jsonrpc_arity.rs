//! Methods of every arity the generated code treats differently: none, one
//! to eight arguments (bound by `__private::invoke<N>`, shared by every
//! method of that arity) and nine (bound by code the macro writes out),
//! sync and async, with a default and a `Context` among them. Each binds
//! its arguments in declaration order, by name and by position, and the
//! first parameter that cannot be bound is the one the error names.

use crate::jsonrpc_common;

use std::sync::Arc;

use e2e_tests::TestServer;
use jsonrpc_common::{call_error, call_result};
use rpc::server::Router;
use rpc::{Environment, Executor, JsonRpcService, Registry};
use serde_json::{Value, json};

mod app {
    use rpc::Context;

    rpc::api_group! {
        /// Everything here.
        pub struct Arity => "arity";
    }

    /// Methods that join their arguments into one string, in order.
    #[derive(Debug, Default)]
    pub struct Joiner;

    #[rpc::service(groups(Arity))]
    #[allow(clippy::too_many_arguments)]
    impl Joiner {
        /// No argument at all.
        pub fn none(&self) -> String {
            "none".to_owned()
        }

        /// One argument.
        pub fn one(&self, a: u8) -> String {
            format!("{a}")
        }

        /// Eight arguments (the most the shared bodies take), the last
        /// one with a default.
        pub fn eight(
            &self,
            a: u8,
            b: u16,
            c: u32,
            d: u64,
            e: i8,
            f: String,
            g: bool,
            #[rpc(default = 7)] h: i64,
        ) -> String {
            format!("{a} {b} {c} {d} {e} {f} {g} {h}")
        }

        /// Nine arguments, bound by code written out for this method.
        pub fn nine(
            &self,
            a: u8,
            b: u16,
            c: u32,
            d: u64,
            e: i8,
            f: String,
            g: bool,
            h: i64,
            #[rpc(default = "nine".to_owned())] i: String,
        ) -> String {
            format!("{a} {b} {c} {d} {e} {f} {g} {h} {i}")
        }

        /// Nine arguments, async, a `Context` among them.
        pub async fn nine_later(
            &self,
            a: u8,
            b: u16,
            context: Context,
            c: u32,
            d: u64,
            e: i8,
            f: String,
            g: bool,
            h: i64,
        ) -> String {
            tokio::task::yield_now().await;
            let _ = context;
            format!("{a} {b} {c} {d} {e} {f} {g} {h}")
        }

        /// Two arguments and a `Context`, async.
        pub async fn two_later(&self, context: Context, a: u8, #[rpc(default = 2)] b: u8) -> String {
            tokio::task::yield_now().await;
            let _ = context;
            format!("{a} {b}")
        }

        /// Refuses `a` over 9, async.
        pub async fn digit_later(&self, a: u8) -> Result<u8, TooBig> {
            tokio::task::yield_now().await;
            if a > 9 { Err(TooBig(a)) } else { Ok(a) }
        }

        /// Refuses `a` over 9 with an error of its own, async.
        pub async fn own_error_later(&self, a: u8) -> rpc::Result<u8> {
            tokio::task::yield_now().await;
            if a > 9 { Err(rpc::RpcError::new(4220, "not a digit")) } else { Ok(a) }
        }

        /// Refuses `a` over 9.
        pub fn digit(&self, a: u8) -> Result<u8, TooBig> {
            if a > 9 { Err(TooBig(a)) } else { Ok(a) }
        }

        /// Refuses `a` over 9, with nine arguments (bound by code written
        /// out for this method).
        pub fn digit_of_nine(
            &self,
            a: u8,
            b: u8,
            c: u8,
            d: u8,
            e: u8,
            f: u8,
            g: u8,
            h: u8,
            i: u8,
        ) -> Result<u8, TooBig> {
            let _ = (b, c, d, e, f, g, h, i);
            if a > 9 { Err(TooBig(a)) } else { Ok(a) }
        }
    }

    /// A number over 9.
    #[derive(Debug)]
    pub struct TooBig(pub u8);

    impl std::fmt::Display for TooBig {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{} is not a digit", self.0)
        }
    }

    impl std::error::Error for TooBig {}

    impl rpc::ApplicationError for TooBig {
        fn code(&self) -> i32 {
            422
        }
    }
}

/// This file, as compiled into the test binary, and its path as an error's
/// location names it.
const SOURCE: &str = include_str!("jsonrpc_arity.rs");
const SOURCE_PATH: &str = file!();

async fn start() -> (TestServer, String) {
    let registry = Registry::builder().service(app::Joiner).build().expect("the test service registers");
    let executor = Executor::new(Arc::new(registry), Environment::Dev);
    let router = Router::new().nest("/rpc", JsonRpcService::new(executor));
    let server = TestServer::start(router).await;
    let url = server.url("/rpc");
    (server, url)
}

/// The parameters `a` to `i` (as many as `count`) named.
fn named(values: &[Value]) -> Value {
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    Value::Object(names.iter().zip(values).map(|(n, v)| ((*n).to_owned(), v.clone())).collect())
}

fn nine_values() -> Vec<Value> {
    vec![json!(1), json!(2), json!(3), json!(4), json!(-5), json!("six"), json!(true), json!(-8), json!("nein")]
}

#[tokio::test]
async fn every_arity_binds_its_arguments_in_order_by_name_and_by_position() {
    let (_server, url) = start().await;
    let values = nine_values();
    assert_eq!(call_result(&url, "Joiner.none", Value::Null).await, json!("none"));
    assert_eq!(call_result(&url, "Joiner.one", json!([9])).await, json!("9"));
    assert_eq!(call_result(&url, "Joiner.one", json!({"a": 9})).await, json!("9"));
    for params in [named(&values[..8]), Value::Array(values[..8].to_vec())] {
        assert_eq!(call_result(&url, "Joiner.eight", params).await, json!("1 2 3 4 -5 six true -8"));
    }
    for params in [named(&values), Value::Array(values.clone())] {
        assert_eq!(call_result(&url, "Joiner.nine", params).await, json!("1 2 3 4 -5 six true -8 nein"));
    }
    for params in [named(&values[..8]), Value::Array(values[..8].to_vec())] {
        assert_eq!(call_result(&url, "Joiner.nine_later", params).await, json!("1 2 3 4 -5 six true -8"));
    }
    assert_eq!(call_result(&url, "Joiner.two_later", json!([4, 5])).await, json!("4 5"));
}

#[tokio::test]
async fn defaults_fill_in_on_both_sides_of_the_shared_bodies() {
    let (_server, url) = start().await;
    let values = nine_values();
    assert_eq!(call_result(&url, "Joiner.eight", named(&values[..7])).await, json!("1 2 3 4 -5 six true 7"));
    assert_eq!(call_result(&url, "Joiner.nine", named(&values[..8])).await, json!("1 2 3 4 -5 six true -8 nine"));
    assert_eq!(call_result(&url, "Joiner.two_later", json!({"a": 4})).await, json!("4 2"));
}

#[tokio::test]
async fn the_offending_parameter_is_named_on_both_sides_of_the_shared_bodies() {
    let (_server, url) = start().await;
    let values = nine_values();
    for method in ["Joiner.eight", "Joiner.nine", "Joiner.nine_later"] {
        // The seventh argument, `g`, is missing.
        let mut params = named(&values[..8]);
        params.as_object_mut().map(|p| p.remove("g"));
        let error = call_error(&url, method, params).await;
        assert_eq!(error["code"], json!(-32602), "{method}: {error}");
        let extra = error["data"]["extra"].as_object().unwrap_or_else(|| panic!("{method}: {error}"));
        assert_eq!(extra.keys().collect::<Vec<_>>(), ["g"], "{method}: {error}");

        // The fourth, `d`, has the wrong type.
        let mut params = named(&values[..8]);
        params["d"] = json!("four");
        let error = call_error(&url, method, params).await;
        assert_eq!(error["code"], json!(-32602), "{method}: {error}");
        let extra = error["data"]["extra"].as_object().unwrap_or_else(|| panic!("{method}: {error}"));
        assert_eq!(extra.keys().collect::<Vec<_>>(), ["d"], "{method}: {error}");
        // The method's and the parameter's names come from its descriptor.
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(&format!("Invalid params for {method}: d: ")), "{method}: {error}");
    }
}

#[tokio::test]
async fn an_application_error_is_located_at_its_methods_return_type_sync_or_async() {
    let (_server, url) = start().await;
    for (method, signature, params) in [
        ("Joiner.digit", "pub fn digit(", json!([12])),
        ("Joiner.digit_later", "pub async fn digit_later(", json!([12])),
        ("Joiner.digit_of_nine", "pub fn digit_of_nine(", json!([12, 0, 0, 0, 0, 0, 0, 0, 0])),
    ] {
        let error = call_error(&url, method, params).await;
        assert_eq!(error["code"], json!(422), "{method}: {error}");
        assert_eq!(error["message"], json!("12 is not a digit"), "{method}: {error}");
        // `file:line:column`, at the return type of the method (the last
        // `fn` at or before that line).
        let location = error["data"]["location"].as_str().unwrap_or_else(|| panic!("{method}: {error}"));
        let (line, text, column) = jsonrpc_common::located(location, SOURCE_PATH, SOURCE);
        assert!(text[column - 1..].starts_with("Result<u8, TooBig>"), "{method}: {location} is `{text}`");
        let function = SOURCE.lines().take(line).filter(|l| l.contains("fn ")).last().unwrap_or_default();
        assert!(function.contains(signature), "{method}: {location} is in `{function}`");
    }
}

#[tokio::test]
async fn an_rpc_error_a_method_makes_keeps_its_own_location() {
    let (_server, url) = start().await;
    let error = call_error(&url, "Joiner.own_error_later", json!([12])).await;
    assert_eq!(error["code"], json!(4220), "{error}");
    let location = error["data"]["location"].as_str().unwrap_or_else(|| panic!("{error}"));
    let (_, text, _) = jsonrpc_common::located(location, SOURCE_PATH, SOURCE);
    assert!(text.contains("rpc::RpcError::new(4220"), "{location} is `{text}`");
}
