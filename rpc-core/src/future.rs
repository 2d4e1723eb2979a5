//! [`MaybeReady`]: what an extension point returns when most implementations
//! answer at once (an in-process store, a token check) and some must wait
//! (a network store, a database lookup); [`in_box`]: a large future boxed
//! without a copy through the stack.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;

/// The future `make` builds, boxed: the box is allocated first, so the
/// future can be built in place instead of on the stack and then copied
/// (`Box::pin(f())` copies it, usually twice). A request's future is
/// kilobytes: the endpoints box theirs this way, and so do the branches of
/// a request's path that are rarely taken. It is [`Outlined`] too: a box's
/// `poll` is otherwise inlined into the function that awaits it, with its
/// whole stack frame.
pub fn in_box<F: Future>(make: impl FnOnce() -> F) -> Pin<Box<Outlined<F>>> {
    let slot = Box::new_uninit();
    Box::into_pin(Box::write(slot, outlined(make())))
}

/// `future`, polled by a function of its own that is never inlined into
/// its caller's: see [`Outlined`].
pub fn outlined<F: Future>(future: F) -> Outlined<F> {
    Outlined { future }
}

pin_project_lite::pin_project! {
    /// A future whose `poll` stays a function of its own. An `async` block
    /// that awaits another has the other's `poll` inlined into its own; on
    /// a request's path that makes one function with the stack frame of
    /// every branch of both (kilobytes), and the frames of the functions it
    /// calls start below all of it. A branch taken rarely, or a large
    /// future awaited from a state machine with many branches, outlined
    /// this way keeps the common path's stack small and dense. Same layout,
    /// no allocation: one call more per poll.
    pub struct Outlined<F> {
        #[pin]
        future: F,
    }
}

impl<F: Future> Future for Outlined<F> {
    type Output = F::Output;

    #[inline(never)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.project().future.poll(cx)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_future_boxed_in_place_runs_as_built() {
        let big = [7u8; 8192];
        let mut future = in_box(move || async move {
            tokio::task::yield_now().await;
            big.iter().map(|&b| u32::from(b)).sum::<u32>()
        });
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let waker = std::task::Waker::noop();
        assert!(future.as_mut().poll(&mut Context::from_waker(waker)).is_pending(), "suspended at its await");
        assert_eq!(runtime.block_on(future), 7 * 8192);
    }

    #[test]
    fn an_outlined_future_runs_as_its_inner_one() {
        let mut polls = 0;
        let mut future = std::pin::pin!(outlined(std::future::poll_fn(|cx| {
            polls += 1;
            if polls < 3 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready(polls * 10)
        })));
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(future.as_mut().poll(&mut cx).is_pending());
        assert!(future.as_mut().poll(&mut cx).is_pending());
        assert_eq!(future.as_mut().poll(&mut cx), Poll::Ready(30), "each poll reaches the inner future");
    }
}
