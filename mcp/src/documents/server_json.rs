//! The MCP Registry's `server.json` of an endpoint (schema
//! [`SERVER_JSON_SCHEMA`]): the server's identity from [`ServerInfo`], its
//! registry name and repository from a [`RegistryListing`], and one
//! `streamable-http` remote: the endpoint's public URL, with the credential
//! header as a secret input when the API is protected.

use serde_json::{Map, Value, json};

use crate::server_info::ServerInfo;

/// The `$schema` of the `server.json` documents served.
pub const SERVER_JSON_SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// Where the server's source code lives (`repository` in `server.json`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Repository {
    /// URL for browsing and cloning (`https://github.com/owner/repo`).
    pub url: String,
    /// The hosting service (`github`, `gitlab`, ...).
    pub source: String,
    /// The path of the server inside the repository (a monorepo).
    pub subfolder: Option<String>,
}

impl Repository {
    /// A repository at `url` hosted by `source` (`github`).
    pub fn new(url: impl Into<String>, source: impl Into<String>) -> Self {
        Repository { url: url.into(), source: source.into(), subfolder: None }
    }

    /// The server's folder inside the repository (`examples/catalog`).
    pub fn subfolder(mut self, path: impl Into<String>) -> Self {
        self.subfolder = Some(path.into());
        self
    }
}

/// How an endpoint is listed in the MCP Registry: a reverse-DNS `name`
/// (`io.github.owner/server`, `com.example/server`), optionally a
/// `description` for the registry (at most 100 characters; default: the
/// server's own description) and a [`Repository`]. Title, version, website
/// and icons come from the endpoint's [`ServerInfo`].
///
/// API version 1 is listed under `name`; version N under `name-vN` (each
/// version is its own endpoint, and registry names are unique).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RegistryListing {
    /// The registry name.
    pub name: String,
    /// The registry description (default: the server's description).
    pub description: Option<String>,
    /// Where the source code lives.
    pub repository: Option<Repository>,
}

/// Why a listing, or the identity it is built from, cannot be published.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListingError {
    /// The setting at fault (`name`, `description`, `repository.url`, ...).
    pub key: &'static str,
    /// What is wrong with it and what it must be.
    pub message: String,
}

impl std::fmt::Display for ListingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "server.json `{}`: {}", self.key, self.message)
    }
}

impl std::error::Error for ListingError {}

fn fault(key: &'static str, message: impl Into<String>) -> ListingError {
    ListingError { key, message: message.into() }
}

/// A shortened, escaped copy of a configured text for an error message.
fn quoted(text: &str) -> String {
    let short: String = text.chars().take(80).collect();
    format!("`{}`{}", short.escape_default(), if short.len() < text.len() { "..." } else { "" })
}

/// Checks a registry name: `namespace/name`, one `/`, 3-200 characters of
/// `A-Z a-z 0-9 . -` before the slash and `A-Z a-z 0-9 . _ -` after it.
pub fn check_registry_name(name: &str) -> Result<(), ListingError> {
    let invalid = |why: &str| {
        fault(
            "name",
            format!(
                "{} is not a registry name: {why} (reverse-DNS namespace, one `/`, a name: `io.github.owner/server`, `com.example/server`)",
                quoted(name)
            ),
        )
    };
    if !(3..=200).contains(&name.len()) {
        return Err(invalid("it must have 3 to 200 characters"));
    }
    let Some((namespace, rest)) = name.split_once('/') else {
        return Err(invalid("it has no `/`"));
    };
    if namespace.is_empty() || rest.is_empty() || rest.contains('/') {
        return Err(invalid("it needs exactly one `/` between two non-empty parts"));
    }
    if !namespace.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-') {
        return Err(invalid("the namespace may only have letters, digits, `.` and `-`"));
    }
    if !rest.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')) {
        return Err(invalid("the part after `/` may only have letters, digits, `.`, `_` and `-`"));
    }
    Ok(())
}

fn check_length(key: &'static str, text: &str) -> Result<(), ListingError> {
    let chars = text.chars().count();
    if chars == 0 || chars > 100 {
        return Err(fault(key, format!("{} has {chars} characters; the registry takes 1 to 100", quoted(text))));
    }
    Ok(())
}

fn check_url(key: &'static str, text: &str, https_only: bool) -> Result<(), ListingError> {
    let uri: Result<http::Uri, _> = text.parse();
    let scheme_ok = |s: &str| if https_only { s == "https" } else { s == "https" || s == "http" };
    let ok = uri.is_ok_and(|u| u.scheme_str().is_some_and(scheme_ok) && u.host().is_some_and(|h| !h.is_empty()));
    if ok {
        Ok(())
    } else {
        let want = if https_only { "an https:// URL" } else { "an http(s):// URL" };
        Err(fault(key, format!("{} is not {want}", quoted(text))))
    }
}

