//! HTTP body types shared by the endpoints.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use http_body::{Body, Frame, SizeHint};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Empty, Full};

use super::request_headers::declared_length;
use rpc_core::executor::{Execution, Executor};

/// The body of every response the endpoints produce (`Send`, not `Sync`:
/// a streaming body owns the future of the call it streams).
pub type ResponseBody = UnsyncBoxBody<Bytes, Infallible>;

/// Boxed error type for request bodies.
pub use super::BoxError;

/// A complete body.
pub fn full(bytes: impl Into<Bytes>) -> ResponseBody {
    Full::new(bytes.into()).boxed_unsync()
}

/// An empty body.
pub fn empty() -> ResponseBody {
    Empty::new().boxed_unsync()
}

/// A response with `status`, a JSON body and `Content-Type: application/json`.
pub fn json_response(status: StatusCode, body: impl Into<Bytes>) -> Response<ResponseBody> {
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A response with `status`, a JSON body and `headers` (which name its
/// `Content-Type`: see [`JsonHeaders`](crate::i18n::JsonHeaders)).
pub fn json_response_with(status: StatusCode, body: impl Into<Bytes>, headers: HeaderMap) -> Response<ResponseBody> {
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

/// A response with `status` and no body.
pub fn status_response(status: StatusCode) -> Response<ResponseBody> {
    let mut response = Response::new(empty());
    *response.status_mut() = status;
    response
}

/// Why a request body could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The body is larger than the limit (HTTP 413).
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The connection failed while reading (HTTP 400).
    Io(BoxError),
    /// The body did not arrive within the server's body-read timeout (HTTP 408).
    TimedOut,
}

/// Reads a whole request body, refusing more than `limit` bytes (checked
/// against `Content-Length` first, then while streaming).
pub async fn read_limited<B>(headers: &http::HeaderMap, body: B, limit: usize) -> Result<Bytes, ReadError>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    read_declared(declared_length(headers.get(header::CONTENT_LENGTH)), body, limit).await
}

/// [`read_limited`] with the length `Content-Length` declared (see
/// [`RequestHeaders::declared_length`](super::request_headers::RequestHeaders::declared_length)).
pub async fn read_declared<B>(declared: Option<u64>, body: B, limit: usize) -> Result<Bytes, ReadError>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(ReadError::TooLarge { limit });
    }
    // The frames read one by one: a body that comes in one frame (the
    // usual case) is that frame's bytes, not copied; more frames are joined.
    let mut body = std::pin::pin!(body);
    let mut first: Option<Bytes> = None;
    let mut joined: Option<Vec<u8>> = None;
    let mut total = 0usize;
    while let Some(frame) = body.as_mut().frame().await {
        let frame = frame.map_err(|e| {
            let e: BoxError = e.into();
            if is_timeout(&*e) { ReadError::TimedOut } else { ReadError::Io(e) }
        })?;
        let Ok(data) = frame.into_data() else { continue };
        total = total.saturating_add(data.len());
        if total > limit {
            return Err(ReadError::TooLarge { limit });
        }
        match (&mut joined, first.take()) {
            (Some(joined), _) => joined.extend_from_slice(&data),
            (None, None) => first = Some(data),
            (None, Some(previous)) => {
                let capacity = declared.map_or(total, |len| (len as usize).clamp(total, limit));
                let mut buffer = Vec::with_capacity(capacity);
                buffer.extend_from_slice(&previous);
                buffer.extend_from_slice(&data);
                joined = Some(buffer);
            }
        }
    }
    Ok(match joined {
        Some(joined) => Bytes::from(joined),
        None => first.unwrap_or_default(),
    })
}

