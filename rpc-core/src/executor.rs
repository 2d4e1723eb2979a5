//! The execution pipeline every transport shares.
//!
//! `lookup → parameter binding → validation → cache lookup →
//! hooks.before_execute → invoke (panics contained) → hooks.after_execute →
//! cache store`; the transport later calls [`Executor::response_sent`] so
//! hooks can run after the client has the response.
//!
//! The seams for what comes next: [`CallCache`] (a hit skips the method and
//! the hooks), and [`CallHooks`], whose `before_execute` can refuse a call
//! (a held lock, a missing permission) and whose `after_execute` always runs
//! once `before_execute` succeeded (to release what it took).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::context::Context;
use crate::descriptor::{InvokeResult, Invoked};
use crate::error::{Environment, RpcError};
use crate::registry::{Method, Registry};
use crate::security::Identity;

/// Which transport a call came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// `POST /rpc`.
    JsonRpc,
    /// MCP `tools/call`.
    Mcp,
}

/// Call parameters as they arrived.
#[derive(Debug, Clone, Default)]
pub enum Params {
    /// No `params` member.
    #[default]
    None,
    /// By name.
    Named(Map<String, Value>),
    /// By position, in declaration order.
    Positional(Vec<Value>),
}

/// One call to execute: `Call::new(method, version, params)`, then
/// optionally [`scope`](Call::scope) and [`transport`](Call::transport).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Call<'a> {
    /// The method name.
    pub method: &'a str,
    /// The API version.
    pub version: u32,
    /// The parameters.
    pub params: Params,
    /// Restricts the lookup to one API group (an MCP endpoint serves one group).
    pub scope: Option<&'a str>,
    /// The transport the call came through.
    pub transport: Transport,
    /// The request context the method gets (default: one that logs to `tracing`).
    pub context: Option<Context>,
    /// The method, when the caller has already looked it up (by `method`,
    /// `version` and `scope`): the executor does not look it up again.
    pub resolved: Option<Arc<Method>>,
    /// Who is calling, as the endpoint's access policy established it.
    pub identity: Option<Arc<Identity>>,
    /// The size of the parameters as received, in bytes (0: unknown). From
    /// [`LARGE_INPUT_BYTES`] on, binding and validation run under
    /// [`tokio::task::block_in_place`] on a multi-threaded runtime, so the
    /// other requests of the worker move to another thread meanwhile.
    pub input_bytes: usize,
}

/// Parameters of at least this many bytes ([`Call::input_bytes`]) are
/// bound and validated under `block_in_place` on a multi-threaded runtime.
pub const LARGE_INPUT_BYTES: usize = 64 * 1024;

impl<'a> Call<'a> {
    /// A call of `method` in API `version`, over JSON-RPC, in no particular group.
    pub fn new(method: &'a str, version: u32, params: Params) -> Self {
        Call {
            method,
            version,
            params,
            scope: None,
            transport: Transport::JsonRpc,
            context: None,
            resolved: None,
            identity: None,
            input_bytes: 0,
        }
    }

    /// The size of the parameters as received, in bytes (e.g. the length of
    /// the raw `params`): large inputs are checked without holding up the
    /// other requests of the runtime worker (see [`LARGE_INPUT_BYTES`]).
    pub fn input_bytes(mut self, bytes: usize) -> Self {
        self.input_bytes = bytes;
        self
    }

    /// The request context the method gets.
    pub fn context(mut self, context: Context) -> Self {
        self.context = Some(context);
        self
    }

    /// The method, already looked up by the caller (an MCP endpoint finds
    /// it through its tool): it must be the one the registry holds under
    /// this call's name, version and scope.
    pub fn resolved(mut self, method: Arc<Method>) -> Self {
        self.resolved = Some(method);
        self
    }

    /// The caller's identity (from the endpoint's access policy): the
    /// method reads it from its context, hooks from [`CallInfo::identity`].
    pub fn identity(mut self, identity: Option<Arc<Identity>>) -> Self {
        self.identity = identity;
        self
    }

    /// Restricts the lookup to the methods of group `group`.
    pub fn scope(mut self, group: &'a str) -> Self {
        self.scope = Some(group);
        self
    }

    /// The transport the call came through.
    pub fn transport(mut self, transport: Transport) -> Self {
        self.transport = transport;
        self
    }
}

