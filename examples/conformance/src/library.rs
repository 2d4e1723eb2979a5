//! The resources, prompts and completion the conformance suite reads,
//! gets and completes, written as annotated methods like the tools.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use mcp::{Blob, Content, PromptMessage, mcp_complete, mcp_prompt, mcp_resource};
use serde_json::{Value, json};

use crate::services::{Conformance, RED_PIXEL_PNG};

/// Text of `test://static-text`.
pub const STATIC_TEXT: &str = "This is the content of the static text resource.";

/// What `test_prompt_with_arguments`' first argument completes to.
pub const ARG1_COMPLETIONS: [&str; 3] = ["paris", "park", "party"];

/// The resources, prompts and completions of the suite.
#[derive(Debug, Default)]
pub struct Library;

#[rpc::service(alias = "", groups(Conformance))]
impl Library {
    /// A static text resource.
    ///
    /// Fixture of the `resources-read-text` scenario.
    #[mcp_resource(uri = "test://static-text", name = "static-text", title = "Static text", mime_type = "text/plain")]
    pub fn static_text(&self) -> String {
        STATIC_TEXT.to_owned()
    }

    /// A static binary resource: a 1x1 red PNG.
    ///
    /// Fixture of the `resources-read-binary` scenario.
    #[mcp_resource(
        uri = "test://static-binary",
        name = "static-binary",
        title = "Static binary",
        mime_type = "image/png"
    )]
    pub fn static_binary(&self) -> Blob {
        Blob::new(STANDARD.decode(RED_PIXEL_PNG).unwrap_or_default())
    }

    /// A resource that changes: clients subscribe to it.
    ///
    /// Fixture of the `resources-subscribe` and `resources-unsubscribe` scenarios.
    #[mcp_resource(uri = "test://watched-resource", name = "watched-resource", mime_type = "text/plain")]
    pub fn watched_resource(&self) -> String {
        "The watched resource's current content.".to_owned()
    }

    /// Data for one id, as JSON.
    ///
    /// Fixture of the `resources-templates-read` scenario.
    ///
    /// # Arguments
    /// * `id` - The id the data is for
    #[mcp_resource(uri = "test://template/{id}/data", name = "template-data", mime_type = "application/json")]
    pub fn template_data(&self, id: String) -> Value {
        json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
    }

    /// A prompt without arguments.
    ///
    /// Fixture of the `prompts-get-simple` scenario.
    #[mcp_prompt(title = "Simple prompt")]
    pub fn test_simple_prompt(&self) -> String {
        "This is a simple prompt for testing.".to_owned()
    }

    /// A prompt with two arguments.
    ///
    /// Fixture of the `prompts-get-with-args` scenario.
    ///
    /// # Arguments
    /// * `arg1` - First test argument
    /// * `arg2` - Second test argument
    #[mcp_prompt(title = "Prompt with arguments")]
    pub fn test_prompt_with_arguments(&self, arg1: String, arg2: String) -> String {
        format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
    }

    /// A prompt that embeds a resource.
    ///
    /// Fixture of the `prompts-get-embedded-resource` scenario.
    ///
    /// # Arguments
    /// * `resourceUri` - URI of the resource to embed
    #[mcp_prompt(title = "Prompt with an embedded resource")]
    #[allow(non_snake_case)]
    pub fn test_prompt_with_embedded_resource(&self, resourceUri: String) -> Vec<PromptMessage> {
        vec![
            PromptMessage::user(Content::embedded_text(
                resourceUri,
                "text/plain",
                "Embedded resource content for testing.",
            )),
            PromptMessage::user(Content::text("Please process the embedded resource above.")),
        ]
    }

    /// A prompt with an image.
    ///
    /// Fixture of the `prompts-get-with-image` scenario.
    #[mcp_prompt(title = "Prompt with an image")]
    pub fn test_prompt_with_image(&self) -> Vec<PromptMessage> {
        vec![
            PromptMessage::user(Content::image(RED_PIXEL_PNG, "image/png")),
            PromptMessage::user(Content::text("Please analyze the image above.")),
        ]
    }

    /// Completes `arg1` of `test_prompt_with_arguments`: the known values
    /// starting with what was typed.
    ///
    /// Fixture of the `completion-complete` scenario.
    ///
    /// # Arguments
    /// * `value` - What the user typed so far
    #[mcp_complete(prompt = "test_prompt_with_arguments", argument = "arg1")]
    pub fn complete_arg1(&self, value: String) -> Vec<String> {
        ARG1_COMPLETIONS.iter().filter(|c| c.starts_with(&value)).map(|c| (*c).to_owned()).collect()
    }
}
