//! Writing MCP responses: JSON-RPC objects (every error carries the
//! request's id whenever it was readable), as `application/json` or as one
//! SSE event, with the HTTP status each era gives an error.

use http::{Response, StatusCode};
use rpc::Execution;
use rpc::jsonrpc::response::write_result;
use rpc::server::body::{ResponseBody, full, json_response, notify_when_sent};
use serde_json::value::RawValue;

use super::negotiate::ResponseMode;
use super::sse;
use crate::call::ProtocolError;
use crate::endpoint::Inner;
use crate::protocol::code;

pub(crate) type HttpResponse = Response<ResponseBody>;

/// Appends `{"jsonrpc":"2.0","id":..,"error":{..}}`.
pub(crate) fn write_error(out: &mut Vec<u8>, id: Option<&RawValue>, error: &ProtocolError) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.map_or("null", RawValue::get).as_bytes());
    out.extend_from_slice(b",\"error\":");
    let _ = serde_json::to_writer(&mut *out, &error.to_json());
    out.push(b'}');
}

/// Appends the response for `result`.
pub(crate) fn write_outcome(out: &mut Vec<u8>, id: &RawValue, result: &Result<Vec<u8>, ProtocolError>) {
    match result {
        Ok(body) => write_result(out, id, body),
        Err(error) => write_error(out, Some(id), error),
    }
}

/// A JSON error response.
pub(crate) fn error(status: StatusCode, id: Option<&RawValue>, error: &ProtocolError) -> HttpResponse {
    let mut out = Vec::with_capacity(128);
    write_error(&mut out, id, error);
    json_response(status, out)
}

/// The HTTP status of a 2026-07-28 error response (the specification's and
/// the official SDKs' table): request-shape, header, capability and version
/// errors are 400, unknown methods 404; errors of a method that ran are 200.
pub(crate) fn stateless_status(error_code: i32) -> StatusCode {
    match error_code {
        rpc::error::code::PARSE_ERROR
        | rpc::error::code::INVALID_REQUEST
        | rpc::error::code::INVALID_PARAMS
        | code::HEADER_MISMATCH
        | code::MISSING_REQUIRED_CLIENT_CAPABILITY
        | code::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        rpc::error::code::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

/// A response carrying one JSON-RPC message, as JSON or as one SSE event;
/// after-response listeners run once it is sent.
pub(crate) fn message(
    inner: &Inner,
    mode: ResponseMode,
    status: StatusCode,
    body: Vec<u8>,
    executions: Vec<Execution>,
) -> HttpResponse {
    let mut response = match mode {
        ResponseMode::Json => json_response(status, body),
        ResponseMode::Sse => {
            let mut response = sse::response(full(sse::event(&body)));
            *response.status_mut() = status;
            response
        }
    };
    notify_when_sent(&mut response, &inner.executor, executions);
    response
}
