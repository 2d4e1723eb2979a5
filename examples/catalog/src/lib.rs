//! The catalog example: a product catalog served over JSON-RPC at `/rpc`
//! (`/rpc/v2` for version 2) and, for the `mcp` group, over MCP at
//! `/mcp/v1` and `/mcp/v2`.

pub mod services;

use std::sync::Arc;

use mcp::{McpEndpoint, ServerInfo};
use rpc::server::Router;
use rpc::{ApiInfo, Environment, Executor, HostPolicy, JsonRpcService, Registry, RegistryError};

pub use services::{Admin, Catalog, CatalogV2, Mcp, Pinger};

/// The catalog's registry: every service of this crate, registered.
pub fn registry() -> Result<Registry, RegistryError> {
    let catalog = Arc::new(Catalog::default());
    Registry::builder()
        .module(module_path!())
        .service(Pinger)
        .service_arc(catalog.clone())
        .service(CatalogV2::new(catalog))
        .build()
}

/// The whole application: `/rpc` (all methods) and `/mcp` (the `mcp`
/// group), accepting loopback host names only.
pub fn app(env: Environment) -> Result<Router, RegistryError> {
    app_with(env, HostPolicy::localhost())
}

/// The application with a chosen `Host`/`Origin` policy for `/mcp`.
pub fn app_with(env: Environment, hosts: HostPolicy) -> Result<Router, RegistryError> {
    let executor = Executor::new(Arc::new(registry()?), env);
    let rpc = JsonRpcService::builder(executor.clone())
        .info(ApiInfo {
            title: "Catalog API".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: Some("A product catalog: search, get, list, categories.".into()),
        })
        .build();
    let mcp = McpEndpoint::builder::<Mcp>(executor)
        .server_info(ServerInfo {
            title: Some("Product catalog".into()),
            description: Some("Search and browse an example product catalog.".into()),
            website_url: Some("https://example.com/catalog".into()),
            ..ServerInfo::new("catalog", env!("CARGO_PKG_VERSION"))
        })
        .instructions(
            "Use Catalog.search to find products by name, then Catalog.get for details. \
             Product ids are positive integers.",
        )
        .hosts(hosts)
        .build();
    Ok(Router::new().nest("/rpc", rpc).nest("/mcp", mcp))
}
