//! Client manifests: the configuration an AI client needs to use an
//! endpoint, in that client's own file format, served at
//! `GET /mcp/v{N}/manifests/{client}`.
//!
//! A client is a [`ClientManifest`]; [`Manifests`] holds the clients an
//! endpoint serves ([`Manifests::standard`]: Claude Code, Cursor, Gemini
//! CLI, OpenAI). A new client plugs in with [`Manifests::with`]. The
//! credential header, when the API asks for one, always carries an
//! environment-variable placeholder in the client's syntax, never a token.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

/// What a manifest describes: one endpoint (one API version of a group).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ManifestServer<'a> {
    /// The key clients file the server under (`catalog`): the server's
    /// name, letters, digits, `_` and `-` only.
    pub key: &'a str,
    /// The server's title, if it has one.
    pub title: Option<&'a str>,
    /// The server's description, if it has one.
    pub description: Option<&'a str>,
    /// The endpoint's public URL (`https://api.example.com/mcp/v1`).
    pub url: &'a str,
    /// The header the API wants a credential in, if any.
    pub credential_header: Option<&'a str>,
    /// The environment variable the user keeps the credential in
    /// (`CATALOG_TOKEN`).
    pub credential_env: &'a str,
    /// The tools of the endpoint, by name.
    pub tools: &'a [String],
    /// The tools that declare `readOnlyHint: true`.
    pub read_only_tools: &'a [String],
}

impl ManifestServer<'_> {
    /// `{header: placeholder}` when the API wants a credential, where
    /// `placeholder` is written by `syntax` from the variable's name.
    pub fn headers(&self, syntax: impl Fn(&str) -> String) -> Option<Value> {
        let header = self.credential_header?;
        let mut headers = Map::new();
        headers.insert(header.to_owned(), Value::String(syntax(self.credential_env)));
        Some(Value::Object(headers))
    }
}

/// One AI client's configuration format.
pub trait ClientManifest: Send + Sync + 'static {
    /// The client's name in the URL (`claude-code`): lower-case letters,
    /// digits and `-`.
    fn client(&self) -> &'static str;

    /// Where the document goes (`.mcp.json` in the project), for people.
    fn location(&self) -> &'static str;

    /// The document for `server`.
    fn render(&self, server: &ManifestServer<'_>) -> Value;
}

/// The clients an endpoint serves manifests for, by name.
#[derive(Clone)]
pub struct Manifests {
    clients: BTreeMap<&'static str, Arc<dyn ClientManifest>>,
}

impl std::fmt::Debug for Manifests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.clients.keys()).finish()
    }
}

impl Default for Manifests {
    fn default() -> Self {
        Manifests::standard()
    }
}

impl Manifests {
    /// No clients: every manifest URL is a 404.
    pub fn none() -> Self {
        Manifests { clients: BTreeMap::new() }
    }

    /// Claude Code, Cursor, Gemini CLI and OpenAI (the Responses API's
    /// `mcp` tool).
    pub fn standard() -> Self {
        Manifests::none().with(ClaudeCode).with(Cursor).with(GeminiCli).with(OpenAi)
    }

    /// Adds (or replaces) a client.
    ///
    /// # Panics
    /// If the client's name is not 1-64 of `a-z 0-9 -`: a programming error
    /// caught when the endpoint is assembled.
    pub fn with(mut self, client: impl ClientManifest) -> Self {
        let name = client.client();
        assert!(
            !name.is_empty()
                && name.len() <= 64
                && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "client manifest name `{name}` must be 1-64 of a-z 0-9 -"
        );
        self.clients.insert(name, Arc::new(client));
        self
    }

    /// The client named `name`.
    pub fn get(&self, name: &str) -> Option<&dyn ClientManifest> {
        self.clients.get(name).map(|c| &**c)
    }

    /// The clients' names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.clients.keys().copied()
    }
}

/// Claude Code: `.mcp.json` in the project (`claude mcp add-json` takes
/// the inner object); `${VAR}` is expanded from the environment.
#[derive(Debug, Clone, Copy)]
pub struct ClaudeCode;

impl ClientManifest for ClaudeCode {
    fn client(&self) -> &'static str {
        "claude-code"
    }

    fn location(&self) -> &'static str {
        ".mcp.json (project root)"
    }

    fn render(&self, server: &ManifestServer<'_>) -> Value {
        let mut entry = Map::new();
        entry.insert("type".into(), json!("http"));
        entry.insert("url".into(), json!(server.url));
        if let Some(headers) = server.headers(|var| format!("${{{var}}}")) {
            entry.insert("headers".into(), headers);
        }
        json!({ "mcpServers": { server.key: entry } })
    }
}

/// Cursor: `.cursor/mcp.json` (project) or `~/.cursor/mcp.json`; an entry
/// with a `url` is a remote server; `${env:VAR}` is expanded.
#[derive(Debug, Clone, Copy)]
pub struct Cursor;

impl ClientManifest for Cursor {
    fn client(&self) -> &'static str {
        "cursor"
    }

    fn location(&self) -> &'static str {
        ".cursor/mcp.json (project) or ~/.cursor/mcp.json"
    }

    fn render(&self, server: &ManifestServer<'_>) -> Value {
        let mut entry = Map::new();
        entry.insert("url".into(), json!(server.url));
        if let Some(headers) = server.headers(|var| format!("${{env:{var}}}")) {
            entry.insert("headers".into(), headers);
        }
        json!({ "mcpServers": { server.key: entry } })
    }
}

/// Gemini CLI: `.gemini/settings.json` (project) or
/// `~/.gemini/settings.json`; `httpUrl` is Streamable HTTP (`url` would be
/// SSE); `$VAR` and `${VAR}` are expanded.
#[derive(Debug, Clone, Copy)]
pub struct GeminiCli;

