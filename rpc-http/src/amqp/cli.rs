//! The command-line options of asynchronous calls on a broker (features
//! `amqp` and `cli`), for a binary to flatten into its own options: the
//! same ones make the web process publish and a worker consume.

use std::time::Duration;

use clap::Args;

use super::AmqpConfig;

/// Where asynchronous calls go: `--amqp-url` (with `--amqp-secret`) turns
/// the broker on.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Asynchronous calls on a message broker")]
pub struct AmqpOptions {
    /// Publish `$rpc.callback` calls to this AMQP broker (RabbitMQ,
    /// `amqp://user:password@127.0.0.1:5672/%2f`), for workers to run
    /// [default: they run in this process]
    #[arg(long, value_name = "URL", env = "RPC_AMQP_URL")]
    pub amqp_url: Option<String>,
    /// The secret (at least 16 bytes) queue messages are signed with; the
    /// same for the web processes and the workers. Required with --amqp-url
    #[arg(long, value_name = "SECRET", env = "RPC_AMQP_SECRET", hide_env_values = true, requires = "amqp_url")]
    pub amqp_secret: Option<String>,
    /// The queue's name (dead letters go to `<name>.dead`)
    #[arg(long, value_name = "NAME", default_value = super::DEFAULT_QUEUE, requires = "amqp_url")]
    pub amqp_queue: String,
    /// Deliveries of a call before it is dead-lettered (its callback failing)
    #[arg(long, value_name = "N", default_value_t = 5, requires = "amqp_url",
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub amqp_attempts: u32,
    /// Calls a worker runs at once
    #[arg(long, value_name = "N", default_value_t = 8, requires = "amqp_url",
          value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub amqp_prefetch: u16,
    /// Milliseconds before the second delivery of a call whose callback
    /// failed; doubled for each further one (at most 60 s)
    #[arg(long, value_name = "MS", default_value_t = 1000, requires = "amqp_url")]
    pub amqp_retry_delay_ms: u64,
    /// The most calls the queue holds; beyond it calls are refused with -32000
    #[arg(long, value_name = "N", default_value_t = 100_000, requires = "amqp_url")]
    pub amqp_max_queue: u32,
}

impl AmqpOptions {
    /// The broker's configuration, if `--amqp-url` was given; an error
    /// naming the option when one is wrong or the secret is missing.
    pub fn config(&self) -> Result<Option<AmqpConfig>, String> {
        let Some(url) = &self.amqp_url else { return Ok(None) };
        let Some(secret) = &self.amqp_secret else {
            return Err("--amqp-url needs --amqp-secret (or RPC_AMQP_SECRET): queue messages are signed".to_owned());
        };
        let config = AmqpConfig::new(url, secret.as_bytes())
            .map_err(|e| format!("--amqp-url/--amqp-secret: {e}"))?
            .queue(&self.amqp_queue)
            .map_err(|e| format!("--amqp-queue: {e}"))?
            .attempts(self.amqp_attempts)
            .prefetch(self.amqp_prefetch)
            .retry_delay(Duration::from_millis(self.amqp_retry_delay_ms))
            .max_queue_length(self.amqp_max_queue);
        Ok(Some(config))
    }
}
