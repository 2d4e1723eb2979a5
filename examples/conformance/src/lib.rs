//! The conformance example: the fixture tools, resources, prompts and
//! completion of the official MCP
//! conformance suite (`@modelcontextprotocol/conformance`), served over MCP
//! at `/mcp` (version 1, also at `/mcp/v1`).
//!
//! Run it with `cargo run -p conformance-server -- --listen 127.0.0.1:3000`,
//! then the suite with `npx @modelcontextprotocol/conformance server --url
//! http://127.0.0.1:3000/mcp`; `scripts/interop.sh` does both.

pub mod asking;
pub mod library;
pub mod services;
pub mod tasks;

use mcp::{ListChanges, McpEndpoint, ServerInfo};
use rpc::server::Router;
use rpc::{Environment, Executor, HostPolicy, Registry, RegistryError, Security};

pub use asking::Asking;
pub use library::Library;
pub use services::{Conformance, Fixtures};
pub use tasks::TaskFixtures;

/// The registry: the fixture service, whose change trigger notifies `changes`.
pub fn registry(changes: ListChanges) -> Result<Registry, RegistryError> {
    Registry::builder().service(Fixtures::new(changes)).service(Library).service(Asking).service(TaskFixtures).build()
}

/// The whole application: `/mcp` (the `conformance` group), accepting
/// loopback host names only.
pub fn app(env: Environment) -> Result<Router, RegistryError> {
    app_with(env, Security::new().hosts(HostPolicy::localhost()))
}

/// The application with chosen security (allowed hosts, tokens, CORS) for `/mcp`.
pub fn app_with(env: Environment, security: Security) -> Result<Router, RegistryError> {
    let changes = ListChanges::new();
    let executor = Executor::new(registry(changes.clone())?, env);
    let mcp = McpEndpoint::builder::<Conformance>(executor)
        .list_changes(changes)
        .server_info(
            ServerInfo::new("conformance-server", env!("CARGO_PKG_VERSION"))
                .title("MCP conformance fixtures")
                .description("The fixture tools the official MCP conformance suite calls."),
        )
        .instructions("Test fixtures only: every tool returns a fixed result for the MCP conformance suite.")
        .security(security)
        .build();
    Ok(Router::new().nest("/mcp", mcp))
}