impl RegistryListing {
    /// A listing under registry name `name`, checked (see
    /// [`check_registry_name`]).
    pub fn new(name: impl Into<String>) -> Result<Self, ListingError> {
        let name = name.into();
        check_registry_name(&name)?;
        Ok(RegistryListing { name, description: None, repository: None })
    }

    /// The registry description: 1 to 100 characters, checked.
    pub fn description(mut self, text: impl Into<String>) -> Result<Self, ListingError> {
        let text = text.into();
        check_length("description", &text)?;
        self.description = Some(text);
        Ok(self)
    }

    /// Where the source code lives (its URL is checked by
    /// [`check`](Self::check)).
    pub fn repository(mut self, repository: Repository) -> Self {
        self.repository = Some(repository);
        self
    }

    /// Checks what the registry requires of this listing together with the
    /// endpoint's identity: a description of 1-100 characters (the
    /// listing's or the server's), a title of 1-100, a version that is not
    /// a range, http(s) website and repository URLs. Icons that are not
    /// `https` URLs are left out of `server.json` (the registry takes no
    /// others), so they are not an error.
    pub fn check(&self, info: &ServerInfo) -> Result<(), ListingError> {
        check_registry_name(&self.name)?;
        match self.description.as_deref().or(info.description.as_deref()) {
            Some(text) => check_length("description", text)?,
            None => {
                return Err(fault(
                    "description",
                    "the registry requires a description: give the listing or the server one (at most 100 characters)",
                ));
            }
        }
        if let Some(title) = &info.title {
            check_length("title", title)?;
        }
        let version = info.version.trim();
        if version.is_empty() || version.len() > 255 || version == "latest" {
            return Err(fault("version", format!("{} is not a specific version", quoted(&info.version))));
        }
        if version.starts_with(['^', '~', '>', '<', '=', '*']) || version.contains(".x") || version.contains('*') {
            return Err(fault("version", format!("{} is a range; the registry takes one version", quoted(version))));
        }
        if let Some(url) = &info.website_url {
            check_url("website_url", url, false)?;
        }
        if let Some(repository) = &self.repository {
            check_url("repository.url", &repository.url, false)?;
            if repository.source.trim().is_empty() {
                return Err(fault("repository.source", "name the hosting service (`github`, `gitlab`, ...)"));
            }
        }
        Ok(())
    }

    /// The registry name of API `version`: `name` for 1, `name-vN` after.
    pub fn name_for(&self, version: u32) -> String {
        if version <= 1 { self.name.clone() } else { format!("{}-v{version}", self.name) }
    }
}

/// The `_meta` key of what the publisher says beside the registry's fields.
const PUBLISHER_META: &str = "io.modelcontextprotocol.registry/publisher-provided";

/// `server.json` for API `version` of an endpoint at `url`, whose API asks
/// for a credential in `credential_header` (if any), or takes OAuth access
/// tokens described by the protected-resource metadata at `oauth_metadata`
/// (then no header is listed: clients find the authorization server from
/// the endpoint's 401, and the publisher's `_meta` says so).
pub fn server_json(
    listing: &RegistryListing,
    info: &ServerInfo,
    version: u32,
    url: &str,
    credential_header: Option<&str>,
    oauth_metadata: Option<&str>,
) -> Value {
    let mut doc = Map::new();
    doc.insert("$schema".into(), json!(SERVER_JSON_SCHEMA));
    doc.insert("name".into(), json!(listing.name_for(version)));
    if let Some(title) = &info.title {
        doc.insert("title".into(), json!(title));
    }
    let description = listing.description.as_deref().or(info.description.as_deref()).unwrap_or(&info.name);
    doc.insert("description".into(), json!(description));
    doc.insert("version".into(), json!(info.version.trim()));
    if let Some(website) = &info.website_url {
        doc.insert("websiteUrl".into(), json!(website));
    }
    if let Some(repository) = &listing.repository {
        let mut repo = Map::new();
        repo.insert("url".into(), json!(repository.url));
        repo.insert("source".into(), json!(repository.source));
        if let Some(subfolder) = &repository.subfolder {
            repo.insert("subfolder".into(), json!(subfolder));
        }
        doc.insert("repository".into(), Value::Object(repo));
    }
    let icons: Vec<Value> = info
        .icons
        .iter()
        .filter(|icon| icon.src.len() <= 255 && check_url("icon", &icon.src, true).is_ok())
        .map(|icon| {
            let mut entry = Map::new();
            entry.insert("src".into(), json!(icon.src));
            if let Some(mime) = icon.mime_type.as_deref().filter(|m| ICON_TYPES.contains(m)) {
                entry.insert("mimeType".into(), json!(mime));
            }
            let sizes: Vec<&String> = icon.sizes.iter().filter(|s| is_icon_size(s)).collect();
            if !sizes.is_empty() {
                entry.insert("sizes".into(), json!(sizes));
            }
            Value::Object(entry)
        })
        .collect();
    if !icons.is_empty() {
        doc.insert("icons".into(), Value::Array(icons));
    }
    let mut remote = Map::new();
    remote.insert("type".into(), json!("streamable-http"));
    remote.insert("url".into(), json!(url));
    if let Some(header) = credential_header {
        remote.insert(
            "headers".into(),
            json!([{
                "name": header,
                "description": "The API token this server's operator issued to you",
                "isRequired": true,
                "isSecret": true
            }]),
        );
    }
    doc.insert("remotes".into(), json!([Value::Object(remote)]));
    if let Some(metadata) = oauth_metadata {
        doc.insert(
            "_meta".into(),
            json!({ PUBLISHER_META: { "authorization": {
                "type": "oauth2",
                "specification": "MCP authorization (OAuth 2.1; RFC 9728 protected-resource metadata)",
                "protectedResourceMetadata": metadata
            }}}),
        );
    }
    Value::Object(doc)
}

