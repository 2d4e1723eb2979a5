//! The JSON-RPC 2.0 endpoint over HTTP (framing itself is in
//! `rpc_core::jsonrpc`).

mod builder;
#[cfg_attr(not(feature = "callbacks"), path = "callback_off.rs")]
pub mod callback;
#[cfg(feature = "docs")]
mod pages;
pub mod service;

pub use builder::{DEFAULT_MAX_BATCH, DEFAULT_MAX_BODY_BYTES, JsonRpcBuilder};
pub use callback::Callbacks;
pub use service::JsonRpcService;
