//! Near-valid JSON-RPC and MCP messages built from the fuzzer's bytes
//! (`#[derive(Arbitrary)]`), written out as raw JSON text so that what the
//! `serde_json` model cannot say is said too: duplicate keys, numbers out of
//! `f64` range, every character escaped, lone surrogates, deep nesting.
//!
//! Most choices are among the names the catalog knows (methods, tools,
//! arguments, protocol versions, log levels), so the generated requests get
//! past the parsers into sessions, the stateless checks, validation and the
//! tools themselves.

use arbitrary::Arbitrary;

/// Nesting deeper than this is written as `null` (the `Deep` variants nest
/// further on purpose).
const MAX_DEPTH: usize = 48;

/// The deepest [`Json::Deep`]: far past any parser's limit (`serde_json`'s
/// is 128), small enough that many of them stay cheap to write.
pub const MAX_DEEP: usize = 4096;

/// An arbitrary JSON value.
#[derive(Arbitrary, Debug, Clone)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float (non-finite ones are written `1e999`).
    Float(f64),
    /// A number with this many digits (up to 255): beyond `u64` and `f64`.
    Huge(u8),
    /// A string.
    Str(String),
    /// A string with every character written as `\uXXXX`.
    Escaped(String),
    /// A lone surrogate escape (`"\udXXX"`).
    Surrogate(u8),
    /// An array.
    Array(Vec<Json>),
    /// An object.
    Object(Vec<(String, Json)>),
    /// An object with the same key twice.
    Duplicate(String, Box<Json>, Box<Json>),
    /// Arrays nested this deep (`[[[...]]]`), up to [`MAX_DEEP`].
    Deep(u16),
}

impl Json {
    /// Writes the value as JSON text.
    pub fn write(&self, out: &mut String) {
        self.write_at(out, 0);
    }

    fn write_at(&self, out: &mut String, depth: usize) {
        if depth > MAX_DEPTH {
            out.push_str("null");
            return;
        }
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => out.push_str(&i.to_string()),
            Json::Float(f) => write_float(out, *f),
            Json::Huge(digits) => {
                out.push('1');
                out.extend(std::iter::repeat_n('7', usize::from(*digits)));
            }
            Json::Str(s) => write_str(out, s),
            Json::Escaped(s) => write_escaped(out, s),
            Json::Surrogate(b) => out.push_str(&format!("\"\\ud{:03x}\"", 0x800 | (u16::from(*b) << 2))),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_at(out, depth + 1);
                }
                out.push(']');
            }
            Json::Object(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(out, key);
                    out.push(':');
                    value.write_at(out, depth + 1);
                }
                out.push('}');
            }
            Json::Duplicate(key, a, b) => {
                out.push('{');
                write_str(out, key);
                out.push(':');
                a.write_at(out, depth + 1);
                out.push(',');
                write_str(out, key);
                out.push(':');
                b.write_at(out, depth + 1);
                out.push('}');
            }
            Json::Deep(n) => write_deep(out, usize::from(*n) % (MAX_DEEP + 1), false),
        }
    }

    /// The value as JSON text.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }
}

/// `n` nested arrays (`objects`: `{"a":...}`) around `1`.
pub fn write_deep(out: &mut String, n: usize, objects: bool) {
    for _ in 0..n {
        out.push_str(if objects { "{\"a\":" } else { "[" });
    }
    out.push('1');
    for _ in 0..n {
        out.push(if objects { '}' } else { ']' });
    }
}

fn write_float(out: &mut String, f: f64) {
    if f.is_finite() {
        // `Display` never uses an exponent: always a valid JSON number.
        out.push_str(&f.to_string());
    } else {
        out.push_str("1e999");
    }
}

/// Writes `s` as a JSON string.
pub fn write_str(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()));
}

fn write_escaped(out: &mut String, s: &str) {
    out.push('"');
    let mut units = [0u16; 2];
    for c in s.chars() {
        for unit in c.encode_utf16(&mut units) {
            out.push_str(&format!("\\u{unit:04x}"));
        }
    }
    out.push('"');
}

