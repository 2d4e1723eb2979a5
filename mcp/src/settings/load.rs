//! Loading and checking [`Settings`](super::Settings): figment merges the
//! file and the environment and reports type errors with their key; keys
//! nobody reads are found here, with a suggestion.

use std::path::Path;

use figment::Figment;
use figment::providers::{Env, Format, Json, Serialized, Toml};
use serde_json::Value;

use super::{GroupSettings, Settings};
use crate::documents::server_json::{Repository, check_registry_name};

/// A setting that is missing, unknown, of the wrong type or invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SettingsError {
    /// The key at fault, dotted (`groups.admin.session_ttl`); empty for the
    /// file as a whole.
    pub key: String,
    /// What is wrong and what would be right.
    pub message: String,
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.key.is_empty() {
            write!(f, "configuration: {}", self.message)
        } else {
            write!(f, "configuration key `{}`: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for SettingsError {}

impl SettingsError {
    pub(crate) fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        SettingsError { key: key.into(), message: message.into() }
    }
}

const GROUP_KEYS: &[&str] = &[
    "server",
    "instructions",
    "session_ttl",
    "max_body_bytes",
    "allowed_hosts",
    "cors_origins",
    "public_url",
    "cache_hints",
    "request_state_secret",
    "task_ttl",
];
const SERVER_KEYS: &[&str] = &[
    "name",
    "version",
    "title",
    "description",
    "website_url",
    "icons",
    "registry_name",
    "registry_description",
    "repository",
];
const ICON_KEYS: &[&str] = &["src", "mime_type", "sizes"];
const REPOSITORY_KEYS: &[&str] = &["url", "source", "subfolder"];
const CACHE_KEYS: &[&str] = &["ttl", "scope"];

impl Settings {
    /// Settings from `file` (`.toml`, `.yaml`/`.yml` or `.json`; none: no
    /// file) and the environment variables starting with `MCP_`.
    pub fn load(file: Option<&Path>) -> Result<Settings, SettingsError> {
        Settings::load_with(file, Some("MCP_"))
    }

    /// Settings from `file` and, when `env_prefix` is given, the
    /// environment variables starting with it (`__` separates levels).
    pub fn load_with(file: Option<&Path>, env_prefix: Option<&str>) -> Result<Settings, SettingsError> {
        let mut figment = Figment::new();
        if let Some(path) = file {
            let shown = path.display().to_string();
            if !path.is_file() {
                return Err(SettingsError::new("", format!("`{shown}` is not a readable file")));
            }
            let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
            figment = match extension.as_str() {
                "toml" => figment.merge(Toml::file_exact(path)),
                "json" => figment.merge(Json::file_exact(path)),
                "yaml" | "yml" => {
                    let text = std::fs::read_to_string(path)
                        .map_err(|e| SettingsError::new("", format!("`{shown}` cannot be read: {e}")))?;
                    let value: Value = if text.trim().is_empty() {
                        Value::Object(Default::default())
                    } else {
                        serde_saphyr::from_str(&text)
                            .map_err(|e| SettingsError::new("", format!("`{shown}` is not valid YAML: {e}")))?
                    };
                    figment.merge(Serialized::defaults(value))
                }
                _ => {
                    return Err(SettingsError::new(
                        "",
                        format!("`{shown}`: the file must end in .toml, .yaml, .yml or .json"),
                    ));
                }
            };
        }
        if let Some(prefix) = env_prefix {
            check_env_typos(prefix, std::env::vars().map(|(k, _)| k))?;
            // Variables of other tools share the prefix (`MCP_TIMEOUT` is
            // Claude Code's): only the keys of these settings are read.
            let known = |key: &figment::value::UncasedStr| is_known_top_key(key.as_str());
            figment = figment.merge(Env::prefixed(prefix).filter(known).split("__"));
        }
        Settings::from_figment(&figment)
    }

    /// Settings from any figment (for applications that merge their own
    /// sources); unknown keys and invalid values are errors.
    pub fn from_figment(figment: &Figment) -> Result<Settings, SettingsError> {
        let raw: Value = figment.extract().map_err(figment_error)?;
        check_keys(&raw)?;
        // Extracted in two parts: through `#[serde(flatten)]`, errors would
        // lose their key.
        let defaults: GroupSettings = figment.extract().map_err(figment_error)?;
        let Groups { groups } = figment.extract().map_err(figment_error)?;
        let settings = Settings { defaults, groups };
        settings.check()?;
        Ok(settings)
    }

    /// Checks that every `groups.<name>` names one of the `known` groups
    /// (a misspelt group would otherwise be ignored without a word).
    pub fn check_groups<'a>(&self, known: impl IntoIterator<Item = &'a str>) -> Result<(), SettingsError> {
        let known: Vec<&str> = known.into_iter().collect();
        for name in self.groups.keys() {
            if known.contains(&name.as_str()) {
                continue;
            }
            // Group names are short: a swap or two letters off is a typo.
            let best = known
                .iter()
                .map(|k| (strsim::damerau_levenshtein(name, k), *k))
                .filter(|(distance, k)| *distance <= 2 && *distance < k.len())
                .min_by_key(|(distance, _)| *distance);
            let message = match best {
                Some((_, k)) => format!("no API group is named `{}`; did you mean `{k}`?", name.escape_default()),
                None => format!(
                    "no API group is named `{}`; the groups are: {}",
                    name.escape_default(),
                    known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                ),
            };
            return Err(SettingsError::new(format!("groups.{name}"), message));
        }
        Ok(())
    }

    /// Checks every value: the bundle-wide settings, then each group's
    /// (with what it inherits).
    pub fn check(&self) -> Result<(), SettingsError> {
        self.defaults.check("")?;
        for (name, _) in self.groups.iter() {
            self.group(name).check(&format!("groups.{name}."))?;
        }
        Ok(())
    }
}

