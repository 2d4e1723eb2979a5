//! Calling a `tower` service that is ready at once without parking the
//! request first: the router and the connection's service both do it for
//! every request.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use futures_util::future::Either;
use tower::util::Oneshot;
use tower::{Service, ServiceExt};

/// `service` called with `request` now when it is ready at once (asked with
/// a no-op waker: there is nothing to wake when it is), as the bundled
/// endpoints and the router always are; otherwise a [`Oneshot`] that polls
/// it, with the task's waker, until it is ready and then calls it, boxed:
/// the first saves the copy of the request a `Oneshot` holds, and the
/// future, which hyper moves into its place, stays the size of the first.
pub(crate) fn call_ready<S, R>(mut service: S, request: R) -> Either<S::Future, Pin<Box<Oneshot<S, R>>>>
where
    S: Service<R, Error = Infallible>,
{
    match service.poll_ready(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(Ok(())) => Either::Left(service.call(request)),
        Poll::Ready(Err(never)) => match never {},
        Poll::Pending => Either::Right(Box::pin(service.oneshot(request))),
    }
}
