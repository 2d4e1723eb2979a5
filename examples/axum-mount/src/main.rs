//! `cargo run -p axum-mount -- [HOST:PORT]` (default 127.0.0.1:8090): the
//! axum application with the catalog mounted under `/api`.

use std::net::SocketAddr;
use std::process::ExitCode;

use rpc::{Environment, HostPolicy};

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info,tower_http=debug".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let listen: SocketAddr = match std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8090".into()).parse() {
        Ok(addr) => addr,
        Err(e) => {
            eprintln!("usage: axum-mount [HOST:PORT]: {e}");
            return ExitCode::FAILURE;
        }
    };
    let app = match axum_mount::app(Environment::Dev, HostPolicy::for_listen_addr(listen)) {
        Ok(app) => app,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let listener = match tokio::net::TcpListener::bind(listen).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("cannot listen on {listen}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let addr = listener.local_addr().map_or_else(|_| listen.to_string(), |a| a.to_string());
    println!("listening on http://{addr}");
    match axum::serve(listener, app).with_graceful_shutdown(rpc::server::shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("server error: {e}");
            ExitCode::FAILURE
        }
    }
}
