//! Annotated Rust services as a JSON-RPC 2.0 API over HTTP (and, through
//! the `mcp` crate, as MCP tools): the crate applications depend on.
//!
//! It puts two crates under one name: `rpc-core`, the transport-free core
//! (annotations, registry, schemas and validation, executor, events,
//! stores, OpenRPC, JSON-RPC framing), and `rpc-http`, JSON-RPC over HTTP
//! (the `/rpc` endpoint, security, routing, the bundled server, docs pages,
//! callbacks). Annotate an inherent impl block with
//! [`#[rpc::service]`](service); every `pub fn` taking `&self` becomes an
//! RPC method.
//!
//! ```
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
//! let result = executor.execute(rpc::Call::new("ping", 1, rpc::Params::None)).await.result.unwrap();
//! assert_eq!(result.get(), r#""pong x""#);
//! // Over HTTP: mount `rpc::JsonRpcService::new(executor)` (a `tower::Service`)
//! // in your axum/hyper application, or serve it with `rpc::server::serve`.
//! # }
//! ```

#![warn(missing_docs)]

pub use rpc_core::*;
/// Asynchronous calls on an AMQP broker (feature `amqp`): the publishing
/// [`amqp::AmqpQueue`] and the consuming [`amqp::Worker`].
#[cfg(feature = "amqp")]
pub use rpc_http::amqp;
#[cfg(feature = "docs")]
pub use rpc_http::docs;
pub use rpc_http::{Callbacks, Cors, HostPolicy, JsonRpcBuilder, JsonRpcService, Security, TokenPolicy};
pub use rpc_http::{security, server};

/// JSON-RPC 2.0: framing (envelopes, limits, responses, `$rpc` options) and
/// the HTTP endpoint.
pub mod jsonrpc {
    pub use rpc_core::jsonrpc::*;
    pub use rpc_http::jsonrpc::{
        Callbacks, DEFAULT_MAX_BATCH, DEFAULT_MAX_BODY_BYTES, Job, JsonRpcBuilder, JsonRpcService, Queue, QueueError,
        callback, deferred, service,
    };
}

/// Localised texts and the language of a request ([`i18n::LanguageHeaders`]
/// reads `Accept-Language`).
pub mod i18n {
    pub use rpc_core::i18n::*;
    pub use rpc_http::i18n::{JsonHeaders, LanguageHeaders};
}
