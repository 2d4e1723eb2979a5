//! Example values derived from JSON Schemas: what the try-it forms and the
//! Postman requests are prefilled with. Best effort: a value of the right
//! shape that respects the simple bounds (`minimum`, `minLength`,
//! `minItems`, formats, enums, defaults); never fails.

use serde_json::{Map, Value, json};

/// How deep references and nesting are followed (recursive schemas end here).
const MAX_DEPTH: usize = 8;

/// An example of `schema`; `$ref`s (`#/...`) are looked up in `root` (the
/// document holding the schema's definitions: the OpenRPC document, or the
/// schema itself for `#/$defs/...`).
pub fn example(schema: &Value, root: &Value) -> Value {
    example_at(schema, root, 0)
}

/// The example `params` object of a method: every required parameter
/// (`(name, required, schema)`) with an example value.
pub fn params_example<'a>(params: impl IntoIterator<Item = (&'a str, bool, &'a Value)>, root: &Value) -> Value {
    let object: Map<String, Value> = params
        .into_iter()
        .filter(|(_, required, _)| *required)
        .map(|(name, _, schema)| (name.to_owned(), example(schema, root)))
        .collect();
    Value::Object(object)
}

fn example_at(schema: &Value, root: &Value, depth: usize) -> Value {
    let Value::Object(schema) = schema else { return Value::Null };
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        let found = target.strip_prefix('#').and_then(|pointer| root.pointer(pointer));
        return found.map_or(Value::Null, |target| example_at(target, root, depth + 1));
    }
    for key in ["default", "const"] {
        if let Some(value) = schema.get(key) {
            return value.clone();
        }
    }
    for key in ["examples", "enum"] {
        if let Some(first) = schema.get(key).and_then(Value::as_array).and_then(|a| a.first()) {
            return first.clone();
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(variants) = schema.get(key).and_then(Value::as_array) {
            let not_null = variants.iter().find(|v| v.get("type").and_then(Value::as_str) != Some("null"));
            return not_null.map_or(Value::Null, |v| example_at(v, root, depth + 1));
        }
    }
    if let Some(first) = schema.get("allOf").and_then(Value::as_array).and_then(|a| a.first()) {
        return example_at(first, root, depth + 1);
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("null"),
        _ if schema.contains_key("properties") => "object",
        _ if schema.contains_key("items") => "array",
        _ => return Value::Null,
    };
    match kind {
        "string" => string_example(schema),
        "integer" | "number" => number_example(schema, kind == "integer"),
        "boolean" => Value::Bool(false),
        "array" => {
            let count = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0).min(3);
            let item = schema.get("items").map_or(Value::Null, |items| example_at(items, root, depth + 1));
            Value::Array((0..count).map(|_| item.clone()).collect())
        }
        "object" => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let required = schema.get("required").and_then(Value::as_array);
            let object: Map<String, Value> = required
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(|name| {
                    let value =
                        properties.and_then(|p| p.get(name)).map_or(Value::Null, |s| example_at(s, root, depth + 1));
                    (name.to_owned(), value)
                })
                .collect();
            Value::Object(object)
        }
        _ => Value::Null,
    }
}

fn string_example(schema: &Map<String, Value>) -> Value {
    let by_format = match schema.get("format").and_then(Value::as_str) {
        Some("date-time") => Some("2026-01-01T00:00:00Z"),
        Some("date") => Some("2026-01-01"),
        Some("time") => Some("12:00:00Z"),
        Some("email") => Some("user@example.com"),
        Some("uri" | "url") => Some("https://example.com/"),
        Some("uuid") => Some("00000000-0000-0000-0000-000000000000"),
        Some("ipv4") => Some("192.0.2.1"),
        Some("ipv6") => Some("2001:db8::1"),
        _ => None,
    };
    if let Some(text) = by_format {
        return json!(text);
    }
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0).min(64) as usize;
    let max = schema.get("maxLength").and_then(Value::as_u64).map_or(usize::MAX, |m| m as usize);
    let mut text = String::from("example");
    while text.chars().count() < min {
        text.push('x');
    }
    let text: String = text.chars().take(max.max(min)).collect();
    Value::String(text)
}

fn number_example(schema: &Map<String, Value>, integer: bool) -> Value {
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    let step = if integer { 1.0 } else { 0.5 };
    let mut value = 1.0_f64;
    if let Some(min) = bound("minimum") {
        value = value.max(min);
    }
    if let Some(min) = bound("exclusiveMinimum") {
        value = value.max(min + step);
    }
    if let Some(max) = bound("maximum") {
        value = value.min(max);
    }
    if let Some(max) = bound("exclusiveMaximum") {
        value = value.min(max - step);
    }
    if integer {
        let rounded = value.ceil();
        if rounded.abs() < 9.0e15 {
            return json!(rounded as i64);
        }
    }
    serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_bounds() {
        let root = json!({"components": {"schemas": {
            "Category": {"type": "object", "required": ["name", "children"], "properties": {
                "name": {"type": "string", "minLength": 10},
                "children": {"type": "array", "minItems": 1, "items": {"$ref": "#/components/schemas/Category"}}}}
        }}});
        let category = example(&json!({"$ref": "#/components/schemas/Category"}), &root);
        assert_eq!(category["name"], "examplexxx");
        assert!(category["children"][0]["children"].is_array(), "recursion is followed a few levels: {category}");
        assert_eq!(example(&json!({"type": "integer", "minimum": 5}), &root), json!(5));
        assert_eq!(example(&json!({"type": "integer", "maximum": -3}), &root), json!(-3));
        assert_eq!(example(&json!({"type": "integer", "exclusiveMinimum": 0}), &root), json!(1));
        assert_eq!(example(&json!({"type": ["string", "null"], "maxLength": 3}), &root), json!("exa"));
        assert_eq!(example(&json!({"enum": ["b", "a"]}), &root), json!("b"));
        assert_eq!(example(&json!({"type": "boolean", "default": true}), &root), json!(true));
        assert_eq!(example(&json!({"anyOf": [{"type": "null"}, {"type": "number"}]}), &root), json!(1.0));
        assert_eq!(example(&json!({"$ref": "#/nowhere"}), &root), Value::Null);
        assert_eq!(example(&json!({"$ref": "https://elsewhere/"}), &root), Value::Null);
        assert_eq!(example(&json!(true), &root), Value::Null);
        assert_eq!(example(&json!({"type": "string", "format": "email"}), &root), json!("user@example.com"));
    }

    #[test]
    fn params_take_the_required_ones() {
        let (id, q) = (json!({"type": "integer"}), json!({"type": "string"}));
        let params = params_example([("id", true, &id), ("q", false, &q)], &Value::Null);
        assert_eq!(params, json!({"id": 1}));
    }

    #[test]
    fn a_self_referencing_schema_ends() {
        let root = json!({"$defs": {"Loop": {"$ref": "#/$defs/Loop"}}});
        assert_eq!(example(&json!({"$ref": "#/$defs/Loop"}), &root), Value::Null);
    }
}
