//! Events of the execution pipeline, for listeners the application
//! registers ([`Executor::with_listener`](crate::Executor::with_listener)).
//!
//! One call, in order:
//!
//! 1. [`on_request`](Listener::on_request): the request as received (method
//!    name, version, parameters); a listener may replace the method or the
//!    parameters, or refuse the call.
//! 2. lookup, binding, validation; then the cache: a hit ends the call here,
//!    without the events of steps 3–5 and 7.
//! 3. [`before_execute`](Listener::before_execute): may refuse the call.
//! 4. the lock (`#[rpc::lock]`), the method.
//! 5. [`after_execute`](Listener::after_execute), with the outcome.
//! 6. [`before_response`](Listener::before_response): may change the
//!    outcome the response carries.
//! 7. [`after_response`](Listener::after_response): after the transport
//!    wrote the response, once per executed call with a result (not for an
//!    error, not for a cached result); also for each call of a batch.
//!
//! Every error of a call, wherever it arises, passes through
//! [`on_error`](Listener::on_error) and through `tracing` (method, bounded
//! parameters, error).
//!
//! A listener answers through [`MaybeReady`]: a sync listener returns
//! `MaybeReady::ready(..)`, an async one `MaybeReady::pending(async { .. })`.
//! A listener that panics is logged and skipped: an observing event goes on
//! as if it had not been there; a panic in `on_request` or
//! `before_execute`, which may refuse calls, refuses the call with
//! `-32603` (a broken guard never lets a call through). The response is
//! always well-formed.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::call::{CallInfo, Params, Stage, Transport};
use crate::descriptor::InvokeResult;
use crate::error::RpcError;
use crate::future::MaybeReady;
use crate::identity::Identity;

/// A call as it arrived, before the method is looked up.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestEvent {
    /// The method name; a listener may change it (the new name is looked up).
    pub method: String,
    /// The API version.
    pub version: u32,
    /// The parameters; a listener may replace them.
    pub params: Params,
    /// The transport.
    pub transport: Transport,
    /// Who is calling, when the endpoint's access policy identified the caller.
    pub identity: Option<Arc<Identity>>,
}

/// An error of a call, as [`Listener::on_error`] sees it.
#[derive(Debug)]
#[non_exhaustive]
pub struct ErrorEvent<'a> {
    /// The method name as requested.
    pub method: &'a str,
    /// The API version.
    pub version: u32,
    /// The transport.
    pub transport: Transport,
    /// The bound parameters, when the call got that far.
    pub params: Option<&'a Map<String, Value>>,
    /// The error the response will carry.
    pub error: &'a RpcError,
    /// Where the call ended.
    pub stage: Stage,
    /// Who is calling, when known.
    pub identity: Option<&'a Identity>,
}

/// A listener to the pipeline's events. Every method has a default that
/// does nothing; implement those you need.
pub trait Listener: Send + Sync + 'static {
    /// Whether this listener implements [`on_request`](Self::on_request):
    /// when no listener of an executor does, calls skip building the
    /// request event (and a transport's raw parameters stay unread until
    /// needed, see [`Call::named_raw`](crate::call::Call::named_raw)).
    /// Defaults to `true`; return `false` from a listener that leaves
    /// `on_request` to its default.
    fn watches_requests(&self) -> bool {
        true
    }

    /// The request as received: change `request.method` or
    /// `request.params` to run another call; an error refuses it.
    fn on_request<'a>(&'a self, request: &'a mut RequestEvent) -> MaybeReady<'a, Result<(), RpcError>> {
        let _ = request;
        MaybeReady::ready(Ok(()))
    }

    /// Before the method runs (after validation and a cache miss); an
    /// error refuses the call.
    fn before_execute<'a>(&'a self, call: &'a CallInfo) -> MaybeReady<'a, Result<(), RpcError>> {
        let _ = call;
        MaybeReady::ready(Ok(()))
    }

    /// After the method ran, or after a listener or the lock refused it
    /// (once `before_execute` was reached), with the outcome.
    fn after_execute<'a>(&'a self, call: &'a CallInfo, result: &'a InvokeResult) -> MaybeReady<'a, ()> {
        let _ = (call, result);
        MaybeReady::ready(())
    }

    /// Before the response is built, with the outcome it will carry: a
    /// listener may change it. Not for cached results.
    fn before_response<'a>(&'a self, call: &'a CallInfo, result: &'a mut InvokeResult) -> MaybeReady<'a, ()> {
        let _ = (call, result);
        MaybeReady::ready(())
    }

    /// Any error of a call (unknown method, invalid parameters, refused,
    /// locked, failed, timed out).
    fn on_error<'a>(&'a self, event: &'a ErrorEvent<'a>) -> MaybeReady<'a, ()> {
        let _ = event;
        MaybeReady::ready(())
    }

    /// After the transport wrote the response carrying this call's result.
    fn after_response<'a>(&'a self, call: &'a CallInfo, result: &'a RawValue) -> MaybeReady<'a, ()> {
        let _ = (call, result);
        MaybeReady::ready(())
    }
}

