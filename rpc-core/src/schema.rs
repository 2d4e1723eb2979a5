//! Per-method JSON Schemas and argument validation.
//!
//! Schemas are built once, when the registry is built, from the
//! compile-time [`MethodDescriptor`]s; requests never touch schemars.
//!
//! * The input schema is an object with one property per parameter,
//!   `required` for parameters without a default, `default` and `description`
//!   where known, `additionalProperties: false`, and the definitions of every
//!   referenced DTO in the schema's own `$defs` (so it is self-contained).
//! * The output schema wraps the result the way MCP returns it:
//!   `{"type":"object","properties":{"result":<T>},"required":["result"]}`.
//!   There is none for `()` or an untyped JSON value.
//! * Integer types carry their range as `minimum`/`maximum`, and only the
//!   formats of the JSON Schema 2020-12 vocabulary remain (`uint64` and the
//!   like are dropped), so MCP clients see standard schemas. OpenRPC
//!   documents keep schemars' formats, which OpenRPC tools understand.

use std::collections::BTreeSet;

use schemars::generate::SchemaSettings;
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value, json};

use crate::descriptor::{MethodDescriptor, OutputKind};

/// A schema generator whose references point into `$defs` and which does
/// not emit a `$schema` key.
pub fn method_generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12().with(|s| s.meta_schema = None).into_generator()
}

/// A schema generator whose references point into `definitions_path`
/// (e.g. `/components/schemas` for OpenRPC).
pub fn shared_generator(definitions_path: &'static str) -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.meta_schema = None;
            s.definitions_path = definitions_path.into();
        })
        .into_generator()
}

/// The input and output schemas of one method, self-contained.
#[derive(Debug, Clone)]
pub struct MethodSchemaSet {
    /// The input schema (an object schema).
    pub input: Value,
    /// The output schema, if the method has a typed result.
    pub output: Option<Value>,
    /// The bare result schema (what `result` holds), if any, self-contained.
    pub result: Option<Value>,
}

/// Builds the self-contained schemas of `method`.
pub fn build_method_schemas(method: &MethodDescriptor) -> MethodSchemaSet {
    let mut generator = method_generator();
    let schemas = method.schemas(&mut generator);
    let defs = generator.take_definitions(true);
    let bounded = |schema: Value| {
        let mut schema = attach_defs(schema, &defs);
        add_integer_bounds(&mut schema);
        standard_formats(&mut schema);
        schema
    };

    let mut properties = param_properties(method, schemas.params);
    for param in method.params {
        if let (Some(header), Some(Value::Object(schema))) = (param.header, properties.get_mut(param.name)) {
            schema.insert(X_MCP_HEADER.into(), Value::String(header.into()));
        }
    }
    let mut input = Map::new();
    input.insert("type".into(), json!("object"));
    input.insert("properties".into(), Value::Object(properties));
    let required: Vec<&str> = method.params.iter().filter(|p| p.is_param && p.required).map(|p| p.name).collect();
    if !required.is_empty() {
        input.insert("required".into(), json!(required));
    }
    input.insert("additionalProperties".into(), Value::Bool(false));
    let input = match method.tool.input_schema.and_then(|text| serde_json::from_str(text).ok()) {
        // Hand-written (and checked at compile time): kept as written.
        Some(written) => written,
        None => bounded(Value::Object(input)),
    };

    let written = method.tool.output_schema.and_then(|text| serde_json::from_str::<Value>(text).ok());
    let result = match method.output {
        OutputKind::Unit => None,
        // Hand-written (and checked at compile time): the result's schema as written.
        OutputKind::Value if written.is_some() => written,
        OutputKind::Value => schemas.result.map(Schema::to_value).filter(|s| !is_untyped(s)),
    };
    let output = result
        .as_ref()
        .map(|r| bounded(json!({"type": "object", "properties": {"result": r}, "required": ["result"]})));
    let result = result.map(bounded);
    MethodSchemaSet { input, output, result }
}

/// The schema keyword (MCP SEP-2243) naming the `Mcp-Param-{name}` header a
/// parameter is mirrored into.
pub const X_MCP_HEADER: &str = "x-mcp-header";

