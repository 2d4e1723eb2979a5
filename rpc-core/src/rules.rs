//! Validation rules declared on parameters (`#[rpc(length(min = 3), email)]`).
//!
//! Each rule becomes JSON Schema keywords of the parameter's schema, so
//! clients (and AI agents) see it in the input schema, and the
//! [`ParamValidator`](crate::validation::ParamValidator) enforces it before
//! the call with the other keywords (`-32602`, each parameter mapped to its
//! messages).

use serde_json::{Map, Value, json};

/// One validation rule on a parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Rule {
    /// `length(min = .., max = ..)`: characters of a string (`minLength`/
    /// `maxLength`) or items of an array (`minItems`/`maxItems`).
    Length {
        /// The fewest allowed.
        min: Option<u64>,
        /// The most allowed.
        max: Option<u64>,
    },
    /// `range(min = .., max = ..)`: a number's bounds, inclusive
    /// (`minimum`/`maximum`).
    Range {
        /// The smallest allowed value.
        min: Option<f64>,
        /// The largest allowed value.
        max: Option<f64>,
    },
    /// `pattern = ".."`: an ECMA-262 regular expression a string must match
    /// (`pattern`; unanchored, as in JSON Schema).
    Pattern(&'static str),
    /// `email`, `uuid`, `date`, ...: a string format (`format`).
    Format(Format),
    /// `one_of(..)`: the value is one of these (`enum`); the JSON array of
    /// the choices.
    OneOf(&'static str),
    /// `not_blank`: a string with at least one non-whitespace character
    /// (`minLength: 1` and `pattern: "\\S"`).
    NotBlank,
    /// `range(exclusive_min = .., exclusive_max = ..)`: bounds a number must
    /// not reach (`exclusiveMinimum`/`exclusiveMaximum`).
    ExclusiveRange {
        /// The value must be greater than this.
        min: Option<f64>,
        /// The value must be less than this.
        max: Option<f64>,
    },
    /// `equals = ..`: the one allowed value (`const`; with `null` beside it
    /// for an `Option`); its JSON.
    Equals(&'static str),
    /// `items(..)`: rules for each item of an array (applied to `items`).
    Items(&'static [Rule]),
}

/// String formats a [`Rule::Format`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// `email`.
    Email,
    /// `uuid` (RFC 9562, hyphenated).
    Uuid,
    /// `date` (RFC 3339 full-date, `2026-12-01`).
    Date,
    /// `date-time` (RFC 3339).
    DateTime,
    /// `uri`.
    Uri,
}

impl Format {
    /// The JSON Schema `format` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Email => "email",
            Format::Uuid => "uuid",
            Format::Date => "date",
            Format::DateTime => "date-time",
            Format::Uri => "uri",
        }
    }
}

/// Adds the JSON Schema keywords of `rules` to a parameter's schema.
///
/// The keywords go where the parameter's non-null values are described:
/// on the schema itself when its `type` is one type or a list of types
/// (`["string", "null"]` for an `Option<String>`: the keywords ignore
/// `null`, and `enum` gets `null` added), or on each non-null branch of an
/// `anyOf` (`Option<T>` of a referenced type), so `null` stays valid.
///
/// `Length` counts characters of strings (`minLength`/`maxLength`) or items
/// of arrays (`minItems`/`maxItems`), chosen by the schema's `type` (both
/// when it does not say). Integral `Range` bounds are JSON integers.
pub fn apply_rules(schema: &mut Map<String, Value>, rules: &[Rule]) {
    if rules.is_empty() {
        return;
    }
    if let Some(Value::Array(branches)) = schema.get_mut("anyOf")
        && branches.iter().any(is_null_schema)
    {
        for branch in branches.iter_mut().filter(|b| !is_null_schema(b)) {
            if let Value::Object(map) = branch {
                apply_to(map, rules, false);
            }
        }
        return;
    }
    let nullable = match schema.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => false,
    };
    apply_to(schema, rules, nullable);
}

