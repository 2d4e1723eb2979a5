//! The request context a method can take: `ctx: rpc::Context` (also
//! `mcp::Context`) among its parameters. It is not part of the method's
//! schema and not a JSON-RPC parameter; the transport fills it in.
//!
//! Through it a method reports progress and logs (over MCP, as
//! `notifications/progress` and `notifications/message` on the request's
//! response stream, when the client asked for them; over `/rpc`, to
//! `tracing`), and reads what the transport knows about the client: the
//! protocol revision, its capabilities and its `clientInfo`.
//!
//! ```
//! # extern crate rpc_core as rpc;
//! # use rpc::Context;
//! # struct Indexer;
//! # impl Indexer {
//! pub async fn reindex(&self, ctx: Context, batches: u32) -> u32 {
//!     for done in 0..batches {
//!         ctx.progress(f64::from(done), Some(f64::from(batches)), Some("indexing"));
//!         // ... work ...
//!     }
//!     ctx.info(serde_json::json!({"batches": batches}));
//!     batches
//! }
//! # }
//! ```
//!
//! Reporting never blocks the method: events go into a bounded queue that
//! the transport drains; when a slow client lets it fill up, further events
//! are dropped (and counted in the log) rather than buffered without bound.
//! Cancellation is dropping the method's future: the transport does that
//! when the client closes the response stream (or, in the handshake era,
//! sends `notifications/cancelled`).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::call::transport::Transport;
use crate::identity::Identity;

/// Log levels, as RFC 5424 and MCP's `LoggingLevel` name them, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// General information.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The wire name (`"warning"`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LogLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == s).ok_or_else(|| {
            let names: Vec<&str> = LogLevel::ALL.iter().map(|l| l.as_str()).collect();
            format!("unknown log level `{s}` (expected one of {})", names.join(", "))
        })
    }
}

/// Something a method reported through its [`Context`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// Progress: how far, out of how much (if known), and what is happening.
    Progress {
        /// Progress so far; increases with each report.
        progress: f64,
        /// The total, when known.
        total: Option<f64>,
        /// A human-readable description of the current step.
        message: Option<String>,
    },
    /// A log message.
    Log {
        /// Its severity.
        level: LogLevel,
        /// The logger's name (by default the method's name).
        logger: Option<String>,
        /// Any JSON: a message string or structured data.
        data: Value,
    },
}

/// Where a context's events go. The transport implements it; it decides
/// what the client receives (the requested log level, a progress token).
pub trait EventSink: Send + Sync + 'static {
    /// Whether an event at `level` would be delivered (lets a method skip
    /// building expensive log data).
    fn wants_log(&self, level: LogLevel) -> bool;
    /// Whether progress reports would be delivered.
    fn wants_progress(&self) -> bool;
    /// Delivers `event`; must not block.
    fn send(&self, event: Event);
}

/// What the transport knows about the client of a call. Cheap to clone
/// (shared): a transport builds one per session (handshake era) or per
/// request (2026-07-28) and every context of it shares it. Capabilities and
/// client info given as raw JSON are parsed when first read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientView {
    inner: Option<Arc<ClientFacts>>,
}

#[derive(Debug, PartialEq)]
struct ClientFacts {
    protocol_version: Option<Cow<'static, str>>,
    capabilities: LazyJson,
    info: LazyJson,
}

/// A JSON value kept as received and parsed on first use.
#[derive(Debug, Default)]
struct LazyJson {
    raw: Option<Box<RawValue>>,
    value: OnceLock<Option<Value>>,
}

impl LazyJson {
    fn parsed(value: Option<Value>) -> Self {
        LazyJson { raw: None, value: OnceLock::from(value) }
    }

    fn raw(raw: Option<Box<RawValue>>) -> Self {
        LazyJson { raw, value: OnceLock::new() }
    }

