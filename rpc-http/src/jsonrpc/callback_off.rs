//! Callbacks (`$rpc.callback`), when `rpc-http` is built without its
//! `callbacks` feature: none are allowed (a call asking for one gets
//! `-32602` saying so), and nothing here can post.

use std::time::Duration;

use http::HeaderMap;

use rpc_core::error::RpcError;

/// Request headers forwarded to the callback, for tracing across the hop.
pub const FORWARDED_HEADERS: [&str; 5] = ["x-request-id", "x-correlation-id", "traceparent", "tracestate", "baggage"];

/// A callback URL the policy allowed: there is none without the feature.
#[derive(Debug, Clone)]
pub enum CallbackUrl {}

impl CallbackUrl {
    /// The URL.
    pub fn as_str(&self) -> &str {
        match *self {}
    }

    /// What logs show of the URL.
    pub fn target(&self) -> String {
        match *self {}
    }
}

/// Which callback URLs the server posts to: none.
#[derive(Debug, Clone, Default)]
pub struct Callbacks;

const OFF: &str = "callbacks need the `callbacks` feature of rpc-http";

impl Callbacks {
    /// No callbacks: a call with `$rpc.callback` gets `-32602`.
    pub fn disabled() -> Self {
        Callbacks
    }

    /// Refused: this build cannot post callbacks.
    pub fn allow<S: AsRef<str>>(prefixes: impl IntoIterator<Item = S>) -> Result<Self, String> {
        match prefixes.into_iter().next() {
            None => Ok(Callbacks),
            Some(_) => Err(OFF.to_owned()),
        }
    }

    /// Nothing to bound.
    pub fn timeouts(self, _connect: Duration, _total: Duration) -> Result<Self, String> {
        Ok(self)
    }

    /// Nothing to bound.
    pub fn max_pending(self, _limit: usize) -> Self {
        self
    }

    /// Whether any callback is allowed: never.
    pub fn enabled(&self) -> bool {
        false
    }

    /// Always `-32602`.
    pub fn check(&self, _callback: &str) -> Result<CallbackUrl, RpcError> {
        Err(RpcError::invalid_params(format!("Invalid `$rpc`: callbacks are not enabled on this server ({OFF})")))
    }

    pub(crate) fn reserve(&self) -> Option<Pending> {
        None
    }

    pub(crate) async fn post(
        &self,
        url: CallbackUrl,
        _body: Vec<u8>,
        _headers: HeaderMap,
    ) -> Result<http::StatusCode, String> {
        match url {}
    }
}

/// The request headers a callback forwards: none are kept.
pub(crate) fn forwarded(_headers: &HeaderMap) -> HeaderMap {
    HeaderMap::new()
}

/// One pending asynchronous call.
pub(crate) struct Pending;
