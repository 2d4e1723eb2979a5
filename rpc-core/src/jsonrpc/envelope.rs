//! Parsing JSON-RPC 2.0 messages in one pass over the body.
//!
//! A single message is deserialised straight from the body into an
//! envelope of borrowed [`RawValue`]s; each member is then checked by hand, so
//! an invalid member gives a specific `-32600` message and, where the `id`
//! is readable, a response carrying that `id`. `params` stays unparsed until
//! the method that consumes it decides its shape.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::RpcError;
use crate::executor::Params;
use crate::jsonrpc::limits::JsonLimits;

/// A body: one message or a batch.
#[derive(Debug)]
pub enum Body<'a> {
    /// A single message (any JSON value other than an array).
    Single(Result<Message<'a>, Invalid<'a>>),
    /// A batch (a JSON array), possibly empty; parse each item with [`parse_message`].
    Batch(Vec<&'a RawValue>),
}

/// Parses a body within the default [`JsonLimits`]; invalid JSON is a
/// `-32700` error, a body beyond the limits `-32600`. `accept_responses`:
/// see [`parse_message`].
pub fn parse_body(bytes: &[u8], accept_responses: bool) -> Result<Body<'_>, RpcError> {
    parse_body_with(bytes, accept_responses, &JsonLimits::default())
}

/// Parses a body within `limits` (nesting depth, number of values, batch
/// length: checked in one pass before anything is parsed, see
/// [`JsonLimits`]); invalid JSON (invalid UTF-8 anywhere included) is a
/// `-32700` error, a body beyond the limits `-32600`.
pub fn parse_body_with<'a>(bytes: &'a [u8], accept_responses: bool, limits: &JsonLimits) -> Result<Body<'a>, RpcError> {
    // JSON is UTF-8 (RFC 8259); serde checks only the strings it reads, not
    // those of members it skips. Checked once here, so serde reads a `str`
    // and does not check again.
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            return Err(RpcError::parse_error(format_args!(
                "the body is not valid UTF-8 (at byte {})",
                e.valid_up_to()
            )));
        }
    };
    if let Err(exceeded) = limits.check(bytes) {
        return Err(RpcError::invalid_request(format!("Invalid Request: {exceeded}")));
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        let items: Vec<&RawValue> = serde_json::from_str(text).map_err(RpcError::parse_error)?;
        return Ok(Body::Batch(items));
    }
    if first != Some(&b'{') {
        // Not an object: tell invalid JSON (-32700) from a valid non-object (-32600).
        let _: &RawValue = serde_json::from_str(text).map_err(RpcError::parse_error)?;
        return Ok(Body::Single(Err(not_an_object())));
    }
    match serde_json::from_str::<Envelope<'_>>(text) {
        Ok(envelope) => Ok(Body::Single(check(envelope, accept_responses))),
        Err(e) if e.is_data() => Ok(Body::Single(Err(malformed(&e)))),
        Err(e) => Err(RpcError::parse_error(e)),
    }
}

/// A valid JSON-RPC request or notification.
#[derive(Debug)]
pub struct Request<'a> {
    /// The `id`; `None` for a notification. A JSON `null` id is `Some("null")`.
    pub id: Option<&'a RawValue>,
    /// The method name.
    pub method: Cow<'a, str>,
    /// The parameters, unparsed: an object, an array, or absent (`null` counts as absent).
    pub params: Option<&'a RawValue>,
}

impl<'a> Request<'a> {
    /// The parameters as the executor takes them.
    pub fn params(&self) -> Result<Params, RpcError> {
        match self.params {
            None => Ok(Params::None),
            Some(p) if p.get().starts_with('[') => parse_params::<Vec<Value>>(p).map(Params::Positional),
            Some(p) => parse_params::<Map<String, Value>>(p).map(Params::Named),
        }
    }

    /// The parameters deserialised into `T`, which may borrow from the body
    /// (`None`: absent); a mismatch is `-32602`.
    pub fn params_as<T: Deserialize<'a>>(&self) -> Result<Option<T>, RpcError> {
        self.params.map(parse_params).transpose()
    }
}

fn parse_params<'a, T: Deserialize<'a>>(raw: &'a RawValue) -> Result<T, RpcError> {
    serde_json::from_str(raw.get()).map_err(|e| RpcError::invalid_params(format!("Invalid params: {e}")))
}

/// An invalid message: the error and the id to answer with, if readable.
#[derive(Debug)]
pub struct Invalid<'a> {
    /// The id to answer with (`null` when unreadable).
    pub id: Option<&'a RawValue>,
    /// The error (`-32600`).
    pub error: RpcError,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// A message a peer sent: a request/notification, or a response to one of ours.
#[derive(Debug)]
pub enum Message<'a> {
    /// A request (with `id`) or a notification (without).
    Request(Request<'a>),
    /// A response (`result` or `error` with an `id`).
    Response {
        /// The id of the request this answers.
        id: &'a RawValue,
        /// Its `result`, if it succeeded.
        result: Option<&'a RawValue>,
        /// Its `error`, if it failed.
        error: Option<&'a RawValue>,
    },
}

/// Parses and checks one message of a batch. Responses are recognised only
/// when `accept_responses` is set (MCP clients may send them; `/rpc` clients not).
pub fn parse_message(raw: &RawValue, accept_responses: bool) -> Result<Message<'_>, Invalid<'_>> {
    if !raw.get().starts_with('{') {
        return Err(not_an_object());
    }
    match serde_json::from_str::<Envelope<'_>>(raw.get()) {
        Ok(envelope) => check(envelope, accept_responses),
        Err(e) => Err(malformed(&e)),
    }
}

