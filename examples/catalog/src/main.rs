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
}

fn main() -> std::process::ExitCode {
    let program = Program::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"), "127.0.0.1:8080")
        .about("The catalog example: JSON-RPC at /rpc, MCP at /mcp/v1 and /mcp/v2");
    rpc::server::cli::main::<Options, _>(program, async |cli, security| {
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
                let shared = catalog::Shared::redis(url, &options.redis_prefix)
                    .await
                    .map_err(|e| format!("--redis-url: {e}"))?;
                tracing::info!(prefix = %options.redis_prefix, "cache, locks and sessions in Redis");
                Some(shared)
            }
            None => None,
        };
        let callbacks =
            rpc::jsonrpc::Callbacks::allow(&options.callback_allow).map_err(|e| format!("--callback-allow: {e}"))?;
        let settings = mcp::settings::Settings::load(options.config.as_deref()).map_err(|e| e.to_string())?;
        let setup = catalog::Setup {
            security,
            public_url: options.public_url.clone(),
            translations,
            shared,
            callbacks,
            settings: Some(settings),
        };
        catalog::app_configured(cli.env, setup)
    })
}
