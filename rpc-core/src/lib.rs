//! Annotated Rust services as a JSON-RPC 2.0 API (and, through the `mcp`
//! crate, as MCP tools).
//!
//! Annotate an inherent impl block with [`#[rpc::service]`](service); every
//! `pub fn` taking `&self` becomes an RPC method named `alias + separator +
//! fn name`. At compile time the macro generates the method metadata and the
//! code to build JSON Schemas; [`Registry::builder`] collects them at startup,
//! and one [`Executor`] runs calls for every transport.
//!
//! ```
//! use std::sync::Arc;
//!
//! rpc::api_group!(pub struct Public => "public");
//!
//! /// A greeting service.
//! pub struct Greeter;
//!
//! #[rpc::service(alias = "", groups(Public))]
//! impl Greeter {
//!     /// Ping.
//!     ///
//!     /// # Arguments
//!     /// * `who` - Who is pinging
//!     pub fn ping(&self, #[rpc(default = "x")] who: String) -> String {
//!         format!("pong {who}")
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let registry = rpc::Registry::builder().service(Greeter).build().expect("all services registered");
//! let executor = rpc::Executor::new(Arc::new(registry), rpc::Environment::Dev);
//! let call = rpc::Call { method: "ping", version: 1, params: rpc::Params::None, scope: None, transport: rpc::Transport::JsonRpc };
//! let result = executor.execute(call).await.result.unwrap();
//! assert_eq!(result.get(), r#""pong x""#);
//! # }
//! ```
//!
//! Serve it over HTTP with [`JsonRpcService`] (a `tower::Service`), either
//! inside your own axum/hyper application or with the bundled
//! [`server::serve`].

#![warn(missing_docs)]

pub mod descriptor;
pub mod error;
pub mod executor;
pub mod group;
pub mod jsonrpc;
pub mod openrpc;
pub mod registry;
pub mod schema;
pub mod security;
pub mod server;

pub use descriptor::{MethodDescriptor, OutputKind, ParamDescriptor, ServiceDescriptor, ToolHints};
pub use error::{ApplicationError, Environment, RpcError};
pub use executor::{Call, CallCache, CallHooks, CallInfo, Execution, Executor, Params, Stage, Transport};
pub use group::{ApiGroup, GroupRef, is_valid_tool_name};
pub use jsonrpc::{JsonRpcBuilder, JsonRpcService};
pub use openrpc::ApiInfo;
pub use registry::{Method, Registry, RegistryBuilder, RegistryError};
pub use rpc_macros::{info, service};
pub use security::HostPolicy;

/// `Result` with [`RpcError`].
pub type Result<T, E = RpcError> = std::result::Result<T, E>;

/// Support for the code `#[rpc::service]` generates. Not public API.
#[doc(hidden)]
pub mod __private {
    use std::any::Any;
    use std::sync::Arc;

    pub use futures_util::future::BoxFuture;
    pub use inventory;
    pub use schemars;
    pub use serde;
    pub use serde_json;

    pub use crate::descriptor::{
        InvokeResult, MethodDescriptor, MethodSchemas, OutputKind, ParamDescriptor, ServiceDescriptor, ServiceInstance,
        ToolHints,
    };
    use crate::error::RpcError;
    pub use crate::group::{ApiGroup, GroupRef, is_valid_tool_name};

    /// The concrete service behind an instance.
    pub fn downcast<T: Any + Send + Sync>(instance: ServiceInstance) -> Result<Arc<T>, RpcError> {
        instance
            .downcast::<T>()
            .map_err(|_| RpcError::internal(format!("service instance is not a `{}`", std::any::type_name::<T>())))
    }

    /// Takes parameter `name` out of the validated arguments and deserialises
    /// it; a missing one gets its default (or `None` for an `Option`).
    pub fn param<T: serde::de::DeserializeOwned>(
        method: &str,
        params: &mut serde_json::Map<String, serde_json::Value>,
        name: &str,
        default: Option<fn() -> T>,
    ) -> Result<T, RpcError> {
        let (value, problem) = match (params.remove(name), default) {
            (Some(value), _) => (value, None),
            (None, Some(default)) => return Ok(default()),
            (None, None) => (serde_json::Value::Null, Some("required parameter is missing")),
        };
        serde_json::from_value(value).map_err(|e| {
            let reason = problem.map_or_else(|| e.to_string(), str::to_owned);
            let mut violations = serde_json::Map::new();
            violations.insert(name.to_owned(), serde_json::Value::Array(vec![serde_json::Value::String(reason)]));
            RpcError::invalid_param_list(method, violations)
        })
    }

    /// Serialises a method's result once.
    pub fn output<T: serde::Serialize + ?Sized>(value: &T) -> InvokeResult {
        serde_json::value::to_raw_value(value)
            .map_err(|e| RpcError::internal(format!("result does not serialise: {e}")))
    }

    /// Serialises a default parameter value for the schema.
    pub fn default_value<T: serde::Serialize>(value: T) -> serde_json::Value {
        serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
    }

    /// A `Result` whose error converts into [`RpcError`].
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a `Result<T, E>` whose error converts into `rpc::RpcError`",
        label = "RPC methods return `T` or `Result<T, E>` with `rpc::RpcError: From<E>`",
        note = "implement `rpc::ApplicationError` for your error type to give it a JSON-RPC error code"
    )]
    pub trait Fallible {
        /// The success type.
        type Ok;
        /// Converts the error.
        fn into_rpc(self) -> Result<Self::Ok, RpcError>;
    }

    impl<T, E> Fallible for Result<T, E>
    where
        RpcError: From<E>,
    {
        type Ok = T;
        #[track_caller]
        fn into_rpc(self) -> Result<T, RpcError> {
            match self {
                Ok(v) => Ok(v),
                Err(e) => Err(<RpcError as From<E>>::from(e)),
            }
        }
    }

    /// Compile-time check helper: the service type can be shared across threads.
    pub const fn assert_service<T: Any + Send + Sync>() {}

    /// Compile-time check helper: a parameter type can be deserialised and described.
    pub const fn assert_param<T: serde::de::DeserializeOwned + schemars::JsonSchema>() {}

    /// Compile-time check helper: a result type can be serialised and described.
    pub const fn assert_output<T: serde::Serialize + schemars::JsonSchema + ?Sized>() {}
}
