//! Per-connection bookkeeping for the runner's connection timers: requests
//! in flight, when the connection last went idle, when the first byte of
//! the next request arrived, and the watchdog that turns these into the
//! header-read and idle timeouts (see [`limits`](super::limits) for the
//! phases).
//!
//! Requests only touch atomics: the watchdog is never woken by them. It
//! sleeps until the deadline the state implies, or at most a recheck period
//! (the shorter of the two timeouts), and computes the deadline again. A
//! deadline that moves earlier (the first byte of the next request while
//! idle) is therefore found before it passes: the recheck after that byte
//! comes at most one header-read timeout after it.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

/// "No byte since the connection went idle."
const NONE: u64 = u64::MAX;

/// Why the watchdog ended a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expired {
    /// A request head took too long.
    HeaderRead,
    /// Nothing happened for the idle timeout.
    Idle,
    /// A graceful shutdown did not finish in its grace period.
    Closing,
    /// A write made no progress for the write timeout.
    WriteStalled,
}

/// The shared state of one connection.
pub(crate) struct Activity {
    start: Instant,
    header_read: Duration,
    idle: Duration,
    write_stall: Duration,
    in_flight: AtomicUsize,
    /// Whether a request head has been received (the first phase is over).
    served: AtomicBool,
    /// Whether the requests are HTTP/2 (bytes then say nothing about heads).
    http2: AtomicBool,
    /// Whether the HTTP/1 request in flight has body bytes its service has
    /// not read to the end (see [`body_unread`](Self::body_unread)).
    body_unread: AtomicBool,
    /// Milliseconds from `start` to when the last request in flight ended.
    idle_since: AtomicU64,
    /// Milliseconds from `start` to the first byte read while idle, or [`NONE`].
    first_byte: AtomicU64,
    /// Milliseconds from `start` to when a write last found the socket
    /// full (and nothing was written since), or [`NONE`].
    write_blocked: AtomicU64,
}

impl Activity {
    /// A connection accepted now.
    pub(crate) fn new(header_read: Duration, idle: Duration, write_stall: Duration) -> Arc<Activity> {
        Arc::new(Activity {
            start: Instant::now(),
            header_read,
            idle,
            write_stall,
            in_flight: AtomicUsize::new(0),
            served: AtomicBool::new(false),
            http2: AtomicBool::new(false),
            body_unread: AtomicBool::new(false),
            idle_since: AtomicU64::new(0),
            first_byte: AtomicU64::new(NONE),
            write_blocked: AtomicU64::new(NONE),
        })
    }

    /// A write found the socket full (the first time since the last
    /// progress starts the write timeout).
    fn write_blocked(&self) {
        if self.write_blocked.load(Ordering::Relaxed) == NONE {
            let _ = self.write_blocked.compare_exchange(NONE, self.now_ms(), Ordering::SeqCst, Ordering::SeqCst);
        }
    }

    /// A write made progress.
    fn wrote(&self) {
        if self.write_blocked.load(Ordering::Relaxed) != NONE {
            self.write_blocked.store(NONE, Ordering::SeqCst);
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(NONE - 1)
    }

    fn at(&self, ms: u64, plus: Duration) -> Option<Instant> {
        self.start.checked_add(Duration::from_millis(ms))?.checked_add(plus)
    }

    /// A request head was received; the returned guard ends the request
    /// when dropped (with the response body, or the handler's future).
    pub(crate) fn request_started(self: &Arc<Self>, http2: bool) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        // Stored once: a store on every request would be a locked write.
        if !self.served.load(Ordering::Acquire) {
            self.served.store(true, Ordering::Release);
        }
        if http2 && !self.http2.load(Ordering::Relaxed) {
            self.http2.store(true, Ordering::Relaxed);
        }
        InFlight(self.clone())
    }

    /// An HTTP/1 request starts, with a body to read (`true`) or none.
    pub(crate) fn body_opened(&self, unread: bool) {
        self.body_unread.store(unread, Ordering::Relaxed);
    }

    /// The request's body was read to its end.
    pub(crate) fn body_read(&self) {
        self.body_unread.store(false, Ordering::Relaxed);
    }

    /// Whether the HTTP/1 request in flight still has body bytes unread
    /// when its response is ready: a service that answered without reading
    /// them (a refusal). hyper then drains what has arrived and closes the
    /// connection if that is not all of it, which the response must say
    /// (`Connection: close`), or a client may send its next request on a
    /// connection the server is closing.
    pub(crate) fn body_unread(&self) -> bool {
        self.body_unread.load(Ordering::Relaxed)
    }

