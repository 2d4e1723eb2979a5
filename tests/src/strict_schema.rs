//! A strict check of the JSON Schemas a server publishes (MCP tool
//! `inputSchema`/`outputSchema`): valid against the JSON Schema 2020-12
//! meta-schema, no keyword outside the 2020-12 vocabularies (unless the
//! caller allows it, e.g. an MCP extension), no `format` outside the
//! format vocabulary, and every `$ref` resolvable inside the schema.
//! Strict clients (Ajv in strict mode, as the TypeScript SDK and the MCP
//! Inspector use it) warn about or reject anything else.

use serde_json::{Map, Value};

/// The keywords of the JSON Schema 2020-12 vocabularies.
#[rustfmt::skip]
pub const KEYWORDS: &[&str] = &[
    // core
    "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs",
    // applicator
    "prefixItems", "items", "contains", "additionalProperties", "properties", "patternProperties",
    "dependentSchemas", "propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not",
    // unevaluated
    "unevaluatedItems", "unevaluatedProperties",
    // validation
    "type", "const", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
    "maxProperties", "minProperties", "required", "dependentRequired",
    // meta-data
    "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
    // format-annotation
    "format",
    // content
    "contentEncoding", "contentMediaType", "contentSchema",
];

/// Every problem of `schema` (empty when it passes), each with its JSON pointer.
pub fn problems(schema: &Value, extra_keywords: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    if let Err(e) = jsonschema::meta::validate(schema) {
        out.push(format!("not a valid JSON Schema: {e}"));
    }
    walk(schema, schema, "", extra_keywords, &mut out);
    out
}

fn walk(root: &Value, schema: &Value, at: &str, extra: &[&str], out: &mut Vec<String>) {
    let map = match schema {
        Value::Object(map) => map,
        Value::Bool(_) => return,
        other => {
            out.push(format!("{at}: a schema must be an object or a boolean, found {other}"));
            return;
        }
    };
    for (key, value) in map {
        let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
        if !KEYWORDS.contains(&key.as_str()) && !extra.contains(&key.as_str()) {
            out.push(format!("{here}: unknown keyword `{key}`"));
            continue;
        }
        match key.as_str() {
            "format" => match value.as_str() {
                Some(f) if rpc::schema::STANDARD_FORMATS.contains(&f) => {}
                _ => out.push(format!("{here}: `{value}` is not a format of the JSON Schema 2020-12 vocabulary")),
            },
            "$ref" => check_ref(root, value, &here, out),
            "items"
            | "additionalProperties"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "contains"
            | "propertyNames"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contentSchema" => walk(root, value, &here, extra, out),
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                for (i, item) in value.as_array().into_iter().flatten().enumerate() {
                    walk(root, item, &format!("{here}/{i}"), extra, out);
                }
            }
            "properties" | "patternProperties" | "$defs" | "dependentSchemas" => {
                for (name, item) in value.as_object().into_iter().flatten() {
                    walk(root, item, &format!("{here}/{name}"), extra, out);
                }
            }
            _ => {}
        }
    }
}

fn check_ref(root: &Value, reference: &Value, at: &str, out: &mut Vec<String>) {
    let Some(pointer) = reference.as_str().and_then(|r| r.strip_prefix('#')) else {
        out.push(format!("{at}: `{reference}` is not a reference inside the schema"));
        return;
    };
    if root.pointer(pointer).is_none() {
        out.push(format!("{at}: `{reference}` does not resolve"));
    }
}

/// The named schemas of `tools` (a `tools/list` result's `tools`) that fail the check.
pub fn tool_problems(tools: &[Value], extra_keywords: &[&str]) -> Map<String, Value> {
    let mut failing = Map::new();
    for tool in tools {
        let name = tool["name"].as_str().unwrap_or("?");
        for key in ["inputSchema", "outputSchema"] {
            if let Some(schema) = tool.get(key) {
                let found = problems(schema, extra_keywords);
                if !found.is_empty() {
                    failing.insert(format!("{name}.{key}"), Value::from(found));
                }
            }
        }
    }
    failing
}
