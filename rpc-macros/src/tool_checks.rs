//! Checks of `#[mcp_tool(...)]`: hints that contradict each other, the
//! task kind, mirrored header names, and a hand-written input schema.

use crate::attrs::ToolArgs;
use crate::errors::Errors;
use crate::param::Param;

/// The client capabilities a tool may require: the ones an MCP client
/// declares and a session keeps (`mcp::session::capabilities`'s
/// `KNOWN_CAPABILITIES`, which must list the same names).
const CLIENT_CAPABILITIES: &[&str] = &["sampling", "elicitation", "roots", "experimental"];

/// The `TaskSupport` variant `task = ...` names (`Forbidden` when unset).
pub fn task_variant(tool: &ToolArgs) -> Result<&'static str, syn::Error> {
    const KINDS: [(&str, &str); 3] = [("forbidden", "Forbidden"), ("optional", "Optional"), ("required", "Required")];
    let Some(expr) = &tool.task else { return Ok("Forbidden") };
    let word = match expr {
        syn::Expr::Path(p) => p.path.get_ident().map(ToString::to_string),
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
        _ => None,
    };
    let found = word.as_deref().and_then(|w| KINDS.iter().find(|(k, _)| *k == w));
    match (found, word) {
        (Some((_, variant)), _) => Ok(variant),
        (None, word) => {
            let hint =
                word.map(|w| crate::suggest::did_you_mean(&w, KINDS.iter().map(|(k, _)| *k))).unwrap_or_default();
            Err(syn::Error::new_spanned(
                expr,
                format!(
                    "`task` is `optional` (a task for clients that take tasks) or `required` (only as a task){hint}"
                ),
            ))
        }
    }
}

/// A read-only tool cannot also be destructive; header names are unique.
pub fn check_hints(tool: &ToolArgs, errors: &mut Errors) {
    match task_variant(tool) {
        Err(e) => errors.push(e),
        Ok("Forbidden") if tool.starts_task.is_present() => errors.push(syn::Error::new(
            tool.starts_task.span(),
            "`starts_task` needs the tool to run as a task: add `task = optional` or `task = required`",
        )),
        Ok(_) => {}
    }
    let mut required: Vec<String> = Vec::new();
    for path in tool.requires_client.iter() {
        let Some(ident) = path.get_ident() else {
            errors.push(syn::Error::new_spanned(
                path,
                "`requires_client(...)` lists client capability names such as `sampling`, `elicitation`, `roots`",
            ));
            continue;
        };
        let name = ident.to_string();
        if !CLIENT_CAPABILITIES.contains(&name.as_str()) {
            let hint = crate::suggest::did_you_mean(&name, CLIENT_CAPABILITIES.iter().copied());
            errors.push(syn::Error::new_spanned(
                ident,
                format!(
                    "`{name}` is not a client capability: a client never declares it, so the tool could never be \
                     called; the capabilities are `sampling`, `elicitation`, `roots` and `experimental`{hint}"
                ),
            ));
        } else if required.contains(&name) {
            errors.push(syn::Error::new_spanned(ident, format!("`{name}` is listed twice: remove one")));
        } else {
            required.push(name);
        }
    }
    if let (Some(ro), Some(de)) = (tool.read_only_hint, tool.destructive_hint)
        && ro.value
        && de.value
    {
        errors.push(syn::Error::new(
            de.span,
            "a read-only tool cannot be destructive: `destructive_hint` only applies when `read_only_hint` is false; \
             remove one of them",
        ));
    }
}

/// Where a hand-written input schema comes from.
pub enum InputSchema {
    /// A file, by its absolute path (`include_str!`, so edits rebuild).
    File(String),
    /// Inline JSON.
    Inline(String),
}

/// Reads the JSON `key = "..."` names: inline JSON (starting with `{`), or
/// a file relative to the crate's manifest.
fn load_json(literal: &crate::values::Str, key: &str, errors: &mut Errors) -> Option<(InputSchema, serde_json::Value)> {
    let value = literal.value();
    let (source, text) = if value.trim_start().starts_with('{') {
        (InputSchema::Inline(value.clone()), value)
    } else {
        let base = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        let path = std::path::Path::new(&base).join(&value);
        match std::fs::read_to_string(&path) {
            Ok(text) => (InputSchema::File(path.display().to_string()), text),
            Err(e) => {
                errors.push(syn::Error::new(
                    literal.span(),
                    format!(
                        "cannot read {} ({e}): give a JSON file relative to the crate's Cargo.toml, \
                         or the JSON itself (`{key} = r#\"{{...}}\"#`)",
                        path.display()
                    ),
                ));
                return None;
            }
        }
    };
    match serde_json::from_str(&text) {
        Ok(json) => Some((source, json)),
        Err(e) => {
            errors.push(syn::Error::new(literal.span(), format!("`{key}` is not JSON: {e}")));
            None
        }
    }
}

