//! Tasks of the MCP extension `io.modelcontextprotocol/tasks` (SEP-2663):
//! a tool call that goes on after its request is answered. The client gets
//! a task id at once and polls `tasks/get` for the status, the questions the
//! task asks (answered with `tasks/update`) and finally its result, or
//! stops it with `tasks/cancel`.
//!
//! A task is a [`TaskRecord`] in a [`TaskStore`]: in this process by
//! default ([`MemoryTaskStore`]), in Redis when configured (`RedisTaskStore`,
//! feature `redis`), so that every instance behind a load balancer answers
//! for a task another instance runs, and a task outlives the restart of an
//! instance that does not run it. Records are JSON text; every change is a
//! compare-and-set of the whole record ([`TaskStore::replace`]), retried
//! when another instance changed it in between, so the instance that runs a
//! task, the one that receives its answers and the one that cancels it never
//! overwrite each other.

mod memory;
mod queue;
mod record;
#[cfg(feature = "redis")]
mod redis;
mod time;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
pub use rpc::store::StoreError;

pub use memory::MemoryTaskStore;
pub use queue::{QueuedRun, TASK_JOB_FORMAT, TaskJob, TaskQueue};
pub use record::{TaskRecord, TaskStatus};
#[cfg(feature = "redis")]
pub use redis::RedisTaskStore;
pub(crate) use time::{iso8601, now_ms};

/// The identifier of the extension, as capabilities name it.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Where tasks live, as JSON text per task id. Implementations only store
/// text; what a task is and how it changes is decided by the server.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task for `ttl`; fails if the id is taken or the store
    /// is full. The task can be read as soon as this returns.
    fn create<'a>(&'a self, id: &'a str, record: String, ttl: Duration) -> BoxFuture<'a, Result<(), StoreError>>;
    /// The task's record, `None` when unknown or expired.
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<String>, StoreError>>;
    /// Replaces the record with `new` if it is still `old`, keeping its
    /// expiry: `false` when it changed (or expired) in between.
    fn replace<'a>(&'a self, id: &'a str, old: &'a str, new: String) -> BoxFuture<'a, Result<bool, StoreError>>;
    /// Whether other processes see the same tasks (Redis: yes; this
    /// process's memory: no). A [`TaskQueue`] needs a shared store: the
    /// worker that runs a task records it where the web processes read it.
    fn is_shared(&self) -> bool {
        false
    }
}

impl std::fmt::Debug for dyn TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TaskStore")
    }
}

/// How many times a change is retried when other instances keep changing
/// the same task.
const MAX_ATTEMPTS: usize = 32;

/// The task `id`, `None` when unknown or expired.
pub(crate) async fn read(store: &dyn TaskStore, id: &str) -> Result<Option<TaskRecord>, StoreError> {
    match store.load(id).await? {
        None => Ok(None),
        Some(text) => TaskRecord::decode(&text).map(Some),
    }
}

/// Applies `change` to the task `id` (`change` returns whether it changed
/// anything), as a compare-and-set retried on conflict; the record as
/// stored afterwards, `None` when the task is unknown.
pub(crate) async fn modify(
    store: &dyn TaskStore,
    id: &str,
    mut change: impl FnMut(&mut TaskRecord) -> bool,
) -> Result<Option<TaskRecord>, StoreError> {
    for _ in 0..MAX_ATTEMPTS {
        let Some(old) = store.load(id).await? else { return Ok(None) };
        let mut record = TaskRecord::decode(&old)?;
        if !change(&mut record) {
            return Ok(Some(record));
        }
        record.updated_ms = now_ms().max(record.updated_ms);
        if store.replace(id, &old, record.encode()).await? {
            return Ok(Some(record));
        }
    }
    Err(StoreError::new(format!("task {id} kept changing under {MAX_ATTEMPTS} attempts to update it")))
}

/// A new random task id (128 bits, URL-safe).
pub(crate) fn new_task_id() -> Result<String, StoreError> {
    use base64::Engine;
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| StoreError::new(format!("no randomness for a task id: {e}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The default store: tasks in this process.
pub(crate) fn default_store() -> Arc<dyn TaskStore> {
    Arc::new(MemoryTaskStore::default())
}
