//! The fixtures that ask the client during a call: sampling and
//! elicitation (the handshake era, on the call's stream) and the
//! input-required rounds of 2026-07-28. One API serves both: each method
//! asks through `mcp::AskClient`, and the transport decides how.

use mcp::{AskClient, Content, Context, PromptMessage, mcp_prompt, mcp_tool};
use rpc::RpcError;
use serde_json::{Value, json};

use crate::services::Conformance;

/// The fixtures that ask.
#[derive(Debug, Default)]
pub struct Asking;

/// A one-field form.
fn form(field: &str) -> Value {
    json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]})
}

/// The text of a sampled message (`CreateMessageResult.content.text`).
fn sampled_text(result: &Value) -> String {
    result["content"]["text"].as_str().unwrap_or_default().to_owned()
}

/// A sampling request of one user message.
fn ask_model(text: &str) -> Value {
    json!({"messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": 100})
}

#[rpc::service(alias = "", groups(Conformance))]
impl Asking {
    /// Asks the client's model to answer `prompt`.
    ///
    /// Fixture of the `tools-call-sampling` scenario.
    ///
    /// # Arguments
    /// * `prompt` - The prompt to send to the LLM
    #[mcp_tool(title = "Sampling", read_only_hint = true, open_world_hint = false, requires_client(sampling))]
    pub async fn test_sampling(&self, ctx: Context, prompt: String) -> Result<Content, RpcError> {
        let result = ctx.sample("answer", ask_model(&prompt)).await?;
        Ok(Content::text(format!("LLM response: {}", sampled_text(&result))))
    }

