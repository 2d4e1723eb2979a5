//! The catalog example: a product catalog served over JSON-RPC at `/rpc`
//! (`/rpc/v2` for version 2) and, for the `mcp` group, over MCP at
//! `/mcp/v1` and `/mcp/v2`.

pub mod services;

use std::sync::Arc;

use rpc::server::Router;
use rpc::{ApiInfo, Environment, Executor, JsonRpcService, Registry, RegistryError};

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

/// The whole application: `/rpc` (all methods) and `/mcp` (the `mcp` group).
pub fn app(env: Environment) -> Result<Router, RegistryError> {
    let executor = Executor::new(Arc::new(registry()?), env);
    let rpc = JsonRpcService::builder(executor)
        .info(ApiInfo {
            title: "Catalog API".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: Some("A product catalog: search, get, list, categories.".into()),
        })
        .build();
    Ok(Router::new().nest("/rpc", rpc))
}
