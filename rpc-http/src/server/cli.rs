//! The command line and `main` of a server binary (feature `cli`): the
//! options every server takes (`--listen`, `--env`, and the security
//! options: `--token`, `--token-file`, `--token-header`, `--protect-docs`,
//! `--allow-host`, `--cors-origin`, and with feature `oauth` `--oauth-issuer`,
//! `--oauth-audience`, `--oauth-scope`, `--oauth-introspection-client-id`,
//! ...), the application's own options
//! flattened in, logging to stderr (`RUST_LOG`, default `info`), a Tokio
//! runtime, and [`run`](super::run).
//!
//! ```no_run
//! # extern crate rpc_http as rpc;
//! # fn app(env: rpc_core::Environment, security: rpc::Security) -> Result<rpc::server::Router, String> { todo!() }
//! use rpc::server::cli::{NoOptions, Program};
//!
//! fn main() -> std::process::ExitCode {
//!     let program = Program::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"), "127.0.0.1:8080");
//!     rpc::server::cli::main::<NoOptions, _>(program, async |cli, security| app(cli.env, security))
//! }
//! ```

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::{Args, CommandFactory, FromArgMatches, Parser};

use crate::security::{Cors, HostPolicy, Security, TokenPolicy};
use crate::server::{Router, ServerLimits};
use rpc_core::error::Environment;

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
    /// Who may call the endpoints.
    #[command(flatten)]
    pub security: SecurityOptions,
    /// Connection limits.
    #[command(flatten)]
    pub limits: LimitOptions,
    /// The application's own options.
    #[command(flatten)]
    pub app: A,
    /// What to do instead of serving (nothing: serve).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// What a server binary can do besides serving.
#[derive(Debug, Clone, clap::Subcommand)]
#[non_exhaustive]
pub enum Command {
    /// Run one JSON-RPC request (or batch) through the application, print
    /// the response as pretty JSON and exit: 0 for a result, 1 for an error
    /// response, 2 when no response came (`call '{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":1}}'`)
    Call(super::one_shot::CallArgs),
}

/// The security options every server binary takes.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Security")]
pub struct SecurityOptions {
    /// A client token (repeatable); API requests then need it in the token
    /// header or as `Authorization: Bearer <token>`. Prefer RPC_TOKENS or
    /// --token-file: a command line is visible to other local users.
    #[arg(long = "token", value_name = "TOKEN", env = "RPC_TOKENS", value_delimiter = ',', hide_env_values = true)]
    pub tokens: Vec<String>,
    /// A file of client tokens, one per line (`#` starts a comment).
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<std::path::PathBuf>,
    /// The header clients send their token in.
    #[arg(long, value_name = "NAME", default_value = "Ufo-RPC-Token")]
    pub token_header: String,
    /// A secret that keys the digests naming each token's callers (their
    /// identity in sessions, cache and lock keys, logs); every instance
    /// sharing a Redis needs the same one. Prefer RPC_IDENTITY_KEY.
    #[arg(long, value_name = "SECRET", env = "RPC_IDENTITY_KEY", hide_env_values = true)]
    pub identity_key: Option<String>,
    /// Documents (OpenRPC, ...) need a token too (by default only API requests do).
    #[arg(long)]
    pub protect_docs: bool,
    /// Also accept requests addressed to this host name (repeatable): the
    /// public name of a server not on loopback. `*` accepts any name (put
    /// the check in a reverse proxy then).
    #[arg(long = "allow-host", value_name = "HOST")]
    pub allow_hosts: Vec<String>,
    /// Let browser pages of this origin call the endpoints (repeatable;
    /// `*` for any page).
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    pub cors_origins: Vec<String>,
    /// OAuth access tokens.
    #[cfg(feature = "oauth")]
    #[command(flatten)]
    pub oauth: OAuthOptions,
}

