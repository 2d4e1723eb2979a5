//! Text arguments as the values a method's parameters take: the variables
//! of a resource URI and the arguments of a prompt are strings on the wire,
//! while the method may take `u64`, `bool`, `Vec<String>`, ... The
//! parameter's schema decides; a text that does not convert stays text, and
//! the executor's validation then refuses it with the parameter's reason.

use rpc::Method;
use serde_json::{Map, Number, Value};

/// `texts` by parameter name, converted as the parameters' schemas say;
/// names that are not parameters of `method` are left out.
pub fn typed(method: &Method, texts: impl IntoIterator<Item = (String, String)>) -> Map<String, Value> {
    let properties = method.schemas().input.get("properties").and_then(Value::as_object);
    texts
        .into_iter()
        .filter_map(|(name, text)| {
            let schema = properties?.get(&name)?;
            let value = convert(&text, schema);
            Some((name, value))
        })
        .collect()
}

/// Whether `schema` (or one of its `anyOf` alternatives) admits `kind`.
fn admits(schema: &Value, kind: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == kind,
        Some(Value::Array(types)) => types.iter().any(|t| t == kind),
        _ => schema
            .get("anyOf")
            .or_else(|| schema.get("oneOf"))
            .and_then(Value::as_array)
            .is_some_and(|alternatives| alternatives.iter().any(|a| admits(a, kind))),
    }
}

fn convert(text: &str, schema: &Value) -> Value {
    if admits(schema, "string") {
        return Value::String(text.to_owned());
    }
    if admits(schema, "integer") {
        if let Ok(n) = text.parse::<i64>() {
            return Value::Number(n.into());
        }
        if let Ok(n) = text.parse::<u64>() {
            return Value::Number(n.into());
        }
    }
    if admits(schema, "number")
        && let Some(n) = text.parse::<f64>().ok().and_then(Number::from_f64)
    {
        return Value::Number(n);
    }
    if admits(schema, "boolean") {
        match text {
            "true" => return Value::Bool(true),
            "false" => return Value::Bool(false),
            _ => {}
        }
    }
    if admits(schema, "array") {
        let item = schema.get("items").unwrap_or(&Value::Null);
        return Value::Array(if text.is_empty() {
            Vec::new()
        } else {
            text.split(',').map(|t| convert(t, item)).collect()
        });
    }
    Value::String(text.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::convert;

    #[test]
    fn by_schema() {
        assert_eq!(convert("7", &json!({"type": "integer", "minimum": 0})), json!(7));
        assert_eq!(convert("-7", &json!({"type": ["integer", "null"]})), json!(-7));
        assert_eq!(convert("7", &json!({"type": "string"})), json!("7"));
        assert_eq!(convert("1.5", &json!({"type": "number"})), json!(1.5));
        assert_eq!(convert("true", &json!({"type": "boolean"})), json!(true));
        assert_eq!(convert("a,b", &json!({"type": "array", "items": {"type": "string"}})), json!(["a", "b"]));
        assert_eq!(convert("1,2", &json!({"type": "array", "items": {"type": "integer"}})), json!([1, 2]));
        assert_eq!(convert("seven", &json!({"type": "integer"})), json!("seven"), "left for validation to refuse");
        assert_eq!(convert("x", &json!({"anyOf": [{"type": "integer"}, {"type": "null"}]})), json!("x"));
        assert_eq!(convert("9", &json!({"anyOf": [{"type": "integer"}, {"type": "null"}]})), json!(9));
    }
}
