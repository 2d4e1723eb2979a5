//! The tasks of a server (see [`tasks`](super::tasks)): where they are
//! stored, and the ones running in this process, which `tasks/cancel` and
//! `tasks/update` reach directly when they arrive here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::AbortHandle;
use tokio::sync::watch;

use crate::tasks::{TaskQueue, TaskStore};

/// The tasks of a server: where they are stored, and those running here.
pub(crate) struct Tasks {
    pub store: Arc<dyn TaskStore>,
    /// How long a task is kept after its creation.
    pub ttl: Duration,
    /// How often clients should poll, and how often a running task looks
    /// for a cancellation made elsewhere.
    pub poll: Duration,
    /// Where tasks go to be run by workers (`None`: they run here).
    pub queue: Option<Arc<dyn TaskQueue>>,
    running: Mutex<HashMap<String, Running>>,
}

/// A task running in this process.
pub(crate) struct Running {
    pub abort: AbortHandle,
    /// Bumped when the task's answers or status change here.
    pub changed: watch::Sender<u64>,
}

impl Tasks {
    pub(crate) fn new(store: Arc<dyn TaskStore>, ttl: Duration, poll: Duration) -> Self {
        Tasks { store, ttl, poll, queue: None, running: Mutex::default() }
    }

    /// With tasks handed to `queue` (kept only with a shared store: a
    /// store replaced by an unshared one after `task_queue` was set keeps
    /// the tasks in this process, with an error logged).
    pub(crate) fn with_queue(mut self, queue: Option<Arc<dyn TaskQueue>>) -> Self {
        if queue.is_some() && !self.store.is_shared() {
            tracing::error!("the task queue is ignored: the task store is not shared with the workers");
            return self;
        }
        self.queue = queue;
        self
    }

    pub(crate) fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Tells the task `id`, if it runs here, that its record changed.
    pub(crate) fn wake(&self, id: &str) {
        if let Some(running) = self.running().get(id) {
            running.changed.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// Stops the task `id` if it runs here.
    pub(crate) fn abort(&self, id: &str) {
        if let Some(running) = self.running().remove(id) {
            running.abort.abort();
        }
    }
}
