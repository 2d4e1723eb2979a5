//! The service the runner hands hyper for one connection: it counts the
//! request in flight until its response body is done, gives the request
//! body its deadline, bounds the time to the response head, and asks
//! HTTP/1 clients to close after a `408` or an answer given without reading
//! the request's body to its end.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures_util::future::Either;
use http::{HeaderValue, Request, Response, StatusCode, Version, header};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use pin_project_lite::pin_project;
use tower::util::Oneshot;

use super::activity::{Activity, InFlight};
use super::body::{ResponseBody, status_response};
use super::connection::Connection;
use super::deadline::{Deadline, DeadlineBody, Elapsed};
use super::ready_call::call_ready;

/// The request body [`serve`](super::serve) hands the application: hyper's
/// body under the [body-read deadline](super::ServerLimits::body_read_timeout).
/// Once the deadline passes it yields a [`BodyTimedOut`](super::deadline::BodyTimedOut),
/// which [`read_limited`](super::body::read_limited) reports as
/// [`ReadError::TimedOut`](super::body::ReadError::TimedOut).
pub type IncomingBody = DeadlineBody<Incoming>;

/// One connection's service (see the module documentation).
pub(crate) struct ConnService<S> {
    inner: S,
    request_timeout: Duration,
    activity: Arc<Activity>,
    connection: Connection,
    body_read_timeout: Duration,
    /// The application reads the connection from the body (the router, the
    /// bundled endpoints: see [`reads_routed_body`](super::request_body::reads_routed_body)):
    /// it is not put into the extensions, which would cost three
    /// allocations per request.
    in_body: bool,
}

impl<S> ConnService<S> {
    pub(crate) fn new(
        app: S,
        activity: Arc<Activity>,
        connection: Connection,
        request_timeout: Duration,
        body_read_timeout: Duration,
    ) -> Self
    where
        S: 'static,
    {
        let in_body = super::request_body::is_reader::<S>();
        ConnService { inner: app, request_timeout, activity, connection, body_read_timeout, in_body }
    }
}

impl<S> hyper::service::Service<Request<Incoming>> for ConnService<S>
where
    S: tower::Service<Request<IncomingBody>, Response = Response<ResponseBody>, Error = Infallible> + Clone,
{
    type Response = Response<Tracked<ResponseBody>>;
    type Error = Infallible;
    type Future = ConnFuture<Either<S::Future, Pin<Box<Oneshot<S, Request<IncomingBody>>>>>>;

    fn call(&self, mut request: Request<Incoming>) -> Self::Future {
        let http1 = matches!(request.version(), Version::HTTP_09 | Version::HTTP_10 | Version::HTTP_11);
        let in_flight = self.activity.request_started(!http1);
        if http1 {
            self.activity.body_opened(!request.body().is_end_stream());
        }
        let timeout = self.body_read_timeout;
        let connection = self.connection.clone();
        if !self.in_body {
            // As documented: in the extensions, for any other application.
            request.extensions_mut().insert(connection.clone());
        }
        // The body carries it too: it tells the connection when it is read.
        let request = request.map(|body| DeadlineBody::new(timeout, body).with_connection(connection));
        let inner = Deadline::new(self.request_timeout, call_ready(self.inner.clone(), request));
        ConnFuture { inner, in_flight: Some(in_flight), http1 }
    }
}

pin_project! {
    /// The response future of [`ConnService`].
    pub(crate) struct ConnFuture<F> {
        #[pin]
        inner: Deadline<F>,
        in_flight: Option<InFlight>,
        http1: bool,
    }
}

impl<F> Future for ConnFuture<F>
where
    F: Future<Output = Result<Response<ResponseBody>, Infallible>>,
{
    type Output = Result<Response<Tracked<ResponseBody>>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut response = match ready!(this.inner.poll(cx)) {
            Ok(Ok(response)) => response,
            Ok(Err(never)) => match never {},
            Err(Elapsed) => status_response(StatusCode::REQUEST_TIMEOUT),
        };
        let in_flight = this.in_flight.take();
        let unread = in_flight.as_ref().is_some_and(|request| request.activity().body_unread());
        if *this.http1 && (unread || response.status() == StatusCode::REQUEST_TIMEOUT) {
            // The request body is unread or half read: hyper drains what has
            // arrived and closes the connection unless that was all of it, so
            // the client must not send another request on it.
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        Poll::Ready(Ok(response.map(|body| Tracked { body, _in_flight: in_flight })))
    }
}

/// A response body that keeps its request in flight until hyper is done
/// with it (written out, or dropped with the connection).
pub(crate) struct Tracked<B> {
    body: B,
    _in_flight: Option<InFlight>,
}

impl<B: Body + Unpin> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::server::body::json_response;

    /// Ready only on its second `poll_ready` (which it asks to be woken
    /// for); answers with the client's address it finds in the request.
    #[derive(Clone, Default)]
    struct Slow {
        polled: Arc<AtomicUsize>,
    }

    impl tower::Service<Request<IncomingBody>> for Slow {
        type Response = Response<ResponseBody>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Response<ResponseBody>, Infallible>>;

        fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            if self.polled.fetch_add(1, Ordering::SeqCst).is_multiple_of(2) {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: Request<IncomingBody>) -> Self::Future {
            let peer = request.extensions().get::<Connection>().map(|c| c.peer().ip().to_string());
            std::future::ready(Ok(json_response(
                StatusCode::OK,
                format!("{{\"peer\":\"{}\"}}", peer.unwrap_or_default()),
            )))
        }
    }

    #[tokio::test]
    async fn a_service_not_ready_at_once_is_waited_for_and_sees_its_connection() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let slow = Slow::default();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(crate::server::serve(listener, slow.clone(), async {
            let _ = stopped.await;
        }));
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        stream.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with(r#"{"peer":"127.0.0.1"}"#), "{answer}");
        assert_eq!(slow.polled.load(Ordering::SeqCst), 2, "polled again after Pending");
        let _ = stop.send(());
        server.await.unwrap().unwrap();
    }
}