/// A JSON-RPC message, near-valid.
#[derive(Arbitrary, Debug, Clone)]
pub struct Message {
    /// The `jsonrpc` member.
    pub jsonrpc: Version,
    /// The `id` member.
    pub id: Id,
    /// The `method` member.
    pub method: Method,
    /// The `params` member.
    pub params: Params,
    /// More members, possibly repeating one of the above.
    pub extra: Vec<(Key, Json)>,
    /// Rotates the members.
    pub rotate: u8,
}

/// The `jsonrpc` member.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Version {
    /// `"2.0"`.
    Two,
    /// Absent.
    Missing,
    /// `"1.0"`.
    One,
    /// `2.0` (a number).
    Number,
    /// `"2\u002e0"`.
    Escaped,
    /// `null`.
    Null,
}

/// An `id`, a `progressToken` or a `requestId`.
#[derive(Arbitrary, Debug, Clone)]
pub enum Id {
    /// Absent (a notification).
    Missing,
    /// `null`.
    Null,
    /// A small integer.
    Small(u8),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A string, every character escaped.
    Escaped(String),
    /// A number beyond `f64` (`1e400`).
    Exp,
    /// `-0`.
    NegativeZero,
    /// Not a valid id.
    Other(Json),
}

impl Id {
    fn text(&self) -> Option<String> {
        let mut out = String::new();
        match self {
            Id::Missing => return None,
            Id::Null => out.push_str("null"),
            Id::Small(n) => out.push_str(&n.to_string()),
            Id::Int(n) => out.push_str(&n.to_string()),
            Id::Float(f) => write_float(&mut out, *f),
            Id::Str(s) => write_str(&mut out, s),
            Id::Escaped(s) => write_escaped(&mut out, s),
            Id::Exp => out.push_str("1e400"),
            Id::NegativeZero => out.push_str("-0"),
            Id::Other(json) => json.write(&mut out),
        }
        Some(out)
    }
}

/// Methods of both endpoints (and a few neither serves).
pub const METHODS: &[&str] = &[
    "tools/call",
    "tools/list",
    "initialize",
    "notifications/initialized",
    "ping",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "notifications/cancelled",
    "notifications/progress",
    "resources/list",
    "prompts/list",
    "Catalog.get",
    "Catalog.search",
    "Catalog.list",
    "Catalog.categories",
    "Catalog.stats",
    "Catalog.count",
    "Catalog.reindex",
    "rpc.discover",
    "",
];

/// Tool names (and method names of `/rpc`).
pub const TOOLS: &[&str] = &[
    "Catalog.search",
    "Catalog.get",
    "Catalog.list",
    "Catalog.categories",
    "Catalog.stats",
    "Catalog.count",
    "ping",
    "Catalog.reindex",
    "nope",
    "",
];

/// Protocol versions, supported and not.
pub const VERSIONS: &[&str] =
    &["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2099-01-01", "2025-13-45", ""];

/// Log levels, and a few that are not.
pub const LEVELS: &[&str] =
    &["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", "DEBUG", "trace", ""];