/// The OAuth options of a server binary (feature `oauth`): API requests
/// then need a JWT access token of the issuer, for the audience (or, with
/// `--oauth-introspection-client-id`, an opaque token the issuer's token
/// introspection endpoint vouches for).
#[cfg(feature = "oauth")]
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "OAuth")]
pub struct OAuthOptions {
    /// Accept access tokens of this authorization server (its issuer
    /// identifier, `https://auth.example.com`; `http://` on loopback only);
    /// its metadata and keys are read at start-up
    #[arg(long, value_name = "URL", env = "RPC_OAUTH_ISSUER", requires = "oauth_audience",
          conflicts_with_all = ["tokens", "token_file"])]
    pub oauth_issuer: Option<String>,
    /// This server's resource identifier: the `aud` tokens must carry, and
    /// the `resource` of its protected-resource metadata (`https://api.example.com`)
    #[arg(long, value_name = "URL", env = "RPC_OAUTH_AUDIENCE", requires = "oauth_issuer")]
    pub oauth_audience: Option<String>,
    /// A scope every API request's token must grant (repeatable; 403
    /// `insufficient_scope` without it)
    #[arg(long = "oauth-scope", value_name = "SCOPE", requires = "oauth_issuer")]
    pub oauth_scopes: Vec<String>,
    /// Read the issuer's keys here instead of its metadata's `jwks_uri`
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    pub oauth_jwks_uri: Option<String>,
    /// A signature algorithm tokens may use (repeatable) [default: RS256]
    #[arg(long = "oauth-algorithm", value_name = "ALG", requires = "oauth_issuer")]
    pub oauth_algorithms: Vec<String>,
    /// Accept opaque access tokens too, checked at the issuer's token
    /// introspection endpoint (RFC 7662), where this server authenticates
    /// as this client (with --oauth-introspection-secret); JWTs are still
    /// checked with the issuer's keys
    #[arg(long, value_name = "ID", env = "RPC_OAUTH_INTROSPECTION_CLIENT_ID",
          requires_all = ["oauth_issuer", "oauth_introspection_secret"])]
    pub oauth_introspection_client_id: Option<String>,
    /// The client secret of --oauth-introspection-client-id. Prefer
    /// RPC_OAUTH_INTROSPECTION_SECRET: a command line is visible to other
    /// local users
    #[arg(long, value_name = "SECRET", env = "RPC_OAUTH_INTROSPECTION_SECRET", hide_env_values = true,
          requires_all = ["oauth_issuer", "oauth_introspection_client_id"])]
    pub oauth_introspection_secret: Option<String>,
    /// Send opaque tokens here instead of the metadata's
    /// `introspection_endpoint` (needed with --oauth-jwks-uri)
    #[arg(long, value_name = "URL", requires = "oauth_introspection_client_id")]
    pub oauth_introspection_endpoint: Option<String>,
}

#[cfg(feature = "oauth")]
impl OAuthOptions {
    /// The OAuth policy these options describe (reads the authorization
    /// server), `None` without `--oauth-issuer`.
    pub async fn build(&self, protect_docs: bool) -> Result<Option<crate::security::oauth::OAuthPolicy>, String> {
        use crate::security::oauth::OAuthSettings;
        let (Some(issuer), Some(audience)) = (&self.oauth_issuer, &self.oauth_audience) else {
            return Ok(None);
        };
        let mut settings =
            OAuthSettings::new(issuer, audience).map_err(|e| format!("--oauth-issuer/--oauth-audience: {e}"))?;
        for scope in &self.oauth_scopes {
            settings = settings.require_scope(scope).map_err(|e| format!("--oauth-scope: {e}"))?;
        }
        for algorithm in &self.oauth_algorithms {
            settings = settings.algorithm(algorithm).map_err(|e| format!("--oauth-algorithm: {e}"))?;
        }
        if let Some(url) = &self.oauth_jwks_uri {
            settings = settings.jwks_uri(url).map_err(|e| format!("--oauth-jwks-uri: {e}"))?;
        }
        if let (Some(id), Some(secret)) = (&self.oauth_introspection_client_id, &self.oauth_introspection_secret) {
            settings = settings.introspection(id, secret);
        }
        if let Some(url) = &self.oauth_introspection_endpoint {
            settings =
                settings.introspection_endpoint(url).map_err(|e| format!("--oauth-introspection-endpoint: {e}"))?;
        }
        let policy =
            settings.protect_docs(protect_docs).discover().await.map_err(|e| format!("--oauth-issuer: {e}"))?;
        Ok(Some(policy))
    }
}

/// The connection limits every server binary takes (defaults: [`ServerLimits::default`]).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Limits")]
pub struct LimitOptions {
    /// Most concurrent connections; more are answered 503 [default: 1024, or less under a low open-files limit]
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// Seconds a request may take until its response starts (408 after) [default: 120]
    #[arg(long, value_name = "SECONDS")]
    pub request_timeout: Option<u64>,
    /// Seconds a client has to send a request's headers [default: 10]
    #[arg(long, value_name = "SECONDS")]
    pub header_read_timeout: Option<u64>,
    /// Seconds a client has to send a request's body (408 after) [default: 30]
    #[arg(long, value_name = "SECONDS")]
    pub body_read_timeout: Option<u64>,
    /// Seconds a kept-alive connection may wait for its next request [default: 60]
    #[arg(long, value_name = "SECONDS")]
    pub idle_timeout: Option<u64>,
    /// Seconds a write to a client may make no progress (a client that does not read); then the connection is closed [default: 30]
    #[arg(long, value_name = "SECONDS")]
    pub write_timeout: Option<u64>,
    /// Calls per client (its identity, else its address), e.g. `600/min`; each call of a batch counts; over it: 429 / -32429 with Retry-After [default: none]
    #[arg(long, value_name = "RATE", env = "RPC_RATE_CALLS", value_parser = |s: &str| s.parse::<rpc_core::rate::Rate>())]
    pub rate_calls: Option<rpc_core::rate::Rate>,
    /// New MCP sessions (`initialize`) per client, e.g. `30/min` [default: none]
    #[arg(long, value_name = "RATE", env = "RPC_RATE_SESSIONS", value_parser = |s: &str| s.parse::<rpc_core::rate::Rate>())]
    pub rate_sessions: Option<rpc_core::rate::Rate>,
}

