//! The JSON-RPC 2.0 endpoint over HTTP (framing itself is in
//! `rpc_core::jsonrpc`).

mod batch;
mod builder;
#[cfg_attr(not(feature = "callbacks"), path = "callback_off.rs")]
pub mod callback;
pub mod deferred;
mod document;
#[cfg(feature = "docs")]
mod pages;
pub mod queue;
pub mod service;

pub use builder::{DEFAULT_MAX_BATCH, DEFAULT_MAX_BODY_BYTES, JsonRpcBuilder};
pub use callback::Callbacks;
pub use queue::{Job, Queue, QueueError};
pub use service::JsonRpcService;
