//! Target `jsonrpc_message`: arbitrary bytes through the JSON-RPC parser
//! (`rpc::jsonrpc::envelope`), as both endpoints call it.
//!
//! Besides "never panics", checks what the parser promises its callers:
//! only `-32700` / `-32600` come out of it (`-32600` only for a body beyond
//! the JSON limits, and a batch within them), an accepted request has a valid
//! id (string, number or `null`), `params` an object or an array, and
//! `params()` / `params_as()` agree with the shape of the raw `params`.
//! And against `serde_json::Value` as an oracle, where it can hold the
//! input: valid JSON nested at most 32 deep is never `-32700`, and what the
//! parser accepts as a request or a response says what the document says.
//! The hot path's JSON string reader and writer (`raw_json_str`,
//! `write_json_string`) agree with `serde_json` on every id and method.
//! And the body's pass (`jsonrpc` and `method` read as strings) answers
//! each message as reading it alone, every member raw, does.

use rpc::Params;
use rpc::error::code;
use rpc::jsonrpc::JsonLimits;
use rpc::jsonrpc::envelope::{self, Body, Invalid, Message, Request};
use serde_json::Value;
use serde_json::value::RawValue;

/// Nesting that any parser limit leaves alone.
const SHALLOW: usize = 32;

/// The nesting depth of a value (a scalar: 0).
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Runs one input (both values of `accept_responses`).
pub fn run(data: &[u8]) {
    // `None`: JSON the `Value` model cannot hold (invalid, too deep, a
    // number out of range).
    let oracle: Option<Value> = serde_json::from_slice(data).ok();
    for accept_responses in [false, true] {
        let body = envelope::parse_body(data, accept_responses);
        agrees_with_each_message_alone(data, &body, accept_responses);
        match body {
            Err(error) if error.code() == code::INVALID_REQUEST => {
                // Beyond the JSON limits (depth, values, batch length), and only then.
                assert!(JsonLimits::default().check(data).is_err(), "-32600 within the limits: {error:?}");
            }
            Err(error) => {
                assert_eq!(error.code(), code::PARSE_ERROR, "parse_body fails only with -32700 or -32600");
                // Shallow valid JSON is never a parse error (a parser may
                // refuse deep nesting: its limit is its own business).
                let shallow = oracle.as_ref().is_some_and(|o| depth(o) <= SHALLOW);
                assert!(!shallow, "valid JSON refused as a parse error: {error:?}");
            }
            Ok(Body::Single(message)) => {
                if let Some(oracle) = &oracle {
                    assert!(!oracle.is_array(), "an array parsed as a single message");
                }
                check_message(message, accept_responses, oracle.as_ref());
            }
            Ok(Body::Batch(items)) => {
                let items_oracle = oracle.as_ref().map(|o| o.as_array().expect("a batch is an array"));
                if let Some(expected) = items_oracle {
                    assert_eq!(items.len(), expected.len(), "a batch of {} items", expected.len());
                }
                assert!(items.len() <= JsonLimits::default().max_batch, "a batch beyond the limit parsed");
                for (i, message) in items.into_iter().enumerate() {
                    let item = items_oracle.map(|items| &items[i]);
                    check_message(message, accept_responses, item);
                }
            }
        }
    }
}

fn check_message(message: Result<Message<'_>, Invalid<'_>>, accept_responses: bool, oracle: Option<&Value>) {
    match message {
        Ok(Message::Request(request)) => {
            check_request(&request);
            if let Some(oracle) = oracle {
                agree(&request, oracle);
            }
        }
        Ok(Message::Response { id, .. }) => {
            assert!(accept_responses, "a response is recognised only when asked for");
            assert!(is_valid_id(id), "response id {:?}", id.get());
            if let Some(oracle) = oracle {
                assert_eq!(oracle["jsonrpc"], "2.0");
                assert!(oracle.get("method").is_none(), "a response has no method");
                assert!(oracle.get("result").is_some() || oracle.get("error").is_some());
            }
        }
        Err(invalid) => {
            assert_eq!(invalid.error.code(), code::INVALID_REQUEST, "an invalid message is -32600");
            if let Some(id) = invalid.id {
                assert!(is_valid_id(id), "the id of an invalid message {:?}", id.get());
            }
        }
    }
}

