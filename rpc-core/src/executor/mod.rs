//! The execution pipeline every transport shares.
//!
//! `on_request → lookup → binding and validation → cache lookup →
//! before_execute → lock → invoke (panics contained, optional time limit) →
//! release → after_execute → cache store → before_response`; errors pass
//! through `on_error` and `tracing`. The transport later calls
//! [`Executor::response_sent`], which runs `after_response` listeners and
//! the cache relations (`#[rpc::invalidates]`) once the client has the
//! response. See [`events`](crate::events) for the listeners' contract and
//! [`store`](crate::store) for where cached results and locks live.

mod after;
mod binding;
mod cache;
mod cache_control;
mod invoke;
mod keys;
mod lock;
mod log;
mod raw_slots;

use binding::{bind_and_validate, read_named};
use cache::{CacheSlot, Lookup};
use invoke::invoke;
use log::{Shown, level_enabled, log_error, log_level};
use raw_slots::{RawSlots, TextKey};

use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Map, Value};

pub use crate::call::{Call, CallInfo, LARGE_INPUT_BYTES, Params, Stage, Transport};
use crate::context::Context;
use crate::error::{Environment, RpcError};
use crate::events::{ErrorEvent, Listener, Listeners, RequestEvent};
use crate::identity::Identity;
use crate::rate::{RateDecision, RateKind, RateLimits, rate_key};
use crate::registry::{Method, Registry};
use crate::result_json::ResultJson;
use crate::store::{CacheStore, LockStore, MemoryRates, Stores};
pub use cache_control::CacheControl;

/// The outcome of one call.
#[derive(Debug)]
#[non_exhaustive]
pub struct Execution {
    /// The method, when the name resolved.
    pub method: Option<Arc<Method>>,
    /// The serialised result (shared with the result cache on a hit) or
    /// the error.
    pub result: Result<ResultJson, RpcError>,
    /// Where the call ended.
    pub stage: Stage,
    /// Kept for [`Executor::response_sent`] when there is work to do after
    /// the response (listeners, cache relations). Boxed: an execution is
    /// moved several times on its way to the response, and at this size
    /// each move is a few register copies rather than a `memcpy` call.
    record: Option<Box<CallInfo>>,
}

impl Execution {
    /// A call answered from the cache: nothing to do after the response.
    fn cached(method: Arc<Method>, hit: ResultJson) -> Self {
        Execution { method: Some(method), result: Ok(hit), stage: Stage::Cache, record: None }
    }

    /// Whether [`Executor::response_sent`] has something to do for this
    /// execution: a transport may skip waiting for the response to be sent.
    pub fn wants_response_sent(&self) -> bool {
        self.record.is_some()
    }

    /// The seconds a client refused for its rate ([`Stage::RateLimit`])
    /// must wait, for `Retry-After`; `None` for any other outcome.
    pub fn retry_after(&self) -> Option<u32> {
        if self.stage != Stage::RateLimit {
            return None;
        }
        let seconds = self.result.as_ref().err()?.extra()?.get("retryAfter")?.as_u64()?;
        Some(u32::try_from(seconds).unwrap_or(u32::MAX))
    }
}

/// Runs calls against a [`Registry`]. Cheap to clone: clones share one
/// configuration (one reference count).
#[derive(Clone)]
pub struct Executor {
    shared: Arc<Shared>,
}

/// What an executor's clones share.
#[derive(Clone)]
struct Shared {
    registry: Arc<Registry>,
    env: Environment,
    listeners: Listeners,
    stores: Stores,
    rates: RateLimits,
    /// Counts while the rate store fails.
    rates_fallback: Arc<MemoryRates>,
    /// Cache slots by the raw text of their parameters.
    raw_slots: Arc<RawSlots>,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("env", &self.shared.env)
            .field("listeners", &self.shared.listeners.len())
            .finish()
    }
}

static CALL_IDS: AtomicU64 = AtomicU64::new(1);

impl Executor {
    /// An executor for `registry` (or an `Arc` of one) in environment `env`,
    /// with the in-process stores ([`Stores::default`]).
    pub fn new(registry: impl Into<Arc<Registry>>, env: Environment) -> Self {
        Executor {
            shared: Arc::new(Shared {
                registry: registry.into(),
                env,
                listeners: Listeners::default(),
                stores: Stores::default(),
                rates: RateLimits::default(),
                rates_fallback: Arc::new(MemoryRates::new()),
                raw_slots: Arc::default(),
            }),
        }
    }

