//! Parsing JSON-RPC 2.0 messages in one pass over the body.
//!
//! A single message is deserialised straight from the body into an
//! envelope of borrowed [`RawValue`]s (`jsonrpc` and `method` read as
//! strings); each member is then checked by hand, so an invalid member
//! gives a specific `-32600` message and, where the `id` is readable, a
//! response carrying that `id`. `params` stays unparsed until the method
//! that consumes it decides its shape. A body the typed pass cannot take is
//! read again with every member raw, and that pass answers.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::call::read_params;
use crate::error::RpcError;
use crate::executor::Params;
use crate::jsonrpc::limits::JsonLimits;
use text::{Text, TextSeed};

mod text;

/// A body: one message or a batch. `P`: the `params` read in the envelope's
/// own pass ([`EarlyParams`]; none by default).
#[derive(Debug)]
pub enum Body<'a, P = NoParams> {
    /// A single message (any JSON value other than an array).
    Single(Result<Message<'a, P>, Invalid<'a>>),
    /// A batch (a JSON array), possibly empty: each item read and checked
    /// in the same pass over the body, as [`parse_message`] would.
    Batch(Vec<Result<Message<'a, P>, Invalid<'a>>>),
}

impl<'a> Body<'a> {
    /// The same body, typed for a reader of early `params` that read none.
    pub fn widen<P>(self) -> Body<'a, P> {
        match self {
            Body::Single(message) => Body::Single(message.map(Message::widen)),
            Body::Batch(items) => Body::Batch(items.into_iter().map(|item| item.map(Message::widen)).collect()),
        }
    }
}

/// The `params` a server reads in the envelope's own pass over the body,
/// for the methods it names: one pass over them instead of a raw skip and
/// a second parse. They are read only when `method` comes before `params`
/// (as clients write it) and is a plain string; otherwise `params` stays raw
/// ([`Request::params`]) for the method's own reading.
pub trait EarlyParams<'de>: Sized {
    /// Whether any method's `params` are read early (`false`: the body is
    /// never parsed twice, see [`read`](Self::read)).
    const READS_ANY: bool = true;

    /// Whether `params` of `method` are read early.
    fn reads(method: &str) -> bool;

    /// Reads `params` of `method`. An error (a shape the type does not take)
    /// makes the whole body parse again with `params` raw, so the method's
    /// own reading reports it in its words: an error costs a second pass,
    /// never a different answer (invalid JSON, too, is read twice before its
    /// `-32700`: serde counts a number no `f64` holds as a syntax error, so
    /// the first error cannot tell). The type should take every shape it can,
    /// and only those the method takes: a derived struct also takes an array,
    /// by position, so a reader of an object says so (`deserialize_map`).
    fn read<D: serde::Deserializer<'de>>(method: &str, deserializer: D) -> Result<Self, D::Error>;
}

/// No `params` read early: every request keeps them raw.
#[derive(Debug)]
pub enum NoParams {}

impl<'de> EarlyParams<'de> for NoParams {
    const READS_ANY: bool = false;

    fn reads(_: &str) -> bool {
        false
    }

    fn read<D: serde::Deserializer<'de>>(_: &str, _: D) -> Result<Self, D::Error> {
        Err(serde::de::Error::custom("no params are read early"))
    }
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
    parse_body_reading(bytes, accept_responses, limits)
}

/// [`parse_body_with`], reading the `params` of the methods `P` names in the
/// same pass ([`EarlyParams`]; [`Request::early`]).
pub fn parse_body_reading<'a, P: EarlyParams<'a>>(
    bytes: &'a [u8],
    accept_responses: bool,
    limits: &JsonLimits,
) -> Result<Body<'a, P>, RpcError> {
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
        return Err(RpcError::invalid_request(exceeded.to_string()));
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        if let Ok(items) = serde_json::from_str::<Vec<Typed<'_, P>>>(text) {
            return Ok(Body::Batch(items.into_iter().map(|item| item.0.check(accept_responses)).collect()));
        }
        if let Ok(items) = serde_json::from_str::<Vec<Item<'_>>>(text) {
            return Ok(Body::Batch(items.into_iter().map(|item| item.widen().check(accept_responses)).collect()));
        }
        // Valid JSON an item visitor cannot read (a number beyond f64's
        // range where a message should be): item by item, as before.
        let items: Vec<&RawValue> = serde_json::from_str(text).map_err(RpcError::parse_error)?;
        return Ok(Body::Batch(
            items.into_iter().map(|raw| parse_message(raw, accept_responses).map(Message::widen)).collect(),
        ));
    }
    if first != Some(&b'{') {
        // Not an object: tell invalid JSON (-32700) from a valid non-object (-32600).
        let _: &RawValue = serde_json::from_str(text).map_err(RpcError::parse_error)?;
        return Ok(Body::Single(Err(not_an_object())));
    }
    // An error of the typed pass (invalid JSON, a shape the early params
    // do not take, a number no `f64` holds where a string was expected)
    // reads the body again, raw: the raw pass's answer is the answer.
    let item = match serde_json::from_str::<Typed<'_, P>>(text) {
        Ok(item) => item.0,
        Err(_) => serde_json::from_str::<Item<'_>>(text).map_err(RpcError::parse_error)?.widen(),
    };
    Ok(Body::Single(item.check(accept_responses)))
}

