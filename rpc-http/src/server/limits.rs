//! Connection-level limits of the bundled server: timeouts, header sizes,
//! HTTP/2 stream limits and a cap on concurrent connections.
//!
//! [`serve`](super::serve) applies [`ServerLimits::default()`];
//! [`serve_with`](super::serve_with) takes them explicitly:
//!
//! ```no_run
//! # extern crate rpc_http as rpc;
//! # async fn demo(listener: tokio::net::TcpListener, app: rpc::server::Router) -> std::io::Result<()> {
//! use std::time::Duration;
//! use rpc::server::ServerLimits;
//!
//! let limits = ServerLimits::default()
//!     .request_timeout(Duration::from_secs(300)) // long-running tools that report no progress
//!     .max_connections(4096);
//! rpc::server::serve_with(listener, app, rpc::server::shutdown_signal(), limits).await
//! # }
//! ```
//!
//! # How the timeouts fit together
//!
//! A connection is always in one of these phases, each with its own timer:
//!
//! | phase | HTTP/1 | HTTP/2 |
//! |---|---|---|
//! | from accept until the first request's head is complete | header-read timeout | header-read timeout (preface, SETTINGS and the first HEADERS) |
//! | a request in flight (head received, response body not yet fully written) | body-read timeout (request body) and request timeout (until the response head); no connection timer | same, per stream |
//! | no request in flight, no byte of a new request yet | idle timeout | idle timeout (PINGs, SETTINGS and WINDOW_UPDATEs do not count as activity) |
//! | no request in flight, first byte of the next request received | header-read timeout, from that byte | — (HTTP/2 frames cannot be told apart from keep-alive traffic: the idle timeout runs on) |
//!
//! The idle and header-read timeouts are therefore independent: a kept-alive
//! HTTP/1 connection may wait the whole idle timeout for its next request,
//! and that request then has the header-read timeout to send its head.
//! (hyper's own HTTP/1 header-read timer cannot do this: it starts whenever
//! hyper waits for a head, including the wait between requests, so it would
//! cap the idle time too. The runner gives HTTP/1 no hyper timer: a
//! per-connection watchdog task keeps both timeouts, and requests never wake
//! it, see `activity`.)
//!
//! The body-read and request timeouts start a timer only when they can
//! matter: when the body has to be waited for, when the handler is not done
//! at its first poll (see [`deadline`](super::deadline)). A fast request
//! starts no timer at all; a slow one gets the whole timeout.
//!
//! When the idle or header-read timeout fires, the connection is shut down
//! gracefully (HTTP/1: closed at once, nothing is in flight; HTTP/2: GOAWAY)
//! and closed for good if it has not finished within a short grace period.
//! Long-lived response bodies (SSE streams) are requests in flight: no
//! connection timer cuts them, and the request timeout ends with the
//! response head.
//!
//! In every phase, a write that cannot make progress (a client that stopped
//! reading: its receive window and the socket's send buffer are full) for
//! the write timeout closes the connection at once, so what such a client
//! holds on the server (the response it does not read) is released after
//! at most that long.
//!
//! What the timers do not cover: bytes of the next HTTP/1 request that
//! arrive while the previous one is in flight (pipelining) do not start the
//! header-read timer, so that head gets the idle timeout; a connection
//! upgraded away from HTTP (`101 Switching Protocols`) leaves the timers but
//! keeps its place under the connection cap until its socket is closed.

use std::time::Duration;

/// The default cap on concurrent connections (lowered automatically when
/// the process may not open that many files, see [`ServerLimits::max_connections`]).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// File descriptors kept out of the automatic connection cap for the rest of
/// the process (the listener, the runtime, logs, outgoing connections, ...).
const FD_RESERVE: u64 = 128;

/// Sockets that may be kept open at once to answer connections over the cap
/// with a 503 (each for at most a second); connections beyond these are
/// closed without an answer.
pub(crate) const REFUSAL_SLOTS: usize = 32;

/// hyper's minimum for its HTTP/1 buffer, hence for [`ServerLimits::max_header_bytes`].
const MIN_HEADER_BYTES: usize = 8 * 1024;

/// hyper's HTTP/1 default number of headers (kept on the stack; any other
/// value costs hyper a heap allocation per request).
pub(crate) const HYPER_DEFAULT_MAX_HEADERS: usize = 100;