/// The `properties` of an input schema: each parameter's schema with the
/// keywords of its validation rules ([`apply_rules`](crate::rules::apply_rules)),
/// its description and default (arguments that are not parameters are left out).
pub fn param_properties(method: &MethodDescriptor, schemas: Vec<Option<Schema>>) -> Map<String, Value> {
    let mut properties = Map::new();
    for (param, schema) in method.params.iter().zip(schemas) {
        let Some(schema) = schema.filter(|_| param.is_param) else { continue };
        let mut schema = match schema.to_value() {
            Value::Object(map) => map,
            Value::Bool(true) => Map::new(),
            other => {
                // `false`: no value is valid; keep it verbatim.
                properties.insert(param.name.into(), other);
                continue;
            }
        };
        crate::rules::apply_rules(&mut schema, param.rules);
        if let Some(description) = param.description {
            schema.insert("description".into(), Value::String(description.into()));
        }
        if let Some(default) = param.default {
            schema.insert("default".into(), default());
        }
        properties.insert(param.name.into(), Value::Object(schema));
    }
    properties
}

/// Calls `f` on every schema object in `schema`: the root and every
/// subschema (under `properties`, `items`, `$defs`, `anyOf`, ...), never on
/// values such as `default`, `const`, `enum` or `examples`, which are data.
pub fn visit_schemas(schema: &mut Value, f: &mut impl FnMut(&mut Map<String, Value>)) {
    /// Keywords whose value is one subschema.
    const ONE: &[&str] = &[
        "items",
        "additionalItems",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    ];
    /// Keywords whose value is an array of subschemas.
    const MANY: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
    /// Keywords whose value maps names to subschemas.
    const NAMED: &[&str] = &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
    let Value::Object(map) = schema else { return };
    f(map);
    for (key, value) in map.iter_mut() {
        let key = key.as_str();
        match value {
            Value::Object(_) if ONE.contains(&key) => visit_schemas(value, f),
            Value::Array(items) if MANY.contains(&key) => items.iter_mut().for_each(|s| visit_schemas(s, f)),
            Value::Object(named) if NAMED.contains(&key) => named.values_mut().for_each(|s| visit_schemas(s, f)),
            _ => {}
        }
    }
}

/// The largest integer JavaScript represents exactly: header-mirrored
/// integers stay within ±this (SEP-2243).
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// The range of a fixed-width integer `format` (`uint32`, `int8`, ...):
/// the minimum, and the maximum when a JSON number here can hold it.
fn format_bounds(format: &str) -> Option<(i128, Option<i128>)> {
    Some(match format {
        "int8" => (i8::MIN.into(), Some(i8::MAX.into())),
        "uint8" => (0, Some(u8::MAX.into())),
        "int16" => (i16::MIN.into(), Some(i16::MAX.into())),
        "uint16" => (0, Some(u16::MAX.into())),
        "int32" => (i32::MIN.into(), Some(i32::MAX.into())),
        "uint32" => (0, Some(u32::MAX.into())),
        "int64" => (i64::MIN.into(), Some(i64::MAX.into())),
        "uint64" => (0, Some(u64::MAX.into())),
        "int" => (isize::MIN as i128, Some(isize::MAX as i128)),
        "uint" => (0, Some(usize::MAX as i128)),
        // JSON numbers here hold 64 bits: only the sign is a bound.
        "uint128" => (0, None),
        _ => return None,
    })
}

fn bound_json(value: i128) -> Value {
    match (i64::try_from(value), u64::try_from(value)) {
        (Ok(v), _) => json!(v),
        (_, Ok(v)) => json!(v),
        _ => json!(value as f64),
    }
}

/// Adds `minimum`/`maximum` to integer schemas whose `format` names a
/// fixed-width type (`uint32`, `int8`, ...), so validation rejects values
/// the Rust type cannot hold, and clients see the real range. An integer
/// mirrored into a header (`x-mcp-header`) is kept within JavaScript's safe
/// range, as SEP-2243 requires.
pub fn add_integer_bounds(schema: &mut Value) {
    visit_schemas(schema, &mut |map| {
        if let Some((min, max)) = map.get("format").and_then(Value::as_str).and_then(format_bounds) {
            // A bound already there (a `range` rule) stays when it is tighter.
            let kept = |map: &Map<String, Value>, key: &str, tighter: fn(f64, f64) -> bool, bound: i128| {
                map.get(key).and_then(Value::as_f64).is_some_and(|v| tighter(v, bound as f64))
            };
            if !kept(map, "minimum", |v, b| v >= b, min) {
                map.insert("minimum".into(), bound_json(min));
            }
            if let Some(max) = max
                && !kept(map, "maximum", |v, b| v <= b, max)
            {
                map.insert("maximum".into(), bound_json(max));
            }
        }
        let integer = match map.get("type") {
            Some(Value::String(t)) => t == "integer",
            Some(Value::Array(types)) => types.iter().any(|t| t == "integer"),
            _ => false,
        };
        if map.contains_key(X_MCP_HEADER) && integer {
            let safe = i128::from(MAX_SAFE_INTEGER);
            let min = map.get("minimum").and_then(Value::as_f64).map_or(-safe, |m| (m as i128).max(-safe));
            let max = map.get("maximum").and_then(Value::as_f64).map_or(safe, |m| (m as i128).min(safe));
            map.insert("minimum".into(), bound_json(min));
            map.insert("maximum".into(), bound_json(max));
        }
    });
}

