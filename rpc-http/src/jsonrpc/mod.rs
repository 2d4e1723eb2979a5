//! The JSON-RPC 2.0 endpoint over HTTP (framing itself is in
//! `rpc_core::jsonrpc`).

pub mod callback;
pub mod service;

pub use callback::Callbacks;
pub use service::{JsonRpcBuilder, JsonRpcService};