/// What hooks see of a call.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CallInfo {
    /// Internal call id, unique per process, never exposed to clients.
    pub id: u64,
    /// The method.
    pub method: Arc<Method>,
    /// The API version.
    pub version: u32,
    /// The transport.
    pub transport: Transport,
    /// The bound, validated named parameters.
    pub params: Map<String, Value>,
    /// Who is calling, when the endpoint's access policy identified the caller.
    pub identity: Option<Arc<Identity>>,
}

/// Hooks around execution: events before and after a call, and after the
/// response was sent. Every method has a default that does nothing.
pub trait CallHooks: Send + Sync + 'static {
    /// Before the method runs (after validation). An error refuses the call.
    fn before_execute(&self, call: &CallInfo) -> Result<(), RpcError> {
        let _ = call;
        Ok(())
    }
    /// After the method ran (or was refused by a hook), with its outcome.
    fn after_execute(&self, call: &CallInfo, result: &InvokeResult) {
        let _ = (call, result);
    }
    /// After the transport sent the response carrying this call's outcome.
    fn after_response(&self, call: &CallInfo, result: &InvokeResult) {
        let _ = (call, result);
    }
}

/// A store of call results: the seam for result caching. Keys are the
/// implementation's choice (method, version and parameters are in
/// [`CallInfo`]); a shared store (e.g. Redis) serves several instances.
pub trait CallCache: Send + Sync + 'static {
    /// A stored result for this call; a hit skips the method and the hooks.
    fn get<'a>(&'a self, call: &'a CallInfo) -> BoxFuture<'a, Option<Box<RawValue>>>;
    /// Offers a successful result for storing.
    fn put<'a>(&'a self, call: &'a CallInfo, result: &'a RawValue) -> BoxFuture<'a, ()>;
}

/// How far a call got through the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// The method does not exist (in this version and scope).
    Lookup,
    /// The parameters did not bind or validate; the method did not run.
    Validation,
    /// The result came from the [`CallCache`]; the method did not run.
    Cache,
    /// A hook refused the call; the method did not run.
    Hooks,
    /// The method ran (its result may still be an error).
    Method,
}

/// The outcome of one call.
#[derive(Debug)]
#[non_exhaustive]
pub struct Execution {
    /// The method, when the name resolved.
    pub method: Option<Arc<Method>>,
    /// The serialised result or the error.
    pub result: InvokeResult,
    /// Where the call ended.
    pub stage: Stage,
    record: Option<CallInfo>,
}

impl Execution {
    fn failed(method: Option<Arc<Method>>, stage: Stage, error: RpcError) -> Self {
        Execution { method, result: Err(error), stage, record: None }
    }
}

/// Runs calls against a [`Registry`].
#[derive(Clone)]
pub struct Executor {
    registry: Arc<Registry>,
    env: Environment,
    hooks: Arc<[Arc<dyn CallHooks>]>,
    cache: Option<Arc<dyn CallCache>>,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("env", &self.env)
            .field("hooks", &self.hooks.len())
            .field("cache", &self.cache.is_some())
            .finish()
    }
}

static CALL_IDS: AtomicU64 = AtomicU64::new(1);

impl Executor {
    /// An executor for `registry` (or an `Arc` of one) in environment `env`.
    pub fn new(registry: impl Into<Arc<Registry>>, env: Environment) -> Self {
        Executor { registry: registry.into(), env, hooks: Arc::from(Vec::new()), cache: None }
    }

