//! The bundled server: an accept loop (TCP_NODELAY) serving each connection
//! with hyper's HTTP/1.1 or HTTP/2 connection, as its first bytes tell, with
//! graceful shutdown and the connection-level limits of
//! [`ServerLimits`]: header-read, body-read, request and idle timeouts,
//! header size and HTTP/2 stream limits, and a cap on concurrent
//! connections.

use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use http::{Request, Response};
use hyper::server::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::time::Instant;

use super::activity::{Activity, Expired, TrackedIo};
use super::body::ResponseBody;
use super::conn_service::{ConnService, IncomingBody};
use super::connection::Connection;
use super::draining::Draining;
use super::http_version::{HttpVersion, read_version};
use super::limits::{HYPER_DEFAULT_MAX_HEADERS, REFUSAL_SLOTS, ServerLimits};
use super::orders::{Command, Orders};

/// How long to wait for open connections after the shutdown signal.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// How long a connection shut down by a timeout may take to finish once no
/// request is in flight (an HTTP/2 client acknowledging the GOAWAY).
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// At most one "connection limit reached" warning per this interval.
const CAP_WARNING_INTERVAL: Duration = Duration::from_secs(10);

/// How long a connection over the cap is kept to read its answer.
const REFUSAL_LINGER: Duration = Duration::from_secs(1);

/// The answer to a connection over the cap.
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
content-type: text/plain\r\n\
content-length: 39\r\n\
retry-after: 1\r\n\
connection: close\r\n\
\r\n\
server busy: too many open connections\n";

/// Serves `service` on `listener` (HTTP/1.1 and HTTP/2) with the default
/// [`ServerLimits`] until `shutdown` resolves, then lets open connections
/// finish (up to [`SHUTDOWN_GRACE`]). See [`serve_with`].
pub async fn serve<S>(listener: TcpListener, service: S, shutdown: impl Future<Output = ()>) -> io::Result<()>
where
    S: tower::Service<Request<IncomingBody>, Response = Response<ResponseBody>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    serve_with(listener, service, shutdown, ServerLimits::default()).await
}

/// Serves `service` on `listener` (HTTP/1.1 and HTTP/2) under `limits`
/// until `shutdown` resolves, then lets open connections finish (up to
/// [`SHUTDOWN_GRACE`]: long-lived streams see [`Draining`]) and closes those
/// left.
///
/// Every request carries its [`Connection`] (the client's address, [`Draining`]) in its extensions; its body is
/// an [`IncomingBody`] (a [`Router`](super::Router) takes it as it is).
/// The [`ServerLimits`] documentation tells what each limit does; at the
/// connection cap the server goes on accepting and answers the extra
/// connections with a raw `503` (then closes them), so the listen backlog
/// never fills and the accept loop never stops.
pub async fn serve_with<S>(
    listener: TcpListener,
    service: S,
    shutdown: impl Future<Output = ()>,
    limits: ServerLimits,
) -> io::Result<()>
where
    S: tower::Service<Request<IncomingBody>, Response = Response<ResponseBody>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let builders = Arc::new(Builders::new(&limits));
    let cap = limits.effective_max_connections();
    tracing::debug!(?limits, max_connections = cap, "connection limits");
    super::limits::warn_if_over_open_files_limit(cap);
    let slots = Arc::new(Semaphore::new(cap));
    let refusals = Arc::new(Semaphore::new(REFUSAL_SLOTS));
    let (draining_tx, draining) = Draining::channel();
    // Dropped when serving ends: connections still open then are closed.
    let (stop_tx, stop) = watch::channel(());
    let mut warned_at_cap: Option<Instant> = None;
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(conn) => conn,
                    Err(e) => {
                        // Out of file descriptors and the like: back off, keep serving.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let Ok(slot) = slots.clone().try_acquire_owned() else {
                    if warned_at_cap.is_none_or(|at| at.elapsed() >= CAP_WARNING_INTERVAL) {
                        tracing::warn!(max_connections = cap, "connection limit reached: refusing new connections");
                        warned_at_cap = Some(Instant::now());
                    }
                    refuse(stream, &refusals);
                    continue;
                };
                if let Err(e) = stream.set_nodelay(true) {
                    tracing::debug!(error = %e, "could not set TCP_NODELAY");
                }
                let activity = Activity::new(limits.header_read_timeout, limits.idle_timeout, limits.write_timeout);
                let io = TrackedIo::new(stream, activity.clone(), slot);
                let service = ConnService::new(
                    service.clone(),
                    activity.clone(),
                    Connection::served(peer, draining.clone(), activity.clone()),
                    limits.request_timeout,
                    limits.body_read_timeout,
                );
                // Boxed: the task holds a pointer, and tokio's task harness makes
                // no room for the connection's future in its frame.
                let (draining, stop) = (draining.receiver().clone(), stop.clone());
                let connection = Box::pin(start(io, service, Arc::clone(&builders), activity, draining, stop, peer));
                tokio::spawn(connection);
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    // Long-lived streams end themselves when they see this.
    draining_tx.send_replace(true);
    tracing::info!("shutting down: waiting for open connections");
    // Every connection holds a slot until its socket is closed.
    let all_closed = slots.acquire_many(u32::try_from(cap).unwrap_or(u32::MAX));
    tokio::select! {
        _ = all_closed => tracing::info!("all connections closed"),
        () = tokio::time::sleep(SHUTDOWN_GRACE) => tracing::warn!("grace period over, closing remaining connections"),
    }
    drop(stop_tx);
    Ok(())
}

