//! The input of the HTTP targets: a short script of requests to the catalog
//! application, decoded from the fuzzer's bytes with
//! [`arbitrary::Unstructured`]. Every byte string is a script (a read past
//! the end gives 0), and the layout is simple enough that the seeds are
//! written by hand ([`Encoder`]):
//!
//! ```text
//! script   := handshake exchange{1,4}
//! handshake:= u8        1..=4: first `initialize` at that handshake revision
//!                       (2024-11-05 ... 2025-11-25) and `notifications/initialized`
//! exchange := verb:u8 target:u8 [custom path: len:u8 bytes] flags:u8 headers body
//! headers  := count:u8 (mod 17) { op:u8 [custom name: len:u8 bytes] value }
//!             op: low 5 bits a name of HEADER_NAMES (past the end: custom),
//!                 bits 5-6: 0 append, 1 insert (replace), 2 remove, 3 append
//! value    := kind:u8   an entry of HEADER_VALUES, or one of the specials
//!                       after them: mirror method / name / version, the
//!                       session id, base64 sentinel of the next value, raw
//!                       (len:u8 bytes), empty
//! body     := kind:u8 (mod 16)
//!             0, 8 literal: len:u16le (0xffff: the rest) bytes
//!             1, 9, 10, 15 a generated message (generate::Message)
//!             2, 11 a generated batch                3, 14 a generated JSON value
//!             4 deep nesting: depth:u16le style:u8
//!             5, 12, 13 a mutilated message: message op:u8 at:u16le byte:u8
//!             6 a large body: size:u8 (× 64 KiB)     7 empty
//! ```
//!
//! `flags`: bit 0 the standard headers (`Host: localhost`, JSON
//! `Content-Type`, `Accept` of both types; for a 2026-07-28 body the
//! mirrored `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`; otherwise the
//! session's id and revision), bit 1 an absolute-form target
//! (`http://localhost:8080/...`), bit 2 a body delivered in chunks (size
//! from the next byte), bit 3 a body that fails after its bytes, bit 4 an
//! absolute-form target naming another host, bit 5 no session header.

use arbitrary::{Arbitrary, Unstructured};

use crate::generate;

/// Which endpoint the targets of a script favour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// `/mcp/...`.
    Mcp,
    /// `/rpc/...`.
    Rpc,
}

/// HTTP methods (index 0, what zeros give, is `POST`).
pub const VERBS: &[&str] = &["POST", "GET", "DELETE", "POST", "HEAD", "PUT", "OPTIONS", "PATCH", "TRACE", "FOO"];

/// Request targets of the MCP focus (past the end: a custom path).
pub const MCP_TARGETS: &[&str] = &[
    "/mcp/v1",
    "/mcp/v2",
    "/mcp",
    "/mcp/",
    "/mcp/v1/",
    "/mcp/v3",
    "/mcp/v0",
    "/mcp/v01",
    "/mcp/v99999999999",
    "/mcp/v4294967296",
    "/mcp/v1/extra",
    "/mcp//v1",
    "/mcp/v1?x=1&y",
    "/mcp/%76%31",
    "/mcpx",
    "/rpc",
    "/",
];

/// Request targets of the RPC focus (past the end: a custom path).
pub const RPC_TARGETS: &[&str] = &[
    "/rpc",
    "/rpc/v2",
    "/rpc/v1",
    "/rpc/",
    "/rpc/v3",
    "/rpc/v0",
    "/rpc/v02",
    "/rpc/v2/x",
    "/rpc/v99999999999",
    "/rpc?x=1",
    "/rpcx",
    "/mcp/v1",
    "/",
];

/// Header names (past the end: a custom name).
pub const HEADER_NAMES: &[&str] = &[
    "host",
    "origin",
    "content-type",
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "mcp-param-region",
    "mcp-param-id",
    "authorization",
    "ufo-rpc-token",
    "content-length",
    "transfer-encoding",
    "last-event-id",
    "x-forwarded-proto",
    "access-control-request-method",
    "access-control-request-headers",
    "cookie",
    "connection",
    "expect",
];

