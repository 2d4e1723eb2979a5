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

use crate::call::read_params;
use crate::error::RpcError;
use crate::executor::Params;
use crate::jsonrpc::limits::JsonLimits;

/// A body: one message or a batch.
#[derive(Debug)]
pub enum Body<'a> {
    /// A single message (any JSON value other than an array).
    Single(Result<Message<'a>, Invalid<'a>>),
    /// A batch (a JSON array), possibly empty: each item read and checked
    /// in the same pass over the body, as [`parse_message`] would.
    Batch(Vec<Result<Message<'a>, Invalid<'a>>>),
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
        return match serde_json::from_str::<Vec<Item<'_>>>(text) {
            Ok(items) => Ok(Body::Batch(items.into_iter().map(|item| item.check(accept_responses)).collect())),
            // Valid JSON an item visitor cannot read (a number beyond f64's
            // range where a message should be): item by item, as before.
            Err(_) => {
                let items: Vec<&RawValue> = serde_json::from_str(text).map_err(RpcError::parse_error)?;
                Ok(Body::Batch(items.into_iter().map(|raw| parse_message(raw, accept_responses)).collect()))
            }
        };
    }
    if first != Some(&b'{') {
        // Not an object: tell invalid JSON (-32700) from a valid non-object (-32600).
        let _: &RawValue = serde_json::from_str(text).map_err(RpcError::parse_error)?;
        return Ok(Body::Single(Err(not_an_object())));
    }
    let item: Item<'_> = serde_json::from_str(text).map_err(RpcError::parse_error)?;
    Ok(Body::Single(item.check(accept_responses)))
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
            Some(p) if p.get().starts_with('[') => read_params::<Vec<Value>>(p).map(Params::Positional),
            Some(p) => read_params::<Map<String, Value>>(p).map(Params::Named),
        }
    }

    /// The parameters deserialised into `T`, which may borrow from the body
    /// (`None`: absent); a mismatch is `-32602`.
    pub fn params_as<T: Deserialize<'a>>(&self) -> Result<Option<T>, RpcError> {
        self.params.map(read_params).transpose()
    }
}

/// An invalid message: the error and the id to answer with, if readable.
#[derive(Debug)]
pub struct Invalid<'a> {
    /// The id to answer with (`null` when unreadable).
    pub id: Option<&'a RawValue>,
    /// The error (`-32600`).
    pub error: RpcError,
}

/// The members of a message object, unparsed (an absent member and a JSON
/// `null` are both `None`, except `id`, where `null` is a value).
#[derive(Default)]
struct Envelope<'a> {
    jsonrpc: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

/// One message as read from the body, before its members are checked: an
/// envelope, or why it is not one. Reading it never fails on the shape of
/// the message (only on invalid JSON), so a batch is read in one pass and
/// each of its items gets its own answer.
enum Item<'a> {
    Envelope(Envelope<'a>),
    NotAnObject,
    /// A member given twice.
    Duplicate(&'static str),
}

impl<'a> Item<'a> {
    fn check(self, accept_responses: bool) -> Result<Message<'a>, Invalid<'a>> {
        match self {
            Item::Envelope(envelope) => check(envelope, accept_responses),
            Item::NotAnObject => Err(not_an_object()),
            Item::Duplicate(name) => Err(Invalid {
                id: None,
                error: RpcError::invalid_request(Cow::Owned(format!(
                    "malformed request object: duplicate field `{name}`"
                ))),
            }),
        }
    }
}

/// The members an envelope reads; any other is skipped.
enum Member {
    Jsonrpc,
    Method,
    Params,
    Id,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = Member;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E>(self, name: &str) -> Result<Member, E> {
                Ok(match name {
                    "jsonrpc" => Member::Jsonrpc,
                    "method" => Member::Method,
                    "params" => Member::Params,
                    "id" => Member::Id,
                    "result" => Member::Result,
                    "error" => Member::Error,
                    _ => Member::Other,
                })
            }
        }
        d.deserialize_identifier(Name)
    }
}

impl<'de> Deserialize<'de> for Item<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ItemVisitor)
    }
}

struct ItemVisitor;

impl<'de> serde::de::Visitor<'de> for ItemVisitor {
    type Value = Item<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Item<'de>, A::Error> {
        let mut envelope = Envelope::default();
        // Members seen, by bit (a `null` member counts as given).
        let mut seen = 0u8;
        let mut duplicate = None;
        while let Some(member) = map.next_key::<Member>()? {
            let (bit, name, slot) = match member {
                Member::Jsonrpc => (1, "jsonrpc", &mut envelope.jsonrpc),
                Member::Method => (2, "method", &mut envelope.method),
                Member::Params => (4, "params", &mut envelope.params),
                Member::Id => (8, "id", &mut envelope.id),
                Member::Result => (16, "result", &mut envelope.result),
                Member::Error => (32, "error", &mut envelope.error),
                Member::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    continue;
                }
            };
            let value: &'de RawValue = map.next_value()?;
            if seen & bit != 0 {
                duplicate.get_or_insert(name);
            }
            seen |= bit;
            // `null` is absent, but for the `id` (a request with a null id).
            *slot = (value.get() != "null" || bit == 8).then_some(value);
        }
        Ok(duplicate.map_or(Item::Envelope(envelope), Item::Duplicate))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Item<'de>, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Item::NotAnObject)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Item<'de>, E> {
        Ok(Item::NotAnObject)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Item<'de>, E> {
        Ok(Item::NotAnObject)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Item<'de>, E> {
        Ok(Item::NotAnObject)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Item<'de>, E> {
        Ok(Item::NotAnObject)
    }

    fn visit_str<E>(self, _: &str) -> Result<Item<'de>, E> {
        Ok(Item::NotAnObject)
    }

    fn visit_unit<E>(self) -> Result<Item<'de>, E> {
        Ok(Item::NotAnObject)
    }
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

