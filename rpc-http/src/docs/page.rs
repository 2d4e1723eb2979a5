//! The HTML page of an endpoint: one template (`page.html`, `page.css`,
//! `page.js`) for JSON-RPC and MCP, filled with a neutral [`Page`].
//!
//! The server writes only the language and the title into the markup
//! (escaped); everything else travels as JSON in a
//! `<script type="application/json">` block (with `<`, `>`, `&` and the
//! line separators escaped, so no text can end the block), which the
//! page's script renders with `textContent`.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::server::body::{ResponseBody, full};

const TEMPLATE: &str = include_str!("page.html");
const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// What the page documents (and how its try-it forms call).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PageKind {
    /// A JSON-RPC endpoint: the forms POST JSON-RPC requests.
    JsonRpc,
    /// An MCP endpoint: the forms POST 2026-07-28 `tools/call` requests.
    Mcp,
}

/// A link to another version's page.
#[derive(Debug, Clone, Serialize)]
pub struct VersionLink {
    /// `v2`.
    pub name: String,
    /// Where its page is (a path on this server).
    pub href: String,
    /// Whether it is the version shown.
    pub current: bool,
}

/// One parameter (or tool argument).
#[derive(Debug, Clone, Serialize)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Its description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    pub required: bool,
    /// Its JSON Schema.
    pub schema: Value,
}

/// A tag: the service a method belongs to (from the service and its doc
/// comment).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tag {
    /// Its name (`Catalog`).
    pub name: String,
    /// Its description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// An error a method may answer with (an OpenRPC error object).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorDoc {
    /// Its `code` (absent when the document gives no integer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    /// Its `message`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Its description, when the document has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its `data` (`x-data-schema`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_schema: Option<Value>,
    /// Its `data` (a fixed value or an example), when the document has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// One error of a method, as the page's script finds it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ErrorUse {
    /// A shared error: its key in [`Page::errors`].
    Shared(String),
    /// An error written out in the method.
    Inline(ErrorDoc),
    /// A reference the page could not follow (missing, cyclic, not local):
    /// the reference and why.
    Unresolved {
        /// The `$ref` as the document wrote it (or a placeholder).
        reference: String,
        /// Why it was not followed.
        reason: String,
    },
}

/// One method or tool.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    /// The method's (tool's) name.
    pub name: String,
    /// Its summary or title, in the page's language.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its description, in the page's language.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it is deprecated.
    pub deprecated: bool,
    /// Its parameters.
    pub params: Vec<Param>,
    /// The whole input schema, when it says more than the parameters (MCP).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    /// The schema of the result (`outputSchema` for a tool).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The names of its tags (services), in [`Page::tags`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The errors it may answer with.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorUse>,
    /// Annotations (`readOnlyHint`, ...), extensions: shown as they are.
    pub annotations: Map<String, Value>,
    /// The example `params` (`arguments`) the try-it form starts with.
    pub example: Value,
}

/// Everything the page shows.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    /// JSON-RPC or MCP.
    pub kind: PageKind,
    /// The API's (server's) title, in the page's language.
    pub title: String,
    /// Its description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The application version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
    /// The page's language tag (`en`).
    pub language: String,
    /// The API version shown.
    pub version: u32,
    /// The versions served.
    pub versions: Vec<VersionLink>,
    /// The endpoint's public URL (shown).
    pub endpoint: String,
    /// The path the try-it forms POST to (same origin).
    pub post_path: String,
    /// Whether the endpoint asks for a token.
    pub protected: bool,
    /// Other documents: `(label, path)`.
    pub links: Vec<(String, String)>,
    /// A note shown above the entries (e.g. why the forms cannot call).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The MCP protocol revision the forms speak.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// Whether the try-it forms are offered.
    pub try_it: bool,
    /// The methods or tools.
    pub entries: Vec<Entry>,
    /// Shared schema definitions (`components.schemas`), shown at the end.
    pub schemas: Value,
    /// The tags (services) with their descriptions, each once, in the
    /// order they first appear; the method list is grouped and filtered by them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<Tag>,
    /// The shared errors the entries refer to ([`ErrorUse::Shared`]), by key.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, ErrorDoc>,
}

/// Escapes `&`, `<`, `>`, `"` and `'` for HTML text and attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON that can sit inside a `<script>` element: `<`, `>`, `&`, U+2028
/// and U+2029 written as `\u` escapes (only strings can hold them, where
/// the escapes mean the same).
pub fn script_safe_json(value: &impl Serialize) -> String {
    let json = serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned());
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The page's HTML.
pub fn render(page: &Page) -> String {
    let mut out = String::with_capacity(TEMPLATE.len() + STYLE.len() + SCRIPT.len() + 4096);
    let mut rest = TEMPLATE;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        match &after[..end] {
            "lang" => out.push_str(&escape_html(&page.language)),
            "title" => out.push_str(&escape_html(&page.title)),
            "style" => out.push_str(STYLE),
            "script" => out.push_str(SCRIPT),
            "data" => out.push_str(&script_safe_json(page)),
            other => {
                out.push_str("{{");
                out.push_str(other);
                out.push_str("}}");
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

fn sha256_source(text: &str) -> String {
    format!("'sha256-{}'", STANDARD.encode(Sha256::digest(text.as_bytes())))
}

/// The page's `Content-Security-Policy`: nothing may load but the inline
/// script and style of the template (by hash), requests go to this origin only.
pub static CONTENT_SECURITY_POLICY: LazyLock<String> = LazyLock::new(|| {
    format!(
        "default-src 'none'; script-src {}; style-src {}; connect-src 'self'; img-src data:; \
         base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        sha256_source(SCRIPT),
        sha256_source(STYLE)
    )
});

/// The `200` response carrying `page`: `text/html`, the CSP, `nosniff`,
/// no referrer, `Vary: Accept` (the same URL serves JSON to API clients).
pub fn response(page: &Page) -> Response<ResponseBody> {
    let mut response = Response::new(full(Bytes::from(render(page))));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    if let Ok(policy) = HeaderValue::from_str(&CONTENT_SECURITY_POLICY) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.append(header::VARY, HeaderValue::from_static("accept"));
    response
}

#[cfg(test)]
#[path = "page_tests.rs"]
mod tests;