/// Realistic header values, right and wrong.
pub const HEADER_VALUES: &[&[u8]] = &[
    b"localhost",
    b"127.0.0.1:8080",
    b"[::1]:3000",
    b"localhost:99999",
    b"evil.example",
    b"http://localhost:8080",
    b"http://evil.example",
    b"null",
    b"application/json",
    b"application/json; charset=utf-8",
    b"text/plain",
    b"application/vnd.api+json",
    b"text/event-stream",
    b"application/json, text/event-stream",
    b"*/*",
    b"application/json;q=0, text/event-stream;q=0",
    b"text/*;q=0.5",
    b"2026-07-28",
    b"2025-11-25",
    b"2025-06-18",
    b"2025-03-26",
    b"2024-11-05",
    b"2099-01-01",
    b"tools/call",
    b"tools/list",
    b"initialize",
    b"Catalog.get",
    b"Catalog.stats",
    b"Bearer secret",
    b"Bearer ",
    b"Basic dXNlcjpwYXNz",
    b"0",
    b"1",
    b"18446744073709551616",
    b"-1",
    b"4194305",
    b"chunked",
    b"gzip, chunked",
    b"https",
    b"=?base64?SGVsbG8=?=",
    b"=?base64?not base64?=",
    b"=?base64??=",
    b"\t",
    b"caf\xc3\xa9",
    b"\x80\xff",
    b"100-continue",
    b"POST",
];

/// The specials that follow [`HEADER_VALUES`] in a value's kind byte.
const MIRROR_METHOD: usize = HEADER_VALUES.len();
const MIRROR_NAME: usize = MIRROR_METHOD + 1;
const MIRROR_VERSION: usize = MIRROR_METHOD + 2;
const SESSION: usize = MIRROR_METHOD + 3;
const BASE64: usize = MIRROR_METHOD + 4;
const RAW: usize = MIRROR_METHOD + 5;
const EMPTY: usize = MIRROR_METHOD + 6;
const VALUE_KINDS: usize = EMPTY + 1;

/// A header value as the script says it; resolved against the body and
/// the session when the request is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Bytes as they are.
    Bytes(Vec<u8>),
    /// The body's `method`.
    MirrorMethod,
    /// The body's `params.name`.
    MirrorName,
    /// The body's `params._meta` protocol version.
    MirrorVersion,
    /// The session id the server gave last (empty without one).
    Session,
    /// The `=?base64?...?=` form of a value.
    Base64(Box<Value>),
}

/// What to do with a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderOp {
    /// Add a value (a duplicate if the name is there).
    Append(String, Value),
    /// Replace every value.
    Insert(String, Value),
    /// Remove the header (a standard one, say).
    Remove(String),
}

/// How the body reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// In one piece.
    Whole,
    /// In chunks of this many bytes.
    Chunks(usize),
}

/// One request of a script.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The HTTP method.
    pub verb: &'static str,
    /// The path (and query).
    pub path: String,
    /// The flags byte (see the module documentation).
    pub flags: u8,
    /// Header operations, after the standard headers.
    pub headers: Vec<HeaderOp>,
    /// The body.
    pub body: Vec<u8>,
    /// How the body is sent.
    pub delivery: Delivery,
}

impl Exchange {
    /// Standard headers wanted.
    pub fn standard(&self) -> bool {
        self.flags & 1 != 0
    }
    /// An absolute-form target: `Some(authority)`.
    pub fn authority(&self) -> Option<&'static str> {
        match (self.flags & 2 != 0, self.flags & 16 != 0) {
            (_, true) => Some("evil.example"),
            (true, false) => Some("localhost:8080"),
            _ => None,
        }
    }
    /// The body fails after its bytes.
    pub fn failing(&self) -> bool {
        self.flags & 8 != 0
    }
    /// The session header is left out of the standard headers.
    pub fn sessionless(&self) -> bool {
        self.flags & 32 != 0
    }
}

/// A decoded script.
#[derive(Debug, Clone)]
pub struct Script {
    /// `initialize` first at this revision.
    pub handshake: Option<&'static str>,
    /// The requests.
    pub exchanges: Vec<Exchange>,
}

/// Handshake revisions a script may open a session at.
pub const HANDSHAKE_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// Limits of a decoded script.
const MAX_EXCHANGES: usize = 4;
const MAX_HEADERS: u8 = 16;
/// The largest generated body: just over the endpoints' 4 MiB limit.
const MAX_LARGE_BODY: usize = 4 * 1024 * 1024 + 64 * 1024;