impl GroupSettings {
    /// Checks the values; `prefix` is put before the keys of errors
    /// (`groups.admin.`).
    pub fn check(&self, prefix: &str) -> Result<(), SettingsError> {
        let key = |k: &str| format!("{prefix}{k}");
        if self.max_body_bytes == Some(0) {
            return Err(SettingsError::new(key("max_body_bytes"), "must be at least 1"));
        }
        if self.session_ttl.is_some_and(|d| d.is_zero()) {
            return Err(SettingsError::new(key("session_ttl"), "must be longer than zero"));
        }
        let max_ttl = crate::config::MAX_TTL;
        if let Some(ttl) = self.session_ttl.filter(|d| *d > max_ttl) {
            return Err(SettingsError::new(
                key("session_ttl"),
                format!("{} is longer than the longest session TTL, a year (`365d`)", shown(ttl)),
            ));
        }
        if let Some(hints) = self.cache_hints.as_ref().filter(|h| h.ttl > max_ttl) {
            return Err(SettingsError::new(
                key("cache_hints.ttl"),
                format!("{} is longer than the longest cache hint, a year (`365d`)", shown(hints.ttl)),
            ));
        }
        if let Some(base) = &self.public_url {
            rpc::server::PublicUrl::parse(base).map_err(|e| SettingsError::new(key("public_url"), e.to_string()))?;
        }
        if self.request_state_secret.as_ref().is_some_and(|secret| secret.len() < 32) {
            return Err(SettingsError::new(
                key("request_state_secret"),
                "must be at least 32 bytes (e.g. `openssl rand -hex 32`), the same on every instance",
            ));
        }
        if let Some(ttl) = self.task_ttl.filter(|d| d.as_secs() < 1 || *d > max_ttl) {
            return Err(SettingsError::new(
                key("task_ttl"),
                format!("{} is not between a second and a year (`365d`)", shown(ttl)),
            ));
        }
        if let Some(origins) = &self.cors_origins {
            rpc::security::Cors::origins(origins)
                .map_err(|e| SettingsError::new(key("cors_origins"), e.to_string()))?;
        }
        if let Some(hosts) = &self.allowed_hosts {
            for host in hosts {
                let ok = host == "*"
                    || (!host.is_empty()
                        && host.len() <= 253
                        && host
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']')));
                if !ok {
                    return Err(SettingsError::new(
                        key("allowed_hosts"),
                        format!("`{}` is not a host name", host.escape_default()),
                    ));
                }
            }
        }
        let server = &self.server;
        for (i, icon) in server.icons.iter().flatten().enumerate() {
            check_icon(icon).map_err(|why| SettingsError::new(key(&format!("server.icons.{i}.{}", why.0)), why.1))?;
        }
        if let Some(name) = &server.registry_name {
            check_registry_name(name).map_err(|e| SettingsError::new(key("server.registry_name"), e.message))?;
        }
        if let Some(listing) = self.registry_listing() {
            let info = self.server_info(crate::ServerInfo::new("server", "0.0.0"));
            listing.and_then(|l| l.check(&info)).map_err(|e| {
                let field = match e.key {
                    "description" if server.registry_description.is_some() => "registry_description",
                    "repository.url" | "repository.source" => e.key,
                    other => other,
                };
                SettingsError::new(key(&format!("server.{field}")), e.message)
            })?;
        }
        Ok(())
    }

    /// The registry listing these settings describe, if they name one.
    pub fn registry_listing(&self) -> Option<Result<crate::RegistryListing, crate::ListingError>> {
        let name = self.server.registry_name.as_ref()?;
        let listing = crate::RegistryListing::new(name.clone()).and_then(|listing| {
            let listing = match &self.server.registry_description {
                Some(text) => listing.description(text.clone())?,
                None => listing,
            };
            Ok(match &self.server.repository {
                Some(r) => {
                    let repository = Repository::new(r.url.clone(), r.source.clone());
                    listing.repository(match &r.subfolder {
                        Some(s) => repository.subfolder(s.clone()),
                        None => repository,
                    })
                }
                None => listing,
            })
        });
        Some(listing)
    }

    /// `base` with the identity fields these settings set.
    pub fn server_info(&self, base: crate::ServerInfo) -> crate::ServerInfo {
        let s = &self.server;
        let mut info = base;
        if let Some(name) = &s.name {
            info.name = name.clone();
        }
        if let Some(version) = &s.version {
            info.version = version.clone();
        }
        if let Some(title) = &s.title {
            info.title = Some(title.clone());
        }
        if let Some(description) = &s.description {
            info.description = Some(description.clone());
        }
        if let Some(url) = &s.website_url {
            info.website_url = Some(url.clone());
        }
        if let Some(icons) = &s.icons {
            info.icons = icons
                .iter()
                .map(|i| {
                    let mut icon = crate::Icon::new(i.src.clone());
                    icon.mime_type = i.mime_type.clone();
                    icon.sizes = i.sizes.clone();
                    icon
                })
                .collect();
        }
        info
    }
}

