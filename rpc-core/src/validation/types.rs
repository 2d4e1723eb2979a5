//! JSON types as JSON Schema names them.

use serde_json::Value;

/// Every JSON Schema type, in the order the `jsonschema` crate lists them
/// in messages.
pub(crate) const TYPES: [&str; 7] = ["null", "boolean", "object", "array", "number", "string", "integer"];

/// Whether `value` is of JSON Schema type `name` (an integer is a number
/// without a fraction, `1.0` included).
pub(crate) fn has_type(value: &Value, name: &str) -> bool {
    match (value, name) {
        (Value::Null, "null") | (Value::Bool(_), "boolean") | (Value::String(_), "string") => true,
        (Value::Array(_), "array") | (Value::Object(_), "object") | (Value::Number(_), "number") => true,
        (Value::Number(n), "integer") => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    }
}

/// The JSON Schema type of `value` (`"number"` for every number).
pub(crate) fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::Number(_) => "number",
        Value::String(_) => "string",
    }
}
