//! A [`Reply`] as an HTTP response: the status its outcome class maps to,
//! JSON or one SSE event for a message (the client's choice, for results),
//! an SSE body for a stream, the session header `initialize` sets; the
//! after-response work runs once the body is sent.

use http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use rpc::server::body::{ResponseBody, full, json_response, json_response_with, notify_when_sent, status_response};

use super::headers::SESSION_HEADER;
use super::sse;
use crate::server::{Accepts, McpServer, Reply, Status};

pub(crate) type HttpResponse = Response<ResponseBody>;

/// The HTTP status of an outcome class.
pub(crate) fn status_code(status: Status) -> StatusCode {
    match status {
        Status::Ok => StatusCode::OK,
        Status::Accepted => StatusCode::ACCEPTED,
        Status::BadRequest => StatusCode::BAD_REQUEST,
        Status::NotFound => StatusCode::NOT_FOUND,
        Status::NotAcceptable => StatusCode::NOT_ACCEPTABLE,
        Status::Forbidden => StatusCode::FORBIDDEN,
        Status::TooManyRequests => StatusCode::TOO_MANY_REQUESTS,
        Status::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
        Status::ServiceUnavailable => StatusCode::SERVICE_UNAVAILABLE,
    }
}

/// `reply` to a client that accepts `accepts`; `challenge` gives the
/// `WWW-Authenticate` of a call refused for scopes its caller lacks.
pub(crate) fn to_http(
    server: &McpServer,
    reply: Reply,
    accepts: Accepts,
    challenge: impl FnOnce(&[&str]) -> Option<HeaderValue>,
) -> HttpResponse {
    to_http_with(server, reply, accepts, challenge, None).0
}

/// [`to_http`], a JSON answer taking `json_headers` (its `Content-Type` and
/// language headers, built once) when given: then `true` with the response.
pub(crate) fn to_http_with(
    server: &McpServer,
    reply: Reply,
    accepts: Accepts,
    challenge: impl FnOnce(&[&str]) -> Option<HeaderValue>,
    json_headers: Option<&HeaderMap>,
) -> (HttpResponse, bool) {
    match reply {
        Reply::Accepted => (status_response(StatusCode::ACCEPTED), false),
        Reply::Stream(stream) => (sse::response(sse::body(stream)), false),
        Reply::Message(message) => {
            let status = status_code(message.status);
            let (mut response, with_headers) = if message.negotiable && !accepts.json && accepts.stream {
                let mut response = sse::response(full(sse::events(&message.body)));
                *response.status_mut() = status;
                (response, false)
            } else if let Some(headers) = json_headers {
                (json_response_with(status, message.body, headers.clone()), true)
            } else {
                (json_response(status, message.body), false)
            };
            if let Some(id) = message.session
                && let Ok(value) = HeaderValue::from_str(&id)
            {
                response.headers_mut().insert(SESSION_HEADER, value);
            }
            if let Some(seconds) = message.retry_after {
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
            }
            if let Some(value) = message.needs_scopes.and_then(challenge) {
                response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
            }
            notify_when_sent(&mut response, &server.inner.executor, message.executions);
            (response, with_headers)
        }
    }
}
