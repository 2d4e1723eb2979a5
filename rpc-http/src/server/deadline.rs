//! The per-request timers of the runner, armed only when they can matter:
//! a request body that is all there at its first read (the common case
//! for API calls) and a handler that answers at its first poll never start
//! a timer, so fast requests pay nothing for them. A timer that is armed
//! runs for its whole duration: the bounds hold for every slow request.

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;
use tokio::time::Sleep;

use super::BoxError;
use super::connection::Connection;

/// The request body did not arrive within the body-read timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyTimedOut;

impl fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the request body did not arrive in time")
    }
}

impl Error for BodyTimedOut {}

pin_project! {
    /// A request body with a deadline: the first time a frame has to be
    /// waited for, a timer of the body-read timeout starts; when it passes
    /// before the body ends, the body yields [`BodyTimedOut`].
    pub struct DeadlineBody<B> {
        #[pin]
        inner: B,
        timeout: Duration,
        timer: Option<Pin<Box<Sleep>>>,
        expired: bool,
        connection: Option<Connection>,
    }
}

impl<B> DeadlineBody<B> {
    /// `inner` with `timeout`.
    pub fn new(timeout: Duration, inner: B) -> Self {
        DeadlineBody { inner, timeout, timer: None, expired: false, connection: None }
    }

    /// The body of a request that came on `connection`, which it carries
    /// for a service that reads it from here (see
    /// [`reads_routed_body`](super::request_body::reads_routed_body)) and
    /// tells when the body has been read to its end.
    #[cfg(feature = "server")]
    pub(crate) fn with_connection(mut self, connection: Connection) -> Self {
        self.connection = Some(connection);
        self
    }

    /// The connection the request came on, when the runner carried it here
    /// (it does for every request it serves; the application's own services
    /// find it in the extensions as well).
    pub fn connection(&self) -> Option<&Connection> {
        self.connection.as_ref()
    }
}

impl<B> Body for DeadlineBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let mut this = self.project();
        if *this.expired {
            return Poll::Ready(None);
        }
        if let Poll::Ready(frame) = this.inner.as_mut().poll_frame(cx) {
            if let (Some(connection), true) = (&*this.connection, this.inner.is_end_stream() || frame.is_none()) {
                connection.body_read();
            }
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        // Boxed when it starts: most bodies never need it, and the body
        // stays small (it is moved through the request's path).
        let timer = this.timer.get_or_insert_with(|| Box::pin(tokio::time::sleep(*this.timeout)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => {
                *this.expired = true;
                Poll::Ready(Some(Err(BodyTimedOut.into())))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.expired || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

pin_project! {
    /// A handler's future with a deadline, armed when the future is first
    /// pending: `Err(Elapsed)` once the timeout passes.
    pub(crate) struct Deadline<F> {
        #[pin]
        inner: F,
        timeout: Duration,
        timer: Option<Pin<Box<Sleep>>>,
    }
}

/// The handler did not produce its response head in time.
pub(crate) struct Elapsed;

impl<F> Deadline<F> {
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    pub(crate) fn new(timeout: Duration, inner: F) -> Self {
        Deadline { inner, timeout, timer: None }
    }
}

impl<F: Future> Future for Deadline<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(output) = this.inner.poll(cx) {
            return Poll::Ready(Ok(output));
        }
        // Boxed when it starts: most requests never need it, and hyper
        // moves the request's future (this one) into its place.
        let timer = this.timer.get_or_insert_with(|| Box::pin(tokio::time::sleep(*this.timeout)));
        timer.as_mut().poll(cx).map(|()| Err(Elapsed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use http_body_util::{BodyExt, Full, StreamBody};

    #[tokio::test(start_paused = true)]
    async fn a_body_that_is_there_needs_no_timer_and_a_stalled_one_times_out() {
        let ready = DeadlineBody::new(Duration::from_millis(10), Full::new(Bytes::from_static(b"{}")));
        assert_eq!(ready.collect().await.unwrap().to_bytes(), Bytes::from_static(b"{}"));
        let stalled = futures_util::stream::pending::<Result<Frame<Bytes>, BoxError>>();
        let body = DeadlineBody::new(Duration::from_secs(30), StreamBody::new(stalled));
        let started = tokio::time::Instant::now();
        let error = body.collect().await.unwrap_err();
        assert!(error.is::<BodyTimedOut>());
        assert_eq!(started.elapsed(), Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn a_handler_is_cut_at_its_deadline_only_when_pending() {
        assert!(Deadline::new(Duration::ZERO, std::future::ready(7)).await.is_ok(), "ready at once: no timer");
        let started = tokio::time::Instant::now();
        assert!(Deadline::new(Duration::from_secs(5), std::future::pending::<()>()).await.is_err());
        assert_eq!(started.elapsed(), Duration::from_secs(5));
    }
}