/// An accepted request says what the document says (the document may
/// repeat a member the parser refused: the oracle keeps the last).
fn agree(request: &Request<'_>, oracle: &Value) {
    assert_eq!(oracle["jsonrpc"], "2.0", "accepted without \"jsonrpc\":\"2.0\": {oracle}");
    assert_eq!(oracle["method"].as_str(), Some(&*request.method), "the method of {oracle}");
    match request.id {
        None => assert!(oracle.get("id").is_none(), "a notification with an id: {oracle}"),
        Some(id) => {
            let parsed: Option<Value> = serde_json::from_str(id.get()).ok();
            assert_eq!(parsed.as_ref(), oracle.get("id"), "the id of {oracle}");
        }
    }
    match (request.params, oracle.get("params")) {
        (None, None | Some(Value::Null)) => {}
        (Some(raw), Some(value)) => {
            assert_eq!(serde_json::from_str::<Value>(raw.get()).ok().as_ref(), Some(value), "params of {oracle}")
        }
        (raw, value) => panic!("params {raw:?} of {value:?}"),
    }
}

fn check_request(request: &Request<'_>) {
    if let Some(id) = request.id {
        assert!(is_valid_id(id), "request id {:?}", id.get());
        // The parser-free string reader reads what serde_json reads.
        if id.get().starts_with('"') {
            let serde: Option<String> = serde_json::from_str(id.get()).ok();
            assert_eq!(rpc::jsonrpc::raw_json_str(id).as_deref(), serde.as_deref(), "the string id {:?}", id.get());
        }
    }
    // And the string writer writes what serde_json writes.
    let mut written = Vec::new();
    rpc::jsonrpc::write_json_string(&mut written, &request.method);
    let serde = serde_json::to_vec(&*request.method).expect("a string serialises");
    assert_eq!(written, serde, "the method {:?} written", request.method);
    let raw = request.params.map(RawValue::get);
    if let Some(raw) = raw {
        assert!(raw.starts_with('{') || raw.starts_with('['), "params {raw:?}");
    }
    match (request.params(), raw) {
        (Ok(Params::None), None) => {}
        (Ok(Params::Positional(_)), Some(raw)) if raw.starts_with('[') => {}
        (Ok(Params::Named(_)), Some(raw)) if raw.starts_with('{') => {}
        // Valid JSON the `Value` model cannot hold (a number out of f64
        // range, nesting past serde_json's limit): -32602.
        (Err(error), Some(_)) => assert_eq!(error.code(), code::INVALID_PARAMS),
        (outcome, raw) => panic!("params() gave {outcome:?} for raw params {raw:?}"),
    }
    match request.params_as::<Value>() {
        Ok(Some(value)) => assert!(value.is_object() || value.is_array()),
        Ok(None) => assert!(raw.is_none()),
        Err(error) => assert_eq!(error.code(), code::INVALID_PARAMS),
    }
    // Borrowed forms too, as the MCP transport reads them.
    let _ = request.params_as::<std::collections::BTreeMap<std::borrow::Cow<'_, str>, &RawValue>>();
    let _ = request.params_as::<Vec<&RawValue>>();
}

fn is_valid_id(id: &RawValue) -> bool {
    let s = id.get();
    s == "null" || s.starts_with('"') || s.starts_with('-') || s.as_bytes().first().is_some_and(u8::is_ascii_digit)
}

/// A body's messages, parsed in the body's pass, are what each gives read
/// alone ([`envelope::parse_message`]: every member raw).
fn agrees_with_each_message_alone(data: &[u8], body: &Result<Body<'_>, rpc::RpcError>, accept_responses: bool) {
    let Ok(Ok(text)) = std::str::from_utf8(data).map(serde_json::from_str::<&RawValue>) else { return };
    let shown = |message: &Result<Message<'_>, Invalid<'_>>| format!("{message:?}");
    match body {
        Ok(Body::Single(message)) if text.get().starts_with('{') => {
            assert_eq!(shown(message), shown(&envelope::parse_message(text, accept_responses)), "{}", text.get());
        }
        Ok(Body::Batch(items)) => {
            let Ok(alone) = serde_json::from_str::<Vec<&RawValue>>(text.get()) else { return };
            for (item, raw) in items.iter().zip(alone) {
                assert_eq!(shown(item), shown(&envelope::parse_message(raw, accept_responses)), "{}", raw.get());
            }
        }
        _ => {}
    }
}
