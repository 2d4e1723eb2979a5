//! The JSON-RPC 2.0 endpoint over HTTP (framing itself is in
//! `rpc_core::jsonrpc`).

mod builder;
pub mod callback;
pub mod service;

pub use builder::{DEFAULT_MAX_BATCH, DEFAULT_MAX_BODY_BYTES, JsonRpcBuilder};
pub use callback::Callbacks;
pub use service::JsonRpcService;