fn pick(table: &[&'static str], index: u8) -> &'static str {
    table[usize::from(index) % table.len()]
}

/// The `method` member.
#[derive(Arbitrary, Debug, Clone)]
pub enum Method {
    /// One of [`METHODS`].
    Known(u8),
    /// Any string.
    Any(String),
    /// A known method with every character escaped.
    Escaped(u8),
    /// Not a string.
    NotString(Json),
}

/// A string member chosen from a table, or not.
#[derive(Arbitrary, Debug, Clone)]
pub enum Choice {
    /// An entry of the table.
    Known(u8),
    /// Any string.
    Any(String),
    /// Not a string.
    NotString(Json),
}

impl Choice {
    fn write(&self, out: &mut String, table: &[&'static str]) {
        match self {
            Choice::Known(i) => write_str(out, pick(table, *i)),
            Choice::Any(s) => write_str(out, s),
            Choice::NotString(json) => json.write(out),
        }
    }
}

/// The `params` member.
#[derive(Arbitrary, Debug, Clone)]
pub enum Params {
    /// Absent.
    Missing,
    /// `null`.
    Null,
    /// The shape MCP requests have.
    Mcp(Box<McpParams>),
    /// Named arguments, as `/rpc` takes them.
    Named(Vec<(ArgKey, ArgValue)>),
    /// Positional arguments.
    Positional(Vec<ArgValue>),
    /// Anything.
    Json(Json),
}

/// MCP request parameters: every member any method reads.
#[derive(Arbitrary, Debug, Clone)]
pub struct McpParams {
    /// `_meta`.
    pub meta: Option<Meta>,
    /// `name` (tools/call).
    pub name: Option<Choice>,
    /// `arguments` (tools/call).
    pub arguments: Option<Arguments>,
    /// `protocolVersion` (initialize).
    pub protocol_version: Option<Choice>,
    /// `capabilities` (initialize).
    pub capabilities: Option<Capabilities>,
    /// `clientInfo` (initialize).
    pub client_info: Option<Json>,
    /// `cursor` (tools/list).
    pub cursor: Option<Choice>,
    /// `level` (logging/setLevel).
    pub level: Option<Choice>,
    /// `requestId` (notifications/cancelled).
    pub request_id: Option<Id>,
    /// `notifications` (subscriptions/listen).
    pub notifications: Option<Json>,
    /// Anything else.
    pub extra: Option<(String, Json)>,
}

/// `params._meta`.
#[derive(Arbitrary, Debug, Clone)]
pub enum Meta {
    /// An object.
    Object {
        /// `io.modelcontextprotocol/protocolVersion`.
        version: Option<Choice>,
        /// `io.modelcontextprotocol/clientCapabilities`.
        capabilities: Option<Capabilities>,
        /// `io.modelcontextprotocol/clientInfo`.
        client_info: Option<Json>,
        /// `io.modelcontextprotocol/logLevel`.
        log_level: Option<Choice>,
        /// `progressToken`.
        progress_token: Option<Id>,
    },
    /// Not an object.
    Other(Json),
}

/// Client capabilities.
#[derive(Arbitrary, Debug, Clone)]
pub enum Capabilities {
    /// `{}`.
    Empty,
    /// `{"sampling":{}, "elicitation":{}, "roots":{"listChanged":true}}`.
    All,
    /// Anything.
    Json(Json),
}

impl Capabilities {
    fn write(&self, out: &mut String) {
        match self {
            Capabilities::Empty => out.push_str("{}"),
            Capabilities::All => out.push_str(r#"{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}"#),
            Capabilities::Json(json) => json.write(out),
        }
    }
}

/// Tool arguments.
#[derive(Arbitrary, Debug, Clone)]
pub enum Arguments {
    /// An object of (mostly) known argument names.
    Map(Vec<(ArgKey, ArgValue)>),
    /// Anything.
    Other(Json),
}

/// An argument name of the catalog's methods, or another.
#[derive(Arbitrary, Debug, Clone)]
pub enum ArgKey {
    /// `query`.
    Query,
    /// `limit`.
    Limit,
    /// `id`.
    Id,
    /// `sort`.
    Sort,
    /// `page`.
    Page,
    /// `who`.
    Who,
    /// `offset`.
    Offset,
    /// Another name.
    Other(String),
}

impl ArgKey {
    fn write(&self, out: &mut String) {
        let name = match self {
            ArgKey::Query => "query",
            ArgKey::Limit => "limit",
            ArgKey::Id => "id",
            ArgKey::Sort => "sort",
            ArgKey::Page => "page",
            ArgKey::Who => "who",
            ArgKey::Offset => "offset",
            ArgKey::Other(s) => s,
        };
        write_str(out, name);
    }
}

/// An argument value.
#[derive(Arbitrary, Debug, Clone)]
pub enum ArgValue {
    /// A small integer.
    Small(u8),
    /// An integer.
    Int(i64),
    /// An unsigned integer.
    Unsigned(u64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A sort order (`id_asc`, `id_desc`, `name`) or a near miss.
    Sort(u8),
    /// Anything.
    Json(Json),
}

impl ArgValue {
    fn write(&self, out: &mut String) {
        match self {
            ArgValue::Small(n) => out.push_str(&n.to_string()),
            ArgValue::Int(n) => out.push_str(&n.to_string()),
            ArgValue::Unsigned(n) => out.push_str(&n.to_string()),
            ArgValue::Float(f) => write_float(out, *f),
            ArgValue::Str(s) => write_str(out, s),
            ArgValue::Sort(i) => write_str(out, pick(&["id_asc", "id_desc", "name", "Name", "id-asc"], *i)),
            ArgValue::Json(json) => json.write(out),
        }
    }
}

/// A member name, usually a JSON-RPC one (so a duplicate).
#[derive(Arbitrary, Debug, Clone)]
pub enum Key {
    /// `jsonrpc`.
    Jsonrpc,
    /// `id`.
    Id,
    /// `"\u0069d"`: `id`, escaped.
    EscapedId,
    /// `method`.
    Method,
    /// `params`.
    Params,
    /// `result`.
    Result,
    /// `error`.
    Error,
    /// Another name.
    Other(String),
}

impl Key {
    fn text(&self) -> String {
        match self {
            Key::Jsonrpc => "\"jsonrpc\"".into(),
            Key::Id => "\"id\"".into(),
            Key::EscapedId => "\"\\u0069d\"".into(),
            Key::Method => "\"method\"".into(),
            Key::Params => "\"params\"".into(),
            Key::Result => "\"result\"".into(),
            Key::Error => "\"error\"".into(),
            Key::Other(s) => serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()),
        }
    }
}

/// Writes `"key":value` pairs as an object.
fn object(out: &mut String, members: &[(String, String)]) {
    out.push('{');
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(key);
        out.push(':');
        out.push_str(value);
    }
    out.push('}');
}

fn member(key: &str, write: impl FnOnce(&mut String)) -> (String, String) {
    let mut value = String::new();
    write(&mut value);
    (format!("\"{key}\""), value)
}

impl Message {
    /// The message as JSON text.
    pub fn text(&self) -> String {
        let mut members = Vec::new();
        match self.jsonrpc {
            Version::Two => members.push(member("jsonrpc", |o| o.push_str("\"2.0\""))),
            Version::Missing => {}
            Version::One => members.push(member("jsonrpc", |o| o.push_str("\"1.0\""))),
            Version::Number => members.push(member("jsonrpc", |o| o.push_str("2.0"))),
            Version::Escaped => members.push(member("jsonrpc", |o| o.push_str("\"2\\u002e0\""))),
            Version::Null => members.push(member("jsonrpc", |o| o.push_str("null"))),
        }
        if let Some(id) = self.id.text() {
            members.push(("\"id\"".into(), id));
        }
        members.push(member("method", |o| match &self.method {
            Method::Known(i) => write_str(o, pick(METHODS, *i)),
            Method::Any(s) => write_str(o, s),
            Method::Escaped(i) => write_escaped(o, pick(METHODS, *i)),
            Method::NotString(json) => json.write(o),
        }));
        if let Some(params) = self.params.text() {
            members.push(("\"params\"".into(), params));
        }
        for (key, value) in &self.extra {
            members.push((key.text(), value.text()));
        }
        if !members.is_empty() {
            let by = usize::from(self.rotate) % members.len();
            members.rotate_left(by);
        }
        let mut out = String::new();
        object(&mut out, &members);
        out
    }
}

impl Params {
    fn text(&self) -> Option<String> {
        let mut out = String::new();
        match self {
            Params::Missing => return None,
            Params::Null => out.push_str("null"),
            Params::Mcp(params) => params.write(&mut out),
            Params::Named(args) => write_args(&mut out, args),
            Params::Positional(values) => {
                out.push('[');
                for (i, value) in values.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    value.write(&mut out);
                }
                out.push(']');
            }
            Params::Json(json) => json.write(&mut out),
        }
        Some(out)
    }
}

fn write_args(out: &mut String, args: &[(ArgKey, ArgValue)]) {
    out.push('{');
    for (i, (key, value)) in args.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        key.write(out);
        out.push(':');
        value.write(out);
    }
    out.push('}');
}

impl McpParams {
    fn write(&self, out: &mut String) {
        let mut members = Vec::new();
        if let Some(meta) = &self.meta {
            members.push(member("_meta", |o| meta.write(o)));
        }
        if let Some(name) = &self.name {
            members.push(member("name", |o| name.write(o, TOOLS)));
        }
        if let Some(arguments) = &self.arguments {
            members.push(member("arguments", |o| match arguments {
                Arguments::Map(args) => write_args(o, args),
                Arguments::Other(json) => json.write(o),
            }));
        }
        if let Some(version) = &self.protocol_version {
            members.push(member("protocolVersion", |o| version.write(o, VERSIONS)));
        }
        if let Some(capabilities) = &self.capabilities {
            members.push(member("capabilities", |o| capabilities.write(o)));
        }
        if let Some(info) = &self.client_info {
            members.push(member("clientInfo", |o| info.write(o)));
        }
        if let Some(cursor) = &self.cursor {
            members.push(member("cursor", |o| cursor.write(o, &["", "MQ", "Mg", "MA==", "0"])));
        }
        if let Some(level) = &self.level {
            members.push(member("level", |o| level.write(o, LEVELS)));
        }
        if let Some(id) = self.request_id.as_ref().and_then(Id::text) {
            members.push(("\"requestId\"".into(), id));
        }
        if let Some(notifications) = &self.notifications {
            members.push(member("notifications", |o| notifications.write(o)));
        }
        if let Some((key, value)) = &self.extra {
            members.push((serde_json::to_string(key).unwrap_or_default(), value.text()));
        }
        object(out, &members);
    }
}

impl Meta {
    fn write(&self, out: &mut String) {
        let Meta::Object { version, capabilities, client_info, log_level, progress_token } = self else {
            if let Meta::Other(json) = self {
                json.write(out);
            }
            return;
        };
        let mut members = Vec::new();
        if let Some(version) = version {
            members.push(member("io.modelcontextprotocol/protocolVersion", |o| version.write(o, VERSIONS)));
        }
        if let Some(capabilities) = capabilities {
            members.push(member("io.modelcontextprotocol/clientCapabilities", |o| capabilities.write(o)));
        }
        if let Some(info) = client_info {
            members.push(member("io.modelcontextprotocol/clientInfo", |o| info.write(o)));
        }
        if let Some(level) = log_level {
            members.push(member("io.modelcontextprotocol/logLevel", |o| level.write(o, LEVELS)));
        }
        if let Some(token) = progress_token.as_ref().and_then(Id::text) {
            members.push(("\"progressToken\"".into(), token));
        }
        object(out, &members);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_valid_json_where_the_model_allows() {
        let json = Json::Object(vec![
            ("a".into(), Json::Escaped("é😀".into())),
            ("b".into(), Json::Float(f64::NAN)),
            ("c".into(), Json::Deep(3)),
        ]);
        assert_eq!(json.text(), r#"{"a":"\u00e9\ud83d\ude00","b":1e999,"c":[[[1]]]}"#);
        let message = Message {
            jsonrpc: Version::Two,
            id: Id::Small(1),
            method: Method::Known(0),
            params: Params::Named(vec![(ArgKey::Id, ArgValue::Small(7))]),
            extra: vec![(Key::EscapedId, Json::Null)],
            rotate: 0,
        };
        assert_eq!(
            message.text(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"id":7},"\u0069d":null}"#
        );
    }
}