/// A valid JSON-RPC request or notification.
#[derive(Debug)]
pub struct Request<'a, P = NoParams> {
    /// The `id`; `None` for a notification. A JSON `null` id is `Some("null")`.
    pub id: Option<&'a RawValue>,
    /// The method name.
    pub method: Cow<'a, str>,
    /// The parameters, unparsed: an object, an array, or absent (`null`
    /// counts as absent); also absent when they were read early, into
    /// [`early`](Self::early).
    pub params: Option<&'a RawValue>,
    /// The parameters as read in the envelope's pass ([`EarlyParams`]).
    pub early: Option<P>,
}

impl<'a> Request<'a> {
    /// The same request, typed for a reader of early `params` that read none.
    pub fn widen<P>(self) -> Request<'a, P> {
        let Request { id, method, params, early } = self;
        Request { id, method, params, early: early.map(|never| match never {}) }
    }
}

impl<'a, P> Request<'a, P> {
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

/// The members of a message object, unparsed but for the two that must be
/// strings (an absent member and a JSON `null` are both `None`, except
/// `id`, where `null` is a value).
struct Envelope<'a, P = NoParams> {
    jsonrpc: Option<Text<'a>>,
    method: Option<Text<'a>>,
    params: Option<&'a RawValue>,
    early: Option<P>,
    id: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

impl<P> Default for Envelope<'_, P> {
    fn default() -> Self {
        Envelope { jsonrpc: None, method: None, params: None, early: None, id: None, result: None, error: None }
    }
}

/// One message as read from the body, before its members are checked: an
/// envelope, or why it is not one. Reading it never fails on the shape of
/// the message (only on invalid JSON), so a batch is read in one pass and
/// each of its items gets its own answer.
enum Item<'a, P = NoParams> {
    Envelope(Envelope<'a, P>),
    NotAnObject,
    /// A member given twice.
    Duplicate(&'static str),
}

impl<'a> Item<'a> {
    fn widen<P>(self) -> Item<'a, P> {
        match self {
            Item::Envelope(Envelope { jsonrpc, method, params, early, id, result, error }) => {
                Item::Envelope(Envelope {
                    jsonrpc,
                    method,
                    params,
                    early: early.map(|never| match never {}),
                    id,
                    result,
                    error,
                })
            }
            Item::NotAnObject => Item::NotAnObject,
            Item::Duplicate(name) => Item::Duplicate(name),
        }
    }
}

impl<'a, P> Item<'a, P> {
    fn check(self, accept_responses: bool) -> Result<Message<'a, P>, Invalid<'a>> {
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

/// The raw pass: every member kept as written ([`RawValue`]). Its answer is
/// the answer: it reads any valid JSON object, whatever its members hold.
impl<'de, P: EarlyParams<'de>> Deserialize<'de> for Item<'de, P> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ItemVisitor { typed: false, params: std::marker::PhantomData })
    }
}

/// An item of the typed pass, the first: `jsonrpc` and `method` read as
/// strings, not as raw values that are then read again (a string is read
/// once, and serde's raw values cost more than the strings). Valid JSON it
/// cannot take (a number beyond `f64`'s range in either member) fails it,
/// and the raw pass reads the body again: an error costs a second pass,
/// never a different answer.
struct Typed<'a, P>(Item<'a, P>);

impl<'de, P: EarlyParams<'de>> Deserialize<'de> for Typed<'de, P> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ItemVisitor { typed: true, params: std::marker::PhantomData }).map(Typed)
    }
}

struct ItemVisitor<P> {
    /// `jsonrpc` and `method` read as strings ([`Typed`]).
    typed: bool,
    params: std::marker::PhantomData<fn() -> P>,
}

/// The members an envelope has seen, by bit (a `null` member counts as
/// given), and the first one given twice.
#[derive(Default)]
struct Seen {
    bits: u8,
    duplicate: Option<&'static str>,
}

impl Seen {
    fn note(&mut self, bit: u8, name: &'static str) {
        if self.bits & bit != 0 {
            self.duplicate.get_or_insert(name);
        }
        self.bits |= bit;
    }
}