/// Whether `schema` is `{"type": "null"}` (the `None` branch of an `Option`).
fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").is_some_and(|t| t == "null")
}

/// Whether the schema's `type` is, or includes, `name`; `None` when it has no `type`.
fn has_type(schema: &Map<String, Value>, name: &str) -> Option<bool> {
    match schema.get("type")? {
        Value::String(t) => Some(t == name),
        Value::Array(types) => Some(types.iter().any(|t| t == name)),
        _ => Some(false),
    }
}

fn apply_to(schema: &mut Map<String, Value>, rules: &[Rule], nullable: bool) {
    let strings = has_type(schema, "string").unwrap_or(true);
    let arrays = has_type(schema, "array").unwrap_or(true);
    for rule in rules {
        match *rule {
            Rule::Length { min, max } => {
                if strings {
                    tighten(schema, "minLength", min, u64::max);
                    tighten(schema, "maxLength", max, u64::min);
                }
                if arrays {
                    tighten(schema, "minItems", min, u64::max);
                    tighten(schema, "maxItems", max, u64::min);
                }
            }
            Rule::Range { min, max } => {
                if let Some(min) = min {
                    schema.insert("minimum".into(), number(min));
                }
                if let Some(max) = max {
                    schema.insert("maximum".into(), number(max));
                }
            }
            Rule::Pattern(pattern) => add_pattern(schema, pattern),
            Rule::Format(format) => {
                schema.insert("format".into(), Value::String(format.as_str().into()));
            }
            Rule::OneOf(choices) => {
                if let Ok(Value::Array(mut choices)) = serde_json::from_str::<Value>(choices) {
                    if nullable {
                        choices.push(Value::Null);
                    }
                    schema.insert("enum".into(), Value::Array(choices));
                }
            }
            Rule::NotBlank => {
                tighten(schema, "minLength", Some(1), u64::max);
                add_pattern(schema, NOT_BLANK_PATTERN);
            }
            Rule::ExclusiveRange { min, max } => {
                if let Some(min) = min {
                    schema.insert("exclusiveMinimum".into(), number(min));
                }
                if let Some(max) = max {
                    schema.insert("exclusiveMaximum".into(), number(max));
                }
            }
            Rule::Equals(value) => {
                if let Ok(value) = serde_json::from_str::<Value>(value) {
                    if nullable {
                        schema.insert("enum".into(), Value::Array(vec![value, Value::Null]));
                    } else {
                        schema.insert("const".into(), value);
                    }
                }
            }
            Rule::Items(rules) => {
                if let Some(Value::Object(items)) = schema.get_mut("items") {
                    apply_rules(items, rules);
                }
            }
        }
    }
}

/// The pattern `not_blank` adds: at least one non-whitespace character.
pub const NOT_BLANK_PATTERN: &str = "\\S";

/// Sets `key` to `value`, or to the tighter of it and what is there.
fn tighten(schema: &mut Map<String, Value>, key: &str, value: Option<u64>, pick: fn(u64, u64) -> u64) {
    let Some(value) = value else { return };
    let value = match schema.get(key).and_then(Value::as_u64) {
        Some(existing) => pick(existing, value),
        None => value,
    };
    schema.insert(key.into(), Value::from(value));
}

/// A bound as JSON: integral values as integers.
fn number(value: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if value.fract() == 0.0 && value.abs() <= EXACT { Value::from(value as i64) } else { Value::from(value) }
}

