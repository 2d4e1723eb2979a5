//! Parsing JSON-RPC 2.0 messages without copying `params` more than once.
//!
//! The body is parsed into borrowed [`RawValue`]s first; each member is then
//! checked by hand, so an invalid member gives a specific `-32600` message
//! and, where the `id` is readable, a response carrying that `id`.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::RpcError;
use crate::executor::Params;

/// A body: one message or a batch.
#[derive(Debug)]
pub enum Body<'a> {
    /// A single message (any JSON value other than an array).
    Single(&'a RawValue),
    /// A batch (a JSON array), possibly empty.
    Batch(Vec<&'a RawValue>),
}

/// Parses a body; invalid JSON is a `-32700` error.
pub fn parse_body(bytes: &[u8]) -> Result<Body<'_>, RpcError> {
    let raw: &RawValue = serde_json::from_slice(bytes).map_err(RpcError::parse_error)?;
    if raw.get().starts_with('[') {
        let items: Vec<&RawValue> = serde_json::from_str(raw.get()).map_err(RpcError::parse_error)?;
        Ok(Body::Batch(items))
    } else {
        Ok(Body::Single(raw))
    }
}

/// A valid JSON-RPC request or notification.
#[derive(Debug)]
pub struct Request<'a> {
    /// The `id`; `None` for a notification. A JSON `null` id is `Some("null")`.
    pub id: Option<&'a RawValue>,
    /// The method name.
    pub method: Cow<'a, str>,
    /// The parameters.
    pub params: Params,
}

/// An invalid message: the error and the id to answer with, if readable.
#[derive(Debug)]
pub struct Invalid<'a> {
    /// The id to answer with (`null` when unreadable).
    pub id: Option<&'a RawValue>,
    /// The error (`-32600`, or `-32700` for unparsable `params`).
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
    },
}

/// Parses and checks one message. Responses are recognised only when
/// `accept_responses` is set (MCP clients may send them; `/rpc` clients not).
pub fn parse_message(raw: &RawValue, accept_responses: bool) -> Result<Message<'_>, Invalid<'_>> {
    let invalid = |id, reason: &'static str| Invalid { id, error: RpcError::invalid_request(reason) };
    if !raw.get().starts_with('{') {
        return Err(invalid(None, "a request must be a JSON object"));
    }
    let env: Envelope<'_> = match serde_json::from_str(raw.get()) {
        Ok(env) => env,
        Err(e) => {
            return Err(Invalid {
                id: None,
                error: RpcError::invalid_request(Cow::Owned(format!("malformed request object: {e}"))),
            });
        }
    };
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
        return Ok(Message::Response { id });
    }
    let Some(method_raw) = env.method else {
        return Err(invalid(id, "`method` is missing"));
    };
    let method: Cow<'_, str> = match serde_json::from_str(method_raw.get()) {
        Ok(m) => m,
        Err(_) => return Err(invalid(id, "`method` must be a string")),
    };
    let params = match env.params {
        None => Params::None,
        Some(p) if p.get() == "null" => Params::None,
        Some(p) if p.get().starts_with('{') => match serde_json::from_str::<Map<String, Value>>(p.get()) {
            Ok(map) => Params::Named(map),
            Err(e) => {
                return Err(Invalid { id, error: RpcError::parse_error(e) });
            }
        },
        Some(p) if p.get().starts_with('[') => match serde_json::from_str::<Vec<Value>>(p.get()) {
            Ok(list) => Params::Positional(list),
            Err(e) => {
                return Err(Invalid { id, error: RpcError::parse_error(e) });
            }
        },
        Some(_) => return Err(invalid(id, "`params` must be an object or an array")),
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
        assert_eq!(request(r#"{"jsonrpc":"1.0","method":"a","id":"x"}"#), Err((Some("\"x\"".into()), -32600)));
        assert_eq!(request(r#"{"jsonrpc":"2.0","method":"a","id":{}}"#), Err((None, -32600)));
        assert_eq!(request("1"), Err((None, -32600)));
    }

    #[test]
    fn parse_errors() {
        assert_eq!(
            parse_body(br#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#).unwrap_err().code(),
            -32700
        );
        assert!(matches!(parse_body(b"[]"), Ok(Body::Batch(v)) if v.is_empty()));
    }
}
