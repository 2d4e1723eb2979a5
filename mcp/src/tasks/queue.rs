//! Tasks run by worker processes: when an endpoint has a [`TaskQueue`]
//! (`McpEndpointBuilder::task_queue`), a task of a tool declared
//! `task = optional | required` is not run by the web process that
//! created it: its [`TaskJob`] is handed to the queue (a message broker,
//! `mcp::amqp::AmqpTaskQueue`), and a worker runs it
//! (`McpEndpoint::run_queued_task`) through the same tool-call path,
//! recording its questions and its end in the shared [`TaskStore`](super::TaskStore).
//!
//! The message of a task is JSON:
//!
//! ```json
//! {"v": 1, "taskId": "Qm9…", "tool": "Catalog.reindex", "version": 1, "protocol": "2026-07-28",
//!  "arguments": {"pause_ms": 10}, "owner": "alice",
//!  "identity": {"subject": "alice", "scopes": [], "scoped": false, "clientId": null, "attributes": {}},
//!  "language": "en", "capabilities": {"extensions": {…}}, "clientInfo": {"name": "c", "version": "1"},
//!  "peer": "127.0.0.1", "inputBytes": 17, "issuedAt": 1767225600000}
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rpc::Identity;
use rpc::jsonrpc::QueueError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The format version of [`TaskJob`] messages.
pub const TASK_JOB_FORMAT: u8 = 1;

/// Everything a worker needs to run one task as the web process would
/// have: the tool and its raw arguments, the caller's identity, language
/// and client facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskJob {
    /// The format version ([`TASK_JOB_FORMAT`]).
    pub v: u8,
    /// The task (its record is in the shared task store).
    pub task_id: String,
    /// The tool called.
    pub tool: String,
    /// The API version served.
    pub version: u32,
    /// The MCP revision of the call (`2026-07-28`).
    pub protocol: String,
    /// The tool's arguments, as the client sent them.
    pub arguments: Map<String, Value>,
    /// The task's owner (the caller's subject).
    pub owner: Option<String>,
    /// The caller, as the access policy established it.
    pub identity: Option<Identity>,
    /// The language tag of the request (`en`, `uk`).
    pub language: String,
    /// The client's declared capabilities.
    pub capabilities: Option<Value>,
    /// The client's `clientInfo`.
    pub client_info: Option<Value>,
    /// The client's address (rate limits count by it without an identity).
    pub peer: Option<std::net::IpAddr>,
    /// The size of the request's `params` in bytes.
    pub input_bytes: usize,
    /// When the task was handed over, milliseconds since the epoch.
    pub issued_at: u64,
}

impl TaskJob {
    /// The message's JSON body.
    pub fn encode(&self) -> Result<Vec<u8>, QueueError> {
        serde_json::to_vec(self).map_err(|e| QueueError::new(format!("cannot serialise the task: {e}")))
    }

    /// The job in a message body (whose signature was checked): refused
    /// when it is not JSON of this format, or names no task or tool.
    pub fn decode(body: &[u8]) -> Result<Self, String> {
        let job: TaskJob = serde_json::from_slice(body).map_err(|e| format!("not a task message: {e}"))?;
        if job.v != TASK_JOB_FORMAT {
            return Err(format!("task message format {} (this worker reads {TASK_JOB_FORMAT})", job.v));
        }
        if job.task_id.is_empty() || job.task_id.len() > 64 || job.tool.is_empty() || job.tool.len() > 256 {
            return Err("the task id or the tool name is empty or too long".to_owned());
        }
        if job.identity.as_ref().map(|i| &i.subject) != job.owner.as_ref() {
            return Err("the task's owner is not the caller's subject".to_owned());
        }
        Ok(job)
    }

    /// The caller's identity.
    pub fn caller(&self) -> Option<Arc<Identity>> {
        self.identity.clone().map(Arc::new)
    }
}

/// Where tasks go to be run by workers: with a queue
/// (`McpEndpointBuilder::task_queue`), a task of a tool declared
/// `task = optional | required` is stored, handed to the queue as a
/// [`TaskJob`] (`mcp::amqp::AmqpTaskQueue`: a message broker), and run by a
/// worker (`McpEndpoint::run_queued_task`) through the same tool-call path,
/// its questions and its end recorded in the shared task store. The seam an
/// in-memory queue plugs into in tests.
pub trait TaskQueue: Send + Sync + 'static {
    /// Hands `job` over, durably: `Ok` only once it is safe (for a broker:
    /// confirmed by it), since the client is then told the task exists.
    fn publish<'a>(&'a self, job: &'a TaskJob) -> Pin<Box<dyn Future<Output = Result<(), QueueError>> + Send + 'a>>;
}

impl std::fmt::Debug for dyn TaskQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TaskQueue")
    }
}

/// What became of a queued task on a worker
/// (`McpEndpoint::run_queued_task`), which decides what becomes of its
/// message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueuedRun {
    /// The task ran and its end is recorded (or it had ended, or expired,
    /// before it ran): the message is done.
    Done(&'static str),
    /// The task store did not answer: try the message again later.
    Retry(String),
    /// The message does not fit its task (another owner or tool, an
    /// unknown revision): never run.
    Refused(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job() -> TaskJob {
        let identity = Identity::new("alice").with_scopes(["catalog:read"]).with_client_id("app").with("t", "1");
        TaskJob {
            v: TASK_JOB_FORMAT,
            task_id: "abc".into(),
            tool: "Catalog.reindex".into(),
            version: 1,
            protocol: "2026-07-28".into(),
            arguments: json!({"pause_ms": 5}).as_object().cloned().unwrap_or_default(),
            owner: Some("alice".into()),
            identity: Some(identity.clone()),
            language: "uk".into(),
            capabilities: Some(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})),
            client_info: Some(json!({"name": "c", "version": "1"})),
            peer: Some([127, 0, 0, 1].into()),
            input_bytes: 15,
            issued_at: 1_767_225_600_000,
        }
    }

    #[test]
    fn a_job_decodes_as_it_was_encoded() {
        let job = job();
        let body = job.encode().unwrap();
        assert_eq!(TaskJob::decode(&body).unwrap(), job);
        let caller = job.caller().unwrap();
        assert_eq!(*caller, Identity::new("alice").with_scopes(["catalog:read"]).with_client_id("app").with("t", "1"));
        let anonymous = TaskJob { owner: None, identity: None, ..job };
        assert_eq!(TaskJob::decode(&anonymous.encode().unwrap()).unwrap().caller(), None);
    }

    #[test]
    fn odd_messages_are_refused() {
        let body = serde_json::to_value(job()).unwrap();
        let decode = |value: &Value| TaskJob::decode(&serde_json::to_vec(value).unwrap());
        let mut extra = body.clone();
        extra["more"] = json!(1);
        assert!(decode(&extra).is_err());
        let mut other = body.clone();
        other["v"] = json!(2);
        assert!(decode(&other).unwrap_err().contains("format 2"));
        let mut stolen = body.clone();
        stolen["owner"] = json!("mallory");
        assert!(decode(&stolen).unwrap_err().contains("owner"));
        let mut empty = body.clone();
        empty["taskId"] = json!("");
        assert!(decode(&empty).is_err());
        assert!(TaskJob::decode(b"\x00garbage").is_err());
    }
}