impl Script {
    /// Decodes `data` (never fails).
    pub fn decode(data: &[u8], focus: Focus) -> Script {
        let mut u = Unstructured::new(data);
        let handshake = match byte(&mut u) {
            n @ 1..=4 => Some(HANDSHAKE_VERSIONS[usize::from(n) - 1]),
            _ => None,
        };
        let mut exchanges = vec![exchange(&mut u, focus)];
        while !u.is_empty() && exchanges.len() < MAX_EXCHANGES {
            exchanges.push(exchange(&mut u, focus));
        }
        Script { handshake, exchanges }
    }
}

fn byte(u: &mut Unstructured<'_>) -> u8 {
    u8::arbitrary(u).unwrap_or(0)
}

fn take<'a>(u: &mut Unstructured<'a>, n: usize) -> &'a [u8] {
    let n = n.min(u.len());
    u.bytes(n).unwrap_or_default()
}

fn exchange(u: &mut Unstructured<'_>, focus: Focus) -> Exchange {
    let verb = VERBS[usize::from(byte(u)) % VERBS.len()];
    let targets = match focus {
        Focus::Mcp => MCP_TARGETS,
        Focus::Rpc => RPC_TARGETS,
    };
    let index = usize::from(byte(u)) % (targets.len() + 1);
    let path = match targets.get(index) {
        Some(target) => (*target).to_owned(),
        None => {
            let len = usize::from(byte(u));
            custom_path(take(u, len))
        }
    };
    let flags = byte(u);
    let delivery = if flags & 4 != 0 { Delivery::Chunks(usize::from(byte(u)).max(1) * 16) } else { Delivery::Whole };
    let count = byte(u) % (MAX_HEADERS + 1);
    let headers = (0..count).filter_map(|_| header(u)).collect();
    let body = body(u);
    Exchange { verb, path, flags, headers, body, delivery }
}

/// A path from arbitrary bytes: kept where it is a valid request target,
/// percent-encoded otherwise.
fn custom_path(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut path = if text.starts_with('/') { text.into_owned() } else { format!("/{text}") };
    if http::uri::PathAndQuery::try_from(path.as_str()).is_err() {
        path = path
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'/' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
    }
    path
}

fn header(u: &mut Unstructured<'_>) -> Option<HeaderOp> {
    let op = byte(u);
    let index = usize::from(op & 31);
    let name = match HEADER_NAMES.get(index) {
        Some(name) => (*name).to_owned(),
        None => {
            let len = usize::from(byte(u));
            let raw = take(u, len).to_ascii_lowercase();
            http::HeaderName::from_bytes(&raw).ok()?.as_str().to_owned()
        }
    };
    match (op >> 5) & 3 {
        2 => Some(HeaderOp::Remove(name)),
        1 => Some(HeaderOp::Insert(name, value(u, 0))),
        _ => Some(HeaderOp::Append(name, value(u, 0))),
    }
}

/// A value; the base64 sentinel nests at most twice (each level grows the
/// value by a third).
fn value(u: &mut Unstructured<'_>, depth: usize) -> Value {
    let kind = usize::from(byte(u)) % VALUE_KINDS;
    match kind {
        MIRROR_METHOD => Value::MirrorMethod,
        MIRROR_NAME => Value::MirrorName,
        MIRROR_VERSION => Value::MirrorVersion,
        SESSION => Value::Session,
        BASE64 if depth < 2 => Value::Base64(Box::new(value(u, depth + 1))),
        BASE64 => Value::Bytes(Vec::new()),
        RAW => {
            let len = usize::from(byte(u));
            Value::Bytes(take(u, len).to_vec())
        }
        EMPTY => Value::Bytes(Vec::new()),
        known => Value::Bytes(HEADER_VALUES[known].to_vec()),
    }
}

fn u16le(u: &mut Unstructured<'_>) -> u16 {
    u16::from_le_bytes([byte(u), byte(u)])
}

