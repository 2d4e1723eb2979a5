//! Tasks run by workers (see [`crate::tasks::TaskQueue`]): the web side
//! hands a stored task over to the queue (`tasks::hand_over`); a worker
//! runs it ([`McpEndpoint::run_queued_task`]) through the same tool-call path as
//! the web process would (validation, cache, listeners), its questions
//! going to the task's record, and records its end.

use std::borrow::Cow;
use std::sync::Arc;

use futures_util::future::{Either, select};
use rpc::ClientView;
use tokio::sync::watch;

use super::state::Inner;
use super::tasks::{TaskAsker, finish, watch_for_end};
use super::tool_call::{self, ToolCall};
use crate::call::Arguments;
use crate::http::McpEndpoint;
use crate::notify::Wanted;
use crate::protocol::ProtocolVersion;
use crate::tasks::{self, QueuedRun, TaskJob};

impl McpEndpoint {
    /// Runs a task handed over by a web process's [`TaskQueue`](crate::tasks::TaskQueue) (on a
    /// worker, whose endpoint is built as the web process's, sharing its
    /// task store): through the same tool-call path, with the caller's
    /// identity, language and client; its questions become the record's
    /// `inputRequests` (answered by `tasks/update` on any instance, seen
    /// here by polling the store); it is stopped when the record is
    /// cancelled or expires, and its end is recorded before this returns.
    /// A task that has ended (a redelivered message) is not run again.
    pub async fn run_queued_task(&self, job: TaskJob) -> QueuedRun {
        run(&self.server.inner, job).await
    }
}

async fn run(inner: &Arc<Inner>, job: TaskJob) -> QueuedRun {
    let record = match tasks::read(&*inner.tasks.store, &job.task_id).await {
        Err(e) => return QueuedRun::Retry(format!("the task store failed: {e}")),
        Ok(None) => return QueuedRun::Done("the task is unknown or has expired"),
        Ok(Some(record)) => record,
    };
    if record.owner != job.owner || record.tool != job.tool {
        return QueuedRun::Refused("the message's owner or tool is not its task's".to_owned());
    }
    if record.status.is_terminal() {
        return QueuedRun::Done("the task had ended");
    }
    let Some(protocol) = ProtocolVersion::parse(&job.protocol) else {
        return QueuedRun::Refused(format!("unknown protocol revision {}", job.protocol.escape_debug()));
    };
    let Ok(id) = serde_json::value::to_raw_value(&job.task_id) else {
        return QueuedRun::Refused("the task id is not JSON".to_owned());
    };
    let task_id = job.task_id.clone();
    // The sender lives as long as the call: the asker waits on it between polls.
    let (_changed, watcher) = watch::channel(0);
    let mut call = ToolCall {
        id: Cow::Owned(id),
        name: Cow::Owned(job.tool.clone()),
        identity: job.caller(),
        arguments: Arguments::Read(job.arguments),
        version: job.version,
        protocol,
        client: ClientView::new(Some(protocol.as_str().into()), job.capabilities, job.client_info),
        wanted: Wanted::default(),
        cancel_scope: None,
        silent_cancel: false,
        peer: job.peer,
        input_bytes: job.input_bytes,
        language: inner.translations.negotiate_value(&job.language),
        conversation: None,
        round: None,
        asker: Some(Arc::new(TaskAsker::in_task(inner, task_id.clone(), watcher))),
        task: true,
        tool: None,
    };
    let running = std::pin::pin!(tool_call::run(inner, &mut call, None));
    let ended = std::pin::pin!(watch_for_end(inner, &task_id));
    match select(running, ended).await {
        Either::Left((finished, _)) => {
            finish(inner, &task_id, finished).await;
            QueuedRun::Done("the task ran")
        }
        Either::Right(_) => QueuedRun::Done("the task was cancelled or expired while it ran"),
    }
}