/// `output_schema = "..."`: the schema of the method's result (a JSON
/// object), published as `outputSchema.properties.result`.
pub fn output_schema(tool: &ToolArgs, errors: &mut Errors) -> Option<InputSchema> {
    let literal = tool.output_schema.as_ref()?;
    let (source, schema) = load_json(literal, "output_schema", errors)?;
    if !schema.is_object() {
        errors.push(syn::Error::new(literal.span(), "an output schema is a JSON object (the schema of the result)"));
        return None;
    }
    Some(source)
}

/// `meta = r#"{...}"#`: the tool's `_meta`, a JSON object.
pub fn meta(tool: &ToolArgs, errors: &mut Errors) -> Option<String> {
    let literal = tool.meta.as_ref()?;
    match serde_json::from_str::<serde_json::Value>(&literal.value()) {
        Ok(serde_json::Value::Object(_)) => Some(literal.value()),
        Ok(_) => {
            errors.push(syn::Error::new(literal.span(), "`meta` is a JSON object (`meta = r#\"{\"key\": 1}\"#`)"));
            None
        }
        Err(e) => {
            errors.push(syn::Error::new(literal.span(), format!("`meta` is not JSON: {e}")));
            None
        }
    }
}

/// `icon = "https://..."` (repeatable): an HTTPS URL or a `data:image/` URI.
pub fn icons(tool: &ToolArgs, errors: &mut Errors) -> Vec<String> {
    let mut out = Vec::new();
    for literal in &tool.icon {
        let src = literal.value();
        if src.starts_with("https://") || src.starts_with("data:image/") {
            out.push(src);
        } else {
            errors.push(syn::Error::new(
                literal.span(),
                "an icon is an `https://` URL or a `data:image/...` URI (clients fetch nothing else)",
            ));
        }
    }
    out
}

/// Reads and checks `input_schema = "..."`: JSON, an object schema of
/// `"type": "object"`, whose `properties` are exactly the method's parameters.
pub fn input_schema(tool: &ToolArgs, params: &[Param], errors: &mut Errors) -> Option<InputSchema> {
    let literal = tool.input_schema.as_ref()?;
    let (source, schema) = load_json(literal, "input_schema", errors)?;
    if schema.get("type").and_then(serde_json::Value::as_str) != Some("object") {
        errors.push(syn::Error::new(
            literal.span(),
            "an input schema is an object schema: its root needs `\"type\": \"object\"`",
        ));
        return None;
    }
    let names: Vec<&str> = params.iter().filter(|p| !crate::role::is_context(p)).map(|p| p.name.as_str()).collect();
    let empty = serde_json::Map::new();
    let properties = schema.get("properties").and_then(serde_json::Value::as_object).unwrap_or(&empty);
    let mut ok = true;
    // A misspelt property is one mistake: its parameter is not reported missing too.
    let mut meant: Vec<&str> = Vec::new();
    for property in properties.keys() {
        if !names.contains(&property.as_str()) {
            let hint = crate::suggest::did_you_mean(property, names.iter().copied());
            if let Some(name) = names.iter().find(|n| hint.contains(&format!("`{n}`"))) {
                meant.push(name);
            }
            errors.push(syn::Error::new(
                literal.span(),
                format!("the input schema's property `{property}` is not a parameter of the method{hint}"),
            ));
            ok = false;
        }
    }
    for p in params.iter().filter(|p| !crate::role::is_context(p)) {
        if !properties.contains_key(&p.name) && !meant.contains(&p.name.as_str()) {
            errors.push(syn::Error::new(
                p.span,
                format!(
                    "parameter `{}` is not in the input schema's `properties`: clients could never give it",
                    p.name
                ),
            ));
            ok = false;
        }
    }
    ok.then_some(source)
}

/// Header names are case-insensitively unique within a tool (SEP-2243).
pub fn check_headers(params: &[Param], errors: &mut Errors) {
    let mut seen: Vec<(String, &str)> = Vec::new();
    for p in params {
        let Some((header, span)) = &p.header else { continue };
        let lower = header.to_ascii_lowercase();
        if let Some((_, first)) = seen.iter().find(|(h, _)| *h == lower) {
            errors.push(syn::Error::new(
                *span,
                format!("header `Mcp-Param-{header}` is already used by parameter `{first}`: name it with `header = \"...\"`"),
            ));
        } else {
            seen.push((lower, &p.name));
        }
    }
}