/// `params` of `method`, read by `P`.
struct EarlySeed<'m, P> {
    method: &'m str,
    reader: std::marker::PhantomData<fn() -> P>,
}

impl<'de, P: EarlyParams<'de>> serde::de::DeserializeSeed<'de> for EarlySeed<'_, P> {
    type Value = P;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<P, D::Error> {
        P::read(self.method, deserializer)
    }
}

impl<'de, P: EarlyParams<'de>> serde::de::Visitor<'de> for ItemVisitor<P> {
    type Value = Item<'de, P>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Item<'de, P>, A::Error> {
        let mut envelope = Envelope::default();
        let mut seen = Seen::default();
        while let Some(member) = map.next_key::<Member>()? {
            let (bit, name, slot) = match member {
                Member::Jsonrpc | Member::Method => {
                    let (bit, name, slot) = match member {
                        Member::Jsonrpc => (1, "jsonrpc", &mut envelope.jsonrpc),
                        _ => (2, "method", &mut envelope.method),
                    };
                    *slot = if self.typed {
                        map.next_value_seed(TextSeed)?
                    } else {
                        let value: &'de RawValue = map.next_value()?;
                        (value.get() != "null").then(|| Text::of_raw(value))
                    };
                    seen.note(bit, name);
                    continue;
                }
                Member::Params
                    if P::READS_ANY
                        && seen.bits & 4 == 0
                        && let Some(method) = envelope.method.as_ref().and_then(Text::plain)
                        && P::reads(method) =>
                {
                    let reader = std::marker::PhantomData;
                    envelope.early = Some(map.next_value_seed(EarlySeed::<P> { method, reader })?);
                    seen.note(4, "params");
                    continue;
                }
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
            seen.note(bit, name);
            // `null` is absent, but for the `id` (a request with a null id).
            *slot = (value.get() != "null" || bit == 8).then_some(value);
        }
        Ok(seen.duplicate.map_or(Item::Envelope(envelope), Item::Duplicate))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Item<'de, P>, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Item::NotAnObject)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Item<'de, P>, E> {
        Ok(Item::NotAnObject)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Item<'de, P>, E> {
        Ok(Item::NotAnObject)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Item<'de, P>, E> {
        Ok(Item::NotAnObject)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Item<'de, P>, E> {
        Ok(Item::NotAnObject)
    }

    fn visit_str<E>(self, _: &str) -> Result<Item<'de, P>, E> {
        Ok(Item::NotAnObject)
    }

    fn visit_unit<E>(self) -> Result<Item<'de, P>, E> {
        Ok(Item::NotAnObject)
    }
}

/// A message a peer sent: a request/notification, or a response to one of ours.
#[derive(Debug)]
pub enum Message<'a, P = NoParams> {
    /// A request (with `id`) or a notification (without).
    Request(Request<'a, P>),
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

impl<'a> Message<'a> {
    /// The same message, typed for a reader of early `params` that read none.
    pub fn widen<P>(self) -> Message<'a, P> {
        match self {
            Message::Request(request) => Message::Request(request.widen()),
            Message::Response { id, result, error } => Message::Response { id, result, error },
        }
    }
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

fn check<P>(env: Envelope<'_, P>, accept_responses: bool) -> Result<Message<'_, P>, Invalid<'_>> {
    let invalid = |id, reason: &'static str| Invalid { id, error: RpcError::invalid_request(reason) };
    let id = match env.id {
        Some(id) if is_valid_id(id) => Some(id),
        Some(_) => return Err(invalid(None, "`id` must be a string, a number or null")),
        None => None,
    };
    if !matches!(&env.jsonrpc, Some(Text::Str(version)) if version == "2.0") {
        return Err(invalid(id, "`jsonrpc` must be exactly \"2.0\""));
    }
    if accept_responses
        && env.method.is_none()
        && (env.result.is_some() || env.error.is_some())
        && let Some(id) = id
    {
        return Ok(Message::Response { id, result: env.result, error: env.error });
    }
    let method = match env.method {
        None => return Err(invalid(id, "`method` is missing")),
        Some(Text::Other) => return Err(invalid(id, "`method` must be a string")),
        Some(Text::Str(method)) => method,
    };
    let params = match env.params {
        Some(p) if p.get() == "null" => None,
        Some(p) if !(p.get().starts_with('{') || p.get().starts_with('[')) => {
            return Err(invalid(id, "`params` must be an object or an array"));
        }
        other => other,
    };
    Ok(Message::Request(Request { id, method, params, early: env.early }))
}

fn is_valid_id(id: &RawValue) -> bool {
    let s = id.get();
    s == "null" || s.starts_with('"') || s.starts_with('-') || s.as_bytes().first().is_some_and(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests;