    fn get(&self) -> Option<&Value> {
        self.value.get_or_init(|| self.raw.as_ref().and_then(|raw| serde_json::from_str(raw.get()).ok())).as_ref()
    }
}

impl PartialEq for LazyJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl ClientView {
    /// A view with the protocol revision, capabilities and info given.
    pub fn new(protocol_version: Option<Cow<'static, str>>, capabilities: Option<Value>, info: Option<Value>) -> Self {
        let facts = ClientFacts {
            protocol_version,
            capabilities: LazyJson::parsed(capabilities),
            info: LazyJson::parsed(info),
        };
        ClientView { inner: Some(Arc::new(facts)) }
    }

    /// A view whose capabilities and info are raw JSON as the client sent
    /// them, parsed only if a method reads them.
    pub fn from_raw(
        protocol_version: Option<Cow<'static, str>>,
        capabilities: Option<Box<RawValue>>,
        info: Option<Box<RawValue>>,
    ) -> Self {
        let facts =
            ClientFacts { protocol_version, capabilities: LazyJson::raw(capabilities), info: LazyJson::raw(info) };
        ClientView { inner: Some(Arc::new(facts)) }
    }

    /// The protocol revision the call is served at (MCP), if any.
    pub fn protocol_version(&self) -> Option<&str> {
        self.inner.as_ref()?.protocol_version.as_deref()
    }

    /// The client's declared capabilities (MCP `clientCapabilities`).
    pub fn capabilities(&self) -> Option<&Value> {
        self.inner.as_ref()?.capabilities.get()
    }

    /// The client's `clientInfo` (MCP), if it sent one.
    pub fn info(&self) -> Option<&Value> {
        self.inner.as_ref()?.info.get()
    }
}

/// The request context of one call. Cheap to clone (it shares what it
/// holds), and free to build for a method whose name is static.
#[derive(Clone)]
pub struct Context {
    transport: Transport,
    method: Cow<'static, str>,
    client: ClientView,
    sink: Option<Arc<dyn EventSink>>,
    identity: Option<Arc<Identity>>,
    asker: Option<Arc<dyn crate::ask::ClientAsker>>,
    /// The executor running the call (its shared state, type-erased so
    /// this module does not depend on the executor's): what
    /// [`Context::cache`] hands out.
    cache: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("transport", &self.transport)
            .field("method", &self.method)
            .field("client", &self.client)
            .field("sink", &self.sink.is_some())
            .field("identity", &self.identity)
            .field("asker", &self.asker.is_some())
            .field("cache", &self.cache.is_some())
            .finish()
    }
}

impl Context {
    /// A context whose events go to `tracing` (what `/rpc` calls get).
    pub fn traced(transport: Transport, method: impl Into<Cow<'static, str>>) -> Self {
        Context {
            transport,
            method: method.into(),
            client: ClientView::default(),
            sink: None,
            identity: None,
            asker: None,
            cache: None,
        }
    }

    /// A context whose events go to `sink`, for a client seen as `client`.
    pub fn with_sink(
        transport: Transport,
        method: impl Into<Cow<'static, str>>,
        client: ClientView,
        sink: Arc<dyn EventSink>,
    ) -> Self {
        Context { transport, method: method.into(), client, sink: Some(sink), identity: None, asker: None, cache: None }
    }

    /// A context for a client seen as `client`, whose events go to `tracing`.
    pub fn for_client(transport: Transport, method: impl Into<Cow<'static, str>>, client: ClientView) -> Self {
        Context { transport, method: method.into(), client, sink: None, identity: None, asker: None, cache: None }
    }

    /// The context of a caller the endpoint's access policy identified.
    #[inline]
    pub fn with_identity(mut self, identity: Option<Arc<Identity>>) -> Self {
        self.identity = identity;
        self
    }

    /// The context of a transport that can ask the client (see [`ask_client`](Self::ask_client)).
    #[inline]
    pub fn with_asker(mut self, asker: Arc<dyn crate::ask::ClientAsker>) -> Self {
        self.asker = Some(asker);
        self
    }