/// Adds `pattern`; a schema that has one already keeps both, each in its
/// own `allOf` branch (a schema has one `pattern`).
fn add_pattern(schema: &mut Map<String, Value>, pattern: &str) {
    let new = Value::String(pattern.into());
    let Some(existing) = schema.remove("pattern") else {
        let in_all_of = schema
            .get("allOf")
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(|b| b.get("pattern").is_some()));
        if in_all_of && let Some(Value::Array(branches)) = schema.get_mut("allOf") {
            branches.push(json!({ "pattern": new }));
        } else {
            schema.insert("pattern".into(), new);
        }
        return;
    };
    if existing == new {
        schema.insert("pattern".into(), existing);
        return;
    }
    let branches = [json!({ "pattern": existing }), json!({ "pattern": new })];
    match schema.get_mut("allOf") {
        Some(Value::Array(all_of)) => all_of.extend(branches),
        _ => {
            schema.insert("allOf".into(), Value::Array(branches.into()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(schema: Value, rules: &[Rule]) -> Value {
        let Value::Object(mut map) = schema else { panic!("an object schema") };
        apply_rules(&mut map, rules);
        Value::Object(map)
    }

    #[test]
    fn exclusive_bounds_constants_and_items() {
        let rules = [Rule::ExclusiveRange { min: Some(0.0), max: None }, Rule::Range { min: None, max: Some(1.5) }];
        assert_eq!(
            applied(json!({"type": "number"}), &rules),
            json!({"type": "number", "exclusiveMinimum": 0, "maximum": 1.5})
        );
        assert_eq!(
            applied(json!({"type": "string"}), &[Rule::Equals("\"yes\"")]),
            json!({"type": "string", "const": "yes"})
        );
        assert_eq!(
            applied(json!({"type": ["integer", "null"]}), &[Rule::Equals("2")]),
            json!({"type": ["integer", "null"], "enum": [2, null]}),
            "an Option keeps null"
        );
        const EACH: &[Rule] = &[Rule::Length { min: Some(2), max: None }, Rule::NotBlank];
        assert_eq!(
            applied(json!({"type": ["array", "null"], "items": {"type": "string"}}), &[Rule::Items(EACH)]),
            json!({"type": ["array", "null"], "items": {"type": "string", "minLength": 2, "pattern": "\\S"}})
        );
        assert_eq!(
            applied(
                json!({"type": "array", "items": {"type": ["string", "null"]}}),
                &[Rule::Items(&[Rule::OneOf("[\"a\"]")])]
            ),
            json!({"type": "array", "items": {"type": ["string", "null"], "enum": ["a", null]}}),
            "rules on nullable items keep null"
        );
    }

    #[test]
    fn length_follows_the_type() {
        let rule = [Rule::Length { min: Some(3), max: Some(10) }];
        assert_eq!(
            applied(json!({"type": "string"}), &rule),
            json!({"type": "string", "minLength": 3, "maxLength": 10})
        );
        assert_eq!(
            applied(json!({"type": "array", "items": {"type": "integer"}}), &rule),
            json!({"type": "array", "items": {"type": "integer"}, "minItems": 3, "maxItems": 10})
        );
    }

    #[test]
    fn options_keep_null() {
        let rules = [Rule::OneOf(r#"["a","b"]"#), Rule::Format(Format::Email)];
        assert_eq!(
            applied(json!({"type": ["string", "null"]}), &rules),
            json!({"type": ["string", "null"], "enum": ["a", "b", null], "format": "email"})
        );
        let rules = [Rule::Range { min: Some(1.0), max: Some(2.5) }];
        assert_eq!(
            applied(json!({"anyOf": [{"$ref": "#/$defs/N"}, {"type": "null"}]}), &rules),
            json!({"anyOf": [{"$ref": "#/$defs/N", "minimum": 1, "maximum": 2.5}, {"type": "null"}]})
        );
    }

    #[test]
    fn not_blank_keeps_an_existing_pattern() {
        let rules = [Rule::Length { min: Some(3), max: None }, Rule::Pattern("^[a-z ]+$"), Rule::NotBlank];
        assert_eq!(
            applied(json!({"type": "string"}), &rules),
            json!({"type": "string", "minLength": 3, "allOf": [{"pattern": "^[a-z ]+$"}, {"pattern": "\\S"}]})
        );
        assert_eq!(
            applied(json!({"type": "string"}), &[Rule::NotBlank]),
            json!({"type": "string", "minLength": 1, "pattern": "\\S"})
        );
    }
}