/// Connection-level limits of [`serve_with`](super::serve_with). The
/// [`Default`] values are safe for a server exposed to untrusted clients;
/// the setters change one value each.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerLimits {
    pub(crate) header_read_timeout: Duration,
    pub(crate) body_read_timeout: Duration,
    pub(crate) request_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) write_timeout: Duration,
    pub(crate) max_connections: Option<usize>,
    pub(crate) max_header_bytes: usize,
    pub(crate) max_headers: usize,
    pub(crate) http2_max_header_list_size: u32,
    pub(crate) http2_max_concurrent_streams: u32,
    pub(crate) http2_max_pending_accept_reset_streams: usize,
    pub(crate) http2_keep_alive_interval: Option<Duration>,
    pub(crate) http2_keep_alive_timeout: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(120),
            idle_timeout: Duration::from_secs(60),
            write_timeout: Duration::from_secs(30),
            max_connections: None,
            max_header_bytes: 64 * 1024,
            max_headers: HYPER_DEFAULT_MAX_HEADERS,
            http2_max_header_list_size: 16 * 1024,
            http2_max_concurrent_streams: 100,
            http2_max_pending_accept_reset_streams: 20,
            http2_keep_alive_interval: Some(Duration::from_secs(20)),
            http2_keep_alive_timeout: Duration::from_secs(20),
        }
    }
}

impl ServerLimits {
    /// How long a client has to send a request head: from accept until the
    /// first request's head is complete, and on a kept-alive HTTP/1
    /// connection from the first byte of the next request (the wait before
    /// that byte is the [idle timeout](Self::idle_timeout)). On expiry the
    /// connection is closed without a response. Default: 10 s.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How long the whole request body may take to arrive, counted from the
    /// first time the handler has to wait for it (a body that came with its
    /// head starts no timer), however steadily it trickles in. A
    /// body that is late makes the endpoints answer `408 Request Timeout`
    /// (with `Connection: close` over HTTP/1). Applies to bodies a handler
    /// reads; default: 30 s.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// How long a request may take until its response head is ready
    /// (reading the body included); past it the client gets
    /// `408 Request Timeout` (with `Connection: close` over HTTP/1) and the
    /// handler's future is dropped. Response bodies are not limited: a
    /// streaming (SSE) response runs as long as it needs once its head is
    /// sent. A method that runs longer without reporting progress needs a
    /// larger value. Default: 120 s.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long a connection may stay open with no request in flight and,
    /// over HTTP/1, no byte of a new request received; then it is closed
    /// (HTTP/2: GOAWAY first). Behind a load balancer, make this longer
    /// than the balancer's own idle timeout. Default: 60 s.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// How long a write to the client may make no progress (the client
    /// does not read what it asked for); then the connection is closed at
    /// once, releasing the response it held. A slow reader that takes a
    /// few bytes at a time keeps its connection. Default: 30 s.
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout;
        self
    }

    /// The most connections served at once (at least 1). Over the cap the
    /// server keeps accepting, so the listen backlog never fills, and
    /// answers each extra connection at once with a raw
    /// `HTTP/1.1 503 Service Unavailable` and `Connection: close` (or, when
    /// many arrive together, simply closes it).
    ///
    /// Default: [`DEFAULT_MAX_CONNECTIONS`], or less when the process's soft
    /// `RLIMIT_NOFILE` (read when serving starts) leaves fewer file
    /// descriptors after a reserve for the rest of the process.
    /// [`run`](super::run) raises that soft limit to the hard one first
    /// ([`raise_open_files_limit`]).
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = Some(max.max(1));
        self
    }

    /// HTTP/1: the largest request head (request line and headers) in bytes;
    /// hyper's read buffer is capped at this size (hyper's minimum, 8 KiB,
    /// applies). A larger head gets `431 Request Header Fields Too Large`
    /// and the connection is closed. Default: 64 KiB.
    pub fn max_header_bytes(mut self, max: usize) -> Self {
        self.max_header_bytes = max.max(MIN_HEADER_BYTES);
        self
    }

    /// HTTP/1: the most header fields in a request; more get `431` and the
    /// connection is closed. Default: 100 (hyper's; any other value costs
    /// hyper an allocation per request).
    pub fn max_headers(mut self, max: usize) -> Self {
        self.max_headers = max;
        self
    }

    /// HTTP/2: `SETTINGS_MAX_HEADER_LIST_SIZE`, the largest decoded header
    /// list of a request (names and values plus 32 bytes per field); a
    /// larger one gets `431` on its stream, the connection goes on.
    /// Default: 16 KiB.
    pub fn http2_max_header_list_size(mut self, max: u32) -> Self {
        self.http2_max_header_list_size = max;
        self
    }

    /// HTTP/2: `SETTINGS_MAX_CONCURRENT_STREAMS`, the most requests in
    /// flight on one connection; a stream over it is refused
    /// (`RST_STREAM REFUSED_STREAM`). Default: 100.
    pub fn http2_max_concurrent_streams(mut self, max: u32) -> Self {
        self.http2_max_concurrent_streams = max;
        self
    }

    /// HTTP/2: how many streams the client may open and reset before the
    /// server has accepted them; past it the connection is closed (GOAWAY),
    /// against "rapid reset" floods (CVE-2023-44487). Default: 20.
    pub fn http2_max_pending_accept_reset_streams(mut self, max: usize) -> Self {
        self.http2_max_pending_accept_reset_streams = max;
        self
    }

    /// HTTP/2: send a PING when the client has sent nothing for `interval`
    /// and close the connection when it is not acknowledged within
    /// `timeout`, so a vanished client does not keep a connection (and its
    /// long-lived streams) open. PINGs do not count as activity for the
    /// [idle timeout](Self::idle_timeout). `None` sends no PINGs. Default:
    /// after 20 s of silence, 20 s to answer.
    pub fn http2_keep_alive(mut self, interval: Option<Duration>, timeout: Duration) -> Self {
        self.http2_keep_alive_interval = interval;
        self.http2_keep_alive_timeout = timeout;
        self
    }

    /// The connection cap in force: the one set, or the automatic one.
    pub(crate) fn effective_max_connections(&self) -> usize {
        // The runner acquires the whole cap as one u32 batch at shutdown.
        let cap = self.max_connections.unwrap_or_else(|| auto_max_connections(open_files_limit()));
        cap.clamp(1, u32::MAX as usize)
    }
}

