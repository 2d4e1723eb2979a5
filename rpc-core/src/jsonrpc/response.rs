//! Writing JSON-RPC 2.0 response objects.
//!
//! Results arrive already serialised ([`RawValue`]), so a response is
//! assembled by concatenation, never re-serialised.

use serde_json::value::RawValue;

use crate::error::{Environment, RpcError};

/// Appends `{"jsonrpc":"2.0","id":<id>,"result":<result>}`.
pub fn write_result(out: &mut Vec<u8>, id: &RawValue, result: &RawValue) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.get().as_bytes());
    out.extend_from_slice(b",\"result\":");
    out.extend_from_slice(result.get().as_bytes());
    out.push(b'}');
}

/// Appends `{"jsonrpc":"2.0","id":<id or null>,"error":{...}}`.
pub fn write_error(out: &mut Vec<u8>, id: Option<&RawValue>, error: &RpcError, env: Environment) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.map_or("null", RawValue::get).as_bytes());
    out.extend_from_slice(b",\"error\":");
    // Serialising a `Value` into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, &error.to_json(env));
    out.push(b'}');
}

/// A whole single-error response body.
pub fn error_body(id: Option<&RawValue>, error: &RpcError, env: Environment) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    write_error(&mut out, id, error, env);
    out
}
