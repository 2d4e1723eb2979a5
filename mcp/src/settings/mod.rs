//! Configuration of the MCP endpoints as typed settings, loaded from a
//! file (TOML, YAML or JSON, by extension) and the environment
//! (`MCP_SESSION_TTL=30m`, `MCP_GROUPS__ADMIN__INSTRUCTIONS=...`; `__`
//! separates levels), the environment winning.
//!
//! The top level holds the bundle-wide settings; `groups.<name>` holds a
//! group's own, and a group inherits every setting it does not set (the
//! server identity field by field):
//!
//! ```toml
//! instructions = "Search first, then get."
//! session_ttl = "1h"              # or a number of seconds
//! max_body_bytes = 4194304
//! allowed_hosts = ["api.example.com"]
//! cors_origins = ["https://app.example.com"]
//! public_url = "https://api.example.com"
//! cache_hints = { ttl = "5m", scope = "public" }
//!
//! [server]
//! name = "catalog"
//! version = "1.0.0"
//! title = "Product catalog"
//! description = "Search and browse the product catalog."
//! website_url = "https://example.com/catalog"
//! registry_name = "com.example/catalog"
//! repository = { url = "https://github.com/example/catalog", source = "github" }
//!
//! [groups.admin]
//! session_ttl = "10m"
//! server = { title = "Catalog administration" }
//! ```
//!
//! Everything is checked when loaded or applied ([`Settings::load`],
//! [`McpEndpointBuilder::settings`](crate::McpEndpointBuilder::settings)):
//! an unknown key (with a "did you mean"), a wrong type, an invalid value
//! is a [`SettingsError`] naming the key.

mod load;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

pub use load::SettingsError;

/// All settings: the bundle-wide ones and each group's own.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct Settings {
    /// What every group has unless it sets its own.
    #[serde(flatten)]
    pub defaults: GroupSettings,
    /// Each group's own settings, by group name.
    #[serde(default)]
    pub groups: BTreeMap<String, GroupSettings>,
}

/// The settings of one group's endpoint; `None` is "not set here".
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct GroupSettings {
    /// The server's identity and registry listing.
    #[serde(default)]
    pub server: ServerSettings,
    /// `instructions` for the model.
    pub instructions: Option<String>,
    /// Idle time after which a session expires (`"30m"`, or seconds).
    #[serde(default, deserialize_with = "duration")]
    pub session_ttl: Option<Duration>,
    /// Request body limit in bytes.
    pub max_body_bytes: Option<usize>,
    /// Host names requests may be addressed to, besides loopback.
    pub allowed_hosts: Option<Vec<String>>,
    /// Origins whose browser pages may call the endpoint (`*`: any).
    pub cors_origins: Option<Vec<String>>,
    /// The public base URL documents name the endpoint under.
    pub public_url: Option<String>,
    /// How long and by whom tool lists may be reused (2026-07-28).
    pub cache_hints: Option<CacheHintSettings>,
    /// The secret `requestState` is sealed with (2026-07-28 input-required
    /// rounds): the same on every instance behind one load balancer, at
    /// least 32 bytes (`MCP_REQUEST_STATE_SECRET`); random per process
    /// when unset.
    pub request_state_secret: Option<String>,
    /// How long a task is kept after its creation (`"1h"`, or seconds).
    #[serde(default, deserialize_with = "duration")]
    pub task_ttl: Option<Duration>,
}

/// The server's identity (`serverInfo`) and its MCP Registry listing.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ServerSettings {
    /// Programmatic name (`serverInfo.name`).
    pub name: Option<String>,
    /// Version of the implementation.
    pub version: Option<String>,
    /// Display name.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// The project's website.
    pub website_url: Option<String>,
    /// Icons.
    pub icons: Option<Vec<IconSettings>>,
    /// The reverse-DNS name in the MCP Registry (`com.example/catalog`):
    /// enables `server.json`.
    pub registry_name: Option<String>,
    /// The registry description (at most 100 characters; default: `description`).
    pub registry_description: Option<String>,
    /// Where the source code lives.
    pub repository: Option<RepositorySettings>,
}

