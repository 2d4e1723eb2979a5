//! HTTP plumbing: body types, a prefix router and the bundled runner.

pub mod body;
#[cfg(feature = "cli")]
pub mod cli;
pub mod draining;
pub mod route;
pub mod router;
pub mod runner;

pub use body::ResponseBody;
pub use draining::Draining;
pub use route::{InvalidPublicUrl, OriginalUri, PeerAddr, PublicUrl};
pub use router::{RequestBody, Router};
pub use runner::{run, serve, shutdown_signal};
