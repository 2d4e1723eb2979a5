//! JSON-RPC 2.0 over HTTP.

pub mod callback;
pub mod envelope;
pub mod limits;
pub mod response;
pub mod service;
pub mod special;

pub use callback::Callbacks;
pub use limits::JsonLimits;
pub use service::{JsonRpcBuilder, JsonRpcService};