fn not_an_object() -> Invalid<'static> {
    Invalid { id: None, error: RpcError::invalid_request("a request must be a JSON object") }
}

fn malformed(e: &serde_json::Error) -> Invalid<'static> {
    Invalid { id: None, error: RpcError::invalid_request(Cow::Owned(format!("malformed request object: {e}"))) }
}

fn check(env: Envelope<'_>, accept_responses: bool) -> Result<Message<'_>, Invalid<'_>> {
    let invalid = |id, reason: &'static str| Invalid { id, error: RpcError::invalid_request(reason) };
    let id = match env.id {
        Some(id) if is_valid_id(id) => Some(id),
        Some(_) => return Err(invalid(None, "`id` must be a string, a number or null")),
        None => None,
    };
    if !env.jsonrpc.is_some_and(is_version_2) {
        return Err(invalid(id, "`jsonrpc` must be exactly \"2.0\""));
    }
    if accept_responses
        && env.method.is_none()
        && (env.result.is_some() || env.error.is_some())
        && let Some(id) = id
    {
        return Ok(Message::Response { id, result: env.result, error: env.error });
    }
    let Some(method_raw) = env.method else {
        return Err(invalid(id, "`method` is missing"));
    };
    let method: Cow<'_, str> = match serde_json::from_str(method_raw.get()) {
        Ok(m) => m,
        Err(_) => return Err(invalid(id, "`method` must be a string")),
    };
    let params = match env.params {
        Some(p) if p.get() == "null" => None,
        Some(p) if !(p.get().starts_with('{') || p.get().starts_with('[')) => {
            return Err(invalid(id, "`params` must be an object or an array"));
        }
        other => other,
    };
    Ok(Message::Request(Request { id, method, params }))
}

/// `"2.0"`, also when written with escapes (`"2\u002e0"`).
fn is_version_2(raw: &RawValue) -> bool {
    raw.get() == "\"2.0\"" || serde_json::from_str::<Cow<'_, str>>(raw.get()).is_ok_and(|v| v == "2.0")
}

fn is_valid_id(id: &RawValue) -> bool {
    let s = id.get();
    s == "null" || s.starts_with('"') || s.starts_with('-') || s.as_bytes().first().is_some_and(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(json: &str) -> Result<(Option<String>, String), (Option<String>, i32)> {
        let raw: &RawValue = serde_json::from_str(json).unwrap();
        match parse_message(raw, false) {
            Ok(Message::Request(r)) => Ok((r.id.map(|i| i.get().to_owned()), r.method.into_owned())),
            Ok(Message::Response { .. }) => panic!("unexpected response"),
            Err(i) => Err((i.id.map(|i| i.get().to_owned()), i.error.code())),
        }
    }

    #[test]
    fn distinguishes_null_id_from_notification() {
        assert_eq!(request(r#"{"jsonrpc":"2.0","method":"a","id":null}"#), Ok((Some("null".into()), "a".into())));
        assert_eq!(request(r#"{"jsonrpc":"2.0","method":"a"}"#), Ok((None, "a".into())));
    }

    #[test]
    fn rejects_invalid_members() {
        assert_eq!(request(r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#), Err((None, -32600)));
        assert_eq!(request(r#"{"jsonrpc":"2.0","method":"a","params":"bar","id":3}"#), Err((Some("3".into()), -32600)));
        assert_eq!(request(r#"{"jsonrpc":"2.0","method":"a","params":{},"params":{}}"#), Err((None, -32600)));
        assert_eq!(request(r#"{"jsonrpc":"1.0","method":"a","id":"x"}"#), Err((Some("\"x\"".into()), -32600)));
        assert_eq!(request(r#"{"jsonrpc":"2.0","method":"a","id":{}}"#), Err((None, -32600)));
        assert_eq!(request("1"), Err((None, -32600)));
    }

    #[test]
    fn parse_errors() {
        let code = |body: &[u8]| match parse_body(body, false) {
            Err(e) => e.code(),
            Ok(Body::Single(Err(invalid))) => invalid.error.code(),
            Ok(_) => 0,
        };
        assert_eq!(code(br#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#), -32700);
        assert_eq!(code(br#"{"jsonrpc":"2.0","method":"a"} trailing"#), -32700);
        assert_eq!(code(b" 1 "), -32600);
        assert_eq!(code(b"1 x"), -32700);
        assert_eq!(code(b""), -32700);
        assert_eq!(code(br#"{"jsonrpc":"2.0","method":"a","params":{},"params":{}}"#), -32600);
        assert_eq!(code(br#"{"jsonrpc":"2.0","method":"a","id":1}"#), 0);
        assert!(matches!(parse_body(b" []", false), Ok(Body::Batch(v)) if v.is_empty()));
        assert_eq!(code(b"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"x\":\"\xff\",\"id\":1}"), -32700, "UTF-8 everywhere");
    }

    #[test]
    fn params_stay_raw_until_asked() {
        let Ok(Body::Single(Ok(Message::Request(r)))) =
            parse_body(br#"{"jsonrpc":"2.0","method":"a","params":{"x":[1,2]},"id":1}"#, false)
        else {
            panic!("a valid request")
        };
        assert_eq!(r.params.map(RawValue::get), Some(r#"{"x":[1,2]}"#));
        assert!(matches!(r.params(), Ok(Params::Named(m)) if m["x"] == serde_json::json!([1, 2])));
        #[derive(Deserialize)]
        struct X {
            x: Vec<u8>,
        }
        assert_eq!(r.params_as::<X>().unwrap().unwrap().x, [1, 2]);
        assert_eq!(r.params_as::<Vec<u8>>().unwrap_err().code(), -32602);
    }
}