/// The formats of the JSON Schema 2020-12 format vocabulary.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Removes `format` values outside the JSON Schema 2020-12 format
/// vocabulary (schemars' `uint64`, `int32`, `double`, ...), which strict
/// clients warn about on every call. Run [`add_integer_bounds`] first: the
/// bounds say what the formats said.
pub fn standard_formats(schema: &mut Value) {
    visit_schemas(schema, &mut |map| {
        if map.get("format").and_then(Value::as_str).is_some_and(|f| !STANDARD_FORMATS.contains(&f)) {
            map.remove("format");
        }
    });
}

/// Keywords that describe a schema as a whole and stay beside the `anyOf`
/// that [`single_types`] writes.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "$id",
    "$schema",
];

/// Rewrites `"type": ["string", "null"]` (schemars' `Option<T>`) as
/// `"anyOf": [{"type": "string", ...}, {"type": "null"}]`: the same values,
/// in a form clients that map tool schemas onto a single-`type` dialect
/// (Gemini's function declarations) accept, and that the MCP Inspector does
/// not warn about. Keywords about the value move into the typed branches;
/// annotations (`description`, `default`, ...), `enum`, `const` and
/// extension keywords (`x-...`) stay beside the `anyOf`. A schema that
/// already combines subschemas (`anyOf`, `oneOf`, `allOf`, `not`, `if`)
/// is left as it is, and so is a parameter mirrored into a header
/// (`x-mcp-header`): 2026-07-28 clients read its `type` to encode it.
pub fn single_types(schema: &mut Value) {
    visit_schemas(schema, &mut |map| {
        let Some(Value::Array(types)) = map.get("type") else { return };
        let combined = ["anyOf", "oneOf", "allOf", "not", "if", X_MCP_HEADER].iter().any(|k| map.contains_key(*k));
        if combined || types.len() < 2 || !types.iter().all(Value::is_string) {
            return;
        }
        let Some(Value::Array(types)) = map.remove("type") else { return };
        let kept = |key: &str| ANNOTATIONS.contains(&key) || key == "enum" || key == "const" || key.starts_with("x-");
        let moved: Vec<String> = map.keys().filter(|k| !kept(k)).cloned().collect();
        let mut value_keywords = Map::new();
        for key in moved {
            if let Some(v) = map.remove(&key) {
                value_keywords.insert(key, v);
            }
        }
        let branches = types
            .into_iter()
            .map(|t| {
                let mut branch = Map::new();
                let is_null = t == "null";
                branch.insert("type".into(), t);
                if !is_null {
                    branch.extend(value_keywords.clone());
                }
                Value::Object(branch)
            })
            .collect();
        map.insert("anyOf".into(), Value::Array(branches));
    });
}

/// Whether a result schema accepts anything (an untyped JSON value) or only
/// `null` (a unit result): such results get no output schema.
fn is_untyped(schema: &Value) -> bool {
    match schema {
        Value::Bool(true) => true,
        Value::Object(map) => map.is_empty() || (map.len() == 1 && map.get("type") == Some(&json!("null"))),
        _ => false,
    }
}

