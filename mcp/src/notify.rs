//! Request-scoped notifications: what a method reports through its
//! [`rpc::Context`] becomes `notifications/progress` and
//! `notifications/message` frames on the request's response stream.
//!
//! The sink filters as the protocol asks: progress only when the request
//! carried a `progressToken` (and only increasing values), log messages
//! only at or above the level the client asked for (`logging/setLevel` in
//! the handshake era, `_meta["io.modelcontextprotocol/logLevel"]` in
//! 2026-07-28), never otherwise. Frames go into a bounded queue; when a slow
//! client lets it fill up, further events are dropped and counted.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use rpc::{Event, EventSink, LogLevel};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

/// Delivers a request's events as JSON-RPC notification objects.
pub(crate) struct NotificationSink {
    tx: mpsc::Sender<Bytes>,
    progress_token: Option<Box<RawValue>>,
    log_level: Option<LogLevel>,
    /// The last progress value sent, as `f64` bits (`u64::MAX`: none yet).
    last_progress: AtomicU64,
    dropped: AtomicU64,
    method: String,
}

/// The longest `_meta.progressToken` accepted, in bytes of JSON: the token
/// is repeated in every progress notification of the call.
pub const MAX_PROGRESS_TOKEN_BYTES: usize = 256;

/// A request's `_meta.progressToken`, checked: a string or an integer, at
/// most [`MAX_PROGRESS_TOKEN_BYTES`] long (else `-32602`, naming the limit).
pub(crate) fn progress_token(raw: &RawValue) -> Result<Box<RawValue>, rpc::RpcError> {
    let text = raw.get();
    if text.len() > MAX_PROGRESS_TOKEN_BYTES {
        return Err(rpc::RpcError::invalid_params(format!(
            "`_meta.progressToken` is too long ({} bytes; at most {MAX_PROGRESS_TOKEN_BYTES})",
            text.len()
        )));
    }
    let first = text.as_bytes().first().copied().unwrap_or(b' ');
    if first != b'"' && first != b'-' && !first.is_ascii_digit() {
        return Err(rpc::RpcError::invalid_params("`_meta.progressToken` must be a string or a number"));
    }
    Ok(raw.to_owned())
}

/// How every progress notification this sink writes begins (`jsonrpc`
/// first, then `method`, as `json!` writes them): the stdio transport tells
/// progress apart from the other frames of a call by it, without parsing.
pub(crate) const PROGRESS_START: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/progress","#;

/// Whether `frame` is a progress notification of a [`NotificationSink`].
pub(crate) fn is_progress(frame: &[u8]) -> bool {
    frame.starts_with(PROGRESS_START)
}

/// What a request asked to be told about.
#[derive(Debug, Default)]
pub(crate) struct Wanted {
    /// The request's `_meta.progressToken`, as sent.
    pub progress_token: Option<Box<RawValue>>,
    /// The lowest log level to deliver; `None`: no log messages.
    pub log_level: Option<LogLevel>,
}

impl Wanted {
    /// Whether anything at all would be delivered.
    pub fn any(&self) -> bool {
        self.progress_token.is_some() || self.log_level.is_some()
    }
}

impl NotificationSink {
    /// A sink and the receiving end of its queue of `capacity` frames.
    pub fn channel(wanted: Wanted, capacity: usize, method: &str) -> (Arc<Self>, mpsc::Receiver<Bytes>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        let sink = NotificationSink {
            tx,
            progress_token: wanted.progress_token,
            log_level: wanted.log_level,
            last_progress: AtomicU64::new(u64::MAX),
            dropped: AtomicU64::new(0),
            method: method.to_owned(),
        };
        (Arc::new(sink), rx)
    }

    /// Queues a request of the server to the client (a question of the
    /// call); `false` when the queue is full (the client reads too slowly).
    pub(crate) fn request(&self, frame: Vec<u8>) -> bool {
        self.tx.try_send(Bytes::from(frame)).is_ok()
    }

