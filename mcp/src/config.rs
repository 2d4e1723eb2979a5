//! Configuration of an MCP endpoint: server identity and limits.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::protocol::ProtocolVersion;

/// An icon (`serverInfo.icons`, 2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Icon {
    /// URI of the icon.
    pub src: String,
    /// MIME type.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub sizes: Vec<String>,
}

/// The server's identity (`serverInfo`).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    /// Programmatic name.
    pub name: String,
    /// Version of the implementation.
    pub version: String,
    /// Display name (2025-06-18+).
    pub title: Option<String>,
    /// Description (2025-11-25).
    pub description: Option<String>,
    /// Website (2025-11-25).
    pub website_url: Option<String>,
    /// Icons (2025-11-25).
    pub icons: Vec<Icon>,
}

impl ServerInfo {
    /// A server named `name` at `version`, nothing else set.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServerInfo {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            website_url: None,
            icons: Vec::new(),
        }
    }

    /// `serverInfo` as revision `version` defines it.
    pub fn to_json(&self, version: ProtocolVersion) -> Value {
        let mut obj = Map::new();
        obj.insert("name".into(), Value::String(self.name.clone()));
        if version.has_structured_output()
            && let Some(title) = &self.title
        {
            obj.insert("title".into(), Value::String(title.clone()));
        }
        obj.insert("version".into(), Value::String(self.version.clone()));
        if version.has_rich_server_info() {
            if let Some(d) = &self.description {
                obj.insert("description".into(), Value::String(d.clone()));
            }
            if let Some(w) = &self.website_url {
                obj.insert("websiteUrl".into(), Value::String(w.clone()));
            }
            if !self.icons.is_empty() {
                obj.insert("icons".into(), serde_json::to_value(&self.icons).unwrap_or(Value::Null));
            }
        }
        Value::Object(obj)
    }
}

/// Settings of one endpoint (one API group).
#[derive(Debug, Clone)]
pub struct McpConfig {
    /// `serverInfo`.
    pub server_info: ServerInfo,
    /// `instructions` returned by `initialize`.
    pub instructions: Option<String>,
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// Idle time after which a session expires.
    pub session_ttl: Duration,
    /// Request body limit in bytes (larger bodies get 413).
    pub max_body_bytes: usize,
    /// Maximum messages in a 2025-03-26 batch.
    pub max_batch: usize,
    /// `_meta` per tool name.
    pub tool_meta: BTreeMap<String, Map<String, Value>>,
}

impl McpConfig {
    /// Defaults: 50 tools per page, sessions expire after 1 hour idle, 4 MiB bodies, batches of 100.
    pub fn new(server_info: ServerInfo) -> Self {
        McpConfig {
            server_info,
            instructions: None,
            page_size: 50,
            session_ttl: Duration::from_secs(3600),
            max_body_bytes: 4 * 1024 * 1024,
            max_batch: 100,
            tool_meta: BTreeMap::new(),
        }
    }
}
