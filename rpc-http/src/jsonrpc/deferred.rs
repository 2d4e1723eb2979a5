//! Asynchronous calls (`$rpc.callback`): acknowledged at once with
//! `{"async": true, "callback": url}`, run later, their response POSTed to
//! the callback.
//!
//! *Where* they run is the [`Queue`](super::Queue) seam. Without a queue (the default),
//! the web process runs each call itself once the acknowledgement was sent,
//! at most [`Callbacks::max_pending`](super::Callbacks::max_pending) at a
//! time. With one ([`JsonRpcBuilder::queue`](super::JsonRpcBuilder::queue),
//! e.g. `amqp::AmqpQueue` with the `amqp` feature), the call is handed to
//! the queue *before* it is acknowledged: a queue that refuses it (a broker
//! that is down, a full queue) makes the call fail with `-32000` at once,
//! nothing acknowledged and nothing lost silently; worker processes then run
//! the [`Job`] through the same executor ([`JsonRpcService::execute_job`])
//! and post its response ([`JsonRpcService::post_callback`]).

use std::sync::Arc;

use serde_json::json;

use super::callback;
#[cfg(feature = "amqp")]
use super::callback::CallbackUrl;
use super::queue::{Deferred, Job, dedup_id};
use super::service::{Answer, JsonRpcService};
use crate::security::Identity;
use rpc_core::error::{RpcError, code};
use rpc_core::executor::{Call, Execution, Params, Transport};
use rpc_core::jsonrpc::envelope;
use rpc_core::jsonrpc::response::{write_error, write_result};
use rpc_core::jsonrpc::special;
use rpc_core::logged::logged;

impl JsonRpcService {
    /// A call with `$rpc.callback`: checked now (the URL against the
    /// policy), then handed to the queue, or (without one) given a pending
    /// slot to run once the response was sent; acknowledged with
    /// `{"async": true, "callback": url}`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn acknowledge(
        &self,
        version: u32,
        request: &envelope::Request<'_>,
        params: Params,
        special: &special::Special,
        callback: &str,
        identity: &Option<Arc<Identity>>,
        headers: &http::HeaderMap,
    ) -> Result<Answer, RpcError> {
        let inner = &self.inner;
        let url = inner.callbacks.check(callback)?;
        let ack = json!({"async": true, "callback": url.as_str()}).to_string();
        let job = Job {
            method: request.method.clone().into_owned(),
            version,
            params,
            ignore_cache: special.ignore_cache,
            timeout: special.timeout,
            ray_id: special.ray_id.clone(),
            identity: identity.clone(),
            id: request.id.map(|id| id.to_owned()),
            url,
            headers: callback::forwarded(headers),
            dedup: dedup_id()?,
        };
        let later = match &inner.queue {
            Some(queue) => {
                if let Err(why) = queue.publish(&job).await {
                    tracing::warn!(method = %logged(&job.method), error = %logged(&why.to_string()),
                        "asynchronous call refused: the queue did not take it");
                    return Err(RpcError::new(
                        code::TIMEOUT,
                        format!("The asynchronous call was not accepted ({why}); nothing was queued, try again later"),
                    )
                    .with_kind("rpc::QueueUnavailable"));
                }
                None
            }
            None => {
                let Some(slot) = inner.callbacks.reserve() else {
                    return Err(RpcError::new(
                        code::TIMEOUT,
                        "Too many asynchronous calls are pending; try again later",
                    )
                    .with_kind("rpc::CallbacksBusy"));
                };
                Some(Box::new(Deferred { job, _slot: slot }))
            }
        };
        if let Some(ray) = &special.ray_id {
            tracing::debug!(method = %logged(&request.method), ray_id = %logged(ray), "asynchronous call accepted");
        }
        let out = request.id.map(|id| {
            let mut out = Vec::with_capacity(64 + ack.len());
            write_result(&mut out, id, ack.as_bytes());
            out
        });
        Ok((out, None, later))
    }

    /// Runs the asynchronous calls of a response that was sent, each in a
    /// task of its own, and posts their responses to their callbacks.
    pub(super) fn run_deferred(&self, deferred: Vec<Deferred>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::error!("asynchronous calls acknowledged outside a tokio runtime were not run");
            return;
        };
        for deferred in deferred {
            let this = self.clone();
            runtime.spawn(async move {
                let Deferred { job, _slot } = deferred;
                let (body, execution) = this.execute_job(&job).await;
                let Some(body) = body else {
                    this.inner.executor.response_sent(vec![execution]);
                    return;
                };
                let target = job.url.target();
                let (method, target) = (logged(&job.method), logged(&target));
                match this.post_callback(&job, body).await {
                    Ok(status) if status.is_success() => {
                        tracing::debug!(method = %method, callback = %target, %status, "callback delivered");
                        this.inner.executor.response_sent(vec![execution]);
                    }
                    Ok(status) => {
                        tracing::warn!(method = %method, callback = %target, %status, "callback endpoint refused the response")
                    }
                    Err(why) => {
                        tracing::warn!(method = %method, callback = %target, error = %logged(&why), "callback failed")
                    }
                }
            });
        }
    }

    /// Runs the call of `job` through this endpoint's executor, with the
    /// caller's identity and `$rpc` options: its JSON-RPC response (none
    /// for a notification) and the execution, for
    /// [`job_delivered`](Self::job_delivered) once the response was delivered.
    pub async fn execute_job(&self, job: &Job) -> (Option<Vec<u8>>, Execution) {
        let inner = &self.inner;
        let env = inner.executor.environment();
        let mut call = Call::new(&job.method, job.version, job.params.clone())
            .transport(Transport::JsonRpc)
            .identity(job.identity.clone())
            .ignore_cache(job.ignore_cache)
            .timeout(job.timeout);
        if let Some(scope) = inner.scope.as_deref() {
            call = call.scope(scope);
        }
        let execution = inner.executor.execute(call).await;
        let Some(id) = &job.id else { return (None, execution) };
        let mut body = Vec::with_capacity(128);
        match &execution.result {
            Ok(result) => write_result(&mut body, id, result.get().as_bytes()),
            Err(error) => write_error(&mut body, Some(id), error, env),
        }
        (Some(body), execution)
    }

    /// After-response work of an executed job (listeners, cache relations),
    /// once its response was delivered (or, for a notification, it ran).
    pub fn job_delivered(&self, execution: Execution) {
        self.inner.executor.response_sent(vec![execution]);
    }

    /// POSTs `body` (a JSON-RPC response) to the job's callback with its
    /// forwarded headers: the status, or why it failed. The URL is checked
    /// again against this endpoint's [`Callbacks`](super::Callbacks) policy.
    pub async fn post_callback(&self, job: &Job, body: Vec<u8>) -> Result<http::StatusCode, String> {
        let callbacks = &self.inner.callbacks;
        let url = callbacks.check(job.url.as_str()).map_err(|e| e.message().to_owned())?;
        callbacks.post(url, body, job.headers.clone()).await
    }

    /// The callback URL, if this endpoint's policy allows it.
    #[cfg(feature = "amqp")]
    pub(crate) fn check_callback(&self, url: &str) -> Result<CallbackUrl, RpcError> {
        self.inner.callbacks.check(url)
    }

    /// The endpoint's executor (a worker shares its stores).
    pub fn executor(&self) -> &rpc_core::executor::Executor {
        &self.inner.executor
    }
}