/// Adds to `root` the definitions it references, transitively, as `$defs`.
pub(crate) fn attach_defs(mut root: Value, defs: &Map<String, Value>) -> Value {
    let mut needed = BTreeSet::new();
    let mut stack = Vec::new();
    collect_refs(&root, &mut stack);
    while let Some(name) = stack.pop() {
        if needed.insert(name.clone())
            && let Some(def) = defs.get(&name)
        {
            collect_refs(def, &mut stack);
        }
    }
    if !needed.is_empty()
        && let Value::Object(map) = &mut root
    {
        let picked: Map<String, Value> =
            needed.into_iter().filter_map(|name| defs.get(&name).map(|d| (name, d.clone()))).collect();
        map.insert("$defs".into(), Value::Object(picked));
    }
    root
}

fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref")
                && let Some(name) = r.strip_prefix("#/$defs/")
            {
                out.push(decode_pointer_token(name));
            }
            map.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

pub(crate) fn decode_pointer_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nullable_types_become_any_of() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "until": {"type": ["string", "null"], "format": "date", "description": "Last day", "default": null},
                "tags": {"type": ["array", "null"], "items": {"type": ["integer", "null"], "minimum": 0}},
                "kind": {"type": ["string", "null"], "enum": ["a", null]},
                "plain": {"type": "string"},
                "mixed": {"anyOf": [{"type": "string"}], "type": ["string", "null"]}
            }
        });
        single_types(&mut schema);
        let p = &schema["properties"];
        assert_eq!(
            p["until"],
            json!({"description": "Last day", "default": null,
                   "anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]})
        );
        assert_eq!(
            p["tags"],
            json!({"anyOf": [{"type": "array", "items": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}},
                             {"type": "null"}]})
        );
        assert_eq!(p["kind"], json!({"enum": ["a", null], "anyOf": [{"type": "string"}, {"type": "null"}]}));
        assert_eq!(p["plain"], json!({"type": "string"}));
        assert_eq!(p["mixed"]["type"], json!(["string", "null"]), "combined schemas are left alone");
        // The same values validate before and after.
        let before = json!({"type": ["string", "null"], "format": "date", "minLength": 10});
        let mut after = before.clone();
        single_types(&mut after);
        for value in [json!(null), json!("2026-12-01"), json!("x"), json!(5)] {
            let v1 = jsonschema::options().should_validate_formats(true).build(&before).unwrap().is_valid(&value);
            let v2 = jsonschema::options().should_validate_formats(true).build(&after).unwrap().is_valid(&value);
            assert_eq!(v1, v2, "{value}");
        }
    }

    #[test]
    fn bounds_and_formats_touch_schemas_only() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "uint8"},
                "when": {"type": "string", "format": "date-time"},
                "ratio": {"type": "number", "format": "double"},
                "format": {"type": "string", "default": "uint64"},
                "cfg": {"$ref": "#/$defs/Cfg", "default": {"format": "int8", "level": 3}},
                "list": {"type": "array", "items": {"type": "integer", "format": "int16"}},
                "either": {"anyOf": [{"type": "integer", "format": "uint"}, {"type": "null"}]}
            },
            "$defs": {"Cfg": {"type": "object", "properties": {"level": {"type": "integer", "format": "int32"}}}}
        });
        add_integer_bounds(&mut schema);
        standard_formats(&mut schema);
        let p = &schema["properties"];
        assert_eq!(p["n"], json!({"type": "integer", "minimum": 0, "maximum": 255}));
        assert_eq!(p["when"]["format"], "date-time", "standard formats stay");
        assert_eq!(p["ratio"], json!({"type": "number"}));
        assert_eq!(p["format"], json!({"type": "string", "default": "uint64"}), "a property named `format` is kept");
        assert_eq!(p["cfg"]["default"], json!({"format": "int8", "level": 3}), "default values are data");
        assert_eq!(p["list"]["items"], json!({"type": "integer", "minimum": -32768, "maximum": 32767}));
        assert_eq!(p["either"]["anyOf"][0]["minimum"], 0);
        assert_eq!(schema["$defs"]["Cfg"]["properties"]["level"]["maximum"], i32::MAX);
    }

    #[test]
    fn attaches_only_reachable_defs() {
        let defs: Map<String, Value> = serde_json::from_value(json!({
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"type": "string"},
            "C": {"type": "integer"}
        }))
        .unwrap();
        let root = attach_defs(json!({"$ref": "#/$defs/A"}), &defs);
        assert_eq!(root["$defs"].as_object().unwrap().keys().collect::<Vec<_>>(), ["A", "B"]);
        let plain = attach_defs(json!({"type": "string"}), &defs);
        assert!(plain.get("$defs").is_none());
    }
}
