//! Writing JSON-RPC 2.0 response objects.
//!
//! Results arrive already serialised ([`RawValue`]), so a response is
//! assembled by concatenation, never re-serialised.

use serde_json::value::RawValue;

use crate::error::{Environment, RpcError};
use crate::executor::Execution;

/// Appends `{"jsonrpc":"2.0","id":<id>,"result":<result>}`; `result` is
/// already-serialised JSON.
pub fn write_result(out: &mut Vec<u8>, id: &RawValue, result: &[u8]) {
    // One reservation: a large result is copied once, never grown into;
    // into an empty buffer, exactly (a full `Vec` becomes `Bytes` without
    // another allocation).
    out.reserve_exact(33 + id.get().len() + result.len());
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.get().as_bytes());
    out.extend_from_slice(b",\"result\":");
    out.extend_from_slice(result);
    out.push(b'}');
}

/// Appends `{"jsonrpc":"2.0","id":<id or null>,"error":{...}}`.
pub fn write_error(out: &mut Vec<u8>, id: Option<&RawValue>, error: &RpcError, env: Environment) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.map_or("null", RawValue::get).as_bytes());
    out.extend_from_slice(b",\"error\":");
    error.write_json(out, env);
    out.push(b'}');
}

/// A whole single-error response body.
pub fn error_body(id: Option<&RawValue>, error: &RpcError, env: Environment) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    write_error(&mut out, id, error, env);
    out
}

/// Joins the outcomes of a batch's messages: the response objects into one
/// JSON array (`None` when every message was a notification), and the
/// executions for after-response listeners.
pub fn join_batch(results: Vec<(Option<Vec<u8>>, Option<Execution>)>) -> (Option<Vec<u8>>, Vec<Execution>) {
    let mut out =
        Vec::with_capacity(results.iter().map(|(p, _)| p.as_ref().map_or(0, Vec::len) + 1).sum::<usize>() + 1);
    let mut executions = Vec::new();
    for (part, execution) in results {
        if let Some(part) = part {
            out.push(if out.is_empty() { b'[' } else { b',' });
            out.extend_from_slice(&part);
        }
        executions.extend(execution);
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
            let mut out = Vec::new();
            write_result(&mut out, id, result.as_bytes());
            assert_eq!(out.len(), out.capacity(), "no spare capacity, no growth");
            assert_eq!(out, format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, id.get()).into_bytes());
        }
    }
}
