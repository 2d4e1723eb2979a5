//! How the MCP layer knows what a method returns: the schemas of its MCP
//! types ([`Content`](crate::Content), [`Blob`](crate::Blob),
//! [`ResourceContents`](crate::ResourceContents),
//! [`PromptMessage`](crate::PromptMessage)) carry a marker keyword, found
//! in a result schema directly, behind a `$ref`, or as the items of an array.

use serde_json::Value;

/// `Content`.
pub const CONTENT: &str = "x-mcp-content";
/// `Blob`.
pub const BLOB: &str = "x-mcp-blob";
/// `ResourceContents`.
pub const RESOURCE_CONTENTS: &str = "x-mcp-resource-contents";
/// `PromptMessage`.
pub const PROMPT_MESSAGE: &str = "x-mcp-prompt-message";

/// Whether a self-contained result schema is marked `marker` (one value,
/// or an array of them).
pub fn marked(schema: &Value, marker: &str) -> bool {
    let defs = schema.get("$defs");
    let resolve = |v: &'_ Value| -> Option<Value> {
        match v.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
            Some(name) => defs.and_then(|d| d.get(name)).cloned(),
            None => Some(v.clone()),
        }
    };
    let is_marked = |v: &Value| v.get(marker) == Some(&Value::Bool(true));
    let Some(root) = resolve(schema) else { return false };
    is_marked(&root) || root.get("items").and_then(resolve).is_some_and(|items| is_marked(&items))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn direct_behind_a_ref_or_as_items() {
        let one =
            json!({"$ref": "#/$defs/McpContent", "$defs": {"McpContent": {"type": "object", "x-mcp-content": true}}});
        let many = json!({"type": "array", "items": {"$ref": "#/$defs/McpContent"}, "$defs": {"McpContent": {"x-mcp-content": true}}});
        assert!(marked(&one, CONTENT));
        assert!(marked(&many, CONTENT));
        assert!(!marked(&many, BLOB));
        assert!(!marked(&json!({"type": "string"}), CONTENT));
        assert!(marked(&json!({"x-mcp-blob": true}), BLOB));
    }
}