impl LimitOptions {
    /// The [`ServerLimits`] these options describe.
    pub fn build(&self) -> ServerLimits {
        let secs = std::time::Duration::from_secs;
        let mut limits = ServerLimits::default();
        if let Some(n) = self.max_connections {
            limits = limits.max_connections(n);
        }
        if let Some(s) = self.request_timeout {
            limits = limits.request_timeout(secs(s));
        }
        if let Some(s) = self.header_read_timeout {
            limits = limits.header_read_timeout(secs(s));
        }
        if let Some(s) = self.body_read_timeout {
            limits = limits.body_read_timeout(secs(s));
        }
        if let Some(s) = self.idle_timeout {
            limits = limits.idle_timeout(secs(s));
        }
        if let Some(s) = self.write_timeout {
            limits = limits.write_timeout(secs(s));
        }
        limits
    }

    /// The rate limits these options describe (for
    /// [`Executor::with_rate_limits`](rpc_core::Executor::with_rate_limits)).
    pub fn rate_limits(&self) -> rpc_core::rate::RateLimits {
        let mut limits = rpc_core::rate::RateLimits::new();
        if let Some(rate) = self.rate_calls {
            limits = limits.calls(rate);
        }
        if let Some(rate) = self.rate_sessions {
            limits = limits.sessions(rate);
        }
        limits
    }
}

impl SecurityOptions {
    /// Whether API requests need a credential (a token, or OAuth).
    pub fn is_protected(&self) -> bool {
        #[cfg(feature = "oauth")]
        if self.oauth.oauth_issuer.is_some() {
            return true;
        }
        !self.tokens.is_empty() || self.token_file.is_some()
    }

    /// The [`Security`] these options describe, on top of `hosts` (the
    /// names the listening address implies); with OAuth, the authorization
    /// server is read first.
    pub async fn build(&self, hosts: HostPolicy) -> Result<Security, String> {
        let hosts = if self.allow_hosts.iter().any(|h| h == "*") {
            HostPolicy::any()
        } else {
            self.allow_hosts.iter().fold(hosts, |policy, host| policy.allow(host.as_str()))
        };
        let mut security = Security::new().hosts(hosts);
        if !self.tokens.is_empty() || self.token_file.is_some() {
            let mut tokens = TokenPolicy::new()
                .header(&self.token_header)
                .map_err(|e| format!("--token-header: {e}"))?
                .protect_docs(self.protect_docs);
            if let Some(key) = self.identity_key.as_deref().filter(|k| !k.is_empty()) {
                tokens = tokens.identity_key(key);
            }
            for token in self.tokens.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
                tokens = tokens.token(token).map_err(|e| format!("--token: {e}"))?;
            }
            if let Some(path) = &self.token_file {
                tokens = tokens.tokens_from_file(path).map_err(|e| format!("--token-file {}: {e}", path.display()))?;
            }
            if tokens.is_empty() {
                return Err("no client token given (--token, RPC_TOKENS or --token-file)".to_owned());
            }
            security = security.tokens(tokens);
        } else if self.protect_docs && !self.is_protected() {
            return Err("--protect-docs needs client tokens (--token, RPC_TOKENS or --token-file)".to_owned());
        }
        #[cfg(feature = "oauth")]
        if let Some(policy) = self.oauth.build(self.protect_docs).await? {
            security = security.oauth(policy);
        }
        if !self.cors_origins.is_empty() {
            security = security.cors(Cors::origins(&self.cors_origins).map_err(|e| format!("--cors-origin: {e}"))?);
        }
        Ok(security)
    }
}

/// For servers without options of their own.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct NoOptions {}

/// Parses the command line, sets up logging and serves `app` (given the
/// [`Security`] the options describe) until SIGINT or SIGTERM. Exits with a
/// failure code, the reason on stderr, when the arguments, the
/// application or the listener fail.
pub fn main<A: Args, E: std::fmt::Display>(
    program: Program,
    app: impl AsyncFnOnce(&Cli<A>, Security) -> Result<Router, E>,
) -> ExitCode {
    let cli = parse::<A>(&program);
    main_parsed(program, cli, app)
}

