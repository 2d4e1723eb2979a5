//! The `params` of each method, one type per method, read in one pass with
//! borrowed strings and raw values; and the 2026-07-28 request envelope in
//! `params._meta`, read in the same pass.

use std::borrow::Cow;

use rpc::jsonrpc::envelope::EarlyParams;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::session::KnownCapabilities;

/// The `params` of a method whose only member the server reads is `_meta`
/// (`server/discover`, `ping`, an unknown method).
#[derive(Deserialize, Default)]
pub(crate) struct EnvelopeOnly<'a> {
    #[serde(rename = "_meta", borrow, default)]
    pub meta: Option<MetaSlot<'a>>,
}

/// `tools/call`.
#[derive(Deserialize, Default, Clone, Debug)]
pub(crate) struct CallParams<'a> {
    #[serde(rename = "_meta", borrow, default)]
    pub meta: Option<MetaSlot<'a>>,
    /// The tool name, raw: a name that is not a string gets its own error.
    #[serde(borrow, default)]
    pub name: Option<&'a RawValue>,
    /// The arguments, raw: read only when needed (see [`crate::call::Arguments`]).
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
    /// 2026-07-28: the answers to an input-required round (boxed: rare,
    /// and the call's params are moved several times while read).
    #[serde(rename = "inputResponses", default)]
    pub input_responses: Option<Box<Value>>,
    /// 2026-07-28: the state of the round, echoed.
    #[serde(rename = "requestState", borrow, default)]
    pub request_state: Option<Cow<'a, str>>,
}

/// `tools/list`.
#[derive(Deserialize, Default)]
pub(crate) struct ListParams<'a> {
    #[serde(rename = "_meta", borrow, default)]
    pub meta: Option<MetaSlot<'a>>,
    #[serde(borrow, default)]
    pub cursor: Option<Cow<'a, str>>,
}

/// `resources/read`, `resources/subscribe`, `resources/unsubscribe`.
#[derive(Deserialize, Default)]
pub(crate) struct ResourceParams<'a> {
    #[serde(rename = "_meta", borrow, default)]
    pub meta: Option<MetaSlot<'a>>,
    /// The URI, raw: a URI that is not a string gets its own error.
    #[serde(borrow, default)]
    pub uri: Option<&'a RawValue>,
}

/// `prompts/get`.
#[derive(Deserialize, Default)]
pub(crate) struct PromptParams<'a> {
    #[serde(rename = "_meta", borrow, default)]
    pub meta: Option<MetaSlot<'a>>,
    #[serde(borrow, default)]
    pub name: Option<&'a RawValue>,
    #[serde(default)]
    pub arguments: Option<Value>,
    /// 2026-07-28: the answers to an input-required round.
    #[serde(rename = "inputResponses", default)]
    pub input_responses: Option<Value>,
    /// 2026-07-28: the state of the round, echoed.
    #[serde(rename = "requestState", borrow, default)]
    pub request_state: Option<Cow<'a, str>>,
}

/// `completion/complete`.
#[derive(Deserialize, Default)]
pub(crate) struct CompleteParams<'a> {
    #[serde(rename = "_meta", borrow, default)]
    pub meta: Option<MetaSlot<'a>>,
    #[serde(rename = "ref", default)]
    pub reference: Option<Value>,
    #[serde(default)]
    pub argument: Option<Value>,
    #[serde(default)]
    pub context: Option<Value>,
}

/// `tasks/get`, `tasks/update`, `tasks/cancel`.
#[derive(Deserialize, Default)]
pub(crate) struct TaskParams<'a> {
    #[serde(rename = "_meta", borrow, default)]
    pub meta: Option<MetaSlot<'a>>,
    /// The task id, raw: an id that is not a string gets its own error.
    #[serde(rename = "taskId", borrow, default)]
    pub task_id: Option<&'a RawValue>,
    /// `tasks/update`: the answers, by question key.
    #[serde(rename = "inputResponses", default)]
    pub input_responses: Option<Value>,
}

/// `subscriptions/listen`.
#[derive(Deserialize, Default)]
pub(crate) struct ListenParams<'a> {
    #[serde(rename = "_meta", borrow, default)]
    pub meta: Option<MetaSlot<'a>>,
    #[serde(default)]
    pub notifications: Option<Value>,
}

/// `initialize`, read without building what is not kept: the capabilities'
/// names only (their values are skipped), `clientInfo` as raw JSON for
/// [`ClientInfo::parse`](crate::ClientInfo::parse), every other member
/// skipped.
#[derive(Deserialize)]
pub(crate) struct InitializeParams<'a> {
    #[serde(rename = "protocolVersion", borrow)]
    pub protocol_version: Cow<'a, str>,
    #[serde(default)]
    pub capabilities: Option<KnownCapabilities>,
    #[serde(rename = "clientInfo", borrow, default)]
    pub client_info: Option<&'a RawValue>,
}