fn body(u: &mut Unstructured<'_>) -> Vec<u8> {
    match byte(u) % 16 {
        0 | 8 => {
            let len = u16le(u);
            let len = if len == u16::MAX { u.len() } else { usize::from(len) };
            take(u, len).to_vec()
        }
        1 | 9 | 10 | 15 => generate::Message::arbitrary(u).map(|m| m.text().into_bytes()).unwrap_or_default(),
        2 | 11 => {
            let messages: Vec<generate::Message> = Vec::arbitrary(u).unwrap_or_default();
            let texts: Vec<String> = messages.iter().map(generate::Message::text).collect();
            format!("[{}]", texts.join(",")).into_bytes()
        }
        3 | 14 => generate::Json::arbitrary(u).map(|j| j.text().into_bytes()).unwrap_or_default(),
        4 => deep(usize::from(u16le(u)), byte(u)).into_bytes(),
        5 | 12 | 13 => {
            let mut text = generate::Message::arbitrary(u).map(|m| m.text().into_bytes()).unwrap_or_default();
            let (op, at, b) = (byte(u), usize::from(u16le(u)), byte(u));
            mutilate(&mut text, op, at, b);
            text
        }
        6 => {
            let size = (usize::from(byte(u)) * 64 * 1024).min(MAX_LARGE_BODY);
            let mut text = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":""#.to_vec();
            text.resize(size.max(text.len()), b'a');
            text.extend_from_slice(b"\"}}");
            text
        }
        7 => Vec::new(),
        _ => unreachable!("a kind is below 16"),
    }
}

/// Deep nesting in a request: `style` picks where (params, id, the whole
/// body, arguments of a tool call, a batch) and of what (arrays, objects).
fn deep(depth: usize, style: u8) -> String {
    let objects = style & 1 != 0;
    let mut nest = String::new();
    generate::write_deep(&mut nest, depth, objects);
    match (style >> 1) % 5 {
        0 => format!(r#"{{"jsonrpc":"2.0","id":1,"method":"Catalog.search","params":[{nest}]}}"#),
        1 => format!(r#"{{"jsonrpc":"2.0","id":{nest},"method":"ping"}}"#),
        2 => nest,
        3 => format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"Catalog.get","arguments":{{"id":{nest}}}}}}}"#
        ),
        _ => format!("[{nest}]"),
    }
}

fn mutilate(text: &mut Vec<u8>, op: u8, at: usize, b: u8) {
    if text.is_empty() {
        return;
    }
    let at = at % text.len();
    match op % 4 {
        0 => text.truncate(at),
        1 => text.insert(at, b),
        2 => text[at] = b,
        _ => {
            text.remove(at);
        }
    }
}

/// Writes scripts in the layout [`Script::decode`] reads: for the seeds.
#[derive(Debug, Default)]
pub struct Encoder {
    bytes: Vec<u8>,
}

/// Flag: the standard headers.
pub const STANDARD: u8 = 1;
/// Flag: an absolute-form target naming localhost.
pub const ABSOLUTE: u8 = 2;
/// Flag: chunked delivery (the encoder writes the chunk size byte).
pub const CHUNKED: u8 = 4;
/// Flag: the body fails after its bytes.
pub const FAILING: u8 = 8;
/// Flag: an absolute-form target naming another host.
pub const FOREIGN: u8 = 16;
/// Flag: no session header.
pub const SESSIONLESS: u8 = 32;

impl Encoder {
    /// A script that opens a session at `version` first, if given.
    pub fn new(handshake: Option<&str>) -> Self {
        let first = handshake.and_then(|v| HANDSHAKE_VERSIONS.iter().position(|h| *h == v)).map_or(0, |i| i as u8 + 1);
        Encoder { bytes: vec![first] }
    }

