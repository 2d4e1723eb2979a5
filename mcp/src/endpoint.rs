//! The MCP endpoint of one API group: configuration and shared state.

use std::sync::Arc;
use std::time::Duration;

use rpc::{ApiGroup, Executor, HostPolicy};
use serde_json::{Map, Value};

use crate::config::{McpConfig, ServerInfo};
use crate::session::{InMemorySessionStore, SessionStore};
use crate::tools::GroupTools;

/// Configures an [`McpEndpoint`].
pub struct McpEndpointBuilder {
    executor: Executor,
    group: String,
    config: McpConfig,
    sessions: Option<Arc<dyn SessionStore>>,
    hosts: HostPolicy,
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

    /// Idle time after which a session expires (default 1 hour).
    pub fn session_ttl(mut self, ttl: Duration) -> Self {
        self.config.session_ttl = ttl;
        self
    }

    /// Where sessions live (default: in this process).
    pub fn session_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.sessions = Some(store);
        self
    }

    /// Request body limit in bytes (default 4 MiB).
    pub fn max_body_bytes(mut self, limit: usize) -> Self {
        self.config.max_body_bytes = limit;
        self
    }

    /// `_meta` of the tool named `tool`.
    pub fn tool_meta(mut self, tool: impl Into<String>, meta: Map<String, Value>) -> Self {
        self.config.tool_meta.insert(tool.into(), meta);
        self
    }

    /// Which `Host`/`Origin` names are accepted (default: loopback names;
    /// see [`HostPolicy`]).
    pub fn hosts(mut self, policy: HostPolicy) -> Self {
        self.hosts = policy;
        self
    }

    /// Builds the endpoint; every tool list is built and serialised here.
    pub fn build(self) -> McpEndpoint {
        let tools = GroupTools::build(self.executor.registry(), &self.group, &self.config);
        McpEndpoint {
            inner: Arc::new(Inner {
                executor: self.executor,
                group: self.group,
                config: self.config,
                tools,
                sessions: self.sessions.unwrap_or_else(|| Arc::new(InMemorySessionStore::default())),
                hosts: self.hosts,
            }),
        }
    }
}

/// The MCP endpoint of one API group, a `tower::Service` (see
/// [`transport::streamable_http`](crate::transport::streamable_http)).
/// Mount it at a prefix such as `/mcp`; it serves `/v1`, `/v2`, ... (and
/// `""` as version 1). Cheap to clone.
#[derive(Clone)]
pub struct McpEndpoint {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for McpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpEndpoint").field("group", &self.inner.group).finish_non_exhaustive()
    }
}

pub(crate) struct Inner {
    pub executor: Executor,
    pub group: String,
    pub config: McpConfig,
    pub tools: GroupTools,
    pub sessions: Arc<dyn SessionStore>,
    pub hosts: HostPolicy,
}

impl McpEndpoint {
    /// An endpoint publishing the methods of group `G`.
    pub fn builder<G: ApiGroup>(executor: Executor) -> McpEndpointBuilder {
        Self::builder_for(executor, G::NAME)
    }

    /// An endpoint publishing the methods of the group named `group`.
    ///
    /// Groups not declared with `mcp = true` are served too, but their
    /// method names were not checked at compile time; an invalid name makes
    /// every request to the endpoint fail with HTTP 500.
    pub fn builder_for(executor: Executor, group: impl Into<String>) -> McpEndpointBuilder {
        let name = env!("CARGO_PKG_NAME");
        McpEndpointBuilder {
            executor,
            group: group.into(),
            config: McpConfig::new(ServerInfo::new(name, env!("CARGO_PKG_VERSION"))),
            sessions: None,
            hosts: HostPolicy::default(),
        }
    }

    /// The API group served.
    pub fn group(&self) -> &str {
        &self.inner.group
    }
}
