//! The MCP headers of Streamable HTTP: the session and protocol version of
//! the handshake era, and the 2026-07-28 headers that mirror the body
//! (SEP-2243): `Mcp-Method`, `Mcp-Name`, `Mcp-Param-{Name}`, checked
//! against the body by `Mirrored` at the server's points of the check
//! order; values that are not plain ASCII travel as `=?base64?...?=`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use std::borrow::Cow;

use http::{HeaderMap, HeaderName, HeaderValue};
use rpc::server::request_headers::{Found, RequestHeaders};
use serde_json::{Map, Value};

use crate::call::ProtocolError;
use crate::protocol::code;
use crate::server::HeaderMirror;
use crate::tools::{MirroredParam, Tool};

/// HTTP header carrying the session id (handshake era).
pub const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
/// HTTP header carrying the protocol version.
pub const PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// HTTP header mirroring the JSON-RPC method (2026-07-28).
pub const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
/// HTTP header mirroring `params.name` / `params.uri` (2026-07-28).
pub const NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");
/// Prefix of the headers mirroring `x-mcp-header` parameters (2026-07-28).
pub const PARAM_HEADER_PREFIX: &str = "mcp-param-";

/// The headers of one request the endpoint reads, found in one pass over
/// them: the MCP headers and those every endpoint reads (`Host`, `Origin`,
/// `Content-Type`, `Content-Length`, `Accept`, `Accept-Language`). A
/// lookup by name hashes the name; a 2026-07-28 request's headers were
/// looked up fourteen times.
#[derive(Default)]
pub(crate) struct McpHeaders<'h> {
    /// The headers every endpoint reads.
    pub common: RequestHeaders<'h>,
    /// `Mcp-Session-Id`.
    pub session: Found<'h>,
    /// `MCP-Protocol-Version`.
    pub protocol: Found<'h>,
    /// `Mcp-Method`.
    pub method: Found<'h>,
    /// `Mcp-Name`.
    pub name: Found<'h>,
}

/// How a mirrored header's first value compares with the body's text.
#[derive(Debug, PartialEq, Eq)]
enum Compared {
    /// No such header.
    Absent,
    /// The value, decoded, is the text.
    Same,
    /// It is another text.
    Different,
    /// The value is not visible ASCII, or a malformed sentinel.
    Malformed,
}

/// Compares a found header's first value, decoded ([`decode_value`]),
/// with `expected`.
fn compare(found: &Found<'_>, expected: &str) -> Compared {
    let Some(value) = found.first else { return Compared::Absent };
    let raw = value.as_bytes();
    // What clients send: the plain value, equal byte for byte. A header
    // value holds no control byte but tab, so ASCII is what `to_str`
    // accepts; a value that may be the sentinel is decoded below.
    if raw == expected.as_bytes() && raw.is_ascii() && !raw.starts_with(b"=?") {
        return Compared::Same;
    }
    match decode_value(value) {
        Some(text) if text == expected => Compared::Same,
        Some(_) => Compared::Different,
        None => Compared::Malformed,
    }
}

impl<'h> McpHeaders<'h> {
    /// Finds them in `headers` (every value of every header visited once).
    pub fn scan(headers: &'h HeaderMap) -> Self {
        let (mut session, mut protocol, mut method, mut name) = Default::default();
        let common = RequestHeaders::scan_with(headers, |header, value| {
            let header = header.as_str();
            // Most other headers are not MCP's: one comparison sets them aside.
            if !header.starts_with("mcp-") {
                return;
            }
            let slot: &mut Found<'h> = match header {
                "mcp-session-id" => &mut session,
                "mcp-protocol-version" => &mut protocol,
                "mcp-method" => &mut method,
                "mcp-name" => &mut name,
                _ => return,
            };
            slot.note(value);
        });
        McpHeaders { common, session, protocol, method, name }
    }
}

/// The mirrored headers of one request, checked against its body.
pub(crate) struct Mirrored<'h> {
    pub headers: &'h HeaderMap,
    /// The MCP headers among them.
    pub found: &'h McpHeaders<'h>,
}

fn mismatch(message: impl Into<Cow<'static, str>>) -> ProtocolError {
    ProtocolError::new(code::HEADER_MISMATCH, message)
}

