//! How the executor logs a call's error: the level by who is at fault, the
//! method, and the parameters cut short.

use serde_json::{Map, Value};

use super::Stage;
use crate::error::RpcError;

/// The most bytes of parameters an error log line shows.
pub(super) const LOGGED_PARAMS_BYTES: usize = 256;

/// The level a call's error is logged at: internal errors at `error`,
/// the method's own errors at `info`, the caller's mistakes and refusals
/// at `debug`.
pub(super) fn log_level(stage: Stage, error: &RpcError) -> tracing::Level {
    if error.code() == crate::error::code::INTERNAL_ERROR {
        tracing::Level::ERROR
    } else if stage == Stage::Method {
        tracing::Level::INFO
    } else {
        tracing::Level::DEBUG
    }
}

pub(super) fn level_enabled(level: tracing::Level) -> bool {
    match level {
        tracing::Level::ERROR => tracing::enabled!(tracing::Level::ERROR),
        tracing::Level::INFO => tracing::enabled!(tracing::Level::INFO),
        _ => tracing::enabled!(tracing::Level::DEBUG),
    }
}

/// Logs a call's error with the method and the parameters (cut).
pub(super) fn log_error(method: &str, shown: Option<&str>, stage: Stage, error: &RpcError) {
    let shown = shown.unwrap_or("");
    let (code, message) = (error.code(), error.message());
    match log_level(stage, error) {
        tracing::Level::ERROR => {
            tracing::error!(method, params = %shown, code, error = %message, ?stage, "call failed")
        }
        tracing::Level::INFO => tracing::info!(method, params = %shown, code, error = %message, ?stage, "call failed"),
        _ => tracing::debug!(method, params = %shown, code, error = %message, ?stage, "call refused"),
    }
}

/// `params` as JSON, cut after about `max` bytes.
pub(super) fn bounded_json(params: &Map<String, Value>, max: usize) -> String {
    struct Cut {
        out: Vec<u8>,
        max: usize,
    }
    impl std::io::Write for Cut {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = self.max.saturating_sub(self.out.len());
            self.out.extend_from_slice(&buf[..buf.len().min(room)]);
            if buf.len() > room { Err(std::io::Error::other("cut")) } else { Ok(buf.len()) }
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut cut = Cut { out: Vec::with_capacity(max.min(64)), max };
    let complete = serde_json::to_writer(&mut cut, params).is_ok();
    let mut text = String::from_utf8_lossy(&cut.out).into_owned();
    if !complete {
        text.push('…');
    }
    text
}
