//! The prompts of one API group and version: methods marked
//! `#[mcp_prompt]`. The method's parameters are the prompt's arguments
//! (strings on the wire, converted to the parameters' types); its result
//! becomes the prompt's messages:
//!
//! * a string: one user message with that text;
//! * [`PromptMessage`] or a `Vec` of them: as they are;
//! * any other value: one user message with its JSON as text.
//!
//! ```
//! let m = mcp::PromptMessage::user(mcp::Content::text("Review product 7."));
//! assert_eq!(
//!     serde_json::to_value(&m).unwrap(),
//!     serde_json::json!({"role": "user", "content": {"type": "text", "text": "Review product 7."}})
//! );
//! ```

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use rpc::i18n::{Field, Language};
use rpc::{McpRole, Method, PromptSpec};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::config::McpConfig;
use crate::content::Content;
use crate::markers;
use crate::pages::ListTexts;
use crate::protocol::ProtocolVersion;
use crate::visibility::ScopedList;

/// Who speaks a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

impl PromptMessage {
    /// A user message.
    pub fn user(content: Content) -> Self {
        PromptMessage { role: Role::User, content }
    }

    /// An assistant message.
    pub fn assistant(content: Content) -> Self {
        PromptMessage { role: Role::Assistant, content }
    }
}

impl JsonSchema for PromptMessage {
    fn schema_name() -> Cow<'static, str> {
        "McpPromptMessage".into()
    }

    fn schema_id() -> Cow<'static, str> {
        "mcp::PromptMessage".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A prompt message: a role (`user`, `assistant`) and MCP content.",
            "type": "object",
            "properties": {
                "role": {"enum": ["user", "assistant"]},
                "content": {"type": "object"}
            },
            "required": ["role", "content"],
            "x-mcp-prompt-message": true
        })
    }
}

/// How a prompt method's result becomes messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    Text,
    Messages,
    Json,
}

/// One prompt.
#[derive(Debug, Clone)]
pub struct Prompt {
    /// The method behind it.
    pub method: Arc<Method>,
    /// Its annotation.
    pub spec: PromptSpec,
    body: Body,
}

impl Prompt {
    /// The prompt's name: `#[mcp_prompt(name)]`, else the method's.
    pub fn name(&self) -> &'static str {
        self.spec.name.unwrap_or(self.method.name())
    }

    /// The `messages` of the result.
    pub fn messages(&self, result: &RawValue) -> Result<Value, String> {
        let user_text = |text: &str| json!([{"role": "user", "content": {"type": "text", "text": text}}]);
        match self.body {
            Body::Text => {
                let text: String = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
                Ok(user_text(&text))
            }
            Body::Json => Ok(user_text(result.get())),
            Body::Messages => {
                let value: Value = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
                Ok(match value {
                    Value::Array(items) => Value::Array(items),
                    one => Value::Array(vec![one]),
                })
            }
        }
    }
}

/// The prompts of one version of a group.
#[derive(Debug, Default)]
pub struct PromptSet {
    prompts: HashMap<&'static str, Prompt>,
    pages: ScopedList,
}

impl PromptSet {
    /// The prompts among `methods`; with `scoped_callers`, a caller's list
    /// holds what its scopes allow.
    pub fn build(
        methods: &[&Arc<Method>],
        config: &McpConfig,
        texts: &Arc<ListTexts>,
        scoped_callers: bool,
    ) -> PromptSet {
        let mut prompts: Vec<Prompt> = methods
            .iter()
            .filter_map(|m| {
                let McpRole::Prompt(spec) = m.descriptor().mcp else { return None };
                Some(Prompt { method: Arc::clone(m), spec, body: body_of(m) })
            })
            .collect();
        prompts.sort_by_key(Prompt::name);
        let listed = prompts.clone();
        let needs = |p: &Prompt| p.method.descriptor().scopes;
        let write = |p: &Prompt, texts: &ListTexts, language, version| prompt_json(p, language, version, texts);
        let pages = ScopedList::build("prompts", texts, config, listed, needs, write, scoped_callers);
        PromptSet { prompts: prompts.into_iter().map(|p| (p.name(), p)).collect(), pages }
    }

    /// Whether there is no prompt.
    pub fn is_empty(&self) -> bool {
        self.prompts.is_empty()
    }

    /// The prompt named `name`.
    pub fn get(&self, name: &str) -> Option<&Prompt> {
        self.prompts.get(name)
    }

    /// The `prompts/list` pages, per caller.
    pub fn list(&self) -> &ScopedList {
        &self.pages
    }
}

fn prompt_json(p: &Prompt, language: Language, version: ProtocolVersion, texts: &ListTexts) -> Value {
    let name = p.method.name();
    let text = |field| texts.translations.text(Some(&texts.group), language, name, field);
    let mut obj = Map::new();
    obj.insert("name".into(), json!(p.name()));
    if version.has_structured_output()
        && let Some(title) = text(Field::Title).or(p.spec.title)
    {
        obj.insert("title".into(), json!(title));
    }
    let description = text(Field::Description).map(str::to_owned).or_else(|| p.method.full_description());
    if let Some(description) = description {
        obj.insert("description".into(), json!(description));
    }
    let arguments: Vec<Value> = p
        .method
        .descriptor()
        .params
        .iter()
        .filter(|a| a.is_param)
        .map(|a| {
            let mut arg = Map::new();
            arg.insert("name".into(), json!(a.name));
            if let Some(description) = a.description {
                arg.insert("description".into(), json!(description));
            }
            arg.insert("required".into(), json!(a.required));
            Value::Object(arg)
        })
        .collect();
    obj.insert("arguments".into(), Value::Array(arguments));
    Value::Object(obj)
}

fn body_of(method: &Method) -> Body {
    let Some(result) = &method.schemas().result else { return Body::Json };
    if result.get("type") == Some(&json!("string")) {
        Body::Text
    } else if markers::marked(result, markers::PROMPT_MESSAGE) {
        Body::Messages
    } else {
        Body::Json
    }
}
