//! `cargo run -p catalog -- [--listen HOST:PORT] [--env dev|test|prod]`

use rpc::server::cli::{NoOptions, Program};

fn main() -> std::process::ExitCode {
    let program = Program::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"), "127.0.0.1:8080")
        .about("The catalog example: JSON-RPC at /rpc, MCP at /mcp/v1 and /mcp/v2");
    rpc::server::cli::main::<NoOptions, _>(program, |cli, hosts| catalog::app_with(cli.env, hosts))
}
