//! The catalog example: a product catalog served over JSON-RPC at `/rpc`
//! (`/rpc/v2` for version 2) and, for the `mcp` group, over MCP at
//! `/mcp/v1` and `/mcp/v2`.

pub mod services;

use std::sync::Arc;

use mcp::{McpEndpoint, ServerInfo};
use rpc::server::{PublicUrl, Router};
use rpc::{
    ApiInfo, Environment, Executor, HostPolicy, JsonRpcService, Registry, RegistryError, Security, Translations,
};

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
    Ok(router(Executor::new(registry()?, env), security, None, Arc::new(Translations::none())))
}

/// How the catalog binary sets the application up.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// Allowed hosts, tokens, CORS (shared by both endpoints).
    pub security: Security,
    /// The public base URL documents name (`https://api.example.com`: behind
    /// a proxy, the request's own host is not trusted).
    pub public_url: Option<PublicUrl>,
    /// Titles and descriptions by `Accept-Language` (see [`translations_dir`]).
    pub translations: Option<Arc<Translations>>,
}

/// The catalog's translation files: `rpc.{en,uk}.yaml` and
/// `rpc/mcp.{en,uk}.yaml` (texts for AI agents) in `examples/catalog/translations`.
pub fn translations_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("translations")
}

/// The application as `setup` says; translations are checked against the
/// registry (warnings are logged, a reserved group name is an error).
pub fn app_configured(env: Environment, setup: Setup) -> Result<Router, String> {
    let registry = registry().map_err(|e| e.to_string())?;
    let translations = setup.translations.unwrap_or_else(|| Arc::new(Translations::none()));
    if translations.is_configured() {
        translations.check(&registry).map_err(|e| e.to_string())?;
    }
    Ok(router(Executor::new(registry, env), setup.security, setup.public_url, translations))
}

fn router(
    executor: Executor,
    security: Security,
    public_url: Option<PublicUrl>,
    translations: Arc<Translations>,
) -> Router {
    let mut rpc = JsonRpcService::builder(executor.clone())
        .info(
            ApiInfo::new("Catalog API", env!("CARGO_PKG_VERSION"))
                .description("A product catalog: search, get, list, categories."),
        )
        .security(security.clone())
        .translations(translations.clone());
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
        .translations(translations)
        .build();
    Router::new().nest("/rpc", rpc.build()).nest("/mcp", mcp)
}
