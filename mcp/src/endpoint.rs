//! Building the MCP server of one API group and its Streamable HTTP
//! endpoint: [`McpEndpointBuilder`].

use std::sync::Arc;
use std::time::Duration;

use rpc::i18n::{JsonHeaders, Translations};
use rpc::{Executor, HostPolicy, McpGroup, Security};
use serde_json::{Map, Value};

use crate::changes::ListChanges;
use crate::config::{CacheScope, Eras, InvalidArguments, McpConfig, ServerInfo};
use crate::features::GroupFeatures;
use crate::http::{Edge, McpEndpoint};
use crate::server::listen_slots::ListenSlots;
use crate::server::{InFlight, Inner, McpServer, Served, ServerTexts};
use crate::session::{InMemorySessionStore, SessionStore};
use crate::tools::{GroupTools, ListTexts, stateless_list_fields};

/// Configures an [`McpEndpoint`].
pub struct McpEndpointBuilder {
    executor: Executor,
    group: String,
    config: McpConfig,
    sessions: Option<Arc<dyn SessionStore>>,
    tasks: Option<Arc<dyn crate::tasks::TaskStore>>,
    task_queue: Option<Arc<dyn crate::tasks::TaskQueue>>,
    security: Security,
    list_changes: Option<ListChanges>,
    translations: Arc<Translations>,
}

impl std::fmt::Debug for McpEndpointBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpEndpointBuilder").field("group", &self.group).field("config", &self.config).finish()
    }
}

impl McpEndpointBuilder {
    /// `serverInfo` (name, version, title, description, website, icons).
    pub fn server_info(mut self, info: ServerInfo) -> Self {
        self.config.server_info = info;
        self
    }

