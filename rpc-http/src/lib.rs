//! JSON-RPC 2.0 over HTTP for `rpc-core` services, and the HTTP pieces
//! every endpoint shares (`mcp`'s Streamable HTTP too):
//!
//! * [`JsonRpcService`]: the `/rpc` endpoint (`POST` calls and batches,
//!   `$rpc` options, the OpenRPC document, the docs page, Postman), a
//!   `tower::Service` over `http` types;
//! * [`security`]: the steps every request goes through (host checks
//!   against DNS rebinding, availability, CORS, the access policy: static
//!   tokens or your own);
//! * [`server`]: bodies and routing, the bundled hyper runner with its
//!   connection limits, and the command line of the example servers;
//! * [`docs`]: the self-contained docs pages and Postman collections;
//! * [`i18n`]: the language of a request from `Accept-Language`;
//! * `amqp` (feature `amqp`): asynchronous calls on a message broker.
//!
//! Applications depend on the `rpc` facade, which re-exports this crate
//! beside `rpc-core` under one name.

#![warn(missing_docs)]

#[cfg(feature = "amqp")]
pub mod amqp;
#[cfg(feature = "docs")]
pub mod docs;
pub mod i18n;
pub mod jsonrpc;
pub mod security;
pub mod server;

pub use jsonrpc::{Callbacks, JsonRpcBuilder, JsonRpcService};
pub use security::{Cors, HostPolicy, Identity, Security, TokenPolicy};
