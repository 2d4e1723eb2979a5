//! The bundled server: a thin hyper-util accept loop with TCP_NODELAY and
//! graceful shutdown.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower::ServiceExt;

use super::body::ResponseBody;
use super::draining::Draining;

/// How long to wait for open connections after the shutdown signal.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Serves `service` on `listener` (HTTP/1.1 and HTTP/2) until `shutdown`
/// resolves, then lets open connections finish (up to [`SHUTDOWN_GRACE`]).
pub async fn serve<S>(listener: TcpListener, service: S, shutdown: impl Future<Output = ()>) -> io::Result<()>
where
    S: tower::Service<Request<Incoming>, Response = Response<ResponseBody>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let builder = auto::Builder::new(TokioExecutor::new());
    let graceful = GracefulShutdown::new();
    let (draining_tx, draining) = Draining::channel();
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
                if let Err(e) = stream.set_nodelay(true) {
                    tracing::debug!(error = %e, "could not set TCP_NODELAY");
                }
                let draining = draining.clone();
                let service = service.clone().map_request(move |mut request: Request<Incoming>| {
                    request.extensions_mut().insert(draining.clone());
                    request
                });
                let connection = builder
                    .serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(service))
                    .into_owned();
                let connection = graceful.watch(connection);
                tokio::spawn(async move {
                    if let Err(e) = connection.await {
                        tracing::debug!(%peer, error = %e, "connection ended with an error");
                    }
                });
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    // Long-lived streams end themselves when they see this.
    draining_tx.send_replace(true);
    tracing::info!("shutting down: waiting for open connections");
    tokio::select! {
        () = graceful.shutdown() => tracing::info!("all connections closed"),
        () = tokio::time::sleep(SHUTDOWN_GRACE) => tracing::warn!("grace period over, closing remaining connections"),
    }
    Ok(())
}

/// Runs an application the way the example binaries do: builds it with
/// the [`HostPolicy`](crate::HostPolicy) that fits `listen`, binds, prints
/// `listening on http://ADDR` on stdout (scripts wait for that line), and
/// serves until SIGINT/SIGTERM. Every failure is printed to stderr and
/// turns into a failing exit code.
pub async fn run<E: std::fmt::Display>(
    listen: std::net::SocketAddr,
    app: impl FnOnce(crate::HostPolicy) -> Result<super::Router, E>,
) -> std::process::ExitCode {
    let app = match app(crate::HostPolicy::for_listen_addr(listen)) {
        Ok(app) => app,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
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
    match serve(listener, app, shutdown_signal()).await {
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