/// Warns when `cap` connections and the refusal slots would not fit under
/// the process's open-files limit: `accept` would then fail (and the
/// server back off) before the cap is reached.
pub(crate) fn warn_if_over_open_files_limit(cap: usize) {
    if let Some(soft) = open_files_limit()
        && (cap + REFUSAL_SLOTS) as u64 + FD_RESERVE / 4 > soft
    {
        tracing::warn!(
            max_connections = cap,
            open_files_limit = soft,
            "the connection cap does not fit under the open files limit (RLIMIT_NOFILE): raise the limit or lower the cap"
        );
    }
}

/// [`DEFAULT_MAX_CONNECTIONS`], or less when `soft_limit` file descriptors
/// leave fewer after the reserve and the refusal slots (never below half
/// the limit, nor below 1).
fn auto_max_connections(soft_limit: Option<u64>) -> usize {
    let Some(soft) = soft_limit else {
        return DEFAULT_MAX_CONNECTIONS;
    };
    let usable = soft.saturating_sub(FD_RESERVE + REFUSAL_SLOTS as u64).max(soft / 2).max(1);
    usize::try_from(usable).map_or(DEFAULT_MAX_CONNECTIONS, |usable| usable.min(DEFAULT_MAX_CONNECTIONS))
}

/// The process's soft `RLIMIT_NOFILE`, where there is one.
fn open_files_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        rlimit::getrlimit(rlimit::Resource::NOFILE).ok().map(|(soft, _hard)| soft)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Raises the process's soft limit on open files (`RLIMIT_NOFILE`) to its
/// hard limit and returns the new soft limit.
///
/// Most Linux systems start processes with a soft limit of 1024 (kept low
/// for programs that still use `select`) under a hard limit of hundreds of
/// thousands; a server that holds one descriptor per connection needs more,
/// and raising the soft limit up to the hard one needs no privilege. Go does
/// the same for every program at startup. [`run`](super::run) calls this;
/// applications calling [`serve`](super::serve) themselves may too, before
/// serving. Does nothing where there is no such limit.
///
/// # Errors
/// When the limit cannot be read or set.
pub fn raise_open_files_limit() -> std::io::Result<u64> {
    rlimit::increase_nofile_limit(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn automatic_cap_follows_the_file_limit() {
        assert_eq!(auto_max_connections(None), DEFAULT_MAX_CONNECTIONS);
        assert_eq!(auto_max_connections(Some(1_048_576)), DEFAULT_MAX_CONNECTIONS);
        assert_eq!(auto_max_connections(Some(1024)), 1024 - 128 - 32);
        assert_eq!(auto_max_connections(Some(256)), 128);
        assert_eq!(auto_max_connections(Some(1)), 1);
        assert_eq!(auto_max_connections(Some(0)), 1);
    }

    #[test]
    fn setters_keep_values_in_range() {
        let limits = ServerLimits::default().max_connections(0).max_header_bytes(10);
        assert_eq!(limits.effective_max_connections(), 1);
        assert_eq!(limits.max_header_bytes, MIN_HEADER_BYTES);
        assert_eq!(ServerLimits::default().max_connections(64).effective_max_connections(), 64);
        assert!(ServerLimits::default().effective_max_connections() >= 1);
    }
}
