//! HTTP plumbing: body types, a prefix router and the bundled runner with
//! its connection limits.

/// The error type of request and response bodies.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

mod activity;
pub mod body;
#[cfg(feature = "cli")]
pub mod cli;
mod conn_service;
pub mod deadline;
pub mod draining;
pub mod limits;
pub mod route;
pub mod router;
pub mod runner;

pub use body::ResponseBody;
pub use conn_service::IncomingBody;
pub use draining::Draining;
pub use limits::{ServerLimits, raise_open_files_limit};
pub use route::{InvalidPublicUrl, OriginalUri, PeerAddr, PublicUrl};
pub use router::{RequestBody, Router};
pub use runner::{run, serve, serve_with, shutdown_signal};