    fn request_ended(&self) {
        // Released by the decrement: a watchdog that finds no request in
        // flight also finds when the last one ended.
        self.idle_since.store(self.now_ms(), Ordering::Release);
        self.first_byte.store(NONE, Ordering::Release);
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
    }

    /// Bytes were read from the socket.
    fn bytes_read(&self) {
        if self.in_flight.load(Ordering::Acquire) == 0 && self.first_byte.load(Ordering::Acquire) == NONE {
            let _ = self.first_byte.compare_exchange(NONE, self.now_ms(), Ordering::AcqRel, Ordering::Acquire);
        }
    }

    /// How often the watchdog looks again when no deadline is near: often
    /// enough that a deadline that moved earlier is not missed.
    fn recheck(&self, closing: Option<(Instant, Duration)>) -> Duration {
        let period = self.header_read.min(self.idle).min(self.write_stall);
        let period = closing.map_or(period, |(_, grace)| period.min(grace));
        period.max(Duration::from_millis(5))
    }

    /// The deadline in force, if any, and what it is for. `closing`: when a
    /// graceful shutdown started (then only an idle grace period counts).
    fn deadline(&self, closing: Option<(Instant, Duration)>) -> Option<(Option<Instant>, Expired)> {
        let blocked = self.write_blocked.load(Ordering::SeqCst);
        if blocked != NONE {
            return Some((self.at(blocked, self.write_stall), Expired::WriteStalled));
        }
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let idle_since = self.idle_since.load(Ordering::SeqCst);
        if let Some((since, grace)) = closing {
            let idle_at = self.at(idle_since, Duration::ZERO).unwrap_or(since);
            return Some((since.max(idle_at).checked_add(grace), Expired::Closing));
        }
        if !self.served.load(Ordering::SeqCst) {
            return Some((self.at(0, self.header_read), Expired::HeaderRead));
        }
        let first_byte = self.first_byte.load(Ordering::SeqCst);
        if first_byte != NONE && !self.http2.load(Ordering::Relaxed) {
            return Some((self.at(first_byte, self.header_read), Expired::HeaderRead));
        }
        Some((self.at(idle_since, self.idle), Expired::Idle))
    }

    /// Resolves when the connection overstays a timeout (while a request is
    /// in flight, only the write timeout). With `closing`, when it has had no request in
    /// flight for the grace period since the graceful shutdown started.
    pub(crate) async fn expired(&self, closing: Option<(Instant, Duration)>) -> Expired {
        let recheck = self.recheck(closing);
        loop {
            let now = Instant::now();
            let next = now.checked_add(recheck);
            let wake = match self.deadline(closing) {
                Some((Some(at), why)) if at <= now => return why,
                Some((Some(at), _)) => next.map_or(at, |next| at.min(next)),
                // In flight, or a deadline too far to represent.
                None | Some((None, _)) => next.unwrap_or(now),
            };
            tokio::time::sleep_until(wake).await;
        }
    }
}

/// A request in flight; dropping it ends the request.
pub(crate) struct InFlight(Arc<Activity>);

impl InFlight {
    /// The connection's activity.
    pub(crate) fn activity(&self) -> &Activity {
        &self.0
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.request_ended();
    }
}

/// The accepted socket: reports reads to the connection's [`Activity`] and
/// holds the connection's slot under the cap for as long as it is open.
pub(crate) struct TrackedIo {
    stream: TcpStream,
    activity: Arc<Activity>,
    _slot: OwnedSemaphorePermit,
    /// Bytes read before the connection was served, which it reads first
    /// (see [`replay`](Self::replay)); empty nearly always.
    replay: Vec<u8>,
}

impl TrackedIo {
    pub(crate) fn new(stream: TcpStream, activity: Arc<Activity>, slot: OwnedSemaphorePermit) -> Self {
        TrackedIo { stream, activity, _slot: slot, replay: Vec::new() }
    }

    /// Waits for bytes and copies the first of them into `buf` without
    /// taking them from the socket; 0 when the client has closed.
    pub(crate) async fn peek(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stream.peek(buf).await
    }

    /// Gives `bytes`, read from the socket already, back: the next reads
    /// return them before anything else.
    pub(crate) fn replay(&mut self, bytes: &[u8]) {
        self.replay.splice(0..0, bytes.iter().copied());
    }
}

impl AsyncRead for TrackedIo {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if !self.replay.is_empty() {
            let n = self.replay.len().min(buf.remaining());
            buf.put_slice(&self.replay[..n]);
            self.replay.drain(..n);
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.bytes_read();
        }
        polled
    }
}

