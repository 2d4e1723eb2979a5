//! MCP (Model Context Protocol) tools from `rpc` services.
//!
//! Every method of an API group is a tool. The transport-free
//! [`McpServer`] answers MCP messages of both protocol eras, running each
//! `tools/call` through the same [`rpc::Executor`] as the JSON-RPC
//! endpoint; [`McpEndpoint`] serves it over Streamable HTTP (a
//! `tower::Service`), [`stdio`] over stdin/stdout. Annotate methods with
//! [`#[mcp_tool]`](mcp_tool) to add tool hints; return [`Content`] to send
//! MCP content blocks instead of a JSON value.
//!
//! ```
//! rpc::api_group!(pub struct Tools => "tools", mcp = true);
//!
//! pub struct Clock;
//!
//! #[rpc::service(groups(Tools))]
//! impl Clock {
//!     /// The answer.
//!     #[mcp::mcp_tool(read_only_hint = true)]
//!     pub fn answer(&self) -> u32 {
//!         42
//!     }
//! }
//!
//! let registry = rpc::Registry::builder().service(Clock).build().expect("registry");
//! let executor = rpc::Executor::new(registry, rpc::Environment::Prod);
//! let endpoint = mcp::McpEndpoint::builder::<Tools>(executor)
//!     .server_info(mcp::ServerInfo::new("clock", "1.0.0"))
//!     .build();
//! // Mount it: rpc::server::Router::new().nest("/mcp", endpoint)
//! # let _ = endpoint;
//! ```

#![warn(missing_docs)]

#[cfg(feature = "amqp")]
pub mod amqp;
pub mod app;
mod arguments;
pub mod ask;
pub mod call;
pub mod changes;
#[cfg(feature = "redis")]
mod changes_redis;
pub mod completion;
pub mod config;
pub mod content;
pub mod documents;
pub mod endpoint;
pub mod features;
pub mod http;
mod markers;
mod notify;
mod pages;
pub mod prompts;
pub mod protocol;
pub mod resources;
pub mod server;
pub mod server_info;
pub mod session;
#[cfg(feature = "settings")]
pub mod settings;
pub mod state_key;
pub mod stdio;
pub mod tasks;
pub mod tools;
pub mod uri_template;
pub mod visibility;

pub use app::{App, AppError};
pub use ask::{AskClient, ElicitAction, Elicitation, Root};
pub use changes::{ListChange, ListChanges};
pub use config::{CacheScope, Eras, Icon, InvalidArguments, McpConfig, ServerInfo};
pub use content::{Blob, Content, ResourceContents};
pub use documents::manifest::{ClientManifest, ManifestServer, Manifests};
pub use documents::server_json::{ListingError, RegistryListing, Repository};
pub use endpoint::McpEndpointBuilder;
pub use http::McpEndpoint;
pub use prompts::{PromptMessage, Role as PromptRole};
pub use protocol::{Era, ProtocolVersion};
/// The request context a tool method can take (`ctx: mcp::Context`).
pub use rpc::{Context, LogLevel};
pub use rpc_macros::{mcp_complete, mcp_prompt, mcp_resource, mcp_tool};
pub use server::McpServer;

/// The runtime crate, for applications that depend on `mcp` alone:
/// `#[mcp::rpc::service]`, `mcp::rpc::Registry`, ...
pub use rpc;
pub use session::{ClientInfo, InMemorySessionStore, Session, SessionError, SessionStore, StoreFuture};
pub use state_key::StateKey;