    /// Adds a request: `verb` and `target` name entries of [`VERBS`] and the
    /// focus's targets; `headers` are (op, name, value) triples with names
    /// of [`HEADER_NAMES`] and values of [`HEADER_VALUES`] or specials
    /// (`"@method"`, `"@name"`, `"@version"`, `"@session"`, `"@raw:..."`);
    /// `body` is sent as a literal.
    pub fn request(
        mut self,
        verb: &str,
        target: &str,
        targets: &[&str],
        flags: u8,
        headers: &[(u8, &str, &str)],
        body: impl AsRef<[u8]>,
    ) -> Self {
        let body = body.as_ref();
        let verb = VERBS.iter().position(|v| *v == verb).expect("a known verb");
        self.bytes.push(verb as u8);
        match targets.iter().position(|t| *t == target) {
            Some(i) => self.bytes.push(i as u8),
            None => {
                self.bytes.push(targets.len() as u8);
                self.bytes.push(target.len() as u8);
                self.bytes.extend_from_slice(target.as_bytes());
            }
        }
        self.bytes.push(flags);
        if flags & CHUNKED != 0 {
            self.bytes.push(1); // 16-byte chunks
        }
        self.bytes.push(headers.len() as u8);
        for (op, name, value) in headers {
            let index = HEADER_NAMES
                .iter()
                .position(|n| n == name)
                .unwrap_or_else(|| panic!("{name:?} is not in HEADER_NAMES"));
            self.bytes.push(index as u8 | (op << 5));
            if *op != 2 {
                self.value(value);
            }
        }
        self.bytes.push(0); // a literal body
        self.bytes.extend_from_slice(&(body.len() as u16).to_le_bytes());
        self.bytes.extend_from_slice(body);
        self
    }

    /// Adds a request with a generated body of `kind` (1 to 7) followed by
    /// `rest` (the bytes its generator reads).
    pub fn generated(mut self, target_index: u8, flags: u8, kind: u8, rest: &[u8]) -> Self {
        self.bytes.extend_from_slice(&[0, target_index, flags, 0, kind]);
        self.bytes.extend_from_slice(rest);
        self
    }

    fn value(&mut self, value: &str) {
        let special = match value {
            "@method" => Some(MIRROR_METHOD),
            "@name" => Some(MIRROR_NAME),
            "@version" => Some(MIRROR_VERSION),
            "@session" => Some(SESSION),
            "" => Some(EMPTY),
            _ => None,
        };
        if let Some(kind) = special {
            self.bytes.push(kind as u8);
        } else if let Some(raw) = value.strip_prefix("@raw:") {
            self.bytes.push(RAW as u8);
            self.bytes.push(raw.len() as u8);
            self.bytes.extend_from_slice(raw.as_bytes());
        } else if let Some(inner) = value.strip_prefix("@base64:") {
            self.bytes.push(BASE64 as u8);
            self.value(inner);
        } else {
            let index = HEADER_VALUES
                .iter()
                .position(|v| *v == value.as_bytes())
                .unwrap_or_else(|| panic!("{value:?} is not in HEADER_VALUES"));
            self.bytes.push(index as u8);
        }
    }

    /// The bytes.
    pub fn finish(self) -> Vec<u8> {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_what_the_encoder_writes() {
        let bytes = Encoder::new(Some("2025-03-26"))
            .request(
                "POST",
                "/mcp/v2",
                MCP_TARGETS,
                STANDARD | CHUNKED,
                &[(0, "accept", "*/*"), (2, "host", ""), (1, "mcp-name", "@base64:@name")],
                "{}",
            )
            .request("GET", "/elsewhere", MCP_TARGETS, 0, &[(0, "origin", "@raw:x")], "")
            .finish();
        let script = Script::decode(&bytes, Focus::Mcp);
        assert_eq!(script.handshake, Some("2025-03-26"));
        let [first, second] = &script.exchanges[..] else { panic!("two exchanges: {script:?}") };
        assert_eq!((first.verb, first.path.as_str(), first.delivery), ("POST", "/mcp/v2", Delivery::Chunks(16)));
        assert_eq!(
            first.headers,
            [
                HeaderOp::Append("accept".into(), Value::Bytes(b"*/*".to_vec())),
                HeaderOp::Remove("host".into()),
                HeaderOp::Insert("mcp-name".into(), Value::Base64(Box::new(Value::MirrorName))),
            ]
        );
        assert_eq!(first.body, b"{}");
        assert_eq!((second.verb, second.path.as_str()), ("GET", "/elsewhere"));
        assert_eq!(second.headers, [HeaderOp::Append("origin".into(), Value::Bytes(b"x".to_vec()))]);
    }

    #[test]
    fn any_bytes_are_a_script() {
        assert_eq!(Script::decode(&[], Focus::Rpc).exchanges.len(), 1);
        assert_eq!(custom_path(b"a b\"<>"), "/a%20b%22%3C%3E");
        assert_eq!(deep(2, 0), r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.search","params":[[[1]]]}"#);
    }
}