/// `logging/setLevel`.
#[derive(Deserialize)]
pub(crate) struct SetLevelParams<'a> {
    #[serde(borrow)]
    pub level: Cow<'a, str>,
}

/// `notifications/cancelled`.
#[derive(Deserialize)]
pub(crate) struct CancelledParams<'a> {
    #[serde(rename = "requestId", borrow)]
    pub request_id: &'a RawValue,
}

/// The `params` the server reads in the envelope's own pass over a body
/// (those of `tools/call`, the call on every agent's hot path): one pass over
/// them instead of a raw skip and a second parse ([`EarlyParams`]). Other
/// methods' `params`, and those written before the `method`, stay raw; a shape
/// this reading does not take leaves them raw too (the body is read again),
/// so the method's own checks answer as they would have.
#[derive(Debug)]
pub struct ReadParams<'a>(pub(crate) Box<CallParams<'a>>);

impl<'de> EarlyParams<'de> for ReadParams<'de> {
    fn reads(method: &str) -> bool {
        method == "tools/call"
    }

    fn read<D: serde::Deserializer<'de>>(_: &str, deserializer: D) -> Result<Self, D::Error> {
        /// An object only: a derived struct would also take an array, by position.
        struct Object<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de> serde::de::Visitor<'de> for Object<'de> {
            type Value = CallParams<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, map: M) -> Result<Self::Value, M::Error> {
                CallParams::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        // Boxed: the request carrying them is moved through the envelope's
        // checks; small, each move is a few register copies.
        deserializer.deserialize_map(Object(std::marker::PhantomData)).map(|params| ReadParams(Box::new(params)))
    }
}

/// The `params` of `request` as `P` reads them: those read in the envelope's
/// pass, else its raw `params` read now (`None`: absent).
pub(crate) fn read_params<'a, P: WithMeta<'a>>(request: &'a RpcRequest<'a>) -> Result<Option<P>, rpc::RpcError> {
    if let Some(early) = request.early.as_ref().and_then(P::early) {
        return Ok(Some(early));
    }
    let input_bytes = request.params.map_or(0, |p| p.get().len());
    rpc::executor::cpu_bound(input_bytes, || request.params_as::<P>())
}

/// The size of a request's `params`, for [`rpc::executor::cpu_bound`]: as
/// sent, or (read in the envelope's pass) that of the tool's arguments.
pub(crate) fn params_bytes(request: &RpcRequest<'_>) -> usize {
    match (&request.early, request.params) {
        (Some(ReadParams(call)), _) => call.arguments.map_or(0, |a| a.get().len()),
        (None, params) => params.map_or(0, |p| p.get().len()),
    }
}

/// A request as MCP reads it: `tools/call`'s `params` possibly read early.
pub(crate) type RpcRequest<'a> = rpc::jsonrpc::envelope::Request<'a, ReadParams<'a>>;

/// A message as MCP reads it (see [`RpcRequest`]).
pub(crate) type RpcMessage<'a> = rpc::jsonrpc::envelope::Message<'a, ReadParams<'a>>;

/// Params that carry `_meta` (every method's do).
pub(crate) trait WithMeta<'a>: Deserialize<'a> + Default {
    /// These params, when the envelope's pass read them.
    fn early(_: &ReadParams<'a>) -> Option<Self> {
        None
    }
    /// Takes the `_meta` member out.
    fn take_meta(&mut self) -> Option<MetaSlot<'a>>;
    /// `params.name`, for the methods that have one.
    fn name(&self) -> Option<&'a RawValue> {
        None
    }
}

impl<'a> WithMeta<'a> for EnvelopeOnly<'a> {
    fn take_meta(&mut self) -> Option<MetaSlot<'a>> {
        self.meta.take()
    }
}

impl<'a> WithMeta<'a> for CallParams<'a> {
    fn early(read: &ReadParams<'a>) -> Option<Self> {
        Some(CallParams::clone(&read.0))
    }
    fn take_meta(&mut self) -> Option<MetaSlot<'a>> {
        self.meta.take()
    }
    fn name(&self) -> Option<&'a RawValue> {
        self.name
    }
}

impl<'a> WithMeta<'a> for ListParams<'a> {
    fn take_meta(&mut self) -> Option<MetaSlot<'a>> {
        self.meta.take()
    }
}

