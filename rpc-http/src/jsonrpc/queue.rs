//! What an asynchronous call (`$rpc.callback`) becomes once accepted: a
//! [`Job`], handed to a [`Queue`] (or kept as a `Deferred` call run by this
//! process); `deferred` runs them.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderMap;
use serde_json::value::RawValue;

use super::callback::{CallbackUrl, Pending};
use crate::security::Identity;
use rpc_core::error::RpcError;
use rpc_core::executor::Params;

/// One asynchronous call, as it was accepted: everything needed to run it
/// elsewhere and later (the caller's identity included) and to post its
/// response.
#[derive(Debug, Clone)]
pub struct Job {
    pub(crate) method: String,
    pub(crate) version: u32,
    pub(crate) params: Params,
    pub(crate) ignore_cache: bool,
    pub(crate) timeout: Option<Duration>,
    pub(crate) ray_id: Option<String>,
    pub(crate) identity: Option<Arc<Identity>>,
    pub(crate) id: Option<Box<RawValue>>,
    pub(crate) url: CallbackUrl,
    pub(crate) headers: HeaderMap,
    pub(crate) dedup: String,
}

impl Job {
    /// The method called.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The API version it was called in.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// Who called, as the endpoint's access policy established it.
    pub fn identity(&self) -> Option<&Identity> {
        self.identity.as_deref()
    }

    /// Where the response goes.
    pub fn callback(&self) -> &CallbackUrl {
        &self.url
    }

    /// A random id given when the call was accepted (32 hex digits): the
    /// same job delivered twice carries the same id.
    pub fn dedup_id(&self) -> &str {
        &self.dedup
    }

    /// The parent request's id (`$rpc.rayId`), for tracing.
    pub fn ray_id(&self) -> Option<&str> {
        self.ray_id.as_deref()
    }

    /// Whether the call is a notification (no `id`): it runs, nothing is posted.
    pub fn is_notification(&self) -> bool {
        self.id.is_none()
    }
}

/// A fresh deduplication id: 128 random bits in hex.
pub(crate) fn dedup_id() -> Result<String, RpcError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| RpcError::internal(format!("no randomness for a job id: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Why a [`Queue`] did not take a job.
#[derive(Debug, Clone)]
pub struct QueueError {
    message: String,
}

impl QueueError {
    /// An error saying why (shown to the client: no secrets in it).
    pub fn new(message: impl Into<String>) -> Self {
        QueueError { message: message.into() }
    }
}

impl fmt::Display for QueueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for QueueError {}

/// Where asynchronous calls go instead of running in the web process (see
/// the [module](self)).
pub trait Queue: Send + Sync + fmt::Debug + 'static {
    /// Hands `job` over, durably: `Ok` only once it is safe (for a broker:
    /// confirmed by it), since the client is then told the call was accepted.
    fn publish<'a>(&'a self, job: &'a Job) -> Pin<Box<dyn Future<Output = Result<(), QueueError>> + Send + 'a>>;
}

/// A call acknowledged now and run in this process after the response was
/// sent (no [`Queue`]); holds one of the pending slots while it waits and runs.
pub(super) struct Deferred {
    pub(super) job: Job,
    pub(super) _slot: Pending,
}
