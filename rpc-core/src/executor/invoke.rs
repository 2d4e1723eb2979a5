//! Calling a method: its panics contained, an async method abandoned
//! after its time limit.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures_util::FutureExt;
use serde_json::{Map, Value};

use crate::context::Context;
use crate::descriptor::{Invocation, InvokeResult, Invoked};
use crate::error::RpcError;
use crate::registry::Method;

/// Calls the method: panics contained, an async method abandoned after `timeout`.
pub(super) async fn invoke(
    method: &Method,
    params: Map<String, Value>,
    context: &Context,
    timeout: Option<Duration>,
) -> InvokeResult {
    let descriptor = method.descriptor();
    let invocation = Invocation::Call { instance: method.instance(), params, context, method: descriptor };
    let invoked = std::panic::catch_unwind(AssertUnwindSafe(|| (descriptor.invoke)(invocation)));
    match invoked {
        Ok(Invoked::Ready(result)) => result,
        Ok(Invoked::Shape(_)) => {
            Err(RpcError::internal(format!("method `{}` described its arguments instead of running", method.name())))
        }
        Ok(Invoked::Pending(future)) => {
            let guarded = AssertUnwindSafe(future).catch_unwind();
            let outcome = match timeout {
                Some(limit) => match tokio::time::timeout(limit, guarded).await {
                    Ok(outcome) => outcome,
                    Err(_) => return Err(RpcError::timed_out(method.name(), limit)),
                },
                None => guarded.await,
            };
            outcome.unwrap_or_else(|panic| Err(panic_error(method.name(), panic.as_ref())))
        }
        Err(panic) => Err(panic_error(method.name(), panic.as_ref())),
    }
}

fn panic_error(method: &str, panic: &(dyn std::any::Any + Send)) -> RpcError {
    let message = crate::panic::message(panic);
    tracing::error!(method, panic = %crate::logged::logged_up_to(&message, 512), "method panicked");
    RpcError::internal(format!("method `{method}` panicked: {message}")).with_kind("panic")
}
