//! The command line and `main` of a server binary (feature `cli`): the
//! options every server takes (`--listen`, `--env`), the application's own
//! options flattened in, logging to stderr (`RUST_LOG`, default `info`), a
//! Tokio runtime, and [`run`](super::run).
//!
//! ```no_run
//! # fn app(env: rpc::Environment, hosts: rpc::HostPolicy) -> Result<rpc::server::Router, String> { todo!() }
//! use rpc::server::cli::{NoOptions, Program};
//!
//! fn main() -> std::process::ExitCode {
//!     let program = Program::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"), "127.0.0.1:8080");
//!     rpc::server::cli::main::<NoOptions, _>(program, |cli, hosts| app(cli.env, hosts))
//! }
//! ```

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::{Args, CommandFactory, FromArgMatches, Parser};

use crate::error::Environment;
use crate::security::HostPolicy;
use crate::server::Router;

/// What the binary is: its name and version (`--version`), a one-line
/// description (`--help`) and the address it listens on by default.
#[derive(Debug, Clone)]
pub struct Program {
    name: &'static str,
    version: &'static str,
    about: Option<&'static str>,
    default_listen: &'static str,
}

impl Program {
    /// `env!("CARGO_PKG_NAME")`, `env!("CARGO_PKG_VERSION")` and the default `--listen`.
    pub fn new(name: &'static str, version: &'static str, default_listen: &'static str) -> Self {
        Program { name, version, about: None, default_listen }
    }

    /// The one-line description `--help` prints.
    pub fn about(mut self, about: &'static str) -> Self {
        self.about = Some(about);
        self
    }
}

/// The parsed command line: the shared options and the application's `A`.
#[derive(Debug, Parser)]
pub struct Cli<A: Args> {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long)]
    pub listen: Option<SocketAddr>,
    /// Environment: decides how much detail errors carry (dev, test, prod).
    #[arg(long, default_value = "dev", value_parser = |s: &str| s.parse::<Environment>())]
    pub env: Environment,
    /// The application's own options.
    #[command(flatten)]
    pub app: A,
}

/// For servers without options of their own.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct NoOptions {}

/// Parses the command line, sets up logging and serves `app` until SIGINT
/// or SIGTERM. Exits with a failure code, the reason on stderr, when the
/// arguments, the application or the listener fail.
pub fn main<A: Args, E: std::fmt::Display>(
    program: Program,
    app: impl FnOnce(&Cli<A>, HostPolicy) -> Result<Router, E>,
) -> ExitCode {
    let mut command = Cli::<A>::command().name(program.name).version(program.version);
    if let Some(about) = program.about {
        command = command.about(about);
    }
    let help = format!("Address to listen on (port 0 picks a free port) [default: {}]", program.default_listen);
    command = command.mut_arg("listen", |arg| arg.help(help));
    let cli = match command.try_get_matches().and_then(|m| Cli::<A>::from_arg_matches(&m)) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let listen = match cli.listen.map_or_else(|| program.default_listen.parse(), Ok) {
        Ok(listen) => listen,
        Err(e) => {
            eprintln!("invalid default listen address `{}`: {e}", program.default_listen);
            return ExitCode::FAILURE;
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    tracing::info!(env = ?cli.env, "starting {} {}", program.name, program.version);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(super::run(listen, super::ServerLimits::default(), |hosts| app(&cli, hosts)))
}
