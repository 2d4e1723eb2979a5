//! `cargo run -p catalog -- [--listen HOST:PORT] [--env dev|test|prod] [--token TOKEN ...] [--public-url URL]`,
//! or `cargo run -p catalog -- --stdio [--stdio-version N]` for MCP on
//! stdin/stdout (`--help` lists every option); `cargo run -p catalog -- worker
//! --amqp-url URL ...` runs the asynchronous calls the web processes publish
//! with `--amqp-url` (see `worker.rs`).

mod worker;

use std::process::ExitCode;

use clap::Args;
use rpc::server::cli::{Cli, Program};

/// The catalog's own options.
#[derive(Debug, Args)]
#[command(next_help_heading = "Catalog")]
struct Options {
    /// The public base URL documents name (`https://api.example.com`), for a
    /// server behind a proxy; by default, `http://` and the request's host.
    #[arg(long, value_name = "URL")]
    public_url: Option<rpc::server::PublicUrl>,
    /// The directory of translation files (rpc.<lang>.yaml, rpc/<group>.<lang>.yaml)
    /// [default: the catalog's own, examples/catalog/translations]
    #[arg(long, value_name = "DIR")]
    translations: Option<std::path::PathBuf>,
    /// The language of texts a client's Accept-Language does not match
    #[arg(long, value_name = "LANG", default_value = "en")]
    default_language: String,
    /// Serve the texts of the code only (doc comments), no translations
    #[arg(long, conflicts_with = "translations")]
    no_translations: bool,
    /// Keep the result cache, the method locks and the MCP sessions in this
    /// Redis (`redis://127.0.0.1:6379/`), shared by every instance using it
    /// [default: in this process]
    #[arg(long, value_name = "URL", env = "RPC_REDIS_URL")]
    redis_url: Option<String>,
    /// The prefix of the catalog's keys in Redis
    #[arg(long, value_name = "PREFIX", default_value = "catalog:", requires = "redis_url")]
    redis_prefix: String,
    /// Allow `$rpc.callback` URLs under this prefix (`http://127.0.0.1:9000/hooks`);
    /// repeatable [default: callbacks are off]
    #[arg(long = "callback-allow", value_name = "URL")]
    callback_allow: Vec<String>,
    /// Settings of the MCP endpoint (server identity, registry listing,
    /// instructions, session TTL, limits, hosts, CORS, cache hints) from
    /// this TOML, YAML or JSON file; `MCP_*` environment variables override
    /// it (`MCP_SESSION_TTL=30m`, `MCP_GROUPS__MCP__INSTRUCTIONS=...`)
    #[arg(long, value_name = "FILE", env = "CATALOG_CONFIG")]
    config: Option<std::path::PathBuf>,
    /// Serve MCP (the `mcp` group) on stdin/stdout instead of HTTP:
    /// newline-delimited JSON-RPC, logs on stderr, exit at the end of stdin.
    /// For clients that start the server as a command; no HTTP listener, no
    /// token check (the client started the process)
    #[arg(long, conflicts_with_all = ["listen", "public_url", "token_file", "protect_docs", "allow_hosts", "cors_origins", "oauth_issuer"])]
    stdio: bool,
    /// The API version served over stdio (what /mcp/vN serves over HTTP)
    #[arg(long, value_name = "N", default_value_t = 1, requires = "stdio",
          value_parser = clap::value_parser!(u32).range(1..))]
    stdio_version: u32,
    /// Asynchronous calls on a message broker (`catalog worker` runs them).
    #[command(flatten)]
    amqp: rpc::amqp::cli::AmqpOptions,
}

fn main() -> ExitCode {
    if std::env::args_os().nth(1).is_some_and(|arg| arg == "worker") {
        return worker::main();
    }
    let program = Program::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"), "127.0.0.1:8080")
        .about("The catalog example: JSON-RPC at /rpc, MCP at /mcp/v1 and /mcp/v2 (or MCP on stdio: --stdio)");
    let cli = rpc::server::cli::parse::<Options>(&program);
    if cli.app.stdio {
        return stdio(&cli);
    }
    rpc::server::cli::main_parsed(program, cli, async |cli, security| {
        let setup = setup(cli, security, true).await?;
        catalog::app_configured(cli.env, setup)
    })
}

