//! `cargo run -p catalog -- [--listen HOST:PORT] [--env dev|test|prod] [--token TOKEN ...] [--public-url URL]`
//! (`--help` lists every option).

use clap::Args;
use rpc::server::cli::Program;

/// The catalog's own options.
#[derive(Debug, Args)]
#[command(next_help_heading = "Catalog")]
struct Options {
    /// The public base URL documents name (`https://api.example.com`), for a
    /// server behind a proxy; by default, `http://` and the request's host.
    #[arg(long, value_name = "URL")]
    public_url: Option<rpc::server::PublicUrl>,
}

fn main() -> std::process::ExitCode {
    let program = Program::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"), "127.0.0.1:8080")
        .about("The catalog example: JSON-RPC at /rpc, MCP at /mcp/v1 and /mcp/v2");
    rpc::server::cli::main::<Options, _>(program, |cli, security| {
        catalog::app_configured(cli.env, security, cli.app.public_url.clone())
    })
}