    /// The configuration, for a builder method to change (copied first if
    /// a clone shares it).
    fn configure(&mut self) -> &mut Shared {
        let shared = Arc::make_mut(&mut self.shared);
        // A changed configuration starts with no remembered slots.
        shared.raw_slots = Arc::default();
        shared
    }

    /// Limits how many calls (and MCP sessions) each client starts
    /// ([`crate::rate`]), counted in the stores' rate counters.
    pub fn with_rate_limits(mut self, limits: RateLimits) -> Self {
        self.configure().rates = limits;
        self
    }

    /// The rate limits.
    pub fn rate_limits(&self) -> RateLimits {
        self.shared.rates
    }

    /// Counts one request of `kind` by a client (`identity`, else `peer`):
    /// `None` when it may go on, else how long it must wait. Nothing is
    /// counted without a limit of that kind or a client to count against;
    /// when the rate store fails, this instance counts on its own.
    pub async fn throttle(
        &self,
        kind: RateKind,
        identity: Option<&Identity>,
        peer: Option<IpAddr>,
    ) -> Option<Duration> {
        let rate = self.shared.rates.of(kind)?;
        let key = rate_key(kind, identity, peer)?;
        let decision = match self.shared.stores.rates.hit(&key, rate).await {
            Ok(decision) => decision,
            Err(e) => {
                tracing::warn!(error = %e, "rate store failed: counted in this process");
                self.shared.rates_fallback.hit_now(&key, rate)
            }
        };
        match decision {
            RateDecision::Allowed => None,
            RateDecision::Limited { retry_after } => Some(retry_after),
        }
    }

    /// Adds an event listener; listeners run in the order they were added.
    pub fn with_listener(mut self, listener: impl Listener) -> Self {
        self.configure().listeners.push(Arc::new(listener));
        self
    }

    /// Adds event listeners, in the order given.
    pub fn with_listeners(mut self, listeners: impl IntoIterator<Item = Arc<dyn Listener>>) -> Self {
        let shared = self.configure();
        for listener in listeners {
            shared.listeners.push(listener);
        }
        self
    }

    /// Keeps cached results and locks in `stores` (e.g. Redis, shared by
    /// several instances) instead of in this process.
    pub fn with_stores(mut self, stores: Stores) -> Self {
        self.configure().stores = stores;
        self
    }

    /// Keeps cached results in `cache`.
    pub fn with_cache_store(mut self, cache: Arc<dyn CacheStore>) -> Self {
        self.configure().stores.cache = cache;
        self
    }

    /// Takes method locks in `locks`.
    pub fn with_lock_store(mut self, locks: Arc<dyn LockStore>) -> Self {
        self.configure().stores.locks = locks;
        self
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.shared.registry
    }

    /// The environment (decides error detail and where caching applies).
    pub fn environment(&self) -> Environment {
        self.shared.env
    }

    /// How many cache slots are remembered by the raw text of their
    /// parameters (see [`Call::named_raw`]; bounded, for tests).
    #[doc(hidden)]
    pub fn remembered_raw_slots(&self) -> usize {
        self.shared.raw_slots.len()
    }

    /// The stores of cached results and locks.
    pub fn stores(&self) -> &Stores {
        &self.shared.stores
    }

