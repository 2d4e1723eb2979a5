//! The catalog example: a product catalog served over JSON-RPC at `/rpc`
//! (`/rpc/v2` for version 2) and, for the `mcp` group, over MCP at
//! `/mcp/v1` and `/mcp/v2`; or over stdio ([`stdio_endpoint`]).

pub mod activity;
pub mod agent_views;
pub mod services;

use std::sync::Arc;

use mcp::session::SessionStore;
use mcp::{McpEndpoint, ServerInfo};
use rpc::jsonrpc::Callbacks;
use rpc::server::{PublicUrl, Router};
use rpc::store::Stores;
use rpc::{
    ApiInfo, Environment, Executor, HostPolicy, JsonRpcService, Registry, RegistryError, Security, Translations,
};

pub use activity::{Activity, ActivityListener, ActivityLog};
pub use services::{Admin, Catalog, CatalogV2, Mcp, Pinger};

/// The catalog's change hub: a renamed product raises
/// `notifications/resources/updated` for `catalog://products/{id}` on the
/// `subscriptions/listen` streams that subscribed to it (2026-07-28), on
/// every instance when they share Redis ([`Shared::redis`]).
pub fn changes() -> &'static mcp::ListChanges {
    static CHANGES: std::sync::OnceLock<mcp::ListChanges> = std::sync::OnceLock::new();
    CHANGES.get_or_init(mcp::ListChanges::new)
}

/// The catalog's registry: its services, registered by instance (version 2
/// shares version 1's data).
pub fn registry() -> Result<Registry, RegistryError> {
    registry_with(Arc::default())
}

/// The registry, with `Activity.summary` reading `activity`.
fn registry_with(activity: Arc<ActivityLog>) -> Result<Registry, RegistryError> {
    let catalog = Arc::new(Catalog::new());
    Registry::builder()
        .service(Pinger)
        .service_arc(catalog.clone())
        .service(CatalogV2::new(catalog))
        .service(Activity(activity))
        .build()
}

/// An executor over the catalog's registry, with the activity listener.
fn executor(env: Environment) -> Result<Executor, RegistryError> {
    let activity = Arc::new(ActivityLog::default());
    Ok(Executor::new(registry_with(activity.clone())?, env).with_listener(ActivityListener(activity)))
}

/// The whole application: `/rpc` (all methods) and `/mcp` (the `mcp`
/// group), accepting loopback host names only, without tokens.
pub fn app(env: Environment) -> Result<Router, String> {
    app_with(env, Security::new().hosts(HostPolicy::localhost()))
}

/// The application with chosen security (allowed hosts, tokens, CORS),
/// shared by both endpoints.
pub fn app_with(env: Environment, security: Security) -> Result<Router, String> {
    let setup = Setup { security, ..Setup::default() };
    router(executor(env).map_err(|e| e.to_string())?, setup, Arc::new(Translations::none()))
}

/// State shared by several instances: the result cache, the method locks
/// and the MCP sessions (e.g. all in Redis, see [`Shared::redis`]).
#[derive(Clone)]
pub struct Shared {
    /// The cache and the locks.
    pub stores: Stores,
    /// The MCP sessions of the handshake era.
    pub sessions: Arc<dyn SessionStore>,
    /// The MCP tasks (2026-07-28 with the tasks extension).
    pub tasks: Arc<dyn mcp::tasks::TaskStore>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

impl Shared {
    /// Everything in the Redis at `url` (`redis://127.0.0.1:6379/`), under
    /// the key prefix `prefix`.
    pub async fn redis(url: &str, prefix: &str) -> Result<Self, String> {
        let redis = rpc::store::redis::RedisStore::connect(url).await.map_err(|e| e.to_string())?.with_prefix(prefix);
        redis.ping().await.map_err(|e| e.to_string())?;
        // Once per process: a second Shared on the same hub keeps the first relay.
        let _ = changes().share_through_redis(&redis).await;
        Ok(Shared {
            stores: redis.stores(),
            sessions: Arc::new(mcp::session::RedisSessionStore::new(redis.clone())),
            tasks: Arc::new(mcp::tasks::RedisTaskStore::new(redis)),
        })
    }
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
    /// Cache, locks and sessions shared with other instances (default: in
    /// this process).
    pub shared: Option<Shared>,
    /// Where `$rpc.callback` may post responses (default: nowhere).
    pub callbacks: Callbacks,
    /// Where asynchronous calls go (`--amqp-url`: a broker, for
    /// `catalog worker` processes to run); default: they run in this process.
    pub queue: Option<Arc<dyn rpc::jsonrpc::Queue>>,
    /// Where MCP tasks go (`--amqp-url` with `--redis-url`: a broker, for
    /// `catalog worker` processes to run); default: they run in this process.
    pub task_queue: Option<Arc<dyn mcp::tasks::TaskQueue>>,
    /// Calls and new MCP sessions per client (default: unlimited), counted
    /// where `shared` says (in Redis, across instances) or in this process.
    pub rate_limits: rpc::rate::RateLimits,
    /// Settings of the MCP endpoint from a configuration file and the
    /// environment (`--config`, `MCP_*`; see [`mcp::settings`]): group
    /// `mcp`'s over the bundle-wide ones, over the catalog's own defaults.
    pub settings: Option<mcp::settings::Settings>,
}

/// The catalog's translation files: `rpc.{en,uk}.yaml` and
/// `rpc/mcp.{en,uk}.yaml` (texts for AI agents) in `examples/catalog/translations`.
pub fn translations_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("translations")
}

