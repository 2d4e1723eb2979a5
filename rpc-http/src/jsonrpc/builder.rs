//! Configuring a [`JsonRpcService`]: the group it serves, its limits,
//! texts, security, public URL and callbacks.

use std::sync::Arc;

use serde_json::Value;

use super::callback::Callbacks;
use super::queue::Queue;
use super::service::{Inner, JsonRpcService};
use crate::security::{HostPolicy, Security};
use crate::server::route::PublicUrl;
use rpc_core::executor::Executor;
use rpc_core::group::ApiGroup;
use rpc_core::i18n::Translations;
use rpc_core::jsonrpc::limits::JsonLimits;
use rpc_core::openrpc::{self, ApiInfo, Texts};

/// Default request body limit: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Default maximum number of messages in a batch.
pub const DEFAULT_MAX_BATCH: usize = 100;

/// Configures a [`JsonRpcService`].
#[derive(Debug)]
pub struct JsonRpcBuilder {
    executor: Executor,
    scope: Option<String>,
    max_body_bytes: usize,
    limits: JsonLimits,
    info: ApiInfo,
    security: Security,
    public_url: Option<PublicUrl>,
    translations: Arc<Translations>,
    callbacks: Callbacks,
    queue: Option<Arc<dyn Queue>>,
}

impl JsonRpcBuilder {
    /// Serves only the methods of API group `G`.
    pub fn group<G: ApiGroup>(self) -> Self {
        self.group_named(G::NAME)
    }

    /// Serves only the methods of the group named `group` (for groups that
    /// come from configuration; prefer [`group`](Self::group)).
    pub fn group_named(mut self, group: impl Into<String>) -> Self {
        self.scope = Some(group.into());
        self
    }

    /// Request body limit in bytes (default 4 MiB); larger bodies get 413.
    pub fn max_body_bytes(mut self, limit: usize) -> Self {
        self.max_body_bytes = limit;
        self
    }

    /// Maximum messages per batch (default 100); checked before the batch
    /// is parsed.
    pub fn max_batch(mut self, limit: usize) -> Self {
        self.limits = self.limits.max_batch(limit);
        self
    }

    /// Limits on the JSON of a body: nesting depth, number of values,
    /// batch length (default [`JsonLimits::default`]).
    pub fn json_limits(mut self, limits: JsonLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The `info` block of the OpenRPC documents.
    pub fn info(mut self, info: ApiInfo) -> Self {
        self.info = info;
        self
    }

    /// The endpoint's security: allowed hosts, CORS, access policy (tokens),
    /// availability (see [`Security`]). Share one value between the
    /// endpoints of an application.
    pub fn security(mut self, security: Security) -> Self {
        self.security = security;
        self
    }

    /// Which `Host`/`Origin` names are accepted (default: loopback names);
    /// shorthand for the host policy of [`security`](Self::security).
    pub fn hosts(mut self, hosts: HostPolicy) -> Self {
        self.security = self.security.hosts(hosts);
        self
    }

    /// The public base URL (`https://api.example.com`) the OpenRPC
    /// documents name in `servers`, followed by the endpoint's path; without
    /// it, `http://` and the request's (checked) `Host`.
    pub fn public_url(mut self, base: PublicUrl) -> Self {
        self.public_url = Some(base);
        self
    }

    /// Titles and descriptions in the client's language (`Accept-Language`)
    /// from translation files; the OpenRPC documents then carry
    /// `Content-Language` and `Vary: Accept-Language`.
    pub fn translations(mut self, translations: Arc<Translations>) -> Self {
        self.translations = translations;
        self
    }

    /// Where `$rpc.callback` may send the responses of asynchronous calls
    /// (default: nowhere, [`Callbacks::disabled`]).
    pub fn callbacks(mut self, callbacks: Callbacks) -> Self {
        self.callbacks = callbacks;
        self
    }

    /// Where asynchronous calls (`$rpc.callback`) go: handed to `queue`
    /// before they are acknowledged (a queue that refuses one makes the call
    /// fail at once), and run by the queue's workers. Default: none, they
    /// run in this process after the acknowledgement was sent. The callback
    /// URL is still checked against [`callbacks`](Self::callbacks) first.
    pub fn queue(mut self, queue: Arc<dyn Queue>) -> Self {
        self.queue = Some(queue);
        self
    }

    /// Builds the service; the OpenRPC documents are built here, once per
    /// version and language.
    pub fn build(self) -> JsonRpcService {
        let registry = self.executor.registry();
        let scope = self.scope.as_deref();
        let env = self.executor.environment();
        let docs = registry
            .versions()
            .filter_map(|v| {
                let per_language: Option<Vec<Value>> = self
                    .translations
                    .all()
                    .map(|language| {
                        let texts = Texts { translations: &self.translations, language };
                        let mut doc = openrpc::document(registry, v, scope, &self.info, "", texts)?;
                        super::document::describe_server(&mut doc, env, self.callbacks.enabled());
                        Some(doc)
                    })
                    .collect();
                per_language.map(|docs| (v, docs))
            })
            .collect();
        let tables = registry.versions().filter_map(|v| registry.version(v));
        let served = tables.flat_map(|table| table.iter()).filter(|m| scope.is_none_or(|group| m.in_group(group)));
        self.security.declare_scopes(served.map(|m| &**m));
        // It reads the connection and the original target where the router carries them.
        crate::server::request_body::reads_routed_body::<JsonRpcService>();
        JsonRpcService {
            inner: Arc::new(Inner {
                executor: self.executor,
                scope: self.scope,
                max_body_bytes: self.max_body_bytes,
                limits: self.limits,
                docs,
                security: self.security,
                public_url: self.public_url,
                translations: self.translations,
                callbacks: self.callbacks,
                queue: self.queue,
            }),
        }
    }
}

impl JsonRpcService {
    /// Starts configuring an endpoint over `executor`.
    pub fn builder(executor: Executor) -> JsonRpcBuilder {
        JsonRpcBuilder {
            executor,
            scope: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            limits: JsonLimits::default(),
            info: ApiInfo::default(),
            security: Security::default(),
            public_url: None,
            translations: Arc::new(Translations::none()),
            callbacks: Callbacks::disabled(),
            queue: None,
        }
    }
}
