//! The transport-free core of annotated Rust services: descriptors, groups,
//! the registry, schemas and validation, the executor and its call model,
//! events, the request context, errors, stores, texts and their
//! translations, the OpenRPC document, and JSON-RPC framing as bytes in and
//! out. Nothing here knows HTTP: `rpc-http` serves JSON-RPC over HTTP, and
//! `mcp` serves MCP over Streamable HTTP and stdio; the `rpc` crate is the
//! facade applications depend on.
//!
//! Annotate an inherent impl block with [`#[rpc::service]`](service); every
//! `pub fn` taking `&self` becomes an RPC method named `alias + separator +
//! fn name`. At compile time the macro generates the method metadata and the
//! code to build JSON Schemas; [`Registry::builder`] collects them at startup,
//! and one [`Executor`] runs calls for every transport.
//!
//! ```
//! # extern crate rpc_core as rpc;
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
//! let executor = rpc::Executor::new(registry, rpc::Environment::Dev);
//! let call = rpc::Call::new("ping", 1, rpc::Params::None);
//! let result = executor.execute(call).await.result.unwrap();
//! assert_eq!(result.get(), r#""pong x""#);
//! # }
//! ```
//!
//! Serve it over HTTP with `rpc::JsonRpcService` (a `tower::Service`, in
//! `rpc-http`), inside your own axum/hyper application or with the bundled
//! runner.

#![warn(missing_docs)]

// The macros refer to this crate as `::rpc` when it uses them itself.
extern crate self as rpc;

pub mod ask;
mod binders;
pub mod call;
pub mod clock;
mod compact_method;
pub mod context;
pub mod descriptor;
pub mod error;
pub mod error_codes;
pub mod events;
pub mod executor;
pub mod future;
pub mod group;
pub mod i18n;
pub mod identity;
pub mod jsonrpc;
pub mod logged;
pub mod mcp_role;
pub mod openrpc;
mod panic;
pub mod rate;
pub mod registry;
pub mod result_json;
pub mod rules;
pub mod schema;
pub mod store;
pub mod validation;

pub use context::{ClientView, Context, Event, EventSink, LogLevel};
pub use descriptor::{MethodDescriptor, OutputKind, ParamDescriptor, ServiceDescriptor, TaskSupport, ToolHints};
pub use error::{ApplicationError, Environment, RpcError};
pub use error_codes::{ErrorCode, ErrorCodes};
pub use events::{ErrorEvent, Listener, RequestEvent};
pub use executor::{CacheControl, Call, CallInfo, Execution, Executor, Params, Stage, Transport};
pub use future::MaybeReady;
pub use group::{ApiGroup, GroupRef, McpGroup, Package, is_valid_tool_name};
pub use i18n::{Language, Translations};
pub use identity::Identity;
pub use jsonrpc::JsonLimits;
pub use mcp_role::{CompletionSpec, CompletionTarget, McpRole, PromptSpec, ResourceSpec};
pub use openrpc::ApiInfo;
pub use registry::{Method, Registry, RegistryBuilder, RegistryError};
pub use result_json::ResultJson;
pub use rpc_macros::{ApplicationError, cache, info, invalidates, lock, service};

/// `Result` with [`RpcError`].
pub type Result<T, E = RpcError> = std::result::Result<T, E>;

/// Support for the code `#[rpc::service]` generates. Not public API.
#[doc(hidden)]
#[path = "macro_support.rs"]
pub mod __private;
