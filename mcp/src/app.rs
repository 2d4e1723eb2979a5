//! One builder for a whole application: [`App`] takes the services and
//! serves them over JSON-RPC at `/rpc` and, for an MCP group, over MCP at
//! `/mcp` (Streamable HTTP), or over stdio, with the defaults of the
//! bundled examples.
//!
//! README's first example, word for word:
//!
//! ```no_run
//! use mcp::rpc;
//!
//! rpc::api_group!(pub struct Tools => "tools", mcp = true);
//!
//! pub struct Calculator;
//!
//! #[rpc::service(groups(Tools))]
//! impl Calculator {
//!     /// Adds two numbers.
//!     pub fn add(&self, a: i64, b: i64) -> i64 {
//!         a + b
//!     }
//! }
//!
//! # #[cfg(feature = "server")]
//! #[tokio::main]
//! async fn main() -> Result<(), mcp::AppError> {
//!     mcp::App::new::<Tools>().service(Calculator).serve("127.0.0.1:8080").await
//! }
//! # #[cfg(not(feature = "server"))]
//! # fn main() {}
//! ```
//!
//! Everything else has a default: the server's identity is the crate that
//! declared the group (name and version), the environment is production,
//! only the host names the listen address answers to are accepted (see
//! [`HostPolicy::for_listen_addr`]), cache and locks are in this process.
//! The endpoints' own builders stay reachable ([`App::rpc`], [`App::mcp`])
//! for what `App` does not set.

use std::fmt;
use std::sync::Arc;

use rpc::i18n::Translations;
use rpc::server::Router;
use rpc::store::Stores;
use rpc::{
    ApiInfo, Environment, Executor, HostPolicy, JsonRpcBuilder, JsonRpcService, Package, RegistryBuilder,
    RegistryError, Security,
};

use crate::endpoint::McpEndpointBuilder;
use crate::http::McpEndpoint;

type Customize<B> = Box<dyn FnOnce(B) -> B + Send>;

/// An application: services served over JSON-RPC (`/rpc`, every method)
/// and over MCP (`/mcp`, the methods of one group). See the
/// [module](self).
pub struct App {
    registry: RegistryBuilder,
    group: &'static str,
    package: Package,
    env: Environment,
    security: Option<Security>,
    translations: Arc<Translations>,
    stores: Option<Stores>,
    #[cfg(feature = "settings")]
    settings: Option<crate::settings::Settings>,
    rpc: Vec<Customize<JsonRpcBuilder>>,
    mcp: Vec<Customize<McpEndpointBuilder>>,
    #[cfg(feature = "server")]
    limits: rpc::server::ServerLimits,
}

impl fmt::Debug for App {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("App")
            .field("group", &self.group)
            .field("package", &self.package)
            .field("env", &self.env)
            .field("security", &self.security)
            .finish_non_exhaustive()
    }
}

/// Why an [`App`] could not be built or served.
#[derive(Debug)]
#[non_exhaustive]
pub enum AppError {
    /// The services do not make a valid registry.
    Registry(RegistryError),
    /// The registry listing does not fit the server's identity.
    Listing(crate::ListingError),
    /// The settings do not apply.
    #[cfg(feature = "settings")]
    Settings(crate::settings::SettingsError),
    /// The listen address, the listener or stdio failed.
    Io(std::io::Error),
}

impl fmt::Display for AppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AppError::Registry(e) => write!(f, "the services: {e}"),
            AppError::Listing(e) => write!(f, "the registry listing: {e}"),
            #[cfg(feature = "settings")]
            AppError::Settings(e) => write!(f, "the settings: {e}"),
            AppError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for AppError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AppError::Registry(e) => Some(e),
            AppError::Listing(e) => Some(e),
            #[cfg(feature = "settings")]
            AppError::Settings(e) => Some(e),
            AppError::Io(e) => Some(e),
        }
    }
}

impl From<std::io::Error> for AppError {
    fn from(e: std::io::Error) -> Self {
        AppError::Io(e)
    }
}

impl App {
    /// An application publishing group `G` over MCP (and every method over
    /// JSON-RPC), named after the crate that declared `G`.
    pub fn new<G: rpc::McpGroup>() -> App {
        App {
            registry: rpc::Registry::builder(),
            group: G::NAME,
            package: G::PACKAGE,
            env: Environment::Prod,
            security: None,
            translations: Arc::new(Translations::none()),
            stores: None,
            #[cfg(feature = "settings")]
            settings: None,
            rpc: Vec::new(),
            mcp: Vec::new(),
            #[cfg(feature = "server")]
            limits: rpc::server::ServerLimits::default(),
        }
    }

    /// Adds a service: the `#[rpc::service]` impl blocks of its type.
    pub fn service<T: std::any::Any + Send + Sync>(mut self, instance: T) -> Self {
        self.registry = self.registry.service(instance);
        self
    }

    /// Adds a service shared with other code (or another service).
    pub fn service_arc<T: std::any::Any + Send + Sync>(mut self, instance: Arc<T>) -> Self {
        self.registry = self.registry.service_arc(instance);
        self
    }

    /// The environment (default: [`Environment::Prod`]: internal error
    /// details are not sent to clients).
    pub fn env(mut self, env: Environment) -> Self {
        self.env = env;
        self
    }

    /// Tokens, allowed hosts and CORS of both endpoints (default: no
    /// token, the host names of the listen address, no CORS).
    pub fn security(mut self, security: Security) -> Self {
        self.security = Some(security);
        self
    }

    /// Titles and descriptions by `Accept-Language`.
    pub fn translations(mut self, translations: Arc<Translations>) -> Self {
        self.translations = translations;
        self
    }