/// The application's set-up from the command line.
/// With `publish`, asynchronous calls go to the broker `--amqp-url` names
/// (a worker runs them, and publishes nothing itself).
async fn setup(cli: &Cli<Options>, security: rpc::Security, publish: bool) -> Result<catalog::Setup, String> {
    let options = &cli.app;
    let translations = if options.no_translations {
        None
    } else {
        let dir = options.translations.clone().unwrap_or_else(catalog::translations_dir);
        let loaded = rpc::Translations::load(&dir)
            .and_then(|t| t.with_default_language(&options.default_language))
            .map_err(|e| format!("translations: {e}"))?;
        Some(std::sync::Arc::new(loaded))
    };
    let shared = match &options.redis_url {
        Some(url) => {
            let shared =
                catalog::Shared::redis(url, &options.redis_prefix).await.map_err(|e| format!("--redis-url: {e}"))?;
            tracing::info!(prefix = %options.redis_prefix, "cache, locks, sessions, tasks and rate counters in Redis");
            Some(shared)
        }
        None => None,
    };
    let callbacks =
        rpc::jsonrpc::Callbacks::allow(&options.callback_allow).map_err(|e| format!("--callback-allow: {e}"))?;
    let settings = mcp::settings::Settings::load(options.config.as_deref()).map_err(|e| e.to_string())?;
    let queue = match options.amqp.config()? {
        Some(config) if publish => {
            let queue = rpc::amqp::AmqpQueue::new(config);
            match queue.connect().await {
                Ok(()) => tracing::info!("asynchronous calls ($rpc.callback) go to the message broker"),
                Err(e) => {
                    tracing::warn!(error = %e, "the message broker is unreachable: asynchronous calls are refused until it is back")
                }
            }
            Some(std::sync::Arc::new(queue) as std::sync::Arc<dyn rpc::jsonrpc::Queue>)
        }
        _ => None,
    };
    let task_queue = match options.amqp.config()? {
        Some(config) if publish && shared.is_some() => {
            let queue = mcp::amqp::AmqpTaskQueue::new(&config)?;
            match queue.connect().await {
                Ok(()) => tracing::info!("MCP tasks go to the message broker"),
                Err(e) => {
                    tracing::warn!(error = %e, "the message broker is unreachable: MCP tasks are refused until it is back")
                }
            }
            Some(std::sync::Arc::new(queue) as std::sync::Arc<dyn mcp::tasks::TaskQueue>)
        }
        Some(_) if publish => {
            tracing::warn!(
                "MCP tasks run in this process: sending them to the workers needs --redis-url (a task store shared with them)"
            );
            None
        }
        _ => None,
    };
    Ok(catalog::Setup {
        security,
        public_url: options.public_url.clone(),
        translations,
        shared,
        callbacks,
        queue,
        task_queue,
        rate_limits: cli.limits.rate_limits(),
        settings: Some(settings),
    })
}

/// `--stdio`: MCP on stdin/stdout until stdin ends. Only MCP messages go
/// to stdout; logs go to stderr.
fn stdio(cli: &Cli<Options>) -> ExitCode {
    rpc::server::cli::init_logging();
    tracing::info!(env = ?cli.env, "starting {} {} on stdio", env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"));
    if !cli.security.tokens.is_empty() {
        tracing::warn!("--token / RPC_TOKENS apply to HTTP only: stdio has no token check");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let version = cli.app.stdio_version;
    let served = runtime.block_on(async {
        let setup = setup(cli, rpc::Security::new(), false).await?;
        let endpoint = catalog::stdio_endpoint(cli.env, setup)?;
        tracing::info!(version, "serving MCP (group `mcp`) on stdin/stdout");
        mcp::stdio::serve(endpoint, version, tokio::io::stdin(), tokio::io::stdout())
            .await
            .map_err(|e| format!("stdio: {e}"))
    });
    // A read of stdin may still be pending (when stdout failed first): it
    // cannot be cancelled, so the runtime is not waited for.
    runtime.shutdown_background();
    match served {
        Ok(()) => {
            tracing::info!("stdin closed; exiting");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}
