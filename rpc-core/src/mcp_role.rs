//! What a method is to MCP: a tool (the default), a resource or resource
//! template, a prompt, or the completion provider of an argument; set with
//! `#[mcp_tool]`, `#[mcp_resource]`, `#[mcp_prompt]` and `#[mcp_complete]`
//! and checked at compile time. Over JSON-RPC every kind is a method.

/// A method's MCP kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpRole {
    /// A tool (`tools/list`, `tools/call`).
    Tool,
    /// A resource (`resources/list`) or, when its URI has variables, a
    /// resource template (`resources/templates/list`), read with
    /// `resources/read`.
    Resource(ResourceSpec),
    /// A prompt (`prompts/list`, `prompts/get`).
    Prompt(PromptSpec),
    /// Suggestions for one argument of a prompt or one variable of a
    /// resource template (`completion/complete`).
    Completion(CompletionSpec),
}

/// `#[mcp_resource(uri = "...", ...)]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceSpec {
    /// The URI, or an RFC 6570 template (levels 1 to 3) whose variables are
    /// parameters of the method.
    pub uri: &'static str,
    /// The resource's name (default: the method's name).
    pub name: Option<&'static str>,
    /// Human-readable title.
    pub title: Option<&'static str>,
    /// The MIME type of its contents.
    pub mime_type: Option<&'static str>,
}

impl ResourceSpec {
    /// Whether the URI is a template (has a `{variable}`).
    pub fn is_template(&self) -> bool {
        self.uri.contains('{')
    }
}

/// `#[mcp_prompt(...)]`: its arguments are the method's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptSpec {
    /// The prompt's name (default: the method's name).
    pub name: Option<&'static str>,
    /// Human-readable title.
    pub title: Option<&'static str>,
}

/// `#[mcp_complete(prompt = "...", argument = "...")]` or
/// `#[mcp_complete(resource = "...", argument = "...")]`: the method takes
/// the partial value as `value` (and other arguments already given, by
/// name) and returns the suggestions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletionSpec {
    /// What the argument belongs to.
    pub target: CompletionTarget,
    /// The argument (or template variable) completed.
    pub argument: &'static str,
}

/// The prompt or resource template a completion belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompletionTarget {
    /// A prompt, by name (`ref/prompt`).
    Prompt(&'static str),
    /// A resource template, by its URI template (`ref/resource`).
    Resource(&'static str),
}