/// hyper's connection builders, as `limits` set them.
struct Builders {
    http1: http1::Builder,
    http2: http2::Builder<TokioExecutor>,
}

impl Builders {
    fn new(limits: &ServerLimits) -> Self {
        let mut http1 = http1::Builder::new();
        // No timer for HTTP/1: hyper would restart its header-read timer at
        // every request (and, waiting for a head between requests too, cap the
        // idle timeout with it); the runner's watchdog keeps both timeouts.
        http1.max_buf_size(limits.max_header_bytes);
        if limits.max_headers != HYPER_DEFAULT_MAX_HEADERS {
            http1.max_headers(limits.max_headers);
        }
        let mut http2 = http2::Builder::new(TokioExecutor::new());
        http2
            .timer(TokioTimer::new())
            .max_header_list_size(limits.http2_max_header_list_size)
            .max_concurrent_streams(limits.http2_max_concurrent_streams)
            .max_pending_accept_reset_streams(limits.http2_max_pending_accept_reset_streams)
            .keep_alive_interval(limits.http2_keep_alive_interval)
            .keep_alive_timeout(limits.http2_keep_alive_timeout);
        Builders { http1, http2 }
    }

    // Boxed, once per connection, and built out of line: the task's future
    // stays small, and so do the stack frames tokio's task harness and the
    // task make for it (room for the connection: kilobytes, on every
    // request's stack).

    /// An HTTP/1 connection serving `io`.
    #[inline(never)]
    fn http1_connection<S: App>(&self, io: TrackedIo, service: ConnService<S>) -> Pin<Box<Http1Connection<S>>> {
        Box::pin(self.http1.serve_connection(TokioIo::new(io), service).with_upgrades())
    }

    /// An HTTP/2 connection serving `io`.
    #[inline(never)]
    fn http2_connection<S: App>(&self, io: TrackedIo, service: ConnService<S>) -> Pin<Box<Http2Connection<S>>> {
        Box::pin(self.http2.serve_connection(TokioIo::new(io), service))
    }
}

/// Answers a connection over the cap with a raw 503 and closes it, keeping
/// the socket at most [`REFUSAL_LINGER`] to read what the client sends (so
/// the close does not reset the connection before the client has read the
/// answer); when too many refusals are under way, closes it at once.
fn refuse(mut stream: TcpStream, refusals: &Arc<Semaphore>) {
    let Ok(refusal) = refusals.clone().try_acquire_owned() else {
        return;
    };
    tokio::spawn(async move {
        let _refusal = refusal;
        let _ = tokio::time::timeout(REFUSAL_LINGER, async {
            stream.write_all(REFUSAL).await?;
            stream.shutdown().await?;
            let mut sink = [0u8; 1024];
            let mut drained = 0usize;
            while drained < 64 * 1024 {
                match stream.read(&mut sink).await? {
                    0 => break,
                    n => drained += n,
                }
            }
            io::Result::Ok(())
        })
        .await;
    });
}