/// The listeners of an executor, in registration order.
#[derive(Clone, Default)]
pub(crate) struct Listeners(Arc<[Arc<dyn Listener>]>);

/// Runs one listener step: its synchronous part and its future, each with
/// panics contained; `None` when it panicked (already logged).
async fn guarded<'a, T: Unpin + 'a>(event: &'static str, step: impl FnOnce() -> MaybeReady<'a, T>) -> Option<T> {
    match std::panic::catch_unwind(AssertUnwindSafe(step)) {
        Ok(MaybeReady::Ready(value)) => value,
        Ok(MaybeReady::Pending(future)) => match AssertUnwindSafe(future).catch_unwind().await {
            Ok(value) => Some(value),
            Err(panic) => {
                log_panic(event, panic.as_ref());
                None
            }
        },
        Err(panic) => {
            log_panic(event, panic.as_ref());
            None
        }
    }
}

fn log_panic(event: &str, panic: &(dyn std::any::Any + Send)) {
    let message = crate::panic::message(panic);
    tracing::error!(event, panic = %message, "an event listener panicked; it was skipped");
}

fn panicked(event: &str) -> RpcError {
    RpcError::internal(format!("a `{event}` listener panicked")).with_kind("rpc::ListenerPanicked")
}

impl Listeners {
    pub(crate) fn push(&mut self, listener: Arc<dyn Listener>) {
        let mut all: Vec<_> = self.0.iter().cloned().collect();
        all.push(listener);
        self.0 = Arc::from(all);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether any listener implements `on_request`.
    pub(crate) fn watch_requests(&self) -> bool {
        self.0.iter().any(|l| l.watches_requests())
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    pub(crate) async fn on_request(&self, request: &mut RequestEvent) -> Result<(), RpcError> {
        for l in self.0.iter() {
            match guarded("on_request", || l.on_request(request)).await {
                Some(Ok(())) => {}
                Some(Err(e)) => return Err(e),
                None => return Err(panicked("on_request")),
            }
        }
        Ok(())
    }

    pub(crate) async fn before_execute(&self, call: &CallInfo) -> Result<(), RpcError> {
        for l in self.0.iter() {
            match guarded("before_execute", || l.before_execute(call)).await {
                Some(Ok(())) => {}
                Some(Err(e)) => return Err(e),
                None => return Err(panicked("before_execute")),
            }
        }
        Ok(())
    }

    pub(crate) async fn after_execute(&self, call: &CallInfo, result: &InvokeResult) {
        for l in self.0.iter() {
            guarded("after_execute", || l.after_execute(call, result)).await;
        }
    }

    pub(crate) async fn before_response(&self, call: &CallInfo, result: &mut InvokeResult) {
        for l in self.0.iter() {
            guarded("before_response", || l.before_response(call, result)).await;
        }
    }

    pub(crate) async fn on_error(&self, event: &ErrorEvent<'_>) {
        for l in self.0.iter() {
            guarded("on_error", || l.on_error(event)).await;
        }
    }

    pub(crate) async fn after_response(&self, call: &CallInfo, result: &RawValue) {
        for l in self.0.iter() {
            guarded("after_response", || l.after_response(call, result)).await;
        }
    }
}