/// An icon.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct IconSettings {
    /// Its URL.
    pub src: String,
    /// Its MIME type.
    pub mime_type: Option<String>,
    /// Its sizes (`48x48`, `any`).
    #[serde(default)]
    pub sizes: Vec<String>,
}

/// A source repository.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct RepositorySettings {
    /// URL for browsing and cloning.
    pub url: String,
    /// The hosting service (`github`).
    pub source: String,
    /// The server's folder inside it.
    pub subfolder: Option<String>,
}

/// Cache hints of tool lists.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct CacheHintSettings {
    /// How long (`"5m"`, or seconds).
    #[serde(deserialize_with = "required_duration")]
    pub ttl: Duration,
    /// `public` or `private`.
    #[serde(default)]
    pub scope: ScopeSetting,
}

/// `cacheScope`, as written in settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ScopeSetting {
    /// Shared caches may keep the list.
    #[default]
    Public,
    /// Only the asking client may.
    Private,
}

fn or<T: Clone>(own: &Option<T>, inherited: &Option<T>) -> Option<T> {
    own.clone().or_else(|| inherited.clone())
}

impl ServerSettings {
    /// These settings, each unset field taken from `inherited`.
    pub fn inherit(&self, inherited: &ServerSettings) -> ServerSettings {
        ServerSettings {
            name: or(&self.name, &inherited.name),
            version: or(&self.version, &inherited.version),
            title: or(&self.title, &inherited.title),
            description: or(&self.description, &inherited.description),
            website_url: or(&self.website_url, &inherited.website_url),
            icons: or(&self.icons, &inherited.icons),
            registry_name: or(&self.registry_name, &inherited.registry_name),
            registry_description: or(&self.registry_description, &inherited.registry_description),
            repository: or(&self.repository, &inherited.repository),
        }
    }
}

impl GroupSettings {
    /// These settings, each unset one taken from `inherited`.
    pub fn inherit(&self, inherited: &GroupSettings) -> GroupSettings {
        GroupSettings {
            server: self.server.inherit(&inherited.server),
            instructions: or(&self.instructions, &inherited.instructions),
            session_ttl: or(&self.session_ttl, &inherited.session_ttl),
            max_body_bytes: or(&self.max_body_bytes, &inherited.max_body_bytes),
            allowed_hosts: or(&self.allowed_hosts, &inherited.allowed_hosts),
            cors_origins: or(&self.cors_origins, &inherited.cors_origins),
            public_url: or(&self.public_url, &inherited.public_url),
            cache_hints: or(&self.cache_hints, &inherited.cache_hints),
            request_state_secret: or(&self.request_state_secret, &inherited.request_state_secret),
            task_ttl: or(&self.task_ttl, &inherited.task_ttl),
        }
    }
}

impl Settings {
    /// The settings of group `group`: its own over the bundle-wide ones.
    pub fn group(&self, group: &str) -> GroupSettings {
        match self.groups.get(group) {
            Some(own) => own.inherit(&self.defaults),
            None => self.defaults.clone(),
        }
    }
}

/// A duration as a number of seconds or a text (`"90s"`, `"5m"`, `"1h 30m"`).
#[derive(Deserialize)]
#[serde(untagged)]
enum DurationText {
    Seconds(u64),
    Text(String),
}

fn parse_duration(value: DurationText) -> Result<Duration, String> {
    match value {
        DurationText::Seconds(s) => Ok(Duration::from_secs(s)),
        DurationText::Text(text) => humantime::parse_duration(text.trim()).map_err(|e| {
            format!("`{}` is not a duration ({e}); write `90s`, `5m`, `1h` or seconds", text.escape_default())
        }),
    }
}

fn duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    match Option::<DurationText>::deserialize(d)? {
        None => Ok(None),
        Some(value) => parse_duration(value).map(Some).map_err(serde::de::Error::custom),
    }
}

fn required_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    parse_duration(DurationText::deserialize(d)?).map_err(serde::de::Error::custom)
}