    /// Executes one call.
    #[allow(clippy::manual_async_fn, reason = "an async fn's future would hold the call twice")]
    pub fn execute(&self, mut call: Call<'_>) -> impl Future<Output = Execution> + Send {
        // An `async` block, not an `async fn`: an `async fn` copies its
        // arguments into locals, and its future (inside every caller's)
        // would hold the 280-byte call twice.
        async move {
            if call.metered
                && self.shared.rates.calls.is_some()
                && let Some(wait) = self.throttle(RateKind::Calls, call.caller(), call.peer).await
            {
                let error = RpcError::rate_limited("calls", wait);
                return self.fail(&call, None, None, Stage::RateLimit, error).await;
            }
            let renamed = match self.shared.listeners.watch_requests() {
                false => None,
                true => {
                    // Listeners see the parameters read.
                    if let Some(raw) = call.raw_named.take() {
                        match cpu_bound(call.input_bytes, || read_named(raw)) {
                            Ok(params) => call.params = params,
                            Err(e) => return self.fail(&call, None, None, Stage::Request, e).await,
                        }
                    }
                    match self.on_request(&mut call).await {
                        Ok(renamed) => renamed,
                        Err(e) => return self.fail(&call, None, None, Stage::Request, e).await,
                    }
                }
            };
            let name = renamed.as_deref().unwrap_or(call.method);
            let found = match call.resolved.take() {
                Some(method) if renamed.is_none() => Some(method),
                _ => self.shared.registry.method(call.version, name, call.scope).cloned(),
            };
            let Some(method) = found else {
                let error = RpcError::method_not_found(name);
                return self.fail(&call, None, None, Stage::Lookup, error).await;
            };
            let scopes = method.descriptor().scopes;
            if !scopes.is_empty() {
                let missing = call.caller().map(|identity| identity.missing(scopes)).unwrap_or_default();
                if !missing.is_empty() {
                    let error = RpcError::insufficient_scope(method.name(), &missing);
                    return self.fail(&call, Some(method), None, Stage::Access, error).await;
                }
            }
            let descriptor = method.descriptor();
            let policy = descriptor.cache.filter(|policy| policy.applies_in(self.shared.env));
            if call.result_as_string && policy.is_some() {
                method.note_read_as_strings();
            }
            let raw = call.raw_named.take();
            // Raw text this method and caller sent before: its slot, unread.
            let mut remembered = None;
            if let (Some(raw), Some(_), false) = (raw, &policy, call.ignore_cache) {
                let subject = call.caller().map(|identity| identity.subject.as_str());
                let key = TextKey { method: &method, version: call.version, subject, text: raw.get() };
                if let Some(slot) = self.shared.raw_slots.get(&key) {
                    match self.cache_lookup(&slot, false).await {
                        Lookup::Hit(hit) => return Execution::cached(method, hit),
                        Lookup::Miss(current) => remembered = Some((slot, current)),
                    }
                }
            }
            let params = match raw {
                Some(raw) => match cpu_bound(call.input_bytes, || read_named(raw)) {
                    Ok(params) => params,
                    Err(e) => return self.fail(&call, Some(method), None, Stage::Validation, e).await,
                },
                None => std::mem::take(&mut call.params),
            };
            let params = match cpu_bound(call.input_bytes, || bind_and_validate(&method, params)) {
                Ok(params) => params,
                Err((e, bound)) => return self.fail(&call, Some(method), bound.as_ref(), Stage::Validation, e).await,
            };

            let context = match call.context.take() {
                Some(context) if call.identity.is_some() => context.with_identity(call.identity.take()),
                Some(context) => context,
                None => Context::traced(call.transport, method.name()).with_identity(call.identity.take()),
            };
            let mut stamp = None;
            let cache_slot = match (remembered, policy) {
                (Some((slot, current)), _) => {
                    stamp = current;
                    Some(slot)
                }
                (None, None) => None,
                (None, Some(policy)) => {
                    // Hashing large arguments is CPU work like validating them.
                    let slot = Arc::new(cpu_bound(call.input_bytes, || {
                        CacheSlot::new(self, &method, call.version, &policy, &params, context.identity())
                    }));
                    if let Some(raw) = raw {
                        // The caller now speaks through the context (the same identity).
                        let subject = context.identity().map(|identity| identity.subject.as_str());
                        let key = TextKey { method: &method, version: call.version, subject, text: raw.get() };
                        self.shared.raw_slots.remember(&key, Arc::clone(&slot));
                    }
                    match self.cache_lookup(&slot, call.ignore_cache).await {
                        Lookup::Hit(hit) => return Execution::cached(method, hit),
                        Lookup::Miss(current) => stamp = current,
                    }
                    Some(slot)
                }
            };
            let needs_record = !self.shared.listeners.is_empty() || !descriptor.invalidates.is_empty();
            let record = needs_record.then(|| CallInfo {
                id: CALL_IDS.fetch_add(1, Ordering::Relaxed),
                method: method.clone(),
                version: call.version,
                transport: call.transport,
                params: params.clone(),
                identity: context.identity_arc().cloned(),
            });
            if let Some(info) = &record
                && let Err(e) = self.shared.listeners.before_execute(info).await
            {
                return self.refused(&call, method, info, Stage::Hooks, e).await;
            }
            let lock = match descriptor.lock {
                Some(policy) => {
                    let keyed_by = policy.param.map(|p| params.get(p).unwrap_or(&Value::Null));
                    let key = keys::lock_key(method.name(), keyed_by);
                    let owner = lock::owner_token();
                    let ttl = Duration::from_secs(policy.ttl_secs.max(1));
                    match self.shared.stores.locks.acquire(&key, &owner, ttl).await {
                        Ok(true) => Some(lock::LockGuard::new(self.shared.stores.locks.clone(), key, owner)),
                        taken => {
                            let error = match taken {
                                Err(e) => RpcError::internal(format!("the lock store failed: {e}"))
                                    .with_kind("rpc::LockStore"),
                                _ => RpcError::locked(method.name()),
                            };
                            return match &record {
                                Some(info) => self.refused(&call, method.clone(), info, Stage::Lock, error).await,
                                None => self.fail(&call, Some(method), Some(&params), Stage::Lock, error).await,
                            };
                        }
                    }
                }
                None => None,
            };
            // Without a record (no listeners), an error is only logged: the
            // parameters are rendered now, cut short, as the method takes them.
            let shown = match &record {
                None if tracing::enabled!(tracing::Level::INFO) => Some(Shown::of(&params)),
                _ => None,
            };

            // The method may use the cache from code (`ctx.cache()`); cached
            // results returned above never pay for the handle.
            let context = context.with_cache(self.shared.clone());
            let mut result = invoke(&method, params, &context, call.timeout).await;
            if let Some(lock) = lock {
                lock.release().await;
            }
            if let (Some(slot), Ok(value)) = (&cache_slot, &result) {
                let as_string = call.result_as_string || method.results_read_as_strings();
                self.cache_store(slot, stamp.as_deref(), value, as_string).await;
            }
            if let Some(info) = &record {
                self.shared.listeners.after_execute(info, &result).await;
                self.shared.listeners.before_response(info, &mut result).await;
            }
            if let Err(e) = &result {
                match &record {
                    Some(info) => self.report(&call, method.name(), Some(&info.params), Stage::Method, e).await,
                    None => log_error(method.name(), shown.as_ref().map(Shown::text).as_deref(), Stage::Method, e),
                }
            }
            let record = record.filter(|_| result.is_ok()).map(Box::new);
            Execution { method: Some(method), result: result.map(ResultJson::from), stage: Stage::Method, record }
        }
    }

