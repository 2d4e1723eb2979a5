//! Tool calls run as tasks (2026-07-28 with the extension
//! `io.modelcontextprotocol/tasks`, see [`crate::tasks`]).
//!
//! A tool declared `task = optional | required` called by a client that
//! declares the extension starts a task before its method runs: the request
//! is answered with the `CreateTaskResult` once the task is stored, and the
//! method runs in the background. A tool declared `starts_task` runs as a
//! plain call, its questions answered in input-required rounds, until the
//! method calls `ctx.start_task()`: then the request is answered with the
//! task and the method goes on in the background. In a task, questions are
//! the task's `inputRequests`, answered by `tasks/update` on any instance.
//!
//! With a task queue (a broker, see [`crate::tasks::TaskQueue`]), a task
//! of a `task = optional | required` tool is handed to the queue once
//! stored ([`hand_over`]), and a worker process runs it
//! ([`super::queued_tasks`]); a `starts_task` tool's task runs here all
//! the same (its method is already running when the task starts).
//!
//! The instance that runs a task ends it in the store when the method
//! returns (`completed` with its result, tool errors included, or `failed`
//! with a protocol error), and checks the store every poll interval: a task
//! cancelled elsewhere (or expired) is stopped here.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::{AbortHandle, Abortable, BoxFuture, Either, select};
use rpc::RpcError;
use rpc::ask::ClientAsker;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::{oneshot, watch};

use super::askers::{MAX_KEY_BYTES, RoundAsker};
use super::reply::{Reply, Status, stateless_status};
use super::state::Inner;
use super::stream::{CallFuture, Finished};
use super::task_registry::Running;
use super::tool_call::{self, ToolCall};
use crate::call::ProtocolError;
use crate::notify::Wanted;
use crate::tasks::{self, TASK_JOB_FORMAT, TaskJob, TaskQueue, TaskRecord, TaskStatus, TaskStore};

/// The most distinct questions one task asks in its life.
const MAX_TASK_QUESTIONS: usize = 64;

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn store_failed(error: &tasks::StoreError) -> ProtocolError {
    ProtocolError::new(rpc::error::code::INTERNAL_ERROR, format!("the task store failed: {error}"))
}

/// Whether the client declared the extension (in its request's capabilities).
pub(crate) fn client_takes_tasks(client: &rpc::ClientView) -> bool {
    client.capabilities().and_then(|c| c.get("extensions")).and_then(|e| e.get(tasks::EXTENSION)).is_some()
}

/// `-32021` naming the tasks extension in `data.requiredCapabilities`.
pub(crate) fn extension_required(message: String) -> ProtocolError {
    ProtocolError::new(crate::protocol::code::MISSING_REQUIRED_CLIENT_CAPABILITY, message)
        .with_data(json!({"requiredCapabilities": {"extensions": {tasks::EXTENSION: {}}}}))
}

/// `-32021`: the tool runs only as a task, and the client does not take tasks.
pub(crate) fn tasks_required(tool: &str) -> ProtocolError {
    let shown: String = tool.chars().take(64).collect();
    extension_required(format!(
        "the tool {shown} runs only as a task: declare the extension {} in the client's capabilities",
        tasks::EXTENSION
    ))
}