    /// Asks the user for a username and an email address.
    ///
    /// Fixture of the `tools-call-elicitation` scenario.
    ///
    /// # Arguments
    /// * `message` - The message to show the user
    #[mcp_tool(title = "Elicitation", read_only_hint = true, open_world_hint = false, requires_client(elicitation))]
    pub async fn test_elicitation(&self, ctx: Context, message: String) -> Result<Content, RpcError> {
        let schema = json!({
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"}
            },
            "required": ["username", "email"]
        });
        let answer = ctx.elicit("user", &message, schema).await?;
        Ok(Content::text(format!("User response: {}", json!(answer))))
    }

    /// Asks with a default value for every primitive type (SEP-1034).
    ///
    /// Fixture of the `elicitation-sep1034-defaults` scenario.
    #[mcp_tool(
        title = "Elicitation defaults",
        read_only_hint = true,
        open_world_hint = false,
        requires_client(elicitation)
    )]
    pub async fn test_elicitation_sep1034_defaults(&self, ctx: Context) -> Result<Content, RpcError> {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "default": true}
            }
        });
        let answer = ctx.elicit("profile", "Review your profile.", schema).await?;
        Ok(Content::text(format!(
            "Elicitation completed: action={}, content={}",
            json!(answer.action).as_str().unwrap_or_default(),
            json!(answer.content)
        )))
    }

    /// Asks with every kind of enum (SEP-1330).
    ///
    /// Fixture of the `elicitation-sep1330-enums` scenario.
    #[mcp_tool(
        title = "Elicitation enums",
        read_only_hint = true,
        open_world_hint = false,
        requires_client(elicitation)
    )]
    pub async fn test_elicitation_sep1330_enums(&self, ctx: Context) -> Result<Content, RpcError> {
        let schema = json!({
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}
                ]}}
            }
        });
        let answer = ctx.elicit("choices", "Choose.", schema).await?;
        Ok(Content::text(format!("Elicitation completed: {}", json!(answer))))
    }

    /// Asks for an elicitation: in 2026-07-28 an input-required result,
    /// never a request on the stream.
    ///
    /// Fixture of the `server-stateless` scenario's stream check.
    #[mcp_tool(
        title = "Streaming elicitation",
        read_only_hint = true,
        open_world_hint = false,
        requires_client(elicitation)
    )]
    pub async fn test_streaming_elicitation(&self, ctx: Context) -> Result<Content, RpcError> {
        let answer = ctx.elicit("name", "What is your name?", form("name")).await?;
        Ok(Content::text(format!("Hello, {}!", answer.accepted_str("name").unwrap_or("stranger"))))
    }

    /// Asks the user's name (key `user_name`).
    ///
    /// Fixture of the `input-required-result-basic-elicitation` scenario.
    #[mcp_tool(title = "Input required: elicitation", read_only_hint = true, open_world_hint = false)]
    pub async fn test_input_required_result_elicitation(&self, ctx: Context) -> Result<Content, RpcError> {
        let answer = ctx.elicit("user_name", "What is your name?", form("name")).await?;
        Ok(Content::text(format!("Hello, {}!", answer.accepted_str("name").unwrap_or("stranger"))))
    }

    /// Asks the client's model a question (key `capital_question`).
    ///
    /// Fixture of the `input-required-result-basic-sampling` scenario.
    #[mcp_tool(title = "Input required: sampling", read_only_hint = true, open_world_hint = false)]
    pub async fn test_input_required_result_sampling(&self, ctx: Context) -> Result<Content, RpcError> {
        let result = ctx.sample("capital_question", ask_model("What is the capital of France?")).await?;
        Ok(Content::text(format!("The model answered: {}", sampled_text(&result))))
    }

    /// Asks for the client's roots (key `client_roots`).
    ///
    /// Fixture of the `input-required-result-basic-list-roots` scenario.
    #[mcp_tool(title = "Input required: roots", read_only_hint = true, open_world_hint = false)]
    pub async fn test_input_required_result_list_roots(&self, ctx: Context) -> Result<Content, RpcError> {
        let roots = ctx.list_roots("client_roots").await?;
        let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
        Ok(Content::text(format!("Client roots: {}", uris.join(", "))))
    }

    /// Asks a question whose answer comes back with the sealed
    /// `requestState` of the round.
    ///
    /// Fixture of the `input-required-result-request-state` scenario.
    #[mcp_tool(title = "Input required: request state", read_only_hint = true, open_world_hint = false)]
    pub async fn test_input_required_result_request_state(&self, ctx: Context) -> Result<Content, RpcError> {
        let answer = ctx.elicit("confirmation", "Confirm to continue.", form("confirm")).await?;
        Ok(Content::text(format!("state-ok: the request state was verified; answer {}", json!(answer))))
    }

    /// Asks three things at once: an elicitation, a sampled message, the roots.
    ///
    /// Fixture of the `input-required-result-multiple-input-requests` scenario.
    #[mcp_tool(title = "Input required: several inputs", read_only_hint = true, open_world_hint = false)]
    pub async fn test_input_required_result_multiple_inputs(&self, ctx: Context) -> Result<Content, RpcError> {
        let (user, greeting, roots) = futures_util::future::join3(
            ctx.elicit("user_info", "What is your name?", form("name")),
            ctx.sample("greeting", ask_model("Say hello.")),
            ctx.list_roots("roots"),
        )
        .await;
        let (user, greeting, roots) = (user?, greeting?, roots?);
        Ok(Content::text(format!(
            "name={}, greeting={}, roots={}",
            user.accepted_str("name").unwrap_or_default(),
            sampled_text(&greeting),
            roots.len()
        )))
    }

    /// Asks in two rounds: step 1, then step 2.
    ///
    /// Fixture of the `input-required-result-multi-round` scenario.
    #[mcp_tool(title = "Input required: two rounds", read_only_hint = true, open_world_hint = false)]
    pub async fn test_input_required_result_multi_round(&self, ctx: Context) -> Result<Content, RpcError> {
        let name = ctx.elicit("step1", "Step 1: What is your name?", form("name")).await?;
        let color = ctx.elicit("step2", "Step 2: What is your favourite colour?", form("color")).await?;
        Ok(Content::text(format!(
            "Completed both steps: name={}, color={}",
            name.accepted_str("name").unwrap_or_default(),
            color.accepted_str("color").unwrap_or_default()
        )))
    }

    /// Asks once; a `requestState` changed by the client is refused.
    ///
    /// Fixture of the `input-required-result-tampered-state` scenario.
    #[mcp_tool(title = "Input required: tampered state", read_only_hint = true, open_world_hint = false)]
    pub async fn test_input_required_result_tampered_state(&self, ctx: Context) -> Result<Content, RpcError> {
        let answer = ctx.elicit("confirm", "Confirm.", form("confirm")).await?;
        Ok(Content::text(format!("Confirmed: {}", json!(answer))))
    }

    /// Asks only what the client declared: elicitation when it can, and
    /// sampling when it can.
    ///
    /// Fixture of the `input-required-result-capability-check` scenario.
    #[mcp_tool(title = "Input required: capabilities", read_only_hint = true, open_world_hint = false)]
    pub async fn test_input_required_result_capabilities(&self, ctx: Context) -> Result<Content, RpcError> {
        let name = if ctx.client_has("elicitation") {
            ctx.elicit("user_name", "What is your name?", form("name")).await?.accepted_str("name").map(str::to_owned)
        } else {
            None
        };
        let answer = if ctx.client_has("sampling") {
            Some(sampled_text(&ctx.sample("question", ask_model("Say hello.")).await?))
        } else {
            None
        };
        Ok(Content::text(format!("name={name:?}, answer={answer:?}")))
    }

    /// A prompt that asks what context to use (key `user_context`).
    ///
    /// Fixture of the `input-required-result-non-tool-request` scenario.
    #[mcp_prompt(title = "Input required: prompt")]
    pub async fn test_input_required_result_prompt(&self, ctx: Context) -> Result<Vec<PromptMessage>, RpcError> {
        let answer = ctx.elicit("user_context", "What context should the prompt use?", form("context")).await?;
        let context = answer.accepted_str("context").unwrap_or("none").to_owned();
        Ok(vec![PromptMessage::user(Content::text(format!("Answer with this context in mind: {context}")))])
    }
}