    /// Runs the `on_request` listeners; the new method name if one changed it.
    async fn on_request(&self, call: &mut Call<'_>) -> Result<Option<String>, RpcError> {
        let mut request = RequestEvent {
            method: call.method.to_owned(),
            version: call.version,
            params: std::mem::take(&mut call.params),
            transport: call.transport,
            identity: call.identity.clone(),
        };
        let outcome = self.shared.listeners.on_request(&mut request).await;
        call.params = request.params;
        outcome?;
        Ok((request.method != call.method).then_some(request.method))
    }

    /// A call refused once `before_execute` was reached: the execution
    /// events still see it.
    async fn refused(
        &self,
        call: &Call<'_>,
        method: Arc<Method>,
        info: &CallInfo,
        stage: Stage,
        error: RpcError,
    ) -> Execution {
        let mut result = Err(error);
        self.shared.listeners.after_execute(info, &result).await;
        self.shared.listeners.before_response(info, &mut result).await;
        if let Err(e) = &result {
            self.report(call, method.name(), Some(&info.params), stage, e).await;
        }
        Execution { method: Some(method), result: result.map(ResultJson::from), stage, record: None }
    }

    /// A call that ended with `error` before any execution event.
    async fn fail(
        &self,
        call: &Call<'_>,
        method: Option<Arc<Method>>,
        params: Option<&Map<String, Value>>,
        stage: Stage,
        error: RpcError,
    ) -> Execution {
        let name = method.as_ref().map_or(call.method, |m| m.name());
        self.report(call, name, params, stage, &error).await;
        Execution { method, result: Err(error), stage, record: None }
    }