/// A duration as a reader would write it.
fn shown(d: std::time::Duration) -> String {
    humantime::format_duration(d).to_string()
}

/// What is wrong with an icon: the field, and why. Clients and the MCP
/// Registry take `https:` URLs (and `data:` images inline) only; sizes are
/// `WxH` or `any`.
fn check_icon(icon: &super::IconSettings) -> Result<(), (&'static str, String)> {
    let src = icon.src.trim();
    let inline = src.starts_with("data:image/") && src.contains(";base64,");
    let remote = src.get(..8).is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
        && src[8..].split(['/', '?', '#']).next().is_some_and(|host| !host.is_empty())
        && !src.chars().any(|c| c.is_whitespace() || c.is_control());
    if !inline && !remote {
        let shown: String = src.chars().take(80).collect();
        return Err((
            "src",
            format!(
                "`{}` is not an https:// URL (or a data:image/...;base64, URI): clients and the registry drop other icons",
                shown.escape_default()
            ),
        ));
    }
    if let Some(mime) = &icon.mime_type
        && !mime.starts_with("image/")
    {
        return Err(("mime_type", format!("`{}` is not an image type (`image/png`, ...)", mime.escape_default())));
    }
    for size in &icon.sizes {
        let valid = size == "any"
            || size.split_once('x').is_some_and(|(w, h)| {
                [w, h].iter().all(|n| !n.is_empty() && n.len() <= 5 && n.bytes().all(|b| b.is_ascii_digit()))
            });
        if !valid {
            return Err(("sizes", format!("`{}` is not a size: write `48x48` or `any`", size.escape_default())));
        }
    }
    Ok(())
}

/// The `groups` table alone.
#[derive(serde::Deserialize)]
struct Groups {
    #[serde(default)]
    groups: std::collections::BTreeMap<String, GroupSettings>,
}

fn figment_error(error: figment::Error) -> SettingsError {
    let key = error.path.join(".");
    let mut message = error.kind.to_string();
    if let Some(source) = &error.metadata.as_ref().and_then(|m| m.source.as_ref()) {
        message.push_str(&format!(" (from {source})"));
    }
    SettingsError::new(key, message)
}

/// Whether an environment key (after the prefix) names one of these settings.
fn is_known_top_key(key: &str) -> bool {
    let top = key.split("__").next().unwrap_or("").to_ascii_lowercase();
    top == "groups" || GROUP_KEYS.contains(&top.as_str())
}

