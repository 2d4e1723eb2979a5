//! JSON-RPC 2.0 over HTTP.

pub mod envelope;
pub mod response;
pub mod service;

pub use service::{JsonRpcBuilder, JsonRpcService};
