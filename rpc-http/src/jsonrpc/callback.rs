//! Callbacks (`$rpc.callback`): where the server may POST the responses of
//! asynchronous calls, and the POST itself.
//!
//! Off by default: a client must not make the server send requests into
//! its network. [`Callbacks::allow`] lists URL prefixes (scheme, host, port
//! and a path prefix); a callback URL is accepted only under one of them,
//! compared after parsing (no userinfo, no tricks with case or default
//! ports). Redirects are not followed. Each POST is bounded (connect
//! timeout, total timeout), failures are logged and not retried, and at
//! most [`Callbacks::max_pending`] calls wait or run at once (beyond that, a
//! call asking for a callback is refused at once).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::{HeaderMap, HeaderName};
use url::Url;

use rpc_core::error::RpcError;

/// Request headers forwarded to the callback, for tracing across the hop.
pub const FORWARDED_HEADERS: [&str; 5] = ["x-request-id", "x-correlation-id", "traceparent", "tracestate", "baggage"];
/// Default connect timeout of a callback POST.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Default total timeout of a callback POST.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default number of asynchronous calls waiting or running at once.
pub const DEFAULT_MAX_PENDING: usize = 256;

/// A callback URL the policy allowed.
#[derive(Debug, Clone)]
pub struct CallbackUrl(Url);

impl CallbackUrl {
    /// The URL.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The URL without its query (which may carry a secret), with its
    /// port: what logs show.
    pub fn target(&self) -> String {
        let url = &self.0;
        match url.port() {
            Some(port) => format!("{}://{}:{port}{}", url.scheme(), url.host_str().unwrap_or(""), url.path()),
            None => format!("{}://{}{}", url.scheme(), url.host_str().unwrap_or(""), url.path()),
        }
    }
}

/// One allowed prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Allowed {
    scheme: String,
    host: String,
    port: u16,
    path: String,
}

impl Allowed {
    fn covers(&self, url: &Url) -> bool {
        let path = url.path();
        url.scheme() == self.scheme
            && url.host_str().is_some_and(|h| h.eq_ignore_ascii_case(&self.host))
            && url.port_or_known_default() == Some(self.port)
            && (self.path.is_empty()
                || path == self.path
                || path.strip_prefix(&self.path).is_some_and(|rest| self.path.ends_with('/') || rest.starts_with('/')))
    }
}

/// Which callback URLs the server posts to (see the [module](self)).
#[derive(Clone)]
pub struct Callbacks {
    allowed: Arc<[Allowed]>,
    client: Option<reqwest::Client>,
    connect_timeout: Duration,
    timeout: Duration,
    max_pending: usize,
    pending: Arc<AtomicUsize>,
}

impl fmt::Debug for Callbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Callbacks")
            .field("allowed", &self.allowed)
            .field("timeout", &self.timeout)
            .field("max_pending", &self.max_pending)
            .finish_non_exhaustive()
    }
}

impl Default for Callbacks {
    fn default() -> Self {
        Callbacks::disabled()
    }
}

fn parse_allowed(prefix: &str) -> Result<Allowed, String> {
    let url = Url::parse(prefix).map_err(|e| format!("callback prefix `{prefix}` is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("callback prefix `{prefix}`: only http and https URLs"));
    }
    if url.scheme() == "https" && !cfg!(feature = "callback-tls") {
        return Err(format!("callback prefix `{prefix}`: https callbacks need the `callback-tls` feature of rpc-http"));
    }
    if !url.username().is_empty() || url.password().is_some() || url.query().is_some() || url.fragment().is_some() {
        return Err(format!("callback prefix `{prefix}`: no credentials, query or fragment"));
    }
    let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
        return Err(format!("callback prefix `{prefix}` has no host"));
    };
    let path = if url.path() == "/" { String::new() } else { url.path().to_owned() };
    Ok(Allowed { scheme: url.scheme().to_owned(), host: host.to_ascii_lowercase(), port, path })
}

