//! JSON-RPC 2.0 over HTTP.

pub mod envelope;
pub mod limits;
pub mod response;
pub mod service;

pub use limits::JsonLimits;
pub use service::{JsonRpcBuilder, JsonRpcService};