    /// Caches results in `cache`.
    pub fn with_cache(mut self, cache: Arc<dyn CallCache>) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Adds execution hooks, run in the order given.
    pub fn with_hooks(mut self, hooks: impl IntoIterator<Item = Arc<dyn CallHooks>>) -> Self {
        let mut all: Vec<_> = self.hooks.iter().cloned().collect();
        all.extend(hooks);
        self.hooks = Arc::from(all);
        self
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The environment (decides error detail).
    pub fn environment(&self) -> Environment {
        self.env
    }

    /// Executes one call.
    pub async fn execute(&self, call: Call<'_>) -> Execution {
        let found = match call.resolved {
            Some(method) => Some(method),
            None => self.registry.method(call.version, call.method, call.scope).cloned(),
        };
        let Some(method) = found else {
            return Execution::failed(None, Stage::Lookup, RpcError::method_not_found(call.method));
        };
        let checked = cpu_bound(call.input_bytes, || bind_and_validate(&method, call.params));
        let params = match checked {
            Ok(params) => params,
            Err(e) => return Execution::failed(Some(method), Stage::Validation, e),
        };

        let context = match call.context {
            Some(context) if call.identity.is_some() => context.with_identity(call.identity),
            Some(context) => context,
            None => Context::traced(call.transport, method.name()).with_identity(call.identity),
        };
        let record = (!self.hooks.is_empty() || self.cache.is_some()).then(|| CallInfo {
            id: CALL_IDS.fetch_add(1, Ordering::Relaxed),
            method: method.clone(),
            version: call.version,
            transport: call.transport,
            params: params.clone(),
            identity: context.identity_arc().cloned(),
        });
        if let (Some(cache), Some(info)) = (&self.cache, &record)
            && let Some(hit) = cache.get(info).await
        {
            return Execution { method: Some(method), result: Ok(hit), stage: Stage::Cache, record: None };
        }
        if let Some(info) = &record
            && let Some(err) = self.hooks.iter().find_map(|h| h.before_execute(info).err())
        {
            let result = Err(err);
            self.hooks.iter().for_each(|h| h.after_execute(info, &result));
            return Execution { method: Some(method), result, stage: Stage::Hooks, record: None };
        }

        let invoke = method.descriptor().invoke;
        let invoked = std::panic::catch_unwind(AssertUnwindSafe(|| invoke(method.instance(), params, &context)));
        let result = match invoked {
            Ok(Invoked::Ready(result)) => result,
            Ok(Invoked::Pending(future)) => match AssertUnwindSafe(future).catch_unwind().await {
                Ok(result) => result,
                Err(panic) => Err(panic_error(method.name(), panic.as_ref())),
            },
            Err(panic) => Err(panic_error(method.name(), panic.as_ref())),
        };
        if let Err(e) = &result
            && e.code() == crate::error::code::INTERNAL_ERROR
        {
            tracing::error!(method = method.name(), error = ?e, "method failed");
        }
        if let Some(info) = &record {
            self.hooks.iter().for_each(|h| h.after_execute(info, &result));
            if let (Some(cache), Ok(value)) = (&self.cache, &result) {
                cache.put(info, value).await;
            }
        }
        Execution { method: Some(method), result, stage: Stage::Method, record }
    }

    /// Tells the hooks that the responses carrying these executions were sent.
    pub fn response_sent(&self, executions: &[Execution]) {
        for execution in executions {
            if let Some(info) = &execution.record {
                self.hooks.iter().for_each(|h| h.after_response(info, &execution.result));
            }
        }
    }

    /// Whether any hook wants [`response_sent`](Self::response_sent).
    pub fn has_hooks(&self) -> bool {
        !self.hooks.is_empty()
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

/// The named parameters of a call, validated against the method's schema.
fn bind_and_validate(method: &Method, params: Params) -> Result<Map<String, Value>, RpcError> {
    let params = Value::Object(bind(method, params)?);
    method.validator().validate(method.name(), &params)?;
    match params {
        Value::Object(params) => Ok(params),
        _ => Err(RpcError::internal("bound parameters are an object")),
    }
}

/// Binds positional parameters to names; named ones pass through.
fn bind(method: &Method, params: Params) -> Result<Map<String, Value>, RpcError> {
    match params {
        Params::None => Ok(Map::new()),
        Params::Named(map) => Ok(map),
        Params::Positional(values) => {
            let declared: Vec<&str> =
                method.descriptor().params.iter().filter(|p| p.is_param).map(|p| p.name).collect();
            if values.len() > declared.len() {
                return Err(RpcError::invalid_params(format!(
                    "{} takes at most {} positional parameter(s), {} given",
                    method.name(),
                    declared.len(),
                    values.len()
                )));
            }
            Ok(declared.into_iter().map(str::to_owned).zip(values).collect())
        }
    }
}

fn panic_error(method: &str, panic: &(dyn std::any::Any + Send)) -> RpcError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".to_owned());
    tracing::error!(method, panic = %message, "method panicked");
    RpcError::internal(format!("method `{method}` panicked: {message}")).with_kind("panic")
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
