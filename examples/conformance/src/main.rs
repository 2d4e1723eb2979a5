//! `cargo run -p conformance-server -- [--listen HOST:PORT] [--env dev|test|prod]`

use rpc::server::cli::{NoOptions, Program};

fn main() -> std::process::ExitCode {
    let program = Program::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"), "127.0.0.1:3000")
        .about("The MCP conformance suite's fixture tools at /mcp");
    rpc::server::cli::main::<NoOptions, _>(program, async |cli, security| {
        conformance_server::app_with(cli.env, security)
    })
}
