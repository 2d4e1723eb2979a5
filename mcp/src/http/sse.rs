//! Server-Sent Events: a stream of messages as a `text/event-stream`
//! response body, each message one `message` event, keep-alives as
//! comments.

use std::convert::Infallible;

use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderValue, Response, StatusCode, header};
use http_body::Frame as BodyFrame;
use http_body_util::{BodyExt, StreamBody};
use rpc::server::body::ResponseBody;

use crate::server::{Frame, MessageStream};

/// An SSE comment: clients ignore it; proxies see traffic.
const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// One SSE `message` event carrying `json`.
pub(crate) fn event(json: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + 24);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(json);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// A message as events: one event, or, for a batch of responses, one
/// event per response (clients read one JSON-RPC message per event).
pub(crate) fn events(json: &[u8]) -> Bytes {
    if json.first() == Some(&b'[')
        && let Ok(items) = serde_json::from_slice::<Vec<&serde_json::value::RawValue>>(json)
    {
        let mut out = Vec::with_capacity(json.len() + 24 * items.len());
        for item in items {
            out.extend_from_slice(&event(item.get().as_bytes()));
        }
        return Bytes::from(out);
    }
    event(json)
}

/// The body of a stream of messages.
pub(crate) fn body(stream: MessageStream) -> ResponseBody {
    let frames = stream.map(|frame| {
        let bytes = match frame {
            Frame::Message(json) => event(&json),
            Frame::KeepAlive => Bytes::from_static(KEEP_ALIVE),
        };
        Ok::<_, Infallible>(BodyFrame::data(bytes))
    });
    BodyExt::boxed_unsync(StreamBody::new(frames))
}

/// A `200 text/event-stream` response with the headers SSE needs.
pub(crate) fn response(body: ResponseBody) -> Response<ResponseBody> {
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, no-transform"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}