/// Answers `call` as a task (the client declared the extension, the tool
/// takes tasks).
pub(crate) async fn answer(inner: &Arc<Inner>, mut call: ToolCall<'_>, starts_task: bool) -> Reply {
    let id = call.id.clone().into_owned();
    let fail = |error: ProtocolError| Reply::error(stateless_status(error.code), Some(&id), &error);
    let owner = call.identity.as_ref().map(|i| i.subject.clone());
    let meta = crate::tools::server_info_meta(&inner.texts(call.language).server_info);
    // A task reports through its record, not through events.
    call.wanted = Wanted::default();
    call.cancel_scope = None;
    call.conversation = None;
    call.task = true;
    if !starts_task {
        let record = match create(inner, &call.name, owner).await {
            Ok(record) => record,
            Err(error) => return fail(error),
        };
        if let Some(queue) = inner.tasks.queue.clone() {
            // A worker runs it: the client hears of the task once the queue has it.
            return match hand_over(inner, &*queue, call, &record).await {
                Ok(()) => created(&id, &record, &meta),
                Err(error) => fail(error),
            };
        }
        let (changed, watcher) = watch::channel(0);
        call.asker = Some(Arc::new(TaskAsker::in_task(inner, record.id.clone(), watcher)));
        call.round = None;
        let future: CallFuture = Box::pin(tool_call::run_owned(Arc::clone(inner), call.take_owned(), None));
        spawn(Arc::clone(inner), record.id.clone(), future, changed);
        return created(&id, &record, &meta);
    }
    // The method asks in rounds, then starts its task.
    let Some(round) = call.round.as_ref().map(|r| Arc::clone(&r.asker)) else {
        return fail(ProtocolError::new(
            rpc::error::code::INTERNAL_ERROR,
            "a task started by its method needs a round",
        ));
    };
    let (start, started) = oneshot::channel();
    let asker = Arc::new(TaskAsker::in_round(inner, round, start));
    call.asker = Some(Arc::clone(&asker) as Arc<dyn ClientAsker>);
    let name = call.name.clone().into_owned();
    let future: CallFuture = Box::pin(tool_call::run_owned(Arc::clone(inner), call.take_owned(), None));
    match select(future, started).await {
        Either::Left((finished, _)) => tool_call::plain(stateless_status, finished, false),
        Either::Right((Ok(reply_to), future)) => match create(inner, &name, owner).await {
            Ok(record) => {
                let (changed, watcher) = watch::channel(0);
                asker.enter_task(record.id.clone(), watcher);
                spawn(Arc::clone(inner), record.id.clone(), future, changed);
                let _ = reply_to.send(Ok(true));
                created(&id, &record, &meta)
            }
            Err(error) => {
                let _ = reply_to.send(Err(RpcError::new(error.code, error.message.clone())));
                tool_call::plain(stateless_status, future.await, false)
            }
        },
        Either::Right((Err(_), future)) => tool_call::plain(stateless_status, future.await, false),
    }
}

/// The code of a task the queue did not take (as for asynchronous calls).
const NOT_ACCEPTED: i32 = -32000;

