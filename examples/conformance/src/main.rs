//! `cargo run -p conformance-server -- [--listen HOST:PORT] [--env dev|test|prod]`

use std::net::SocketAddr;

use clap::Parser;
use rpc::Environment;

/// The MCP conformance fixture server.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:3000")]
    listen: SocketAddr,
    /// Environment: decides how much detail errors carry (dev, test, prod).
    #[arg(long, default_value = "dev", value_parser = |s: &str| s.parse::<Environment>())]
    env: Environment,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    // On a loopback address, refuse other Host/Origin names (DNS-rebinding
    // protection, which the suite checks); on a public one the names are not
    // known in advance.
    let hosts = if args.listen.ip().is_loopback() {
        rpc::HostPolicy::localhost()
    } else {
        tracing::warn!("listening on a non-loopback address: Host/Origin checks are off");
        rpc::HostPolicy::any()
    };
    let app = match conformance_server::app_with(args.env, hosts) {
        Ok(app) => app,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("cannot listen on {}: {e}", args.listen);
            return std::process::ExitCode::FAILURE;
        }
    };
    let addr = listener.local_addr().map(|a| a.to_string()).unwrap_or_default();
    tracing::info!(env = ?args.env, "conformance server listening on http://{addr} (MCP at /mcp)");
    println!("listening on http://{addr}");
    match rpc::server::serve(listener, app, rpc::server::shutdown_signal()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("server error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