/// The application as `setup` says; translations are checked against the
/// registry (warnings are logged, a reserved group name is an error).
pub fn app_configured(env: Environment, setup: Setup) -> Result<Router, String> {
    let (executor, translations) = configured_executor(env, &setup)?;
    router(executor, setup, translations)
}

/// The executor and translations `setup` asks for (translations checked).
fn configured_executor(env: Environment, setup: &Setup) -> Result<(Executor, Arc<Translations>), String> {
    let mut executor = executor(env).map_err(|e| e.to_string())?;
    let translations = setup.translations.clone().unwrap_or_else(|| Arc::new(Translations::none()));
    if translations.is_configured() {
        translations.check(executor.registry()).map_err(|e| e.to_string())?;
    }
    if let Some(shared) = &setup.shared {
        executor = executor.with_stores(shared.stores.clone());
    }
    executor = executor.with_rate_limits(setup.rate_limits);
    Ok((executor, translations))
}

/// The catalog's listing in the MCP Registry (`/mcp/v1/server.json`).
pub const REGISTRY_NAME: &str = "com.example/catalog";

fn router(executor: Executor, setup: Setup, translations: Arc<Translations>) -> Result<Router, String> {
    let Setup { security, public_url, shared, callbacks, settings, queue, task_queue, .. } = setup;
    let mut rpc = JsonRpcService::builder(executor.clone())
        .info(
            ApiInfo::new("Catalog API", env!("CARGO_PKG_VERSION"))
                .description("A product catalog: search, get, list, categories.")
                .license(env!("CARGO_PKG_LICENSE"), "")
                .contact("Catalog team", "https://example.com/catalog", "catalog@example.com"),
        )
        .security(security.clone())
        .translations(translations.clone())
        .callbacks(callbacks);
    if let Some(base) = public_url.clone() {
        rpc = rpc.public_url(base);
    }
    if let Some(queue) = queue {
        rpc = rpc.queue(queue);
    }
    let mcp =
        mcp_endpoint(executor, security.clone(), shared, task_queue, translations, public_url, settings.as_ref())?;
    // With OAuth (--oauth-issuer), the protected-resource metadata clients start from.
    Ok(Router::new().nest("/rpc", rpc.build()).nest("/mcp", mcp).oauth_metadata(&security))
}

/// The `/rpc` endpoint a `catalog worker` runs queued asynchronous calls
/// on (`rpc::amqp::Worker`): the executor set up as for the web process
/// (registry, listener, stores, rate limits) and its callback policy.
pub fn worker_service(env: Environment, setup: Setup) -> Result<JsonRpcService, String> {
    let (executor, _) = configured_executor(env, &setup)?;
    Ok(JsonRpcService::builder(executor).callbacks(setup.callbacks).build())
}

/// The MCP endpoint a `catalog worker` runs queued MCP tasks on
/// (`mcp::amqp::TaskWorker`): built as the web process's, on the executor
/// of `service` (the worker's [`worker_service`]), with the task store of
/// `setup.shared`, which must be set (the tasks are in Redis).
pub fn worker_endpoint(service: &JsonRpcService, setup: &Setup) -> Result<McpEndpoint, String> {
    if setup.shared.is_none() {
        return Err("running MCP tasks needs the web processes' task store (--redis-url)".to_owned());
    }
    let translations = setup.translations.clone().unwrap_or_else(|| Arc::new(Translations::none()));
    let executor = service.executor().clone();
    mcp_endpoint(executor, Security::new(), setup.shared.clone(), None, translations, None, setup.settings.as_ref())
}

/// The MCP endpoint of the `mcp` group: the catalog's identity and registry
/// listing, then `settings` (group `mcp` over the bundle-wide ones), checked.
fn mcp_endpoint(
    executor: Executor,
    security: Security,
    shared: Option<Shared>,
    task_queue: Option<Arc<dyn mcp::tasks::TaskQueue>>,
    translations: Arc<Translations>,
    public_url: Option<PublicUrl>,
    settings: Option<&mcp::settings::Settings>,
) -> Result<McpEndpoint, String> {
    let mut mcp = McpEndpoint::builder::<Mcp>(executor).list_changes(changes().clone());
    if let Some(shared) = shared {
        mcp = mcp.session_store(shared.sessions).task_store(shared.tasks);
    }
    if let Some(queue) = task_queue {
        mcp = mcp.task_queue(queue)?;
    }
    let listing = mcp::RegistryListing::new(REGISTRY_NAME)
        .map_err(|e| e.to_string())?
        .repository(mcp::Repository::new("https://github.com/example/catalog", "github"));
    let mut mcp = mcp
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
        .registry(listing)
        .security(security)
        .translations(translations);
    if let Some(base) = public_url {
        mcp = mcp.public_url(base);
    }
    if let Some(settings) = settings {
        mcp = mcp.configure(settings).map_err(|e| e.to_string())?;
    }
    mcp.try_build().map_err(|e| e.to_string())
}

/// The catalog's MCP endpoint alone, for the stdio transport
/// ([`mcp::stdio`]): the same executor set-up as [`app_configured`], but
/// `setup.security` is not used. Over stdio there is no token to check (the
/// client started the process, and has its access already) and no HTTP
/// host: the endpoint gets a [`Security`] without an access policy.
pub fn stdio_endpoint(env: Environment, setup: Setup) -> Result<McpEndpoint, String> {
    let (executor, translations) = configured_executor(env, &setup)?;
    mcp_endpoint(executor, Security::new(), setup.shared, None, translations, None, setup.settings.as_ref())
}