/// Hands the stored task `record` of `call` to `queue`; when the queue
/// does not take it, the task is failed in the store and the client gets
/// `-32000` (nothing accepted and lost).
async fn hand_over(
    inner: &Inner,
    queue: &dyn TaskQueue,
    call: ToolCall<'_>,
    record: &TaskRecord,
) -> Result<(), ProtocolError> {
    let arguments = match call.arguments.into_map() {
        Ok(map) => map,
        Err(error) => return Err(ProtocolError::from_rpc(&error, inner.executor.environment())),
    };
    let job = TaskJob {
        v: TASK_JOB_FORMAT,
        task_id: record.id.clone(),
        tool: call.name.into_owned(),
        version: call.version,
        protocol: call.protocol.as_str().to_owned(),
        arguments,
        owner: record.owner.clone(),
        identity: call.identity.as_deref().cloned(),
        language: inner.translations.tag(call.language).to_owned(),
        capabilities: call.client.capabilities().cloned(),
        client_info: call.client.info().cloned(),
        peer: call.peer,
        input_bytes: call.input_bytes,
        issued_at: tasks::now_ms(),
    };
    let published = match job.encode() {
        Ok(body) if body.len() > MAX_JOB_BYTES => {
            Err(format!("the task's message ({} bytes) is too large", body.len()))
        }
        Ok(_) => queue.publish(&job).await.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    let Err(why) = published else { return Ok(()) };
    tracing::warn!(task = %record.id, error = %rpc::logged::logged(&why), "task refused: the queue did not take it");
    let message = format!("The task was not accepted ({why}); nothing was queued, try again later");
    let error = json!({"code": NOT_ACCEPTED, "message": message});
    let error = serde_json::value::to_raw_value(&error).ok();
    let failed = tasks::modify(&*inner.tasks.store, &record.id, |record| {
        record.end(TaskStatus::Failed, Some("the task queue did not take it".into())) && {
            record.error = error.clone();
            true
        }
    })
    .await;
    if let Err(e) = failed {
        return Err(store_failed(&e));
    }
    Err(ProtocolError::new(NOT_ACCEPTED, message)
        .with_data(json!({"exception": "mcp::TaskQueueUnavailable", "taskId": record.id})))
}

/// The largest task message handed to a queue (a broker's own limit may
/// be lower).
const MAX_JOB_BYTES: usize = 8 * 1024 * 1024;

fn created(id: &RawValue, record: &TaskRecord, meta: &Value) -> Reply {
    let out = rpc::jsonrpc::response::result_body(id, &record.create_result(meta));
    Reply::message(Status::Ok, out, Vec::new())
}

/// Stores a new task of `tool` (readable on every instance once this returns).
async fn create(inner: &Inner, tool: &str, owner: Option<String>) -> Result<TaskRecord, ProtocolError> {
    let tasks = &inner.tasks;
    let id = tasks::new_task_id().map_err(|e| store_failed(&e))?;
    let record = TaskRecord::new(id, owner, tool.to_owned(), millis(tasks.ttl), millis(tasks.poll), tasks::now_ms());
    tasks.store.create(&record.id, record.encode(), tasks.ttl).await.map_err(|e| store_failed(&e))?;
    Ok(record)
}

/// Runs `call` as the task `id` in the background.
fn spawn(inner: Arc<Inner>, id: String, call: CallFuture, changed: watch::Sender<u64>) {
    let (abort, registration) = AbortHandle::new_pair();
    inner.tasks.running().insert(id.clone(), Running { abort, changed });
    tokio::spawn(async move {
        let watch = std::pin::pin!(watch_for_end(&inner, &id));
        if let Either::Left((Ok(finished), _)) = select(Abortable::new(call, registration), watch).await {
            finish(&inner, &id, finished).await;
        }
        inner.tasks.running().remove(&id);
    });
}

/// Returns when the task has ended (cancelled) or expired in the store.
pub(super) async fn watch_for_end(inner: &Inner, id: &str) {
    loop {
        tokio::time::sleep(inner.tasks.poll).await;
        match tasks::read(&*inner.tasks.store, id).await {
            Ok(Some(record)) if !record.status.is_terminal() => {}
            Ok(_) => return,
            // The store does not answer: the task goes on, and is looked at again.
            Err(_) => {}
        }
    }
}

/// Records the end of the task `id` from its call's response.
pub(super) async fn finish(inner: &Inner, id: &str, finished: Finished) {
    #[derive(Deserialize)]
    struct Response {
        #[serde(default)]
        result: Option<Box<RawValue>>,
        #[serde(default)]
        error: Option<Box<RawValue>>,
    }
    let response = finished.response.as_deref().and_then(|body| serde_json::from_slice::<Response>(body).ok());
    let (result, error) = match response {
        Some(Response { result: Some(result), .. }) => (Some(result), None),
        Some(Response { error: Some(error), .. }) => (None, Some(error)),
        _ => {
            (None, RawValue::from_string(r#"{"code":-32603,"message":"the task ended without a result"}"#.into()).ok())
        }
    };
    let store = &*inner.tasks.store;
    // While the store does not answer (Redis down), the end is recorded
    // later, up to the task's life; a result the store refuses (too large
    // for it) fails the task with the reason instead.
    let deadline = tokio::time::Instant::now() + inner.tasks.ttl;
    let mut pause = inner.tasks.poll;
    loop {
        let recorded = tasks::modify(store, id, |record| match (&result, &error) {
            (Some(result), _) => {
                record.end(TaskStatus::Completed, None) && {
                    record.result = Some(result.clone());
                    true
                }
            }
            (None, error) => {
                record.end(TaskStatus::Failed, Some("the call failed".into())) && {
                    record.error = error.clone();
                    true
                }
            }
        })
        .await;
        let Err(stored) = recorded else { break };
        let reason = json!({"code": rpc::error::code::INTERNAL_ERROR, "message": format!("the task's result could not be stored: {stored}")});
        let reason = RawValue::from_string(reason.to_string()).ok();
        let failed = tasks::modify(store, id, |record| {
            record.end(TaskStatus::Failed, Some("the result could not be stored".into())) && {
                record.error = reason.clone();
                true
            }
        })
        .await;
        if failed.is_ok() || tokio::time::Instant::now() + pause > deadline {
            break;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(30));
    }
    if !finished.executions.is_empty() {
        inner.executor.response_sent(finished.executions);
    }
}

/// How a task's method asks: in the request's rounds until the task
/// starts, then through the task's record.
pub(crate) struct TaskAsker {
    store: Arc<dyn TaskStore>,
    poll: Duration,
    mode: Mutex<Mode>,
    start: Mutex<Option<StartRequest>>,
}

/// How the method asks the request's handler to start its task: the
/// handler answers on the enclosed channel once the task exists.
type StartRequest = oneshot::Sender<oneshot::Sender<Result<bool, RpcError>>>;

enum Mode {
    Round(Arc<RoundAsker>),
    Task { id: String, changed: watch::Receiver<u64> },
}

impl TaskAsker {
    pub(super) fn in_task(inner: &Inner, id: String, changed: watch::Receiver<u64>) -> Self {
        TaskAsker {
            store: Arc::clone(&inner.tasks.store),
            poll: inner.tasks.poll,
            mode: Mutex::new(Mode::Task { id, changed }),
            start: Mutex::new(None),
        }
    }

    fn in_round(inner: &Inner, round: Arc<RoundAsker>, start: StartRequest) -> Self {
        TaskAsker {
            store: Arc::clone(&inner.tasks.store),
            poll: inner.tasks.poll,
            mode: Mutex::new(Mode::Round(round)),
            start: Mutex::new(Some(start)),
        }
    }

    fn enter_task(&self, id: String, changed: watch::Receiver<u64>) {
        *self.mode.lock().unwrap_or_else(|e| e.into_inner()) = Mode::Task { id, changed };
    }
}

impl ClientAsker for TaskAsker {
    fn ask(&self, key: &str, method: &str, params: Value) -> BoxFuture<'static, Result<Value, RpcError>> {
        let (id, changed) = match &*self.mode.lock().unwrap_or_else(|e| e.into_inner()) {
            Mode::Round(round) => return round.ask(key, method, params),
            Mode::Task { id, changed } => (id.clone(), changed.clone()),
        };
        let question = json!({"method": method, "params": params});
        Box::pin(ask_in_task(Arc::clone(&self.store), self.poll, id, changed, key.to_owned(), question))
    }

    fn start_task(&self) -> BoxFuture<'static, Result<bool, RpcError>> {
        match &*self.mode.lock().unwrap_or_else(|e| e.into_inner()) {
            Mode::Task { .. } => return Box::pin(std::future::ready(Ok(true))),
            Mode::Round(round) if round.has_unanswered() => {
                return Box::pin(std::future::ready(Err(RpcError::invalid_params(
                    "the call asked questions that are not answered yet: the task starts once they are",
                ))));
            }
            Mode::Round(_) => {}
        }
        let Some(start) = self.start.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return Box::pin(std::future::ready(Ok(false)));
        };
        let (reply_to, started) = oneshot::channel();
        if start.send(reply_to).is_err() {
            return Box::pin(std::future::ready(Ok(false)));
        }
        Box::pin(async move { started.await.unwrap_or(Ok(false)) })
    }
}

