//! What an MCP server holds: its executor and tools, its configuration,
//! its sessions, its texts in every language, the calls in progress and
//! the open listen streams.

use std::sync::Arc;

use rpc::Executor;
use rpc::i18n::{Field, Language, SERVER_KEY, Translations};
use serde_json::{Map, Value, json};

use super::cancel::InFlight;
use super::listen_slots::ListenSlots;
use crate::changes::ListChanges;
use crate::config::{McpConfig, ServerInfo};
use crate::features::GroupFeatures;
use crate::protocol::ProtocolVersion;
use crate::session::SessionStore;
use crate::tools::{GroupTools, server_info_meta, stateless_list_fields};

pub(crate) struct Inner {
    pub executor: Executor,
    pub group: String,
    pub config: McpConfig,
    pub tools: GroupTools,
    /// Resources, prompts, completion.
    pub features: GroupFeatures,
    /// What is served, for the capabilities.
    pub served: Served,
    pub sessions: Arc<dyn SessionStore>,
    pub list_changes: Option<ListChanges>,
    /// The server's own texts, per language (by [`Language`] index).
    pub localized: Vec<ServerTexts>,
    /// Where the texts come from, and how a request's language is chosen.
    pub translations: Arc<Translations>,
    /// Calls in progress that `notifications/cancelled` may stop.
    pub inflight: InFlight,
    /// The open `subscriptions/listen` streams, per client and in all.
    pub listen_slots: Arc<ListenSlots>,
    /// The server's questions to clients awaiting an answer.
    pub pending: Arc<super::pending::Pending>,
    /// Tool calls run as tasks.
    pub tasks: super::task_registry::Tasks,
}

/// What the endpoint serves besides tools, for its capabilities.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Served {
    pub resources: bool,
    pub prompts: bool,
    pub completions: bool,
    /// Whether list changes are announced (a [`ListChanges`] is configured).
    pub list_changed: bool,
    /// Whether a tool runs as a task (the tasks extension, 2026-07-28).
    pub tasks: bool,
}

impl Served {
    /// What the methods of `group` serve.
    pub(crate) fn scan(registry: &rpc::Registry, group: &str, list_changed: bool) -> Served {
        let mut served = Served { list_changed, ..Served::default() };
        for version in registry.group_versions(group) {
            for method in registry.version(version).into_iter().flat_map(|t| t.group(group)) {
                if method.descriptor().tool.task != rpc::TaskSupport::Forbidden {
                    served.tasks = true;
                }
                match method.descriptor().mcp {
                    rpc::McpRole::Resource(_) => served.resources = true,
                    rpc::McpRole::Prompt(_) => served.prompts = true,
                    _ => {}
                }
            }
        }
        // Completion is asked of prompts' arguments and templates' variables.
        served.completions = served.resources || served.prompts;
        served
    }

    /// The server's `capabilities` (`handshake`: of `initialize`, else of
    /// `server/discover`).
    pub(crate) fn capabilities(&self, handshake: bool) -> Value {
        let mut caps = Map::new();
        let changed = self.list_changed && !handshake;
        caps.insert("tools".into(), json!({"listChanged": changed}));
        caps.insert("logging".into(), json!({}));
        if self.resources {
            // Handshake-era sessions subscribe to a resource.
            // Handshake era: resources/subscribe; 2026-07-28: resourceSubscriptions
            // on subscriptions/listen, served with a change hub.
            caps.insert(
                "resources".into(),
                json!({"subscribe": handshake || self.list_changed, "listChanged": changed}),
            );
        }
        if self.prompts {
            caps.insert("prompts".into(), json!({"listChanged": changed}));
        }
        if self.completions {
            caps.insert("completions".into(), json!({}));
        }
        if self.tasks && !handshake {
            caps.insert("extensions".into(), json!({crate::tasks::EXTENSION: {}}));
        }
        Value::Object(caps)
    }
}

impl Inner {
    /// The server's texts in `language` (the default language's when unknown).
    pub fn texts(&self, language: Language) -> &ServerTexts {
        // `localized` holds one entry per language, the default first: never empty.
        self.localized.get(language.index()).unwrap_or(&self.localized[0])
    }
}

/// The server's own texts in one language, and what is serialised from them.
pub(crate) struct ServerTexts {
    /// `serverInfo`, its title and description localised.
    pub server_info: ServerInfo,
    /// `instructions`, localised.
    pub instructions: Option<String>,
    /// `,"resultType":"complete","_meta":{serverInfo}`: closes 2026-07-28 results.
    pub stateless_tail: String,
    /// The serialised `server/discover` result.
    pub discover: Vec<u8>,
}

impl ServerTexts {
    pub(crate) fn new(
        config: &McpConfig,
        translations: &Translations,
        group: &str,
        language: Language,
        served: Served,
    ) -> Self {
        let text = |field| translations.text(Some(group), language, SERVER_KEY, field).map(str::to_owned);
        let mut server_info = config.server_info.clone();
        if let Some(title) = text(Field::Title) {
            server_info.title = Some(title);
        }
        if let Some(description) = text(Field::Description) {
            server_info.description = Some(description);
        }
        let instructions = text(Field::Instructions).or_else(|| config.instructions.clone());
        let stateless_tail = format!(",\"resultType\":\"complete\",\"_meta\":{}", server_info_meta(&server_info));
        let discover = discover_result(config, &server_info, instructions.as_deref(), served);
        ServerTexts { server_info, instructions, stateless_tail, discover }
    }
}

/// The serialised `DiscoverResult`.
fn discover_result(
    config: &McpConfig,
    server_info: &ServerInfo,
    instructions: Option<&str>,
    served: Served,
) -> Vec<u8> {
    let mut result = Map::new();
    let supported: Vec<&str> = ProtocolVersion::STATELESS.iter().map(|v| v.as_str()).collect();
    result.insert("supportedVersions".into(), json!(supported));
    result.insert("capabilities".into(), served.capabilities(false));
    if let Some(instructions) = instructions {
        result.insert("instructions".into(), json!(instructions));
    }
    result.extend(stateless_list_fields(config, server_info));
    serde_json::to_vec(&Value::Object(result)).unwrap_or_default()
}