/// What [`serve_with`] serves, named once for the functions that serve
/// one of its connections.
trait App:
    tower::Service<Request<IncomingBody>, Response = Response<ResponseBody>, Error = Infallible, Future: Send + 'static>
    + Clone
    + Send
    + 'static
{
}

impl<S> App for S
where
    S: tower::Service<Request<IncomingBody>, Response = Response<ResponseBody>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
}

/// An HTTP/1 connection as hyper serves it.
type Http1Connection<S> = http1::UpgradeableConnection<TokioIo<TrackedIo>, ConnService<S>>;

/// An HTTP/2 connection as hyper serves it.
type Http2Connection<S> = http2::Connection<TokioIo<TrackedIo>, ConnService<S>, TokioExecutor>;

/// A connection as hyper serves it, in either version.
trait Served: Future<Output = Result<(), hyper::Error>> {
    /// Stops taking requests and ends once those in flight are answered.
    fn graceful_shutdown(self: Pin<&mut Self>);
}

impl<S: App> Served for Http1Connection<S> {
    fn graceful_shutdown(self: Pin<&mut Self>) {
        http1::UpgradeableConnection::graceful_shutdown(self);
    }
}

impl<S: App> Served for Http2Connection<S> {
    fn graceful_shutdown(self: Pin<&mut Self>) {
        http2::Connection::graceful_shutdown(self);
    }
}

/// Serves one accepted connection: tells its HTTP version from its first
/// bytes (under the header-read timeout), then [`drive`]s hyper's
/// connection for that version. The watchdog runs from the start.
async fn start<S: App>(
    mut io: TrackedIo,
    service: ConnService<S>,
    builders: Arc<Builders>,
    activity: Arc<Activity>,
    draining: watch::Receiver<bool>,
    stop: watch::Receiver<()>,
    peer: SocketAddr,
) {
    let orders = Arc::new(Orders::default());
    // The watchdog ends with the connection.
    let _watchdog = spawn_watchdog(activity, draining, stop, Arc::clone(&orders));
    let version = {
        let mut reading = std::pin::pin!(read_version(&mut io));
        poll_fn(|cx| match reading.as_mut().poll(cx) {
            Poll::Ready(read) => Poll::Ready(Some(read)),
            Poll::Pending => orders.poll_order(cx).map(|_| None),
        })
        .await
    };
    match version {
        Some(Ok(HttpVersion::Http1)) => drive(builders.http1_connection(io, service), &orders, peer).await,
        Some(Ok(HttpVersion::Http2)) => drive(builders.http2_connection(io, service), &orders, peer).await,
        Some(Err(e)) => tracing::debug!(%peer, error = %e, "connection ended before its first request"),
        // A timeout passed before the first bytes, or the server drains.
        None => tracing::debug!(%peer, "closing connection: no request received"),
    }
}

