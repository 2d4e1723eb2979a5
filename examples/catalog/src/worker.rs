//! `catalog worker --amqp-url URL --amqp-secret SECRET --callback-allow URL [--redis-url URL]`:
//! runs the asynchronous calls (`$rpc.callback`) that catalog web processes
//! started with the same `--amqp-url` publish, through the catalog's
//! executor with each caller's identity, and posts their responses to
//! their callbacks; with `--redis-url`, also runs the MCP tasks those web
//! processes (started with the same `--redis-url`) hand to the broker
//! (`<queue>.tasks`), recording them in the shared task store. It takes
//! the web process's options (the HTTP ones are not used); workers that
//! should not post a response twice share a store (`--redis-url`). Stops on
//! SIGINT or SIGTERM, letting the calls and tasks it holds finish.

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use rpc::server::cli::Cli;

use super::{Options, setup};

/// The worker's command line: the arguments after `worker`.
fn parse() -> Cli<Options> {
    let args = std::env::args_os().enumerate().filter(|(i, _)| *i != 1).map(|(_, arg)| arg);
    let command = Cli::<Options>::command()
        .name("catalog worker")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Runs the catalog's asynchronous calls from the message broker (--amqp-url) and posts their responses");
    match command.try_get_matches_from(args).and_then(|m| Cli::<Options>::from_arg_matches(&m)) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    }
}

/// `catalog worker ...`: consumes until SIGINT or SIGTERM.
pub fn main() -> ExitCode {
    let cli = parse();
    rpc::server::cli::init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        let config = cli.app.amqp.config()?.ok_or("catalog worker needs --amqp-url (or RPC_AMQP_URL)")?;
        let setup = setup(&cli, rpc::Security::new(), false).await?;
        if !setup.callbacks.enabled() {
            return Err("catalog worker needs --callback-allow: it posts responses only to allowed URLs".to_owned());
        }
        if setup.shared.is_none() {
            tracing::warn!(
                "no --redis-url: this worker's deduplication marks are its own (other workers do not see them)"
            );
        }
        let service = catalog::worker_service(cli.env, setup.clone())?;
        let tasks = match &setup.shared {
            Some(_) => {
                let endpoint = catalog::worker_endpoint(&service, &setup)?;
                Some(mcp::amqp::TaskWorker::new(endpoint, &config)?)
            }
            None => {
                tracing::warn!("no --redis-url: MCP tasks are not run here (they need the web processes' task store)");
                None
            }
        };
        tracing::info!(env = ?cli.env, "starting catalog worker {}", env!("CARGO_PKG_VERSION"));
        let (stop, stopping) = tokio::sync::watch::channel(false);
        let until_stopped = || {
            let mut stopping = stopping.clone();
            async move {
                let _ = stopping.wait_for(|stopped| *stopped).await;
            }
        };
        let calls = rpc::amqp::Worker::new(service, config).run(until_stopped());
        let tasks = async {
            if let Some(tasks) = tasks {
                tasks.run(until_stopped()).await;
            }
        };
        let signals = async {
            stopped().await;
            let _ = stop.send(true);
        };
        tokio::join!(calls, tasks, signals);
        Ok::<(), String>(())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// Completes on SIGINT or SIGTERM.
async fn stopped() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let terminate = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                Err(_) => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
    tracing::info!("stopping: letting the calls in progress finish");
}