    /// The context of a call the executor whose shared state is `executor`
    /// runs (read back by `Context::cache`, in `executor::cache_control`).
    pub(crate) fn with_cache(mut self, executor: Arc<dyn std::any::Any + Send + Sync>) -> Self {
        self.cache = Some(executor);
        self
    }

    /// The executor's shared state given by [`with_cache`](Self::with_cache).
    pub(crate) fn executor_state(&self) -> Option<&Arc<dyn std::any::Any + Send + Sync>> {
        self.cache.as_ref()
    }

    /// Whether the transport can ask the client during this call.
    pub fn can_ask(&self) -> bool {
        self.asker.is_some()
    }

    /// Asks the client `method` with `params` and waits for its answer
    /// (see [`ask`](crate::ask)); `key` names the question within the call.
    /// Fails with [`CANNOT_ASK`](crate::ask::CANNOT_ASK) where the
    /// transport cannot ask (JSON-RPC over `/rpc`, a client without a stream).
    pub async fn ask_client(&self, key: &str, method: &str, params: Value) -> Result<Value, crate::RpcError> {
        match &self.asker {
            Some(asker) => asker.ask(key, method, params).await,
            None => Err(crate::ask::cannot_ask(method)),
        }
    }

    /// Turns this call into a task, for a tool declared
    /// `#[mcp_tool(task = ..., starts_task)]`: the request is answered with
    /// the task's id and the method goes on in the background; the client
    /// polls the task for its status, its questions and its result. Returns
    /// `true` once the task exists, `false` where the call goes on as a
    /// plain call (JSON-RPC, the MCP handshake era, a client that does not
    /// take tasks). Ask what the call needs before this: those questions
    /// are answered in the request's own input-required rounds.
    pub async fn start_task(&self) -> Result<bool, crate::RpcError> {
        match &self.asker {
            Some(asker) => asker.start_task().await,
            None => Ok(false),
        }
    }

    /// Who made the request, as the endpoint's
    /// [`AccessPolicy`](crate::identity::Identity) established it (a
    /// token's label, a tenant); `None` for anonymous requests.
    pub fn identity(&self) -> Option<&Identity> {
        self.identity.as_deref()
    }

    /// The identity, shared.
    pub fn identity_arc(&self) -> Option<&Arc<Identity>> {
        self.identity.as_ref()
    }

    /// The transport the call came through.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// The name of the method being called.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The protocol revision the call is served at (`"2025-11-25"`,
    /// `"2026-07-28"`); `None` over `/rpc`.
    pub fn protocol_version(&self) -> Option<&str> {
        self.client.protocol_version()
    }

    /// The client's declared capabilities (MCP), if known.
    pub fn client_capabilities(&self) -> Option<&Value> {
        self.client.capabilities()
    }

    /// Whether the client declared capability `name` (`"sampling"`, `"elicitation"`, ...).
    pub fn client_has(&self, name: &str) -> bool {
        self.client_capabilities().and_then(|c| c.get(name)).is_some_and(|v| !v.is_null())
    }

    /// The client's `clientInfo` (MCP), if it sent one.
    pub fn client_info(&self) -> Option<&Value> {
        self.client.info()
    }

    /// Whether progress reports reach the client (MCP: it sent a `progressToken`).
    pub fn reports_progress(&self) -> bool {
        self.sink.as_ref().is_none_or(|s| s.wants_progress())
    }

    /// Whether a log message at `level` reaches the client.
    pub fn logs(&self, level: LogLevel) -> bool {
        self.sink.as_ref().is_none_or(|s| s.wants_log(level))
    }

