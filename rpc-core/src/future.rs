//! [`MaybeReady`]: what an extension point returns when most implementations
//! answer at once (an in-process store, a token check) and some must wait
//! (a network store, a database lookup).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;

/// A value ready now (no allocation) or a boxed future of it.
pub enum MaybeReady<'a, T> {
    /// Already done.
    Ready(Option<T>),
    /// Still to do.
    Pending(BoxFuture<'a, T>),
}

impl<T> MaybeReady<'_, T> {
    /// A value available now.
    pub fn ready(value: T) -> Self {
        MaybeReady::Ready(Some(value))
    }
}

impl<'a, T> MaybeReady<'a, T> {
    /// The result of `future`, once it completes.
    pub fn pending(future: impl Future<Output = T> + Send + 'a) -> Self {
        MaybeReady::Pending(Box::pin(future))
    }

    /// `f` of the value: now if it is ready, else when it is.
    pub fn map<U>(self, f: impl FnOnce(T) -> U + Send + 'a) -> MaybeReady<'a, U>
    where
        T: Send + 'a,
    {
        match self {
            MaybeReady::Ready(value) => MaybeReady::Ready(value.map(f)),
            MaybeReady::Pending(future) => MaybeReady::pending(async move { f(future.await) }),
        }
    }
}

impl<T: Unpin> Future for MaybeReady<'_, T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        match self.get_mut() {
            // Polling a completed future is a caller bug; it is reported as
            // a panic by every future, this one included.
            MaybeReady::Ready(value) => Poll::Ready(value.take().expect("MaybeReady polled after completion")),
            MaybeReady::Pending(future) => future.as_mut().poll(cx),
        }
    }
}