    /// `instructions` for the model, returned by `initialize`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.config.instructions = Some(text.into());
        self
    }

    /// Tools per `tools/list` page (default 50).
    pub fn page_size(mut self, size: usize) -> Self {
        self.config.page_size = size.max(1);
        self
    }

    /// Idle time after which a session expires (default 1 hour; at least a
    /// millisecond, at most [`MAX_TTL`](crate::config::MAX_TTL): longer
    /// values are taken as a year).
    pub fn session_ttl(mut self, ttl: Duration) -> Self {
        self.config.session_ttl = ttl.clamp(Duration::from_millis(1), crate::config::MAX_TTL);
        self
    }

    /// Where sessions live (default: in this process, an
    /// [`InMemorySessionStore`] of 100,000 sessions).
    pub fn session_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.sessions = Some(store);
        self
    }

    /// Where tasks live (default: in this process, a
    /// [`MemoryTaskStore`](crate::tasks::MemoryTaskStore) of 10,000 tasks);
    /// instances behind a load balancer share one (`RedisTaskStore`).
    pub fn task_store(mut self, store: Arc<dyn crate::tasks::TaskStore>) -> Self {
        self.tasks = Some(store);
        self
    }

    /// Tasks of tools declared `task = optional | required` go to `queue`
    /// for worker processes to run (`mcp::amqp::AmqpTaskQueue`, feature
    /// `amqp`) rather than running in this process; tools using
    /// `starts_task` still run here. Needs a task store shared with the
    /// workers, set before ([`task_store`](Self::task_store) with a
    /// `RedisTaskStore`): an error otherwise.
    pub fn task_queue(mut self, queue: Arc<dyn crate::tasks::TaskQueue>) -> Result<Self, String> {
        if !self.tasks.as_ref().is_some_and(|store| store.is_shared()) {
            return Err("a task queue needs a task store shared with the workers: set `task_store` \
                        (a RedisTaskStore) before `task_queue`"
                .to_owned());
        }
        self.task_queue = Some(queue);
        Ok(self)
    }

    /// How long a task is kept after its creation (default 1 hour; at
    /// least a second, at most [`MAX_TTL`](crate::config::MAX_TTL)).
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        self.config.task_ttl = ttl.clamp(Duration::from_secs(1), crate::config::MAX_TTL);
        self
    }

    /// Request body limit in bytes (default 4 MiB).
    pub fn max_body_bytes(mut self, limit: usize) -> Self {
        self.config.max_body_bytes = limit;
        self
    }

    /// Limits on the JSON of a body: nesting depth, number of values, batch
    /// length (default [`JsonLimits::default`](rpc::jsonrpc::JsonLimits)).
    pub fn json_limits(mut self, limits: rpc::jsonrpc::JsonLimits) -> Self {
        self.config.json_limits = limits;
        self
    }

    /// `_meta` of the tool named `tool`.
    pub fn tool_meta(mut self, tool: impl Into<String>, meta: Map<String, Value>) -> Self {
        self.config.tool_meta.insert(tool.into(), meta);
        self
    }

    /// Which `Host`/`Origin` names are accepted (default: loopback names;
    /// see [`HostPolicy`]); shorthand for the host policy of
    /// [`security`](Self::security).
    pub fn hosts(mut self, policy: HostPolicy) -> Self {
        self.security = self.security.hosts(policy);
        self
    }

    /// The endpoint's security: allowed hosts, CORS, access policy (tokens),
    /// availability (see [`Security`]). Share one value between the
    /// endpoints of an application.
    pub fn security(mut self, security: Security) -> Self {
        self.security = security;
        self
    }

    /// How the endpoint is listed in the MCP Registry: enables
    /// `GET /v{N}/server.json` (checked by [`try_build`](Self::try_build)).
    pub fn registry(mut self, listing: crate::RegistryListing) -> Self {
        self.config.registry = Some(listing);
        self
    }

    /// The public base URL (`https://api.example.com`) that `server.json`
    /// and the client manifests name the endpoint under; by default
    /// `http://` and the request's (checked) `Host`. Behind a proxy that
    /// terminates TLS, set it: forwarding headers are never trusted.
    pub fn public_url(mut self, base: rpc::server::PublicUrl) -> Self {
        self.config.public_url = Some(base);
        self
    }

    /// The AI clients served a manifest at `GET /v{N}/manifests/{client}`
    /// (default: [`Manifests::standard`](crate::Manifests::standard)).
    pub fn manifests(mut self, manifests: crate::Manifests) -> Self {
        self.config.manifests = manifests;
        self
    }

    #[cfg(feature = "settings")]
    /// Applies the [`settings`](crate::settings) of this endpoint's group
    /// (its own over the bundle-wide ones), after checking that every
    /// `groups.<name>` of `settings` names a group of the registry. The way
    /// to apply a whole configuration file; see [`settings`](Self::settings).
    pub fn configure(self, settings: &crate::settings::Settings) -> Result<Self, crate::settings::SettingsError> {
        let registry = self.executor.registry().clone();
        settings.check_groups(registry.groups())?;
        let group = settings.group(&self.group);
        self.settings(&group)
    }

    #[cfg(feature = "settings")]
    /// Applies a group's [`settings`](crate::settings) (see
    /// [`Settings::group`](crate::settings::Settings::group)): the server
    /// identity field by field, instructions, session TTL, body limit,
    /// cache hints, public URL, registry listing; allowed hosts are added
    /// to the security's host policy and CORS origins replace its CORS, so
    /// call it after [`security`](Self::security). Unset settings keep what
    /// the builder has.
    pub fn settings(
        mut self,
        settings: &crate::settings::GroupSettings,
    ) -> Result<Self, crate::settings::SettingsError> {
        use crate::settings::{ScopeSetting, SettingsError};
        settings.check("")?;
        self.config.server_info = settings.server_info(self.config.server_info);
        if let Some(text) = &settings.instructions {
            self.config.instructions = Some(text.clone());
        }
        if let Some(ttl) = settings.session_ttl {
            self.config.session_ttl = ttl;
        }
        if let Some(limit) = settings.max_body_bytes {
            self.config.max_body_bytes = limit;
        }
        if let Some(secret) = &settings.request_state_secret {
            self.config.request_state_key = crate::state_key::StateKey::from_secret(secret.as_bytes());
        }
        if let Some(ttl) = settings.task_ttl {
            self.config.task_ttl = ttl;
        }
        if let Some(hints) = &settings.cache_hints {
            self.config.list_ttl = hints.ttl;
            self.config.cache_scope = match hints.scope {
                ScopeSetting::Private => CacheScope::Private,
                _ => CacheScope::Public,
            };
        }
        if let Some(base) = &settings.public_url {
            let base =
                rpc::server::PublicUrl::parse(base).map_err(|e| SettingsError::new("public_url", e.to_string()))?;
            self.config.public_url = Some(base);
        }
        if let Some(listing) = settings.registry_listing() {
            let listing = listing.map_err(|e| SettingsError::new(format!("server.{}", e.key), e.message))?;
            self.config.registry = Some(listing);
        }
        if let Some(hosts) = &settings.allowed_hosts {
            let policy = if hosts.iter().any(|h| h == "*") {
                HostPolicy::any()
            } else {
                hosts.iter().fold(self.security.host_policy().clone(), |policy, host| policy.allow(host.clone()))
            };
            self.security = self.security.hosts(policy);
        }
        if let Some(origins) = &settings.cors_origins {
            let cors =
                rpc::security::Cors::origins(origins).map_err(|e| SettingsError::new("cors_origins", e.to_string()))?;
            self.security = self.security.cors(cors);
        }
        Ok(self)
    }

    /// How long a method waits for the client's answer to a question
    /// (handshake era, stdio; default 5 minutes: a person may be answering).
    pub fn ask_timeout(mut self, timeout: Duration) -> Self {
        self.config.ask_timeout = timeout;
        self
    }

    /// The secret 2026-07-28 `requestState`s are sealed with: instances
    /// behind one load balancer need the same (default: a random key, so a
    /// state is valid on this instance, until it restarts).
    pub fn request_state_secret(mut self, secret: &[u8]) -> Self {
        self.config.request_state_key = crate::state_key::StateKey::from_secret(secret);
        self
    }

    /// How long a `requestState` stays valid (default 10 minutes).
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.config.request_state_ttl = ttl;
        self
    }

    /// Which protocol eras the endpoint serves (default: both, on one URL).
    pub fn eras(mut self, eras: Eras) -> Self {
        self.config.eras = eras;
        self
    }

    /// How long, and by whom, `tools/list` and `server/discover` results may
    /// be reused (2026-07-28 `ttlMs`, `cacheScope`; default 5 minutes,
    /// public; at most [`MAX_TTL`](crate::config::MAX_TTL): longer values
    /// are taken as a year).
    pub fn cache_hints(mut self, ttl: Duration, scope: CacheScope) -> Self {
        self.config.list_ttl = ttl.min(crate::config::MAX_TTL);
        self.config.cache_scope = scope;
        self
    }

    /// How arguments that fail a tool's input schema are reported (default:
    /// a `-32602` error; [`InvalidArguments::ToolError`]: an `isError` result).
    pub fn invalid_arguments(mut self, mode: InvalidArguments) -> Self {
        self.config.invalid_arguments = mode;
        self
    }

    /// The hub the application tells about list changes: the endpoint then
    /// advertises `tools.listChanged` (2026-07-28) and serves
    /// `subscriptions/listen`.
    pub fn list_changes(mut self, changes: ListChanges) -> Self {
        self.list_changes = Some(changes);
        self
    }

    /// Notification frames a request may queue for a slow client before
    /// further progress and log events are dropped (default 256).
    pub fn event_buffer(mut self, frames: usize) -> Self {
        self.config.event_buffer = frames.max(1);
        self
    }

    /// How many `subscriptions/listen` streams may be open at once: per
    /// client (its identity when the access policy gives one, else its IP
    /// address) and in all (default 8 and 1,024); beyond them a listen
    /// request gets 429 with `Retry-After`.
    pub fn listen_limits(mut self, per_client: usize, total: usize) -> Self {
        self.config.max_listen_per_client = per_client.max(1);
        self.config.max_listen_streams = total.max(1);
        self
    }

    /// Interval of SSE keep-alive comments on long streams (default 15 s).
    pub fn keep_alive(mut self, interval: Duration) -> Self {
        self.config.keep_alive = interval.max(Duration::from_millis(10));
        self
    }

    /// Titles and descriptions of the tools and the server in the client's
    /// language (`Accept-Language`, negotiated per request in both eras)
    /// from translation files (group files of this endpoint's group
    /// first); responses then carry `Content-Language` and
    /// `Vary: Accept-Language`.
    pub fn translations(mut self, translations: Arc<Translations>) -> Self {
        self.translations = translations;
        self
    }

    /// [`build`](Self::build), after checking what can only be checked
    /// with everything set: the registry listing against the server's
    /// identity in every language (`server.json` would be refused by the
    /// registry otherwise). With [`build`](Self::build), such a mistake is
    /// logged and `server.json` answers 500.
    pub fn try_build(self) -> Result<McpEndpoint, crate::ListingError> {
        let endpoint = self.build();
        let inner = &endpoint.server.inner;
        if let Some(listing) = &inner.config.registry {
            // The configured identity too: translations may cover it in every
            // language today, and not tomorrow.
            listing.check(&inner.config.server_info)?;
            for texts in &inner.localized {
                listing.check(&texts.server_info)?;
            }
        }
        Ok(endpoint)
    }

    /// Builds the endpoint: the tools, prompts, resources and the discovery
    /// result of every language; the pages of their lists are serialised on
    /// their first request.
    pub fn build(self) -> McpEndpoint {
        let translations = self.translations;
        let served = Served::scan(self.executor.registry(), &self.group, self.list_changes.is_some());
        let localized: Vec<ServerTexts> = translations
            .all()
            .map(|language| ServerTexts::new(&self.config, &translations, &self.group, language, served))
            .collect();
        let texts = Arc::new(ListTexts {
            group: self.group.clone(),
            translations: Arc::clone(&translations),
            stateless_fields: localized.iter().map(|l| stateless_list_fields(&self.config, &l.server_info)).collect(),
        });
        let scoped_callers = self.security.limits_scopes();
        let registry = self.executor.registry();
        let tables = registry.group_versions(&self.group).filter_map(|v| registry.version(v));
        self.security.declare_scopes(tables.flat_map(|table| table.group(&self.group)).map(|m| &**m));
        let tools = GroupTools::build(self.executor.registry(), &self.group, &self.config, &texts, scoped_callers);
        let features =
            GroupFeatures::build(self.executor.registry(), &self.group, &self.config, &texts, scoped_callers);
        let listen_slots = ListenSlots::new(self.config.max_listen_per_client, self.config.max_listen_streams);
        let (task_ttl, task_poll) = (self.config.task_ttl, self.config.task_poll);
        let server = McpServer {
            inner: Arc::new(Inner {
                executor: self.executor,
                group: self.group,
                config: self.config,
                tools,
                features,
                served,
                sessions: self.sessions.unwrap_or_else(|| Arc::new(InMemorySessionStore::default())),
                list_changes: self.list_changes,
                localized,
                translations,
                inflight: InFlight::default(),
                listen_slots,
                pending: Arc::default(),
                tasks: crate::server::task_registry::Tasks::new(
                    self.tasks.unwrap_or_else(crate::tasks::default_store),
                    task_ttl,
                    task_poll,
                )
                .with_queue(self.task_queue),
            }),
        };
        // It reads the connection and the original target where the router carries them.
        rpc::server::request_body::reads_routed_body::<McpEndpoint>();
        let json_headers = JsonHeaders::new(&server.inner.translations);
        McpEndpoint { server, edge: Arc::new(Edge { security: self.security, json_headers }) }
    }
}