    /// Reports progress: `progress` so far (increasing), out of `total` if known.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let message = message.map(str::to_owned);
        match &self.sink {
            Some(sink) => {
                if sink.wants_progress() {
                    sink.send(Event::Progress { progress, total, message });
                }
            }
            None => tracing::debug!(method = %self.method, progress, ?total, ?message, "progress"),
        }
    }

    /// Logs `data` (a string or any JSON) at `level`, under the method's name.
    pub fn log(&self, level: LogLevel, data: impl Serialize) {
        self.log_as(level, None, data);
    }

    /// Logs `data` at `level` under logger name `logger`.
    pub fn log_as(&self, level: LogLevel, logger: Option<&str>, data: impl Serialize) {
        match &self.sink {
            Some(sink) => {
                if sink.wants_log(level) {
                    let data = serde_json::to_value(data).unwrap_or_else(|e| Value::String(format!("<{e}>")));
                    let logger = Some(logger.unwrap_or(&self.method).to_owned());
                    sink.send(Event::Log { level, logger, data });
                }
            }
            None => {
                let data = serde_json::to_string(&data).unwrap_or_default();
                let method = &self.method;
                let logger = logger.unwrap_or(method);
                match level {
                    LogLevel::Debug => tracing::debug!(%method, %logger, %data),
                    LogLevel::Info | LogLevel::Notice => tracing::info!(%method, %logger, %data),
                    LogLevel::Warning => tracing::warn!(%method, %logger, %data),
                    _ => tracing::error!(%method, %logger, %level, %data),
                }
            }
        }
    }

    /// Logs at `debug`.
    pub fn debug(&self, data: impl Serialize) {
        self.log(LogLevel::Debug, data);
    }

    /// Logs at `info`.
    pub fn info(&self, data: impl Serialize) {
        self.log(LogLevel::Info, data);
    }

    /// Logs at `warning`.
    pub fn warning(&self, data: impl Serialize) {
        self.log(LogLevel::Warning, data);
    }

    /// Logs at `error`.
    pub fn error(&self, data: impl Serialize) {
        self.log(LogLevel::Error, data);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[derive(Default)]
    struct Collect(Mutex<Vec<Event>>, Option<LogLevel>);

    impl EventSink for Collect {
        fn wants_log(&self, level: LogLevel) -> bool {
            self.1.is_some_and(|min| level >= min)
        }
        fn wants_progress(&self) -> bool {
            true
        }
        fn send(&self, event: Event) {
            self.0.lock().unwrap().push(event);
        }
    }

    #[test]
    fn levels_order_and_parse() {
        assert!(LogLevel::Debug < LogLevel::Emergency);
        assert_eq!("warning".parse::<LogLevel>(), Ok(LogLevel::Warning));
        assert!("WARN".parse::<LogLevel>().unwrap_err().contains("expected one of debug"));
        assert_eq!(serde_json::to_value(LogLevel::Critical).unwrap(), "critical");
    }

    #[test]
    fn events_are_filtered_by_the_sink() {
        let sink = Arc::new(Collect(Mutex::default(), Some(LogLevel::Warning)));
        let ctx = Context::with_sink(Transport::Mcp, "Svc.run", ClientView::default(), sink.clone());
        ctx.info("not wanted");
        ctx.error("wanted");
        ctx.progress(1.0, Some(2.0), Some("half"));
        let events = sink.0.lock().unwrap().clone();
        assert_eq!(
            events,
            [
                Event::Log { level: LogLevel::Error, logger: Some("Svc.run".into()), data: "wanted".into() },
                Event::Progress { progress: 1.0, total: Some(2.0), message: Some("half".into()) },
            ]
        );
    }

    #[test]
    fn client_view() {
        let client = ClientView::new(Some("2026-07-28".into()), Some(serde_json::json!({"sampling": {}})), None);
        let ctx = Context::for_client(Transport::Mcp, "m", client);
        assert!(ctx.client_has("sampling") && !ctx.client_has("elicitation"));
        assert_eq!(ctx.protocol_version(), Some("2026-07-28"));
    }
}