impl ClientManifest for GeminiCli {
    fn client(&self) -> &'static str {
        "gemini-cli"
    }

    fn location(&self) -> &'static str {
        ".gemini/settings.json (project) or ~/.gemini/settings.json"
    }

    fn render(&self, server: &ManifestServer<'_>) -> Value {
        let mut entry = Map::new();
        entry.insert("httpUrl".into(), json!(server.url));
        if let Some(headers) = server.headers(|var| format!("${{{var}}}")) {
            entry.insert("headers".into(), headers);
        }
        if let Some(description) = server.description {
            entry.insert("description".into(), json!(description));
        }
        json!({ "mcpServers": { server.key: entry } })
    }
}

/// OpenAI: an `mcp` tool object for the Responses API (`tools: [...]`).
/// Only the read-only tools are allowed, and need no approval; a server
/// without read-only tools gets every tool, each call approved. The header
/// value is a `${VAR}` placeholder to fill in from the environment before
/// the request is sent (the API does not expand it).
#[derive(Debug, Clone, Copy)]
pub struct OpenAi;

impl ClientManifest for OpenAi {
    fn client(&self) -> &'static str {
        "openai"
    }

    fn location(&self) -> &'static str {
        "the `tools` array of a Responses API request"
    }

    fn render(&self, server: &ManifestServer<'_>) -> Value {
        let mut tool = Map::new();
        tool.insert("type".into(), json!("mcp"));
        tool.insert("server_label".into(), json!(server.key));
        tool.insert("server_url".into(), json!(server.url));
        if let Some(description) = server.description.or(server.title) {
            tool.insert("server_description".into(), json!(description));
        }
        if let Some(headers) = server.headers(|var| format!("${{{var}}}")) {
            tool.insert("headers".into(), headers);
        }
        if server.read_only_tools.is_empty() {
            tool.insert("require_approval".into(), json!("always"));
        } else {
            tool.insert("allowed_tools".into(), json!(server.read_only_tools));
            tool.insert("require_approval".into(), json!("never"));
        }
        Value::Object(tool)
    }
}

/// A server name as a manifest key: `A-Z a-z 0-9 _ -` kept, anything else
/// `_`, at most 64 characters (`server` when nothing is left).
pub fn manifest_key(name: &str) -> String {
    let key: String = name
        .chars()
        .take(64)
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect();
    if key.trim_matches('_').is_empty() { "server".to_owned() } else { key }
}

/// The environment variable for a server's credential: `CATALOG_TOKEN`.
pub fn credential_env(key: &str) -> String {
    let mut var: String =
        key.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
    if var.starts_with(|c: char| c.is_ascii_digit()) {
        var.insert(0, '_');
    }
    var.push_str("_TOKEN");
    var
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server<'a>(header: Option<&'a str>, tools: &'a [String], read_only: &'a [String]) -> ManifestServer<'a> {
        ManifestServer {
            key: "catalog",
            title: Some("Catalog"),
            description: Some("A catalog"),
            url: "https://api.example.com/mcp/v1",
            credential_header: header,
            credential_env: "CATALOG_TOKEN",
            tools,
            read_only_tools: read_only,
        }
    }

    #[test]
    fn placeholders_never_tokens() {
        let tools = vec!["a".to_owned(), "b".to_owned()];
        let ro = vec!["a".to_owned()];
        let s = server(Some("Ufo-RPC-Token"), &tools, &ro);
        let m = Manifests::standard();
        let doc = m.get("claude-code").unwrap().render(&s);
        assert_eq!(
            doc,
            json!({"mcpServers": {"catalog": {"type": "http", "url": "https://api.example.com/mcp/v1",
                "headers": {"Ufo-RPC-Token": "${CATALOG_TOKEN}"}}}})
        );
        let doc = m.get("cursor").unwrap().render(&s);
        assert_eq!(doc["mcpServers"]["catalog"]["headers"]["Ufo-RPC-Token"], "${env:CATALOG_TOKEN}");
        let doc = m.get("gemini-cli").unwrap().render(&s);
        assert_eq!(doc["mcpServers"]["catalog"]["httpUrl"], "https://api.example.com/mcp/v1");
        let doc = m.get("openai").unwrap().render(&s);
        assert_eq!(doc["allowed_tools"], json!(["a"]));
        assert_eq!(doc["require_approval"], "never");
        let open = m.get("openai").unwrap().render(&server(None, &tools, &[]));
        assert_eq!(open["require_approval"], "always");
        assert!(open.get("headers").is_none() && open.get("allowed_tools").is_none());
    }

    #[test]
    fn keys_and_variables() {
        assert_eq!(manifest_key("catalog"), "catalog");
        assert_eq!(manifest_key("my server/é"), "my_server__");
        assert_eq!(manifest_key("///"), "server");
        assert_eq!(credential_env("my-catalog"), "MY_CATALOG_TOKEN");
        assert_eq!(credential_env("9lives"), "_9LIVES_TOKEN");
        assert_eq!(
            Manifests::standard().names().collect::<Vec<_>>(),
            ["claude-code", "cursor", "gemini-cli", "openai"]
        );
    }

    #[test]
    #[should_panic(expected = "must be 1-64")]
    fn client_names_are_checked() {
        struct Bad;
        impl ClientManifest for Bad {
            fn client(&self) -> &'static str {
                "Bad Name"
            }
            fn location(&self) -> &'static str {
                ""
            }
            fn render(&self, _: &ManifestServer<'_>) -> Value {
                Value::Null
            }
        }
        let _ = Manifests::none().with(Bad);
    }
}