/// Asks `question` as `key` of the task `id` and waits for its answer
/// (from `tasks/update` on any instance), the task's end or its expiry.
async fn ask_in_task(
    store: Arc<dyn TaskStore>,
    poll: Duration,
    id: String,
    mut changed: watch::Receiver<u64>,
    key: String,
    question: Value,
) -> Result<Value, RpcError> {
    if key.is_empty() || key.len() > MAX_KEY_BYTES {
        return Err(RpcError::invalid_params(format!("a question's key is 1 to {MAX_KEY_BYTES} bytes")));
    }
    let failed =
        |e: tasks::StoreError| RpcError::new(rpc::error::code::INTERNAL_ERROR, format!("the task store failed: {e}"));
    let mut too_many = false;
    let mut record = tasks::modify(&*store, &id, |record| {
        if record.status.is_terminal() || record.answers.contains_key(&key) || record.input_requests.contains_key(&key)
        {
            return false;
        }
        if !record.keys.contains(&key) {
            if record.keys.len() >= MAX_TASK_QUESTIONS {
                too_many = true;
                return false;
            }
            record.keys.push(key.clone());
        }
        record.input_requests.insert(key.clone(), question.clone());
        record.status = TaskStatus::InputRequired;
        true
    })
    .await
    .map_err(failed)?;
    if too_many {
        return Err(RpcError::invalid_params(format!("a task asks at most {MAX_TASK_QUESTIONS} questions")));
    }
    loop {
        let Some(current) = record else {
            return Err(RpcError::new(rpc::error::code::INTERNAL_ERROR, "the task expired before it was answered"));
        };
        if let Some(answer) = current.answers.get(&key) {
            return Ok(answer.clone());
        }
        if current.status.is_terminal() {
            return Err(RpcError::new(crate::protocol::code::REQUEST_CANCELLED, "the task was cancelled"));
        }
        let _ = tokio::time::timeout(poll, changed.changed()).await;
        record = tasks::read(&*store, &id).await.map_err(failed)?;
    }
}

