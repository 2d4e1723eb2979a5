//! HTTP plumbing: body types, a prefix router and (feature `server`) the
//! bundled hyper runner with its connection limits.

/// The error type of request and response bodies.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[cfg(feature = "server")]
mod activity;
pub mod body;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "server")]
mod conn_service;
pub mod connection;
pub mod deadline;
pub mod draining;
#[cfg(feature = "server")]
mod http_version;
#[cfg(feature = "server")]
pub mod limits;
#[cfg(feature = "cli")]
pub mod one_shot;
#[cfg(feature = "server")]
mod orders;
mod ready_call;
pub mod request_body;
pub mod request_headers;
pub mod route;
pub mod router;
#[cfg(feature = "server")]
pub mod runner;

pub use body::ResponseBody;
#[cfg(feature = "server")]
pub use conn_service::IncomingBody;
pub use connection::Connection;
pub use draining::Draining;
#[cfg(feature = "server")]
pub use limits::{ServerLimits, raise_open_files_limit};
pub use route::{InvalidPublicUrl, OriginalUri, PublicUrl};
pub use router::{RequestBody, Router};
#[cfg(feature = "server")]
pub use runner::{run, serve, serve_with, shutdown_signal};
