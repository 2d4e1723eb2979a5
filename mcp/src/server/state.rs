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
use crate::protocol::ProtocolVersion;
use crate::session::SessionStore;
use crate::tools::{GroupTools, server_info_meta, stateless_list_fields};

pub(crate) struct Inner {
    pub executor: Executor,
    pub group: String,
    pub config: McpConfig,
    pub tools: GroupTools,
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
        list_changed: bool,
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
        let discover = discover_result(config, &server_info, instructions.as_deref(), list_changed);
        ServerTexts { server_info, instructions, stateless_tail, discover }
    }
}

/// The serialised `DiscoverResult`.
fn discover_result(
    config: &McpConfig,
    server_info: &ServerInfo,
    instructions: Option<&str>,
    list_changed: bool,
) -> Vec<u8> {
    let mut result = Map::new();
    let supported: Vec<&str> = ProtocolVersion::STATELESS.iter().map(|v| v.as_str()).collect();
    result.insert("supportedVersions".into(), json!(supported));
    result.insert("capabilities".into(), json!({"tools": {"listChanged": list_changed}, "logging": {}}));
    if let Some(instructions) = instructions {
        result.insert("instructions".into(), json!(instructions));
    }
    result.extend(stateless_list_fields(config, server_info));
    serde_json::to_vec(&Value::Object(result)).unwrap_or_default()
}