/// Drives one connection until it ends, a timeout shuts it down, or the
/// server stops. The timers live in a watchdog task of their own, so that
/// the connection's many wake-ups per request poll nothing but the
/// connection and one channel.
async fn drive<C: Served>(mut connection: Pin<Box<C>>, orders: &Orders, peer: SocketAddr) {
    let ended = |result: Result<(), _>| {
        if let Err(e) = result {
            tracing::debug!(%peer, error = %e, "connection ended with an error");
        }
    };
    let order = poll_fn(|cx| match connection.as_mut().poll(cx) {
        Poll::Ready(result) => Poll::Ready(Err(result)),
        Poll::Pending => orders.poll_order(cx).map(Ok),
    })
    .await;
    let reason = match order {
        Err(result) => return ended(result),
        Ok(Command::Shutdown(reason)) => reason,
        Ok(Command::Close) => return,
    };
    match reason {
        Expired::HeaderRead => {
            // Nothing is in flight and a half-received head cannot be
            // answered: close at once (a graceful shutdown would wait for
            // the head, that is for the grace period).
            tracing::debug!(%peer, "closing connection: request head not received in time");
            return;
        }
        Expired::WriteStalled => {
            // The client does not read: what it holds is released now.
            tracing::debug!(%peer, "closing connection: the client stopped reading its response");
            return;
        }
        Expired::Idle => tracing::debug!(%peer, "closing idle connection"),
        Expired::Closing => {}
    }
    connection.as_mut().graceful_shutdown();
    let finished = poll_fn(|cx| match connection.as_mut().poll(cx) {
        Poll::Ready(result) => Poll::Ready(Some(result)),
        Poll::Pending => orders.poll_close(cx).map(|()| None),
    })
    .await;
    match finished {
        Some(result) => ended(result),
        None => tracing::debug!(%peer, "closing connection: shutdown not finished in time"),
    }
}

/// Spawns the connection's [`watchdog`]; a function of its own, so that the
/// task's construction is not laid out in `drive`'s stack frame.
#[inline(never)]
fn spawn_watchdog(
    activity: Arc<Activity>,
    draining: watch::Receiver<bool>,
    stop: watch::Receiver<()>,
    orders: Arc<Orders>,
) -> AbortOnDrop {
    AbortOnDrop(tokio::spawn(watchdog(activity, draining, stop, orders)).abort_handle())
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The timers of one connection: orders a shutdown when a timeout passes
/// or the server starts draining, then a close when the graceful shutdown
/// overstays its grace or serving ends. The task driving the connection
/// aborts it when the connection is gone.
async fn watchdog(
    activity: Arc<Activity>,
    mut draining: watch::Receiver<bool>,
    mut stop: watch::Receiver<()>,
    orders: Arc<Orders>,
) {
    let reason = tokio::select! {
        expired = activity.expired(None) => expired,
        // `wait_for`'s guard is not `Send`: drop it inside the branch's future.
        _ = async { draining.wait_for(|draining| *draining).await.is_ok() } => Expired::Closing,
        _ = stop.changed() => return orders.close(),
    };
    orders.shutdown(reason);
    let closing = Some((Instant::now(), CLOSE_GRACE));
    tokio::select! {
        _ = activity.expired(closing) => {}
        _ = stop.changed() => {}
    }
    orders.close();
}

/// Runs an application the way the example binaries do: builds it with
/// the [`HostPolicy`](crate::HostPolicy) that fits `listen`, raises the
/// open-files limit ([`raise_open_files_limit`](super::raise_open_files_limit)),
/// binds, prints `listening on http://ADDR` on stdout (scripts wait for that
/// line), and serves under `limits` until SIGINT/SIGTERM. Every failure is
/// printed to stderr and turns into a failing exit code.
pub async fn run<E: std::fmt::Display>(
    listen: std::net::SocketAddr,
    limits: ServerLimits,
    app: impl AsyncFnOnce(crate::HostPolicy) -> Result<super::Router, E>,
) -> std::process::ExitCode {
    let app = match app(crate::HostPolicy::for_listen_addr(listen)).await {
        Ok(app) => app,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match super::raise_open_files_limit() {
        Ok(limit) => tracing::debug!(limit, "open files limit"),
        Err(e) => tracing::warn!(error = %e, "could not raise the open files limit"),
    }
    let listener = match TcpListener::bind(listen).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("cannot listen on {listen}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let addr = listener.local_addr().map_or_else(|_| listen.to_string(), |a| a.to_string());
    tracing::info!(routes = ?app, "listening on http://{addr}");
    println!("listening on http://{addr}");
    match serve_with(listener, app, shutdown_signal(), limits).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("server error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Resolves on SIGINT (Ctrl-C) or, on Unix, SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("SIGINT received"),
        () = term => tracing::info!("SIGTERM received"),
    }
}