/// The icon types the registry takes.
const ICON_TYPES: [&str; 5] = ["image/png", "image/jpeg", "image/jpg", "image/svg+xml", "image/webp"];

/// `48x48` or `any`.
fn is_icon_size(size: &str) -> bool {
    size == "any"
        || size.split_once('x').is_some_and(|(w, h)| {
            !w.is_empty()
                && !h.is_empty()
                && w.bytes().all(|b| b.is_ascii_digit())
                && h.bytes().all(|b| b.is_ascii_digit())
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server_info::Icon;

    #[test]
    fn registry_names() {
        for good in ["io.github.user/weather", "com.example/acme-analytics", "a.b/c_d.e-f"] {
            assert!(check_registry_name(good).is_ok(), "{good}");
        }
        for bad in ["", "ab", "noslash", "/x", "x/", "a/b/c", "a b/c", "a_b/c", "a/b c", "ex/é", &"a".repeat(201)] {
            let error = check_registry_name(bad).expect_err(bad);
            assert_eq!(error.key, "name");
        }
    }

    #[test]
    fn check_names_the_key() {
        let listing = RegistryListing::new("com.example/catalog").unwrap();
        let info = ServerInfo::new("catalog", "1.0.0");
        assert_eq!(listing.check(&info).unwrap_err().key, "description");
        let info = info.description("x".repeat(101));
        assert_eq!(listing.check(&info).unwrap_err().key, "description");
        let info = ServerInfo::new("catalog", "^1.0").description("A catalog");
        assert_eq!(listing.check(&info).unwrap_err().key, "version");
        let info = ServerInfo::new("catalog", "1.0.0").description("A catalog").website_url("javascript:alert(1)");
        assert_eq!(listing.check(&info).unwrap_err().key, "website_url");
        let info = ServerInfo::new("catalog", "1.0.0").description("A catalog");
        let listing = listing.repository(Repository::new("not a url", "github"));
        assert_eq!(listing.check(&info).unwrap_err().key, "repository.url");
        assert!(RegistryListing::new("com.example/catalog").unwrap().description("").is_err());
    }

    #[test]
    fn document_shape() {
        let listing = RegistryListing::new("com.example/catalog")
            .unwrap()
            .repository(Repository::new("https://github.com/example/catalog", "github").subfolder("examples/catalog"));
        let info = ServerInfo::new("catalog", "1.2.3")
            .title("Catalog")
            .description("A catalog")
            .icon(Icon::new("https://example.com/i.png").mime_type("image/png").size("48x48").size("huge"))
            .icon(Icon::new("data:image/png;base64,AAAA"));
        let doc = server_json(&listing, &info, 2, "https://api.example.com/mcp/v2", Some("Ufo-RPC-Token"), None);
        assert_eq!(doc["name"], "com.example/catalog-v2");
        assert_eq!(doc["version"], "1.2.3");
        assert_eq!(
            doc["icons"],
            json!([{"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}])
        );
        assert_eq!(doc["remotes"][0]["url"], "https://api.example.com/mcp/v2");
        assert_eq!(doc["remotes"][0]["headers"][0]["name"], "Ufo-RPC-Token");
        assert_eq!(doc["remotes"][0]["headers"][0]["isSecret"], true);
        assert!(doc.get("_meta").is_none());
        let open = server_json(&listing, &info, 1, "https://api.example.com/mcp/v1", None, None);
        assert_eq!(open["name"], "com.example/catalog");
        assert!(open["remotes"][0].get("headers").is_none());
        let metadata = "https://api.example.com/.well-known/oauth-protected-resource";
        let oauth = server_json(&listing, &info, 1, "https://api.example.com/mcp/v1", None, Some(metadata));
        assert!(oauth["remotes"][0].get("headers").is_none(), "OAuth clients need no header");
        let authorization = &oauth["_meta"][PUBLISHER_META]["authorization"];
        assert_eq!(
            (&authorization["type"], &authorization["protectedResourceMetadata"]),
            (&json!("oauth2"), &json!(metadata))
        );
    }
}