    /// Passes an error through `tracing` and the `on_error` listeners.
    async fn report(
        &self,
        call: &Call<'_>,
        method: &str,
        params: Option<&Map<String, Value>>,
        stage: Stage,
        error: &RpcError,
    ) {
        if level_enabled(log_level(stage, error)) {
            let shown = params.map(|p| Shown::of(p).text());
            log_error(method, shown.as_deref(), stage, error);
        }
        if self.shared.listeners.is_empty() {
            return;
        }
        let event = ErrorEvent {
            method,
            version: call.version,
            transport: call.transport,
            params,
            error,
            stage,
            identity: call.identity.as_deref(),
        };
        self.shared.listeners.on_error(&event).await;
    }

    /// Passes an error a transport raised before the call reached the
    /// executor (an unreadable message or parameters, invalid `$rpc`
    /// options, an unknown MCP tool) through `tracing` and the `on_error`
    /// listeners, as the executor does with its own; `method` is `""` when
    /// the message named none. Such errors have [`Stage::Request`].
    pub async fn report_refusal(
        &self,
        method: &str,
        version: u32,
        transport: Transport,
        identity: Option<&Identity>,
        error: &RpcError,
    ) {
        if level_enabled(log_level(Stage::Request, error)) {
            log_error(method, None, Stage::Request, error);
        }
        if self.shared.listeners.is_empty() {
            return;
        }
        let event = ErrorEvent { method, version, transport, params: None, error, stage: Stage::Request, identity };
        self.shared.listeners.on_error(&event).await;
    }

    /// Runs what waits for the response carrying these executions to be
    /// sent: the `after_response` listeners and the cache relations of each
    /// executed call with a result. What finishes at once (synchronous
    /// listeners) runs here, without a task; whatever has to wait (an async
    /// listener, a network store) goes on in a task of its own.
    pub fn response_sent(&self, executions: Vec<Execution>) {
        let done: Vec<(CallInfo, ResultJson)> = executions
            .into_iter()
            .filter_map(|e| match (e.record, e.result) {
                (Some(info), Ok(value)) => Some((*info, value)),
                _ => None,
            })
            .collect();
        if done.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("a response was sent outside a tokio runtime: after-response work skipped");
            return;
        };
        let this = self.clone();
        let mut work = crate::future::in_box(move || async move { this.after_response(done).await });
        // One poll in place: a future that is not done yet is polled again
        // by the task it moves to, which registers its real waker.
        let mut poll = std::task::Context::from_waker(std::task::Waker::noop());
        if work.as_mut().poll(&mut poll).is_pending() {
            runtime.spawn(work);
        }
    }
}

/// Runs `work`, under `block_in_place` when the input is large
/// ([`LARGE_INPUT_BYTES`]) and the current runtime is multi-threaded (on a
/// current-thread runtime, or outside tokio, it runs as it is).
pub fn cpu_bound<T>(input_bytes: usize, work: impl FnOnce() -> T) -> T {
    let multi_threaded = || {
        tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
    };
    if input_bytes >= LARGE_INPUT_BYTES && multi_threaded() { tokio::task::block_in_place(work) } else { work() }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    /// Waits (blocking its thread) for a task spawned on the same runtime:
    /// that task can run only if the worker's other work moved elsewhere.
    fn waits_for_a_sibling_task(input_bytes: usize, patience: Duration) -> bool {
        let (tx, rx) = mpsc::channel();
        tokio::spawn(async move {
            let _ = tx.send(());
        });
        cpu_bound(input_bytes, || rx.recv_timeout(patience).is_ok())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn large_inputs_do_not_hold_the_worker() {
        let small = tokio::spawn(async { waits_for_a_sibling_task(100, Duration::from_millis(200)) });
        assert!(!small.await.unwrap(), "a small input is checked in place: the only worker is busy");
        let large = tokio::spawn(async { waits_for_a_sibling_task(LARGE_INPUT_BYTES, Duration::from_secs(10)) });
        assert!(large.await.unwrap(), "the sibling ran while the large input was checked");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_current_thread_runtime_checks_inline() {
        assert_eq!(cpu_bound(LARGE_INPUT_BYTES * 10, || 7), 7, "no block_in_place (it would panic)");
    }

    #[test]
    fn outside_a_runtime_too() {
        assert_eq!(cpu_bound(usize::MAX, || 7), 7);
    }
}