/// `tasks/get`: the task as the client sees it.
pub(crate) async fn get(inner: &Inner, owner: Option<&str>, id: &str, meta: &Value) -> Result<Vec<u8>, ProtocolError> {
    let record = owned(tasks::read(&*inner.tasks.store, id).await.map_err(|e| store_failed(&e))?, owner, id)?;
    Ok(record.detailed(meta))
}

/// `tasks/update`: answers to the task's questions; answers to keys it is
/// not waiting for are ignored.
pub(crate) async fn update(
    inner: &Inner,
    owner: Option<&str>,
    id: &str,
    responses: Option<Value>,
) -> Result<(), ProtocolError> {
    let responses = match responses {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(responses)) => responses,
        Some(_) => return Err(invalid("`inputResponses` must be an object")),
    };
    if responses.len() > MAX_TASK_QUESTIONS {
        return Err(invalid(format!("at most {MAX_TASK_QUESTIONS} input responses")));
    }
    if let Some((key, _)) = responses.iter().find(|(_, v)| !v.is_object()) {
        let shown: String = key.chars().take(64).collect();
        return Err(invalid(format!(
            "inputResponses.{shown} must be an object: the client's result for that input request"
        )));
    }
    let stored = tasks::modify(&*inner.tasks.store, id, |record| {
        if owner_of(record, owner).is_err() {
            return false;
        }
        let mut changed = false;
        for (key, answer) in &responses {
            if record.input_requests.remove(key).is_some() {
                record.answers.insert(key.clone(), answer.clone());
                changed = true;
            }
        }
        if changed && record.input_requests.is_empty() && record.status == TaskStatus::InputRequired {
            record.status = TaskStatus::Working;
        }
        changed
    })
    .await
    .map_err(|e| store_failed(&e))?;
    owned(stored, owner, id)?;
    inner.tasks.wake(id);
    Ok(())
}

/// `tasks/cancel`: the task ends as `cancelled` unless it has ended.
pub(crate) async fn cancel(inner: &Inner, owner: Option<&str>, id: &str) -> Result<(), ProtocolError> {
    let stored = tasks::modify(&*inner.tasks.store, id, |record| {
        owner_of(record, owner).is_ok() && record.end(TaskStatus::Cancelled, Some("cancelled by the client".into()))
    })
    .await
    .map_err(|e| store_failed(&e))?;
    let record = owned(stored, owner, id)?;
    if record.status == TaskStatus::Cancelled {
        inner.tasks.abort(id);
    }
    Ok(())
}

fn invalid(message: impl Into<std::borrow::Cow<'static, str>>) -> ProtocolError {
    ProtocolError::new(rpc::error::code::INVALID_PARAMS, message)
}

fn owner_of(record: &TaskRecord, owner: Option<&str>) -> Result<(), ()> {
    if record.owner.as_deref() == owner { Ok(()) } else { Err(()) }
}

/// The record if the caller may see it; an unknown task otherwise (a task
/// of another identity is not revealed).
fn owned(record: Option<TaskRecord>, owner: Option<&str>, id: &str) -> Result<TaskRecord, ProtocolError> {
    match record {
        Some(record) if owner_of(&record, owner).is_ok() => Ok(record),
        _ => {
            let shown: String = id.chars().take(64).collect();
            Err(invalid(format!("unknown task: {shown} (it never existed, has expired, or belongs to another caller)")))
        }
    }
}
