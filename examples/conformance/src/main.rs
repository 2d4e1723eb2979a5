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
    tracing::info!(env = ?args.env, "starting");
    rpc::server::run(args.listen, |hosts| conformance_server::app_with(args.env, hosts)).await
}
