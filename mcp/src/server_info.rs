//! The server's identity (`serverInfo`) and its icons.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::protocol::ProtocolVersion;

/// An icon (`serverInfo.icons`, 2025-11-25): `Icon::new(src)`, then
/// optionally [`mime_type`](Icon::mime_type) and [`size`](Icon::size).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
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

impl Icon {
    /// An icon at URI `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Icon { src: src.into(), mime_type: None, sizes: Vec::new() }
    }

    /// Its MIME type, e.g. `image/png`.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// One of its sizes, e.g. `48x48` or `any`.
    pub fn size(mut self, size: impl Into<String>) -> Self {
        self.sizes.push(size.into());
        self
    }
}

/// The server's identity (`serverInfo`): `ServerInfo::new(name, version)`,
/// then optionally [`title`](ServerInfo::title),
/// [`description`](ServerInfo::description),
/// [`website_url`](ServerInfo::website_url) and [`icon`](ServerInfo::icon).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
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

    /// A display name (2025-06-18+).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// A description (2025-11-25+).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The project's website (2025-11-25+).
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.website_url = Some(url.into());
        self
    }

    /// Adds an icon (2025-11-25+).
    pub fn icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
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