impl HeaderMirror for Mirrored<'_> {
    fn method(&self, method: &str) -> Result<(), ProtocolError> {
        let found = self.found;
        let routing =
            [(&found.protocol, &PROTOCOL_VERSION_HEADER), (&found.method, &METHOD_HEADER), (&found.name, &NAME_HEADER)];
        if let Some((_, name)) = routing.into_iter().find(|(header, _)| header.more) {
            return Err(mismatch(format!("the {name} header appears more than once")));
        }
        match compare(&found.method, method) {
            Compared::Same => Ok(()),
            Compared::Different => Err(mismatch("the Mcp-Method header does not match the request's method")),
            Compared::Absent => Err(mismatch("the Mcp-Method header is required")),
            Compared::Malformed => Err(mismatch("the Mcp-Method header is malformed")),
        }
    }

    fn name(&self, name: &str) -> Result<(), ProtocolError> {
        match compare(&self.found.name, name) {
            Compared::Same => Ok(()),
            Compared::Different => Err(mismatch("the Mcp-Name header does not match the request's `name`")),
            Compared::Absent => Err(mismatch("the Mcp-Name header is required for this method")),
            Compared::Malformed => Err(mismatch("the Mcp-Name header is malformed")),
        }
    }

    fn version(&self, version: Option<&str>) -> Result<(), ProtocolError> {
        let compared = match version {
            Some(version) => compare(&self.found.protocol, version),
            None if self.found.protocol.first.is_none() => Compared::Absent,
            None => Compared::Different,
        };
        match compared {
            Compared::Same => Ok(()),
            Compared::Absent => Err(mismatch("the MCP-Protocol-Version header is required")),
            Compared::Different | Compared::Malformed => {
                Err(mismatch("the MCP-Protocol-Version header does not match params._meta's protocolVersion"))
            }
        }
    }

    fn arguments(&self, tool: &Tool, arguments: &Map<String, Value>) -> Result<(), ProtocolError> {
        check_params(&tool.mirrored, arguments, self.headers).map_err(mismatch)
    }
}

/// Decodes a header value: the `=?base64?...?=` sentinel (canonical base64
/// of UTF-8) or the plain value; `None` for a malformed sentinel or bytes
/// that are not visible ASCII.
pub fn decode(raw: &[u8]) -> Option<Cow<'_, str>> {
    let visible = raw.iter().all(|&b| b == b'\t' || (0x20..0x7f).contains(&b));
    // Visible ASCII is UTF-8: this only turns the bytes into a `str`.
    decode_visible(std::str::from_utf8(raw).ok().filter(|_| visible)?)
}

/// [`decode`] of a header value, read by `HeaderValue::to_str`, which
/// accepts exactly visible ASCII and tab (a sentinel is ASCII too): one
/// pass over the bytes instead of two.
pub(crate) fn decode_value(value: &HeaderValue) -> Option<Cow<'_, str>> {
    decode_visible(value.to_str().ok()?)
}

/// A visible-ASCII value: the sentinel's text, or the value itself.
fn decode_visible(text: &str) -> Option<Cow<'_, str>> {
    let Some(payload) = text.strip_prefix("=?base64?").and_then(|t| t.strip_suffix("?=")) else {
        return Some(Cow::Borrowed(text));
    };
    let bytes = STANDARD.decode(payload).ok()?;
    if STANDARD.encode(&bytes) != payload {
        return None;
    }
    String::from_utf8(bytes).ok().map(Cow::Owned)
}

/// Encodes `text` as a header value: plain when it is visible ASCII without
/// surrounding whitespace, else the `=?base64?...?=` sentinel ([`decode`]
/// reverses it): what a client sends in a mirrored header.
pub fn encode(text: &str) -> Option<HeaderValue> {
    let plain = text.bytes().all(|b| (0x20..0x7f).contains(&b))
        && text.trim() == text
        && !(text.starts_with("=?base64?") && text.ends_with("?="));
    if plain {
        return HeaderValue::from_str(text).ok();
    }
    HeaderValue::from_str(&format!("=?base64?{}?=", STANDARD.encode(text))).ok()
}