impl<'a> WithMeta<'a> for ResourceParams<'a> {
    fn take_meta(&mut self) -> Option<MetaSlot<'a>> {
        self.meta.take()
    }
    /// `Mcp-Name` mirrors the URI.
    fn name(&self) -> Option<&'a RawValue> {
        self.uri
    }
}

impl<'a> WithMeta<'a> for PromptParams<'a> {
    fn take_meta(&mut self) -> Option<MetaSlot<'a>> {
        self.meta.take()
    }
    fn name(&self) -> Option<&'a RawValue> {
        self.name
    }
}

impl<'a> WithMeta<'a> for CompleteParams<'a> {
    fn take_meta(&mut self) -> Option<MetaSlot<'a>> {
        self.meta.take()
    }
}

impl<'a> WithMeta<'a> for TaskParams<'a> {
    fn take_meta(&mut self) -> Option<MetaSlot<'a>> {
        self.meta.take()
    }
    /// `Mcp-Name` mirrors the task id (SEP-2663).
    fn name(&self) -> Option<&'a RawValue> {
        self.task_id
    }
}

impl<'a> WithMeta<'a> for ListenParams<'a> {
    fn take_meta(&mut self) -> Option<MetaSlot<'a>> {
        self.meta.take()
    }
}

/// `params._meta` as found: the envelope, read in the same pass as the
/// rest of `params`, or a value that is not an object (an error, reported
/// in its turn of the check order).
#[derive(Clone, Debug)]
pub(crate) enum MetaSlot<'a> {
    Object(RequestMeta<'a>),
    NotObject,
}

impl<'de: 'a, 'a> Deserialize<'de> for MetaSlot<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Slot<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Slot<'a> {
            type Value = MetaSlot<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, map: M) -> Result<Self::Value, M::Error> {
                RequestMeta::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(MetaSlot::Object)
            }
            fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(MetaSlot::NotObject)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(MetaSlot::NotObject)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(MetaSlot::NotObject)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(MetaSlot::NotObject)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(MetaSlot::NotObject)
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(MetaSlot::NotObject)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(MetaSlot::NotObject)
            }
        }
        deserializer.deserialize_any(Slot(std::marker::PhantomData))
    }
}

/// What `_meta` carries: the 2026-07-28 request envelope, and the progress
/// token of either era.
#[derive(Deserialize, Clone, Debug)]
pub(crate) struct RequestMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    pub protocol_version: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow, default)]
    pub client_capabilities: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", borrow, default)]
    pub client_info: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", borrow, default)]
    pub log_level: Option<&'a RawValue>,
    #[serde(rename = "progressToken", borrow, default)]
    pub progress_token: Option<&'a RawValue>,
}

/// Whether a request's `params._meta` names a protocol version: the mark
/// of a 2026-07-28 request.
pub(crate) fn request_names_a_version(request: &RpcRequest<'_>) -> bool {
    match &request.early {
        Some(ReadParams(call)) => {
            matches!(&call.meta, Some(MetaSlot::Object(RequestMeta { protocol_version: Some(_), .. })))
        }
        None => names_a_version(request.params),
    }
}

/// Whether `params._meta` names a protocol version (read without building
/// anything else).
pub(crate) fn names_a_version(params: Option<&RawValue>) -> bool {
    // `_meta` read as an object only (a derived struct would read an array by position).
    let Some(raw) = params.filter(|p| p.get().starts_with('{')) else { return false };
    matches!(
        serde_json::from_str::<EnvelopeOnly<'_>>(raw.get()),
        Ok(EnvelopeOnly { meta: Some(MetaSlot::Object(RequestMeta { protocol_version: Some(_), .. })) })
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn a_version_in_meta_marks_a_stateless_request() {
        assert!(names_a_version(Some(&raw(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}"#))));
        assert!(!names_a_version(Some(&raw(r#"{"_meta":{"progressToken":1}}"#))));
        assert!(!names_a_version(Some(&raw(r#"[1]"#))));
        assert!(!names_a_version(Some(&raw(r#"{"_meta":["2026-07-28"]}"#))), "an array names nothing");
        assert!(!names_a_version(None));
    }

    #[test]
    fn call_params_keep_what_the_checks_need() {
        let text = r#"{"name":"caf\u00e9","arguments":{"a":1},"_meta":[1]}"#;
        let mut params: CallParams<'_> = serde_json::from_str(text).unwrap();
        assert_eq!(rpc::jsonrpc::raw_json_str(params.name().unwrap()).as_deref(), Some("café"));
        assert!(matches!(params.take_meta(), Some(MetaSlot::NotObject)));
        assert_eq!(rpc::jsonrpc::raw_json_str(&raw("5")), None);
    }
}