impl McpEndpoint {
    /// An endpoint publishing the methods of group `G`. The server calls
    /// itself after the crate that declared `G` (its `CARGO_PKG_NAME` and
    /// `CARGO_PKG_VERSION`) until [`server_info`](McpEndpointBuilder::server_info)
    /// or the settings say otherwise.
    pub fn builder<G: McpGroup>(executor: Executor) -> McpEndpointBuilder {
        let package = G::PACKAGE;
        let mut builder = Self::builder_for(executor, G::NAME);
        if package.is_known() {
            builder.config.server_info = ServerInfo::new(package.name, package.version);
        }
        builder
    }

    /// An endpoint publishing the methods of the group named `group`.
    ///
    /// Groups not declared with `mcp = true` are served too, but their
    /// method names were not checked at compile time; an invalid name makes
    /// every request to the endpoint fail with HTTP 500. The server calls
    /// itself after the crate that declared the group (as the registry
    /// knows it), else after the group.
    pub fn builder_for(executor: Executor, group: impl Into<String>) -> McpEndpointBuilder {
        let group = group.into();
        let identity = match executor.registry().group_package(&group) {
            Some(package) => ServerInfo::new(package.name, package.version),
            None => ServerInfo::new(group.clone(), "0.0.0"),
        };
        McpEndpointBuilder {
            executor,
            group,
            config: McpConfig::new(identity),
            sessions: None,
            tasks: None,
            task_queue: None,
            security: Security::default(),
            list_changes: None,
            translations: Arc::new(Translations::none()),
        }
    }
}