/// Parses and checks one message (as each item of a batch is). Responses
/// are recognised only when `accept_responses` is set (MCP clients may send
/// them; `/rpc` clients not).
pub fn parse_message(raw: &RawValue, accept_responses: bool) -> Result<Message<'_>, Invalid<'_>> {
    if !raw.get().starts_with('{') {
        return Err(not_an_object());
    }
    match serde_json::from_str::<Item<'_>>(raw.get()) {
        Ok(item) => item.check(accept_responses),
        // A `RawValue` is valid JSON: only a parser's own limit (nesting) is left.
        Err(e) => Err(Invalid { id: None, error: RpcError::invalid_request(format!("malformed request object: {e}")) }),
    }
}

fn not_an_object() -> Invalid<'static> {
    Invalid { id: None, error: RpcError::invalid_request("a request must be a JSON object") }
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
    let Some(method) = super::raw_json_str(method_raw) else {
        return Err(invalid(id, "`method` must be a string"));
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
    raw.get() == "\"2.0\"" || super::raw_json_str(raw).is_some_and(|v| v == "2.0")
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
    fn a_batch_is_read_in_one_pass_and_each_item_answered_alone() {
        let body = br#"[{"jsonrpc":"2.0","method":"a","params":{"x":[1,{"y":2}]},"id":1},
            3, "s", null, true, [1, [2]], {},
            {"jsonrpc":"2.0","method":"b","params":null,"id":null,"extra":{"deep":[{}]}},
            {"jsonrpc":"2.0","method":"c","method":"d","id":2},
            {"jsonrpc":"2.0","\u006dethod":"e","id":3},
            {"jsonrpc":null,"method":"f","id":4},
            {"jsonrpc":"2.0","method":"g"}]"#;
        let Ok(Body::Batch(items)) = parse_body(body, false) else { panic!("a batch") };
        type Shown<'a> = Result<(Option<&'a str>, String, Option<&'a str>), (Option<&'a str>, String)>;
        let shown: Vec<Shown<'_>> = items
            .iter()
            .map(|item| match item {
                Ok(Message::Request(r)) => {
                    Ok((r.id.map(RawValue::get), r.method.to_string(), r.params.map(RawValue::get)))
                }
                Ok(Message::Response { .. }) => panic!("no responses on /rpc"),
                Err(invalid) => Err((
                    invalid.id.map(RawValue::get),
                    invalid.error.message().trim_start_matches("Invalid Request: ").to_owned(),
                )),
            })
            .collect();
        let not_object = Err((None, "a request must be a JSON object".to_owned()));
        assert_eq!(shown[0], Ok((Some("1"), "a".to_owned(), Some(r#"{"x":[1,{"y":2}]}"#))));
        for item in &shown[1..6] {
            assert_eq!(item, &not_object);
        }
        assert_eq!(shown[6], Err((None, "`jsonrpc` must be exactly \"2.0\"".to_owned())));
        assert_eq!(shown[7], Ok((Some("null"), "b".to_owned(), None)), "a null id is an id, null params none");
        assert_eq!(shown[8], Err((None, "malformed request object: duplicate field `method`".to_owned())));
        assert_eq!(shown[9], Ok((Some("3"), "e".to_owned(), None)), "an escaped member name");
        assert_eq!(shown[10], Err((Some("4"), "`jsonrpc` must be exactly \"2.0\"".to_owned())));
        assert_eq!(shown[11], Ok((None, "g".to_owned(), None)));
        assert_eq!(items.len(), 12);
        // A number no f64 holds, where a message should be: that item's -32600.
        let Ok(Body::Batch(items)) = parse_body(br#"[1e999, {"jsonrpc":"2.0","method":"a","id":1}]"#, false) else {
            panic!("a batch")
        };
        assert!(matches!(&items[..], [Err(_), Ok(Message::Request(_))]));
        assert!(matches!(parse_body(b"1e999", false), Ok(Body::Single(Err(_)))));
        // Invalid JSON anywhere is the whole body's parse error.
        assert_eq!(
            parse_body(br#"[{"jsonrpc":"2.0","method":"a","id":1}, {"x": tru}]"#, false).unwrap_err().code(),
            -32700
        );
        assert_eq!(parse_body(br#"[{"jsonrpc":"2.0","method":"a","id":1},]"#, false).unwrap_err().code(), -32700);
        // Each item as it would be alone.
        let alone: &RawValue = serde_json::from_str(r#"{"jsonrpc":"2.0","method":"c","method":"d","id":2}"#).unwrap();
        assert!(parse_message(alone, false).is_err());
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
