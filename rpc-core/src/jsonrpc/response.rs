//! Writing JSON-RPC 2.0 response objects.
//!
//! Results arrive already serialised ([`RawValue`]), so a response is
//! assembled by concatenation, never re-serialised.

use serde_json::value::RawValue;

use crate::error::{Environment, RpcError};
use crate::executor::Execution;

/// What every response starts with, before its id.
const OPEN: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":";
/// Between the id and a result.
const RESULT: &[u8] = b",\"result\":";
/// Between the id and an error object.
const ERROR: &[u8] = b",\"error\":";
/// The room an error response is given at once (its object is written in
/// pieces; most fit, so the buffer is not grown piece by piece).
const ERROR_ROOM: usize = 256;

/// Appends `{"jsonrpc":"2.0","id":<id>,"result":<result>}`; `result` is
/// already-serialised JSON.
pub fn write_result(out: &mut Vec<u8>, id: &RawValue, result: &[u8]) {
    // One reservation: a large result is copied once, never grown into;
    // into an empty buffer, exactly (a full `Vec` becomes `Bytes` without
    // another allocation).
    out.reserve_exact(result_head_len(id) + result.len() + 1);
    write_result_head(out, id);
    out.extend_from_slice(result);
    out.push(b'}');
}

/// Appends `{"jsonrpc":"2.0","id":<id>,"result":`, the head of a result
/// response whose result the caller writes next, then `}`: a result built
/// in place, not copied into its envelope. How many bytes it writes:
/// [`result_head_len`] (the closing `}` is one more).
pub fn write_result_head(out: &mut Vec<u8>, id: &RawValue) {
    out.extend_from_slice(OPEN);
    out.extend_from_slice(id.get().as_bytes());
    out.extend_from_slice(RESULT);
}

/// How many bytes [`write_result_head`] writes for `id`.
pub fn result_head_len(id: &RawValue) -> usize {
    OPEN.len() + id.get().len() + RESULT.len()
}

/// A whole result response body, exactly its size.
pub fn result_body(id: &RawValue, result: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    write_result(&mut out, id, result);
    out
}

/// Appends `{"jsonrpc":"2.0","id":<id or null>,"error":<object>}`, the
/// error object written by `object` (an MCP error has its own type).
pub fn write_error_with(out: &mut Vec<u8>, id: Option<&RawValue>, object: impl FnOnce(&mut Vec<u8>)) {
    out.reserve(ERROR_ROOM);
    out.extend_from_slice(OPEN);
    out.extend_from_slice(id.map_or("null", RawValue::get).as_bytes());
    out.extend_from_slice(ERROR);
    object(out);
    out.push(b'}');
}

/// Appends `{"jsonrpc":"2.0","id":<id or null>,"error":{...}}`.
pub fn write_error(out: &mut Vec<u8>, id: Option<&RawValue>, error: &RpcError, env: Environment) {
    write_error_with(out, id, |out| error.write_json(out, env));
}

/// A whole single-error response body.
pub fn error_body(id: Option<&RawValue>, error: &RpcError, env: Environment) -> Vec<u8> {
    let mut out = Vec::new();
    write_error(&mut out, id, error, env);
    out
}

/// Joins the outcomes of a batch's messages: the response objects into one
/// JSON array (`None` when every message was a notification), and the
/// executions after-response listeners want (the others are dropped here:
/// without such listeners there is no list to allocate).
pub fn join_batch(results: Vec<(Option<Vec<u8>>, Option<Execution>)>) -> (Option<Vec<u8>>, Vec<Execution>) {
    let mut out =
        Vec::with_capacity(results.iter().map(|(p, _)| p.as_ref().map_or(0, Vec::len) + 1).sum::<usize>() + 1);
    let mut executions = Vec::new();
    for (part, execution) in results {
        if let Some(part) = part {
            out.push(if out.is_empty() { b'[' } else { b',' });
            out.extend_from_slice(&part);
        }
        executions.extend(execution.filter(Execution::wants_response_sent));
    }
    if out.is_empty() {
        return (None, executions);
    }
    out.push(b']');
    (Some(out), executions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_into_an_empty_buffer_fills_it_exactly() {
        for (id, result) in [("1", "{}"), ("\"a-b\"", r#"{"x":[1,2,3]}"#), ("null", &*"x".repeat(10_000))] {
            let id: &RawValue = serde_json::from_str(id).unwrap();
            let out = result_body(id, result.as_bytes());
            assert_eq!(out.len(), out.capacity(), "no spare capacity, no growth");
            assert_eq!(out, format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, id.get()).into_bytes());
        }
    }
}