/// Whether `error` (or an error it wraps, as axum's body error does) is the
/// body-read deadline of [`serve`](super::serve) (or of tower-http's
/// `RequestBodyTimeoutLayer`, for applications that mount an endpoint in
/// their own server).
fn is_timeout(error: &(dyn std::error::Error + 'static)) -> bool {
    std::iter::successors(Some(error), |e| e.source())
        .any(|e| e.is::<super::deadline::BodyTimedOut>() || e.is::<tower_http::timeout::TimeoutError>())
}

/// Runs [`Executor::response_sent`] for `executions` once the body of
/// `response` has been written (see [`OnSent`]); nothing to do when no
/// execution wants it.
pub fn notify_when_sent(response: &mut Response<ResponseBody>, executor: &Executor, mut executions: Vec<Execution>) {
    executions.retain(Execution::wants_response_sent);
    if executions.is_empty() {
        return;
    }
    let executor = executor.clone();
    run_when_sent(response, move || executor.response_sent(executions));
}

/// Runs `then` once the body of `response` has been written (see [`OnSent`]).
pub fn run_when_sent(response: &mut Response<ResponseBody>, then: impl FnOnce() + Send + Sync + 'static) {
    let body = std::mem::replace(response.body_mut(), empty());
    *response.body_mut() = OnSent::new(body, then).boxed_unsync();
}

/// A body that runs a callback once the server has written it out, for
/// listeners that must run after the client has the response.
///
/// The wrapper never reports `is_end_stream` before the inner body has
/// been polled to its end, so the server polls once more after taking the
/// last frame; hyper does that only when its write buffer has room again,
/// that is after the bulk of the body went to the socket. If the connection
/// goes away first, the callback runs when the body is dropped.
pub struct OnSent<B> {
    inner: B,
    callback: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl<B> OnSent<B> {
    /// Wraps `inner`; `callback` runs once, when the body ends or is dropped.
    pub fn new(inner: B, callback: impl FnOnce() + Send + Sync + 'static) -> Self {
        OnSent { inner, callback: Some(Box::new(callback)) }
    }

    fn fire(&mut self) {
        if let Some(callback) = self.callback.take() {
            callback();
        }
    }
}

impl<B> Drop for OnSent<B> {
    fn drop(&mut self) {
        self.fire();
    }
}

impl<B: Body + Unpin> Body for OnSent<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.fire();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.callback.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::StreamBody;

    use super::*;

    type Chunks = StreamBody<futures_util::stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, BoxError>>>>;

    fn chunks(parts: &[&'static str]) -> Chunks {
        let frames: Vec<Result<Frame<Bytes>, BoxError>> =
            parts.iter().map(|p| Ok(Frame::data(Bytes::from_static(p.as_bytes())))).collect();
        StreamBody::new(futures_util::stream::iter(frames))
    }

    fn read(body: Chunks, declared: Option<&str>, limit: usize) -> Result<Bytes, ReadError> {
        let mut headers = http::HeaderMap::new();
        if let Some(len) = declared {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from_str(len).unwrap());
        }
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(read_limited(&headers, body, limit))
    }

    #[test]
    fn one_frame_many_frames_and_none() {
        let one = Bytes::from_static(b"{\"a\":1}");
        let read_one = read(chunks(&["{\"a\":1}"]), None, 64).unwrap();
        assert_eq!(read_one, one);
        assert_eq!(read_one.as_ptr(), b"{\"a\":1}".as_ptr(), "one frame is not copied");
        assert_eq!(read(chunks(&["{\"a\"", ":", "1}"]), Some("7"), 64).unwrap(), one);
        assert_eq!(read(chunks(&["{\"a\"", ":1}"]), None, 7).unwrap(), one, "exactly the limit");
        assert_eq!(read(chunks(&[]), None, 7).unwrap(), Bytes::new());
    }

    #[test]
    fn more_than_the_limit_is_refused_while_streaming_and_by_its_length() {
        assert!(matches!(read(chunks(&["{\"a\"", ":10}"]), None, 7), Err(ReadError::TooLarge { limit: 7 })));
        assert!(matches!(read(chunks(&["12345678"]), None, 7), Err(ReadError::TooLarge { limit: 7 })));
        // A lying Content-Length does not let more through.
        assert!(matches!(read(chunks(&["1234", "5678"]), Some("3"), 7), Err(ReadError::TooLarge { limit: 7 })));
        assert!(matches!(read(chunks(&["1"]), Some("8"), 7), Err(ReadError::TooLarge { limit: 7 })));
    }

    #[test]
    fn a_failing_body_is_an_io_error() {
        let frames: Vec<Result<Frame<Bytes>, BoxError>> =
            vec![Ok(Frame::data(Bytes::from_static(b"{"))), Err("connection reset".into())];
        let body = StreamBody::new(futures_util::stream::iter(frames));
        assert!(matches!(read(body, None, 64), Err(ReadError::Io(e)) if e.to_string() == "connection reset"));
    }
}