/// How a body value is written into a header.
pub(crate) fn render(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Whether a decoded header value matches the argument; integers compare
/// numerically (`42` matches `42.0`).
fn matches(param: &MirroredParam, value: &Value, header: &str) -> bool {
    if param.integer
        && let Some(n) = value.as_f64()
        && let Ok(h) = header.parse::<f64>()
        && header.bytes().all(|b| b.is_ascii_digit() || b == b'-' || b == b'.')
    {
        return n == h;
    }
    render(value).is_some_and(|r| r == header)
}

/// Checks the `Mcp-Param-*` headers of a `tools/call` against its
/// arguments: present together and equal, or absent together (`null`
/// counts as absent). The error says which.
pub(crate) fn check_params(
    mirrored: &[MirroredParam],
    arguments: &Map<String, Value>,
    headers: &HeaderMap,
) -> Result<(), String> {
    for param in mirrored {
        let name = format!("{PARAM_HEADER_PREFIX}{}", param.header);
        let mut values = headers.get_all(name.as_str()).iter();
        let raw = values.next();
        if values.next().is_some() {
            return Err(format!("the Mcp-Param-{} header appears more than once", param.header));
        }
        let value = arguments.get(param.param).filter(|v| !v.is_null());
        match (raw, value) {
            (None, None) => {}
            (Some(_), None) => {
                return Err(format!(
                    "the Mcp-Param-{} header is present but the `{}` argument is absent",
                    param.header, param.param
                ));
            }
            (None, Some(_)) => {
                return Err(format!(
                    "the Mcp-Param-{} header is missing but the `{}` argument is present",
                    param.header, param.param
                ));
            }
            (Some(raw), Some(value)) => {
                let Some(decoded) = decode_value(raw) else {
                    return Err(format!("the Mcp-Param-{} header is malformed", param.header));
                };
                if !matches(param, value, &decoded) {
                    return Err(format!(
                        "the Mcp-Param-{} header does not match the `{}` argument",
                        param.header, param.param
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;
    use serde_json::json;

    use super::*;

    #[test]
    fn sentinel() {
        assert_eq!(decode(b"us-west1").as_deref(), Some("us-west1"));
        assert_eq!(decode(b"=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(), Some("Hello, 世界"));
        assert_eq!(decode(b"=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=").as_deref(), Some("=?base64?literal?="));
        assert_eq!(decode(b"=?base64?not base64?="), None);
        assert_eq!(decode(b"=?base64?SGVsbG9=?="), None, "non-canonical padding");
        assert_eq!(decode("caf\u{e9}".as_bytes()), None, "raw non-ASCII is not a header value");
        for raw in [&b"us-west1"[..], b"=?base64?SGVsbG8sIOS4lueVjA==?=", b"=?base64?SGVsbG9=?=", b"a\tb", b""] {
            let value = HeaderValue::from_bytes(raw).unwrap();
            assert_eq!(decode_value(&value), decode(raw), "{raw:?}");
        }
        let obs_text = HeaderValue::from_bytes("caf\u{e9}".as_bytes()).unwrap();
        assert_eq!(decode_value(&obs_text), None, "obs-text is not a mirrored value");
        for text in ["us-west1", "Hello, 世界", "=?base64?literal?=", " padded ", "line\nbreak", ""] {
            let encoded = encode(text).unwrap();
            assert_eq!(decode(encoded.as_bytes()).as_deref(), Some(text), "{text:?} round-trips");
        }
        assert_eq!(encode("us-west1").unwrap(), "us-west1", "plain ASCII stays plain");
    }

    #[test]
    fn one_scan_finds_each_mcp_header_its_first_value_and_repeats() {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        headers.insert("Mcp-Method", HeaderValue::from_static("tools/call"));
        headers.insert("mcp-session-id", HeaderValue::from_static("s1"));
        headers.append("mcp-session-id", HeaderValue::from_static("s2"));
        headers.insert("mcp-param-name", HeaderValue::from_static("x"));
        headers.insert("mcp-protocol-version", HeaderValue::from_bytes("caf\u{e9}".as_bytes()).unwrap());
        let found = McpHeaders::scan(&headers);
        assert_eq!((found.session.text(), found.session.more), (Some("s1"), true));
        assert_eq!((found.method.text(), found.method.more), (Some("tools/call"), false));
        assert_eq!((found.name.text(), found.name.more), (None, false), "mcp-param-name is not mcp-name");
        assert_eq!(found.protocol.text(), Some(""), "not visible ASCII, as HeaderMap::get and to_str give it");
        assert_eq!(compare(&found.protocol, "caf\u{e9}"), Compared::Malformed);
        for (name, found) in [("mcp-session-id", found.session), ("mcp-method", found.method)] {
            assert_eq!(found.first, headers.get(name), "{name}");
        }
        let mirror = Mirrored { headers: &headers, found: &found };
        assert!(mirror.method("tools/call").is_ok(), "a repeated session id is not a routing header");
        assert_eq!(mirror.version(Some("2026-07-28")).map_err(|e| e.code), Err(code::HEADER_MISMATCH));
        let mut headers = HeaderMap::new();
        headers.insert("mcp-method", HeaderValue::from_static("tools/call"));
        headers.append("mcp-name", HeaderValue::from_static("a"));
        headers.append("mcp-name", HeaderValue::from_static("a"));
        let found = McpHeaders::scan(&headers);
        let mirror = Mirrored { headers: &headers, found: &found };
        let error = mirror.method("tools/call").unwrap_err();
        assert_eq!(error.message, "the mcp-name header appears more than once");
    }

    #[test]
    fn the_byte_comparison_agrees_with_decoding() {
        let slow = |value: &HeaderValue, expected: &str| match decode_value(value) {
            Some(text) if text == expected => Compared::Same,
            Some(_) => Compared::Different,
            None => Compared::Malformed,
        };
        let raws: [&[u8]; 9] = [
            b"tools/call",
            b"Tools/Call",
            b"=?base64?dG9vbHMvY2FsbA==?=",
            b"=?base64?x?=",
            b"=?plain",
            b"a\tb",
            b"caf\xc3\xa9",
            b"",
            b"tools/call ",
        ];
        let texts = ["tools/call", "Tools/Call", "=?base64?x?=", "=?plain", "a\tb", "caf\u{e9}", "", "tools/call "];
        for raw in raws {
            let value = HeaderValue::from_bytes(raw).unwrap();
            let found = Found { first: Some(&value), more: false };
            for text in texts {
                assert_eq!(compare(&found, text), slow(&value, text), "{raw:?} against {text:?}");
            }
        }
        let sentinel = HeaderValue::from_static("=?base64?dG9vbHMvY2FsbA==?=");
        assert_eq!(compare(&Found { first: Some(&sentinel), more: false }, "tools/call"), Compared::Same);
        let literal = HeaderValue::from_static("=?base64?x?=");
        assert_eq!(
            compare(&Found { first: Some(&literal), more: false }, "=?base64?x?="),
            Compared::Malformed,
            "a sentinel is decoded, never taken literally"
        );
        assert_eq!(compare(&Found::default(), "tools/call"), Compared::Absent);
    }

    #[test]
    fn params() {
        let mirrored = [
            MirroredParam { param: "region", header: "Region", integer: false },
            MirroredParam { param: "shard", header: "Shard", integer: true },
        ];
        let args = |v: Value| v.as_object().cloned().unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("mcp-param-region", HeaderValue::from_static("eu"));
        headers.insert("mcp-param-shard", HeaderValue::from_static("42"));
        assert_eq!(check_params(&mirrored, &args(json!({"region": "eu", "shard": 42.0})), &headers), Ok(()));
        assert!(
            check_params(&mirrored, &args(json!({"region": "us", "shard": 42})), &headers)
                .unwrap_err()
                .contains("does not match the `region`")
        );
        assert!(
            check_params(&mirrored, &args(json!({"shard": 42})), &headers).unwrap_err().contains("argument is absent")
        );
        headers.remove("mcp-param-shard");
        assert!(
            check_params(&mirrored, &args(json!({"region": "eu", "shard": 1})), &headers)
                .unwrap_err()
                .contains("missing")
        );
        assert_eq!(check_params(&mirrored, &args(json!({"region": "eu", "shard": null})), &headers), Ok(()));
        headers.append("mcp-param-region", HeaderValue::from_static("eu"));
        assert!(
            check_params(&mirrored, &args(json!({"region": "eu"})), &headers).unwrap_err().contains("more than once")
        );
    }
}
