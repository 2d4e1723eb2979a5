//! How the executor logs a call's error: the level by who is at fault, the
//! method, and the parameters cut short.

use serde_json::{Map, Value};

use super::Stage;
use crate::error::RpcError;
use crate::logged::{logged, logged_up_to};

/// The most bytes of parameters an error log line shows.
pub(super) const LOGGED_PARAMS_BYTES: usize = 256;
/// The most bytes of an error message a log line shows.
const LOGGED_MESSAGE_BYTES: usize = 512;

/// The level a call's error is logged at: internal errors at `error`,
/// the method's own errors at `info`, the caller's mistakes, refusals and
/// questions awaiting the client's answer at `debug`.
pub(super) fn log_level(stage: Stage, error: &RpcError) -> tracing::Level {
    if error.code() == crate::error::code::INTERNAL_ERROR {
        tracing::Level::ERROR
    } else if stage == Stage::Method && error.code() != crate::ask::INPUT_REQUIRED {
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

/// Logs a call's error with the method and the parameters (cut). The
/// method may be a name the client sent (an unknown one), the message may
/// quote the request: both are escaped and bounded ([`logged`]).
pub(super) fn log_error(method: &str, shown: Option<&str>, stage: Stage, error: &RpcError) {
    let shown = logged_up_to(shown.unwrap_or(""), LOGGED_PARAMS_BYTES + 4);
    let (code, message) = (error.code(), logged_up_to(error.message(), LOGGED_MESSAGE_BYTES));
    let method = logged(method);
    match log_level(stage, error) {
        tracing::Level::ERROR => {
            tracing::error!(method = %method, params = %shown, code, error = %message, ?stage, "call failed")
        }
        tracing::Level::INFO => {
            tracing::info!(method = %method, params = %shown, code, error = %message, ?stage, "call failed")
        }
        _ => tracing::debug!(method = %method, params = %shown, code, error = %message, ?stage, "call refused"),
    }
}

/// Parameters rendered for a log line, cut after [`LOGGED_PARAMS_BYTES`]:
/// on the stack, so rendering them before a call that may fail allocates
/// nothing.
pub(super) struct Shown {
    bytes: [u8; LOGGED_PARAMS_BYTES],
    len: usize,
    complete: bool,
}

impl std::io::Write for Shown {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = LOGGED_PARAMS_BYTES - self.len;
        let taken = buf.len().min(room);
        self.bytes[self.len..self.len + taken].copy_from_slice(&buf[..taken]);
        self.len += taken;
        if taken < buf.len() {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        Ok(taken)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shown {
    /// `params` as JSON, cut.
    pub(super) fn of(params: &Map<String, Value>) -> Shown {
        let mut shown = Shown { bytes: [0; LOGGED_PARAMS_BYTES], len: 0, complete: false };
        shown.complete = serde_json::to_writer(&mut shown, params).is_ok();
        shown
    }

    /// The text, with `…` where it was cut.
    pub(super) fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.bytes[..self.len]).into_owned();
        if !self.complete {
            text.push('…');
        }
        text
    }
}

#[cfg(test)]
mod level_tests {
    use super::*;

    #[test]
    fn levels_follow_who_is_at_fault() {
        let error = |code| RpcError::new(code, "x");
        assert_eq!(log_level(Stage::Method, &error(crate::error::code::INTERNAL_ERROR)), tracing::Level::ERROR);
        assert_eq!(log_level(Stage::Method, &error(1)), tracing::Level::INFO);
        assert_eq!(log_level(Stage::Validation, &error(-32602)), tracing::Level::DEBUG);
        // A question awaiting the client's answer is a step, not a failure.
        assert_eq!(log_level(Stage::Method, &error(crate::ask::INPUT_REQUIRED)), tracing::Level::DEBUG);
    }
}
