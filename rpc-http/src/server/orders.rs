//! What a connection's watchdog tells the task driving the connection:
//! shut down gracefully (a timeout passed, or the server drains), then
//! close now (the graceful shutdown overstayed its grace, or serving
//! ended).
//!
//! The driving task looks for an order each time the connection waits,
//! which is several times per request. A channel's receive cost about 190
//! instructions each time (its lock-free queue and the runtime's budget);
//! this is two atomic loads and a waker registration that keeps the waker
//! it has.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::task::{Context, Poll};

use futures_util::task::AtomicWaker;

use super::activity::Expired;

/// An order of the watchdog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    /// Shut the connection down gracefully, for this reason.
    Shutdown(Expired),
    /// Close it now.
    Close,
}

/// The orders of one connection: at most one shutdown, then a close.
#[derive(Default)]
pub(crate) struct Orders {
    /// The shutdown's reason ([`code`]), 0 while there is none or once taken.
    shutdown: AtomicU8,
    close: AtomicBool,
    waker: AtomicWaker,
}

const NONE: u8 = 0;

fn code(reason: Expired) -> u8 {
    match reason {
        Expired::HeaderRead => 1,
        Expired::Idle => 2,
        Expired::Closing => 3,
        Expired::WriteStalled => 4,
    }
}

fn reason(code: u8) -> Expired {
    match code {
        1 => Expired::HeaderRead,
        2 => Expired::Idle,
        4 => Expired::WriteStalled,
        _ => Expired::Closing,
    }
}

impl Orders {
    /// Orders a graceful shutdown for `why`.
    pub fn shutdown(&self, why: Expired) {
        self.shutdown.store(code(why), Ordering::Release);
        self.waker.wake();
    }

    /// Orders the connection closed now.
    pub fn close(&self) {
        self.close.store(true, Ordering::Release);
        self.waker.wake();
    }

    /// The next order: a close before a shutdown, a shutdown once.
    pub fn poll_order(&self, cx: &mut Context<'_>) -> Poll<Command> {
        self.waker.register(cx.waker());
        if self.close.load(Ordering::Acquire) {
            return Poll::Ready(Command::Close);
        }
        if self.shutdown.load(Ordering::Acquire) != NONE {
            return Poll::Ready(Command::Shutdown(reason(self.shutdown.swap(NONE, Ordering::AcqRel))));
        }
        Poll::Pending
    }

    /// Ready once the connection is ordered closed.
    pub fn poll_close(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.waker.register(cx.waker());
        if self.close.load(Ordering::Acquire) { Poll::Ready(()) } else { Poll::Pending }
    }
}

#[cfg(test)]
mod tests {
    use std::future::poll_fn;
    use std::sync::Arc;

    use super::*;

    #[tokio::test]
    async fn orders_arrive_once_and_wake_the_waiting_task() {
        let orders = Arc::new(Orders::default());
        let waiting = tokio::spawn({
            let orders = Arc::clone(&orders);
            async move { poll_fn(|cx| orders.poll_order(cx)).await }
        });
        tokio::task::yield_now().await;
        orders.shutdown(Expired::WriteStalled);
        assert_eq!(waiting.await.unwrap(), Command::Shutdown(Expired::WriteStalled));
        // Taken: the next order is the close, which wakes its waiter too.
        let closing = tokio::spawn({
            let orders = Arc::clone(&orders);
            async move { poll_fn(|cx| orders.poll_order(cx)).await }
        });
        tokio::task::yield_now().await;
        assert!(!closing.is_finished(), "no second shutdown");
        orders.close();
        assert_eq!(closing.await.unwrap(), Command::Close);
        assert!(poll_fn(|cx| Poll::Ready(orders.poll_close(cx))).await.is_ready());
    }

    #[test]
    fn every_reason_round_trips_and_a_close_comes_first() {
        for why in [Expired::HeaderRead, Expired::Idle, Expired::Closing, Expired::WriteStalled] {
            assert_eq!(reason(code(why)), why);
        }
        let orders = Orders::default();
        let waker = futures_util::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        assert_eq!(orders.poll_order(&mut cx), Poll::Pending);
        assert_eq!(orders.poll_close(&mut cx), Poll::Pending);
        orders.shutdown(Expired::Idle);
        orders.close();
        assert_eq!(orders.poll_order(&mut cx), Poll::Ready(Command::Close));
    }
}