/// A variable with the prefix whose key is not a setting but is one letter
/// from one is a typo (`MCP_SESION_TTL`): an error naming the
/// setting. Others belong to other programs and are left alone.
fn check_env_typos(prefix: &str, names: impl Iterator<Item = String>) -> Result<(), SettingsError> {
    for name in names {
        let Some(key) = name.strip_prefix(prefix) else { continue };
        if is_known_top_key(key) {
            continue;
        }
        let top = key.split("__").next().unwrap_or("").to_ascii_lowercase();
        // One letter off (missing, extra, swapped): `MCP_SESSION_ID` is not a typo of `session_ttl`.
        let close = GROUP_KEYS.iter().chain(&["groups"]).find(|k| strsim::damerau_levenshtein(&top, k) <= 1);
        if let Some(k) = close {
            return Err(SettingsError::new(
                format!("{prefix}{}", key.split("__").next().unwrap_or("")),
                format!("unknown setting; did you mean `{prefix}{}`?", k.to_ascii_uppercase()),
            ));
        }
    }
    Ok(())
}

fn unknown(key: String, name: &str, known: &[&str]) -> SettingsError {
    let best = known
        .iter()
        .map(|k| (strsim::jaro_winkler(name, k), *k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let message = match best {
        Some((_, k)) => format!("unknown setting; did you mean `{k}`?"),
        None => format!("unknown setting; known here: {}", known.join(", ")),
    };
    SettingsError::new(key, message)
}

fn check_object(value: &Value, prefix: &str, known: &[&str]) -> Result<(), SettingsError> {
    let Value::Object(map) = value else { return Ok(()) };
    for name in map.keys() {
        if !known.contains(&name.as_str()) {
            return Err(unknown(format!("{prefix}{name}"), name, known));
        }
    }
    Ok(())
}

fn check_group(value: &Value, prefix: &str, extra: &[&str]) -> Result<(), SettingsError> {
    let known: Vec<&str> = GROUP_KEYS.iter().chain(extra).copied().collect();
    check_object(value, prefix, &known)?;
    let Some(server) = value.get("server") else { return Ok(()) };
    let server_prefix = format!("{prefix}server.");
    check_object(server, &server_prefix, SERVER_KEYS)?;
    if let Some(Value::Array(icons)) = server.get("icons") {
        for (i, icon) in icons.iter().enumerate() {
            check_object(icon, &format!("{server_prefix}icons.{i}."), ICON_KEYS)?;
        }
    }
    if let Some(repository) = server.get("repository") {
        check_object(repository, &format!("{server_prefix}repository."), REPOSITORY_KEYS)?;
    }
    if let Some(cache) = value.get("cache_hints") {
        check_object(cache, &format!("{prefix}cache_hints."), CACHE_KEYS)?;
    }
    Ok(())
}

fn check_keys(raw: &Value) -> Result<(), SettingsError> {
    check_group(raw, "", &["groups"])?;
    if let Some(Value::Object(groups)) = raw.get("groups") {
        for (name, group) in groups {
            check_group(group, &format!("groups.{name}."), &[])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn toml(text: &str) -> Result<Settings, SettingsError> {
        Settings::from_figment(&Figment::from(Toml::string(text)))
    }

    #[test]
    fn other_programs_variables_are_left_alone_and_typos_named() {
        let names = |list: &[&str]| list.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>().into_iter();
        // Claude Code's own, a bench script's, unrelated ones.
        let others = ["MCP_TIMEOUT", "MCP_TOOL_TIMEOUT", "MCP_INIT", "MCP_SESSION_ID", "PATH"];
        assert!(check_env_typos("MCP_", names(&others)).is_ok());
        assert!(check_env_typos("MCP_", names(&["MCP_SESSION_TTL", "MCP_GROUPS__MCP__INSTRUCTIONS"])).is_ok());
        let typo = check_env_typos("MCP_", names(&["MCP_SESION_TTL"])).unwrap_err();
        assert_eq!(typo.key, "MCP_SESION_TTL");
        assert!(typo.message.contains("MCP_SESSION_TTL"), "{typo:?}");
        assert!(is_known_top_key("GROUPS__ADMIN__SESSION_TTL") && is_known_top_key("session_ttl"));
        assert!(!is_known_top_key("TIMEOUT"));
    }

    #[test]
    fn groups_inherit() {
        let settings = toml(
            r#"
            instructions = "all"
            session_ttl = "1h"
            [server]
            name = "catalog"
            title = "Catalog"
            [groups.admin]
            session_ttl = 600
            server = { title = "Admin" }
            "#,
        )
        .unwrap();
        let admin = settings.group("admin");
        assert_eq!(admin.session_ttl, Some(Duration::from_secs(600)));
        assert_eq!(admin.instructions.as_deref(), Some("all"));
        assert_eq!(admin.server.title.as_deref(), Some("Admin"));
        assert_eq!(admin.server.name.as_deref(), Some("catalog"));
        assert_eq!(settings.group("other").session_ttl, Some(Duration::from_secs(3600)));
    }

    #[test]
    fn errors_name_the_key() {
        let cases = [
            ("sesion_ttl = 5", "sesion_ttl", "did you mean `session_ttl`"),
            ("[groups.admin]\ninstructons = 'x'", "groups.admin.instructons", "did you mean `instructions`"),
            ("[server]\ntitel = 'x'", "server.titel", "did you mean `title`"),
            ("max_body_bytes = 'lots'", "max_body_bytes", "invalid type"),
            ("max_body_bytes = 0", "max_body_bytes", "at least 1"),
            ("request_state_secret = 'short'", "request_state_secret", "at least 32 bytes"),
            ("task_ttl = 0", "task_ttl", "between a second and a year"),
            ("session_ttl = 'soon'", "session_ttl", "not a duration"),
            ("public_url = 'ftp://x'", "public_url", "not an http(s) base URL"),
            ("[server]\nregistry_name = 'nodots'", "server.registry_name", "not a registry name"),
            (
                "[server]\nregistry_name = 'com.example/x'\ndescription = 'short'\n[groups.a.server]\nregistry_description = ''",
                "groups.a.server.registry_description",
                "1 to 100",
            ),
            ("cache_hints = { ttl = '5m', scope = 'everyone' }", "cache_hints.scope", "unknown variant"),
            ("cors_origins = ['not an origin']", "cors_origins", ""),
            ("[groups.admin]\nsession_ttl = true", "groups.admin.session_ttl", ""),
            ("[groups.admin.server]\nname = 5", "groups.admin.server.name", "invalid type"),
            ("session_ttl = '1000000000y'", "session_ttl", "longer than the longest session TTL"),
            ("[groups.a]\nsession_ttl = '366d'", "groups.a.session_ttl", "a year"),
            ("cache_hints = { ttl = '300000000y' }", "cache_hints.ttl", "longer than the longest cache hint"),
            ("[[server.icons]]\nsrc = 'http://example.com/i.png'", "server.icons.0.src", "not an https:// URL"),
            ("[[server.icons]]\nsrc = 'https://example.com/i.png'\nsizes = ['huge']", "server.icons.0.sizes", "48x48"),
            (
                "[[server.icons]]\nsrc = 'https://example.com/i.png'\nmime_type = 'text/html'",
                "server.icons.0.mime_type",
                "image",
            ),
        ];
        for (text, key, message) in cases {
            let error = toml(text).expect_err(text);
            assert_eq!(error.key, key, "{text}: {error}");
            assert!(error.message.contains(message), "{text}: {error}");
        }
    }

    #[test]
    fn unknown_groups_are_named() {
        let settings = toml("[groups.mpc]\ninstructions = 'x'\n[groups.admin]\ninstructions = 'y'").unwrap();
        let error = settings.check_groups(["mcp", "admin"]).unwrap_err();
        assert_eq!(error.key, "groups.mpc");
        assert!(error.message.contains("did you mean `mcp`"), "{error}");
        let error = settings.check_groups(["catalog"]).unwrap_err();
        assert!(error.message.contains("the groups are: `catalog`"), "{error}");
        assert!(toml("[groups.mcp]\ninstructions = 'x'").unwrap().check_groups(["mcp"]).is_ok());
    }

    #[test]
    fn yaml_and_files() {
        let dir = std::env::temp_dir().join(format!("mcp-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let yaml = dir.join("mcp.yaml");
        std::fs::write(&yaml, "server:\n  registry_name: com.example/catalog\n  description: A catalog\ngroups:\n  admin:\n    session_ttl: 10m\n").unwrap();
        let settings = Settings::load_with(Some(&yaml), None).unwrap();
        assert_eq!(settings.group("admin").session_ttl, Some(Duration::from_secs(600)));
        std::fs::write(&yaml, "server: [unclosed").unwrap();
        assert!(Settings::load_with(Some(&yaml), None).unwrap_err().message.contains("not valid YAML"));
        let ini = dir.join("mcp.ini");
        std::fs::write(&ini, "").unwrap();
        assert!(Settings::load_with(Some(&ini), None).unwrap_err().message.contains(".toml"));
        assert!(Settings::load_with(Some(&dir.join("missing.toml")), None).is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}
