//! The fixtures of the tasks extension (`io.modelcontextprotocol/tasks`,
//! the suite's `tasks-*` scenarios): tools that run as tasks when the client
//! takes them, and one that does not.

use std::time::Duration;

use mcp::{AskClient, Content, Context, mcp_tool};
use rpc::RpcError;
use serde_json::{Value, json};

use crate::services::{Conformance, IntentionalError};

/// The task fixtures.
#[derive(Debug, Default)]
pub struct TaskFixtures;

/// A confirmation form.
fn confirm_form() -> Value {
    json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]})
}

#[rpc::service(alias = "", groups(Conformance))]
impl TaskFixtures {
    /// Greets `name` at once (never a task).
    ///
    /// # Arguments
    /// * `name` - Who to greet
    #[mcp_tool(title = "Greet", read_only_hint = true, open_world_hint = false)]
    pub fn greet(&self, name: String) -> Content {
        Content::text(format!("Hello, {name}!"))
    }

    /// Works for `seconds` seconds, then reports what it computed.
    ///
    /// # Arguments
    /// * `seconds` - How long to work (0: at once)
    /// * `label` - A label repeated in the result
    #[mcp_tool(title = "Slow compute", read_only_hint = true, open_world_hint = false, task = optional)]
    pub async fn slow_compute(&self, #[rpc(range(max = 600))] seconds: u64, label: Option<String>) -> Content {
        tokio::time::sleep(Duration::from_secs(seconds)).await;
        Content::text(format!("computed {} after {seconds} s", label.unwrap_or_default()))
    }

    /// Works a second, then fails with a tool error (`isError: true`).
    #[mcp_tool(title = "Failing job", read_only_hint = true, open_world_hint = false, task = required)]
    pub async fn failing_job(&self) -> Result<Content, IntentionalError> {
        tokio::time::sleep(Duration::from_secs(1)).await;
        Err(IntentionalError)
    }

    /// Fails with a protocol error (the task ends `failed`).
    #[mcp_tool(title = "Protocol error job", read_only_hint = true, open_world_hint = false, task = optional)]
    pub async fn protocol_error_job(&self) -> Result<Content, RpcError> {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Err(RpcError::new(rpc::error::code::INTERNAL_ERROR, "the job broke down"))
    }

    /// Asks the user to confirm, then deletes `filename` (nothing, really).
    ///
    /// The first tool listed: suites that call "the first tool" without
    /// arguments get a call that works (a default file name).
    ///
    /// # Arguments
    /// * `filename` - The file to delete
    #[mcp_tool(title = "Confirm delete", destructive_hint = true, open_world_hint = false, task = optional)]
    pub async fn confirm_delete(
        &self,
        ctx: Context,
        #[rpc(default = "untitled.txt")] filename: String,
    ) -> Result<Content, RpcError> {
        let answer = ctx.elicit("confirm", &format!("Delete {filename}?"), confirm_form()).await?;
        Ok(Content::text(if answer.accepted_bool("confirm") {
            format!("deleted {filename}")
        } else {
            format!("kept {filename}")
        }))
    }

    /// Asks two questions at once, then reports both answers.
    #[mcp_tool(title = "Multiple inputs", read_only_hint = true, open_world_hint = false, task = optional)]
    pub async fn multi_input(&self, ctx: Context) -> Result<Content, RpcError> {
        let form = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let (first, second) = futures_util::future::join(
            ctx.elicit("first", "First name?", form.clone()),
            ctx.elicit("second", "Second name?", form),
        )
        .await;
        let name = |answer: Result<mcp::Elicitation, RpcError>| -> Result<String, RpcError> {
            Ok(answer?.accepted_str("name").unwrap_or_default().to_owned())
        };
        Ok(Content::text(format!("got {} and {}", name(first)?, name(second)?)))
    }

    /// Asks the user's name in the request's own rounds, then starts a task
    /// that greets them.
    #[mcp_tool(title = "Tool with task", read_only_hint = true, open_world_hint = false, task = required, starts_task)]
    pub async fn test_tool_with_task(&self, ctx: Context) -> Result<Content, RpcError> {
        let form = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
        let answer = ctx.elicit("user_name", "What is your name?", form).await?;
        let name = answer.accepted_str("name").unwrap_or("stranger").to_owned();
        ctx.start_task().await?;
        tokio::time::sleep(Duration::from_millis(200)).await;
        Ok(Content::text(format!("Hello, {name}! (greeted from a task)")))
    }
}
