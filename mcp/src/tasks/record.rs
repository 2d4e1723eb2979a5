//! One task as stored, and its wire shapes: the `CreateTaskResult` a
//! `tools/call` answers with and the `DetailedTask` of `tasks/get`.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{StoreError, iso8601};

/// Where a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for answers to its `inputRequests` (`tasks/update`).
    InputRequired,
    /// Finished; `result` holds the tool's result (which may be a tool
    /// error, `isError: true`).
    Completed,
    /// Ended by a protocol error; `error` holds it.
    Failed,
    /// Stopped by `tasks/cancel`.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task has ended (it never changes again).
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

/// A task as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The task id.
    pub id: String,
    /// The subject of the identity that started it: only the same identity
    /// sees it (`None`: a server without an access policy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The tool.
    pub tool: String,
    /// Where it is.
    pub status: TaskStatus,
    /// Why it is where it is, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// Created, milliseconds since the epoch.
    pub created_ms: u64,
    /// Last changed, milliseconds since the epoch.
    pub updated_ms: u64,
    /// How long it is kept after its creation, in milliseconds.
    pub ttl_ms: u64,
    /// How often clients should poll, in milliseconds.
    pub poll_ms: u64,
    /// The tool's result, once completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Box<RawValue>>,
    /// The JSON-RPC error, once failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Box<RawValue>>,
    /// The questions awaiting an answer: key → `{"method", "params"}`.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub input_requests: Map<String, Value>,
    /// The answers received, by key.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub answers: Map<String, Value>,
    /// Every key ever asked: a key is never reused within a task.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
}

impl TaskRecord {
    /// A task of `tool` just started.
    pub(crate) fn new(id: String, owner: Option<String>, tool: String, ttl_ms: u64, poll_ms: u64, now: u64) -> Self {
        TaskRecord {
            id,
            owner,
            tool,
            status: TaskStatus::Working,
            status_message: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms,
            poll_ms,
            result: None,
            error: None,
            input_requests: Map::new(),
            answers: Map::new(),
            keys: Vec::new(),
        }
    }

    pub(crate) fn decode(text: &str) -> Result<Self, StoreError> {
        serde_json::from_str(text).map_err(|e| StoreError::new(format!("a stored task does not decode: {e}")))
    }

    pub(crate) fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Ends the task with `status` (if it has not ended), dropping the
    /// questions it was waiting for: whether it changed.
    pub(crate) fn end(&mut self, status: TaskStatus, message: Option<String>) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        self.status = status;
        self.status_message = message;
        self.input_requests.clear();
        true
    }

    /// The members every task shape has.
    fn common(&self, result_type: &str) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert("resultType".into(), result_type.into());
        out.insert("taskId".into(), self.id.clone().into());
        out.insert("status".into(), self.status.as_str().into());
        if let Some(message) = &self.status_message {
            out.insert("statusMessage".into(), message.clone().into());
        }
        out.insert("createdAt".into(), iso8601(self.created_ms).into());
        out.insert("lastUpdatedAt".into(), iso8601(self.updated_ms).into());
        out.insert("ttlMs".into(), self.ttl_ms.into());
        out.insert("pollIntervalMs".into(), self.poll_ms.into());
        out
    }

    /// The `CreateTaskResult` (`resultType: "task"`), with `meta`.
    pub(crate) fn create_result(&self, meta: &Value) -> Vec<u8> {
        let mut out = self.common("task");
        out.insert("_meta".into(), meta.clone());
        serde_json::to_vec(&out).unwrap_or_default()
    }

    /// The `DetailedTask` of `tasks/get`: with the result once completed,
    /// the error once failed, the open questions while input is required.
    pub(crate) fn detailed(&self, meta: &Value) -> Vec<u8> {
        let mut out = self.common("complete");
        let raw = |raw: &RawValue| serde_json::from_str::<Value>(raw.get()).unwrap_or(Value::Null);
        match self.status {
            TaskStatus::Completed => {
                if let Some(result) = &self.result {
                    out.insert("result".into(), raw(result));
                }
            }
            TaskStatus::Failed => {
                if let Some(error) = &self.error {
                    out.insert("error".into(), raw(error));
                }
            }
            TaskStatus::InputRequired => {
                out.insert("inputRequests".into(), Value::Object(self.input_requests.clone()));
            }
            _ => {}
        }
        out.insert("_meta".into(), meta.clone());
        serde_json::to_vec(&out).unwrap_or_default()
    }
}
