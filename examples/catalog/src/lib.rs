//! The catalog example: a product catalog served over JSON-RPC at `/rpc`
//! (`/rpc/v2` for version 2) and, for the `mcp` group, over MCP at
//! `/mcp/v1` and `/mcp/v2`.

pub mod services;

use std::sync::Arc;

use mcp::{McpEndpoint, ServerInfo};
use rpc::server::{PublicUrl, Router};
use rpc::{ApiInfo, Environment, Executor, HostPolicy, JsonRpcService, Registry, RegistryError, Security};

pub use services::{Admin, Catalog, CatalogV2, Mcp, Pinger};

/// The catalog's registry: its three services, registered by instance
/// (version 2 shares version 1's data).
pub fn registry() -> Result<Registry, RegistryError> {
    let catalog = Arc::new(Catalog::new());
    Registry::builder().service(Pinger).service_arc(catalog.clone()).service(CatalogV2::new(catalog)).build()
}

/// The whole application: `/rpc` (all methods) and `/mcp` (the `mcp`
/// group), accepting loopback host names only, without tokens.
pub fn app(env: Environment) -> Result<Router, RegistryError> {
    app_with(env, Security::new().hosts(HostPolicy::localhost()))
}

/// The application with chosen security (allowed hosts, tokens, CORS),
/// shared by both endpoints.
pub fn app_with(env: Environment, security: Security) -> Result<Router, RegistryError> {
    Ok(router(Executor::new(registry()?, env), security, None))
}

/// The application with chosen security and, when given, the public base
/// URL its documents name (`https://api.example.com`: behind a proxy, the
/// request's own host is not trusted).
pub fn app_configured(
    env: Environment,
    security: Security,
    public_url: Option<PublicUrl>,
) -> Result<Router, RegistryError> {
    Ok(router(Executor::new(registry()?, env), security, public_url))
}

fn router(executor: Executor, security: Security, public_url: Option<PublicUrl>) -> Router {
    let mut rpc = JsonRpcService::builder(executor.clone())
        .info(
            ApiInfo::new("Catalog API", env!("CARGO_PKG_VERSION"))
                .description("A product catalog: search, get, list, categories."),
        )
        .security(security.clone());
    if let Some(base) = public_url {
        rpc = rpc.public_url(base);
    }
    let mcp = McpEndpoint::builder::<Mcp>(executor)
        .server_info(
            ServerInfo::new("catalog", env!("CARGO_PKG_VERSION"))
                .title("Product catalog")
                .description("Search and browse an example product catalog.")
                .website_url("https://example.com/catalog"),
        )
        .instructions(
            "Use Catalog.search to find products by name, then Catalog.get for details. \
             Product ids are positive integers.",
        )
        .security(security)
        .build();
    Router::new().nest("/rpc", rpc.build()).nest("/mcp", mcp)
}