    fn push(&self, frame: Vec<u8>) {
        if self.tx.try_send(Bytes::from(frame)).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Whether `progress` is larger than every value sent so far (the
    /// protocol requires increasing progress), recording it if so.
    fn advances(&self, progress: f64) -> bool {
        if !progress.is_finite() {
            return false;
        }
        let mut last = self.last_progress.load(Ordering::Relaxed);
        loop {
            if last != u64::MAX && progress <= f64::from_bits(last) {
                return false;
            }
            match self.last_progress.compare_exchange_weak(
                last,
                progress.to_bits(),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => last = now,
            }
        }
    }
}

impl Drop for NotificationSink {
    fn drop(&mut self) {
        let dropped = self.dropped.load(Ordering::Relaxed);
        if dropped > 0 {
            tracing::warn!(method = %self.method, dropped, "the client read too slowly: progress/log notifications dropped");
        }
    }
}

impl EventSink for NotificationSink {
    fn wants_log(&self, level: LogLevel) -> bool {
        self.log_level.is_some_and(|min| level >= min)
    }

    fn wants_progress(&self) -> bool {
        self.progress_token.is_some()
    }

    fn send(&self, event: Event) {
        match event {
            Event::Progress { progress, total, message } => {
                let Some(token) = &self.progress_token else { return };
                if !self.advances(progress) {
                    return;
                }
                let mut params = Map::new();
                // The token is written back as the client sent it (a string or a number).
                let token: Value = serde_json::from_str(token.get()).unwrap_or(Value::Null);
                params.insert("progressToken".into(), token);
                params.insert("progress".into(), json!(progress));
                if let Some(total) = total.filter(|t| t.is_finite()) {
                    params.insert("total".into(), json!(total));
                }
                if let Some(message) = message {
                    params.insert("message".into(), Value::String(message));
                }
                let notification = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params});
                self.push(serde_json::to_vec(&notification).unwrap_or_default());
            }
            Event::Log { level, logger, data } => {
                if !self.wants_log(level) {
                    return;
                }
                let mut params = Map::new();
                params.insert("level".into(), Value::String(level.as_str().into()));
                if let Some(logger) = logger {
                    params.insert("logger".into(), Value::String(logger));
                }
                params.insert("data".into(), data);
                let notification = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": params});
                self.push(serde_json::to_vec(&notification).unwrap_or_default());
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted(token: Option<&str>, level: Option<LogLevel>) -> Wanted {
        Wanted { progress_token: token.map(|t| RawValue::from_string(t.to_owned()).unwrap()), log_level: level }
    }

    fn frames(rx: &mut mpsc::Receiver<Bytes>) -> Vec<Value> {
        let mut out = Vec::new();
        while let Ok(frame) = rx.try_recv() {
            out.push(serde_json::from_slice(&frame).unwrap());
        }
        out
    }

    #[test]
    fn progress_needs_a_token_and_must_increase() {
        let (sink, mut rx) = NotificationSink::channel(wanted(Some("\"t-1\""), None), 8, "m");
        sink.send(Event::Progress { progress: 0.0, total: Some(2.0), message: None });
        sink.send(Event::Progress { progress: 0.0, total: Some(2.0), message: None });
        sink.send(Event::Progress { progress: 1.0, total: Some(2.0), message: Some("half".into()) });
        sink.send(Event::Progress { progress: f64::NAN, total: None, message: None });
        sink.send(Event::Log { level: LogLevel::Emergency, logger: None, data: json!("no level asked") });
        let got = frames(&mut rx);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0]["params"], json!({"progressToken": "t-1", "progress": 0.0, "total": 2.0}));
        assert_eq!(got[1]["params"]["message"], "half");

        let (sink, mut rx) = NotificationSink::channel(wanted(Some("7"), None), 8, "m");
        sink.send(Event::Progress { progress: 1.0, total: None, message: None });
        assert_eq!(frames(&mut rx)[0]["params"]["progressToken"], 7, "a numeric token stays a number");
    }

    #[test]
    fn progress_frames_are_told_apart_by_their_start() {
        let (sink, mut rx) = NotificationSink::channel(wanted(Some("\"t\""), Some(LogLevel::Info)), 8, "m");
        sink.send(Event::Progress { progress: 1.0, total: Some(2.0), message: Some("half".into()) });
        sink.send(Event::Log { level: LogLevel::Info, logger: None, data: json!("notifications/progress") });
        let (progress, log) = (rx.try_recv().expect("progress"), rx.try_recv().expect("log"));
        assert!(is_progress(&progress), "{}", String::from_utf8_lossy(&progress));
        assert!(!is_progress(&log), "{}", String::from_utf8_lossy(&log));
        assert!(!is_progress(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
    }

    #[test]
    fn logs_at_or_above_the_level_only() {
        let (sink, mut rx) = NotificationSink::channel(wanted(None, Some(LogLevel::Warning)), 8, "m");
        for level in [LogLevel::Info, LogLevel::Warning, LogLevel::Critical] {
            sink.send(Event::Log { level, logger: Some("x".into()), data: json!(level.as_str()) });
        }
        sink.send(Event::Progress { progress: 1.0, total: None, message: None });
        let got = frames(&mut rx);
        let levels: Vec<&str> = got.iter().map(|f| f["params"]["level"].as_str().unwrap()).collect();
        assert_eq!(levels, ["warning", "critical"]);
        assert_eq!(got[0]["method"], "notifications/message");
        assert_eq!(got[0]["params"]["logger"], "x");
    }

    #[test]
    fn a_full_queue_drops_instead_of_growing() {
        let (sink, mut rx) = NotificationSink::channel(wanted(None, Some(LogLevel::Debug)), 2, "m");
        for i in 0..10 {
            sink.send(Event::Log { level: LogLevel::Info, logger: None, data: json!(i) });
        }
        assert_eq!(frames(&mut rx).len(), 2);
        assert_eq!(sink.dropped.load(Ordering::Relaxed), 8);
    }
}