    /// The cache and the locks (default: in this process), e.g. in Redis
    /// to share them between instances.
    pub fn stores(mut self, stores: Stores) -> Self {
        self.stores = Some(stores);
        self
    }

    /// The MCP endpoint's settings from a file and the environment (see
    /// [`settings`](crate::settings)); allowed hosts and CORS origins there
    /// apply to both endpoints.
    #[cfg(feature = "settings")]
    pub fn configure(mut self, settings: crate::settings::Settings) -> Self {
        self.settings = Some(settings);
        self
    }

    /// Connection limits of [`serve`](Self::serve).
    #[cfg(feature = "server")]
    pub fn limits(mut self, limits: rpc::server::ServerLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets what `App` does not on the JSON-RPC endpoint (its `info`,
    /// callbacks, limits, ...), after the defaults.
    pub fn rpc(mut self, customize: impl FnOnce(JsonRpcBuilder) -> JsonRpcBuilder + Send + 'static) -> Self {
        self.rpc.push(Box::new(customize));
        self
    }

    /// Sets what `App` does not on the MCP endpoint (server identity,
    /// instructions, registry listing, ...), after the defaults and before
    /// the settings.
    pub fn mcp(mut self, customize: impl FnOnce(McpEndpointBuilder) -> McpEndpointBuilder + Send + 'static) -> Self {
        self.mcp.push(Box::new(customize));
        self
    }

    /// The executor every endpoint shares.
    fn executor(&mut self) -> Result<Executor, AppError> {
        let registry = std::mem::take(&mut self.registry).build().map_err(AppError::Registry)?;
        if self.translations.is_configured() {
            self.translations.check(&registry).map_err(|e| {
                AppError::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("translations: {e}")))
            })?;
        }
        let mut executor = Executor::new(registry, self.env);
        if let Some(stores) = self.stores.take() {
            executor = executor.with_stores(stores);
        }
        Ok(executor)
    }

    /// The MCP endpoint over `executor`, with `security`.
    fn mcp_endpoint(&mut self, executor: Executor, security: Security) -> Result<McpEndpoint, AppError> {
        let mut builder =
            McpEndpoint::builder_for(executor, self.group).security(security).translations(self.translations.clone());
        if self.package.is_known() {
            builder = builder.server_info(crate::ServerInfo::new(self.package.name, self.package.version));
        }
        for customize in self.mcp.drain(..) {
            builder = customize(builder);
        }
        #[cfg(feature = "settings")]
        if let Some(settings) = &self.settings {
            builder = builder.configure(settings).map_err(AppError::Settings)?;
        }
        builder.try_build().map_err(AppError::Listing)
    }

    /// Both endpoints in a [`Router`]: `/rpc` and `/mcp`, to serve with
    /// [`rpc::server::serve`] or mount in another router. `hosts` is the
    /// host policy when no [`security`](Self::security) was set.
    pub fn router_for(mut self, hosts: HostPolicy) -> Result<Router, AppError> {
        let executor = self.executor()?;
        let security = self.security.take().unwrap_or_else(|| Security::new().hosts(hosts));
        let mcp = self.mcp_endpoint(executor.clone(), security.clone())?;
        // The settings' hosts and CORS origins, as the MCP endpoint applied them.
        let security = mcp.security().clone();
        let mut rpc =
            JsonRpcService::builder(executor).security(security.clone()).translations(self.translations.clone());
        if self.package.is_known() {
            rpc = rpc.info(ApiInfo::new(self.package.name, self.package.version));
        }
        for customize in self.rpc.drain(..) {
            rpc = customize(rpc);
        }
        let router = Router::new().nest("/rpc", rpc.build()).nest("/mcp", mcp);
        #[cfg(feature = "oauth")]
        let router = router.oauth_metadata(&security);
        Ok(router)
    }

    /// [`router_for`](Self::router_for) loopback host names.
    pub fn router(self) -> Result<Router, AppError> {
        self.router_for(HostPolicy::localhost())
    }

    /// Serves both endpoints on `listen` (`"127.0.0.1:8080"`) until
    /// SIGINT/SIGTERM, then lets open requests finish. Prints
    /// `listening on http://ADDR` (the bound address: port 0 picks one).
    #[cfg(feature = "server")]
    pub async fn serve(self, listen: impl tokio::net::ToSocketAddrs) -> Result<(), AppError> {
        let listener = tokio::net::TcpListener::bind(listen).await?;
        self.serve_on(listener, rpc::server::shutdown_signal()).await
    }

    /// Serves both endpoints on `listener` until `shutdown` resolves.
    #[cfg(feature = "server")]
    pub async fn serve_on(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> Result<(), AppError> {
        let addr = listener.local_addr()?;
        let limits = self.limits.clone();
        let router = self.router_for(HostPolicy::for_listen_addr(addr))?;
        if let Err(e) = rpc::server::raise_open_files_limit() {
            tracing::warn!(error = %e, "could not raise the open files limit");
        }
        tracing::info!(routes = ?router, "listening on http://{addr}");
        println!("listening on http://{addr}");
        rpc::server::serve_with(listener, router, shutdown, limits).await?;
        Ok(())
    }

    /// Serves MCP on stdin/stdout (API version `version`: what `/mcp/vN`
    /// serves over HTTP) until stdin ends. No token check: the client
    /// started the process. Logs must go to stderr.
    pub async fn serve_stdio(mut self, version: u32) -> Result<(), AppError> {
        let executor = self.executor()?;
        let endpoint = self.mcp_endpoint(executor, Security::new())?;
        crate::stdio::serve(endpoint.server(), version, tokio::io::stdin(), tokio::io::stdout()).await?;
        Ok(())
    }
}