impl TrackedIo {
    /// Tells the activity whether a write went through or found the socket full.
    fn track<T>(&self, polled: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        match &polled {
            Poll::Pending => self.activity.write_blocked(),
            Poll::Ready(_) => self.activity.wrote(),
        }
        polled
    }
}

impl AsyncWrite for TrackedIo {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.track(polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.track(polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: Duration = Duration::from_secs(10);
    const IDLE: Duration = Duration::from_secs(60);
    const WRITE: Duration = Duration::from_secs(30);

    #[tokio::test(start_paused = true)]
    async fn a_stalled_write_expires_even_in_flight() {
        let activity = Activity::new(HEAD, IDLE, WRITE);
        let _guard = activity.request_started(false);
        assert_eq!(activity.deadline(None), None);
        tokio::time::advance(Duration::from_secs(5)).await;
        activity.write_blocked();
        assert_eq!(activity.deadline(None), Some((activity.at(5_000, WRITE), Expired::WriteStalled)));
        tokio::time::advance(Duration::from_secs(5)).await;
        activity.write_blocked();
        assert_eq!(activity.deadline(None), Some((activity.at(5_000, WRITE), Expired::WriteStalled)), "from the first");
        activity.wrote();
        assert_eq!(activity.deadline(None), None, "progress ends the stall");
        activity.write_blocked();
        let watchdog = tokio::spawn({
            let activity = activity.clone();
            async move { activity.expired(None).await }
        });
        let started = Instant::now();
        assert_eq!(watchdog.await.ok(), Some(Expired::WriteStalled));
        assert!(started.elapsed() <= WRITE + HEAD, "{:?}", started.elapsed());
    }

    #[tokio::test(start_paused = true)]
    async fn phases() {
        let activity = Activity::new(HEAD, IDLE, WRITE);
        // Until the first request: the header-read timeout from accept, bytes or not.
        activity.bytes_read();
        assert_eq!(activity.deadline(None), Some((activity.at(0, HEAD), Expired::HeaderRead)));
        let guard = activity.request_started(false);
        assert_eq!(activity.deadline(None), None);
        tokio::time::advance(Duration::from_secs(100)).await;
        activity.bytes_read(); // body bytes
        drop(guard);
        // Idle from the end of the request, then the header-read timeout from the next byte.
        assert_eq!(activity.deadline(None), Some((activity.at(100_000, IDLE), Expired::Idle)));
        tokio::time::advance(Duration::from_secs(30)).await;
        activity.bytes_read();
        assert_eq!(activity.deadline(None), Some((activity.at(130_000, HEAD), Expired::HeaderRead)));
        // HTTP/2: bytes are not heads; the idle timeout runs on.
        drop(activity.request_started(true));
        activity.bytes_read();
        assert_eq!(activity.deadline(None), Some((activity.at(130_000, IDLE), Expired::Idle)));
    }

    #[tokio::test(start_paused = true)]
    async fn watchdog_waits_for_requests_in_flight() {
        let activity = Activity::new(HEAD, IDLE, WRITE);
        let guard = activity.request_started(false);
        let watchdog = tokio::spawn({
            let activity = activity.clone();
            async move { activity.expired(None).await }
        });
        tokio::time::sleep(Duration::from_secs(1000)).await;
        assert!(!watchdog.is_finished(), "no timeout while a request is in flight");
        drop(guard);
        let started = Instant::now();
        assert_eq!(watchdog.await.ok(), Some(Expired::Idle));
        assert_eq!(started.elapsed(), IDLE);
    }

    #[tokio::test(start_paused = true)]
    async fn closing_grace_counts_from_the_last_request() {
        let activity = Activity::new(HEAD, IDLE, WRITE);
        let grace = Duration::from_secs(2);
        let guard = activity.request_started(true);
        let closing = Some((Instant::now(), grace));
        assert_eq!(activity.deadline(closing), None);
        tokio::time::advance(Duration::from_secs(5)).await;
        drop(guard);
        let ended = Instant::now();
        assert_eq!(activity.expired(closing).await, Expired::Closing);
        assert_eq!(ended.elapsed(), grace);
    }

    #[test]
    fn huge_timeouts_do_not_overflow() {
        let activity = Activity::new(Duration::MAX, Duration::MAX, Duration::MAX);
        assert_eq!(activity.deadline(None), Some((None, Expired::HeaderRead)));
    }
}