/// Parses the command line as [`main`] does: `--help`, `--version` and
/// invalid arguments print their message and exit the process. For a
/// binary that decides by its own options whether to serve HTTP (then
/// [`main_parsed`]) or not.
pub fn parse<A: Args>(program: &Program) -> Cli<A> {
    let mut command = Cli::<A>::command().name(program.name).version(program.version);
    if let Some(about) = program.about {
        command = command.about(about);
    }
    let help = format!("Address to listen on (port 0 picks a free port) [default: {}]", program.default_listen);
    command = command.mut_arg("listen", |arg| arg.help(help));
    match command.try_get_matches().and_then(|m| Cli::<A>::from_arg_matches(&m)) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    }
}

/// Logs to stderr as [`main`] does (`RUST_LOG`, default `info`); stdout
/// stays free. Does nothing when a subscriber is already set.
pub fn init_logging() {
    init_logging_at("info");
}

/// Logging to stderr, at `default` when `RUST_LOG` is not set.
fn init_logging_at(default: &str) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| default.into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// [`main`] with the command line already [`parse`]d.
pub fn main_parsed<A: Args, E: std::fmt::Display>(
    program: Program,
    cli: Cli<A>,
    app: impl AsyncFnOnce(&Cli<A>, Security) -> Result<Router, E>,
) -> ExitCode {
    let listen = match cli.listen.map_or_else(|| program.default_listen.parse(), Ok) {
        Ok(listen) => listen,
        Err(e) => {
            eprintln!("invalid default listen address `{}`: {e}", program.default_listen);
            return ExitCode::FAILURE;
        }
    };
    if let Some(Command::Call(args)) = &cli.command {
        return call_once(&cli, args, app);
    }
    init_logging();
    tracing::info!(env = ?cli.env, "starting {} {}", program.name, program.version);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    if !listen.ip().is_loopback() && !cli.security.is_protected() {
        tracing::warn!(%listen, "not on loopback and no --token: anyone who reaches this port can call every method");
    }
    let limits = cli.limits.build();
    runtime.block_on(super::run(listen, limits, async |hosts| match cli.security.build(hosts).await {
        Ok(security) => app(&cli, security).await.map_err(|e| e.to_string()),
        Err(e) => Err(e),
    }))
}

/// `call`: the application built as for serving (any host accepted: no
/// listener), one request through it, the response printed. Logs only
/// warnings (`RUST_LOG` overrides), on stderr.
fn call_once<A: Args, E: std::fmt::Display>(
    cli: &Cli<A>,
    args: &super::one_shot::CallArgs,
    app: impl AsyncFnOnce(&Cli<A>, Security) -> Result<Router, E>,
) -> ExitCode {
    init_logging_at("warn");
    let request = match super::one_shot::read_request(args) {
        Ok(request) => request,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(async {
        let security = match cli.security.build(HostPolicy::any()).await {
            Ok(security) => security,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        };
        match app(cli, security).await {
            Ok(router) => super::one_shot::call(router, args, request).await.report(),
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(2)
            }
        }
    })
}

#[cfg(all(test, feature = "oauth"))]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli<NoOptions>, clap::Error> {
        Cli::<NoOptions>::try_parse_from(std::iter::once("server").chain(args.iter().copied()))
    }

    #[test]
    fn introspection_options_go_together() {
        let oauth = ["--oauth-issuer", "https://as.example", "--oauth-audience", "https://api.example/"];
        let both =
            [&oauth[..], &["--oauth-introspection-client-id", "rs", "--oauth-introspection-secret", "s"]].concat();
        let cli = parse(&both).expect("both with an issuer");
        assert_eq!(cli.security.oauth.oauth_introspection_client_id.as_deref(), Some("rs"));
        assert_eq!(cli.security.oauth.oauth_introspection_secret.as_deref(), Some("s"));
        assert!(parse(&[&oauth[..], &["--oauth-introspection-client-id", "rs"]].concat()).is_err());
        assert!(parse(&[&oauth[..], &["--oauth-introspection-secret", "s"]].concat()).is_err());
        assert!(parse(&["--oauth-introspection-client-id", "rs", "--oauth-introspection-secret", "s"]).is_err());
        let endpoint = [&both[..], &["--oauth-introspection-endpoint", "https://as.example/introspect"]].concat();
        assert!(parse(&endpoint).is_ok());
        assert!(parse(&[&oauth[..], &["--oauth-introspection-endpoint", "https://as.example/i"]].concat()).is_err());
    }
}