impl Callbacks {
    /// No callbacks: a call with `$rpc.callback` gets `-32602`.
    pub fn disabled() -> Self {
        Callbacks {
            allowed: Arc::from(Vec::new()),
            client: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            timeout: DEFAULT_TIMEOUT,
            max_pending: DEFAULT_MAX_PENDING,
            pending: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Callbacks to URLs under these prefixes (`https://hooks.example.com/rpc/`):
    /// same scheme, host and port, and a path under the prefix's path.
    pub fn allow<S: AsRef<str>>(prefixes: impl IntoIterator<Item = S>) -> Result<Self, String> {
        let allowed = prefixes.into_iter().map(|p| parse_allowed(p.as_ref())).collect::<Result<Vec<_>, _>>()?;
        let mut callbacks = Callbacks::disabled();
        if !allowed.is_empty() {
            callbacks.allowed = Arc::from(allowed);
            callbacks.client = Some(callbacks.build_client()?);
        }
        Ok(callbacks)
    }

    fn build_client(&self) -> Result<reqwest::Client, String> {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(self.connect_timeout)
            .timeout(self.timeout)
            .build()
            .map_err(|e| format!("could not build the callback HTTP client: {e}"))
    }

    /// Bounds each POST: `connect` to connect, `total` for the whole exchange.
    pub fn timeouts(mut self, connect: Duration, total: Duration) -> Result<Self, String> {
        self.connect_timeout = connect;
        self.timeout = total;
        if self.client.is_some() {
            self.client = Some(self.build_client()?);
        }
        Ok(self)
    }

    /// At most `limit` asynchronous calls wait or run at once.
    pub fn max_pending(mut self, limit: usize) -> Self {
        self.max_pending = limit;
        self
    }

    /// Whether any callback is allowed.
    pub fn enabled(&self) -> bool {
        self.client.is_some()
    }

    /// The URL, if the policy allows it; else `-32602` saying why.
    pub fn check(&self, callback: &str) -> Result<CallbackUrl, RpcError> {
        if !self.enabled() {
            return Err(RpcError::invalid_params("Invalid `$rpc`: callbacks are not enabled on this server"));
        }
        let url = Url::parse(callback)
            .map_err(|e| RpcError::invalid_params(format!("Invalid `$rpc`: callback is not a URL: {e}")))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(RpcError::invalid_params("Invalid `$rpc`: callback URLs carry no credentials"));
        }
        if !self.allowed.iter().any(|a| a.covers(&url)) {
            return Err(RpcError::invalid_params("Invalid `$rpc`: this callback URL is not allowed by the server"));
        }
        Ok(CallbackUrl(url))
    }

    /// A slot for one more asynchronous call, if fewer than the limit are pending.
    pub(crate) fn reserve(&self) -> Option<Pending> {
        let taken = self
            .pending
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < self.max_pending).then_some(n + 1))
            .is_ok();
        taken.then(|| Pending(self.pending.clone()))
    }

    /// POSTs `body` (a JSON-RPC response) to `url` with the forwarded
    /// `headers`; the status, or why it failed.
    pub(crate) async fn post(
        &self,
        url: CallbackUrl,
        body: Vec<u8>,
        headers: HeaderMap,
    ) -> Result<http::StatusCode, String> {
        let Some(client) = &self.client else { return Err("callbacks are not enabled".into()) };
        let response = client
            .post(url.0)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .headers(headers)
            .body(body)
            .send()
            .await
            .map_err(|e| self.failure(&e))?;
        Ok(response.status())
    }

    /// Why a POST failed, in words an operator can act on: a timeout with
    /// its limit, a refused connection, and the cause reqwest wraps.
    fn failure(&self, e: &reqwest::Error) -> String {
        let mut why = if e.is_timeout() {
            format!("no response within {:?} (connect {:?})", self.timeout, self.connect_timeout)
        } else if e.is_connect() {
            "could not connect".to_owned()
        } else if e.is_redirect() {
            "redirects are not followed".to_owned()
        } else {
            "the request failed".to_owned()
        };
        let mut source = std::error::Error::source(e);
        while let Some(cause) = source {
            why.push_str(": ");
            why.push_str(&cause.to_string());
            source = cause.source();
        }
        why
    }
}

/// The request headers a callback forwards.
pub(crate) fn forwarded(headers: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::new();
    for name in FORWARDED_HEADERS {
        let name = HeaderName::from_static(name);
        if let Some(value) = headers.get(&name) {
            out.insert(name, value.clone());
        }
    }
    out
}

/// One pending asynchronous call; the slot frees when this drops.
pub(crate) struct Pending(Arc<AtomicUsize>);

impl Drop for Pending {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_by_default() {
        let error = Callbacks::default().check("http://127.0.0.1:9/x").unwrap_err();
        assert!(error.message().contains("not enabled"), "{}", error.message());
    }

    #[test]
    fn only_urls_under_an_allowed_prefix() {
        let callbacks = Callbacks::allow(["http://hooks.local:8080/rpc", "http://127.0.0.1:9000"]).unwrap();
        for ok in
            ["http://hooks.local:8080/rpc", "http://HOOKS.local:8080/rpc/done?x=1", "http://127.0.0.1:9000/anything"]
        {
            assert!(callbacks.check(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://hooks.local:8080/rpcx",
            "http://hooks.local:8080/other",
            "http://hooks.local/rpc",
            "https://hooks.local:8080/rpc",
            "http://user:pw@hooks.local:8080/rpc",
            "http://hooks.local:8080@169.254.169.254/rpc",
            "http://169.254.169.254/latest/meta-data",
            "http://127.0.0.1:9001/",
            "file:///etc/passwd",
            "not a url",
        ] {
            assert!(callbacks.check(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_prefixes_are_refused_at_startup() {
        assert!(Callbacks::allow(["ftp://x/"]).is_err());
        assert!(Callbacks::allow(["http://u:p@x/"]).is_err());
        assert!(Callbacks::allow(["nope"]).is_err());
    }

    #[test]
    fn pending_calls_are_bounded() {
        let callbacks = Callbacks::allow(["http://127.0.0.1:9000"]).unwrap().max_pending(2);
        let a = callbacks.reserve().unwrap();
        let _b = callbacks.reserve().unwrap();
        assert!(callbacks.reserve().is_none());
        drop(a);
        assert!(callbacks.reserve().is_some());
    }
}
