//! The built-in JSON Schema validator: what a build without the
//! `jsonschema` feature validates with. It implements the 2020-12
//! keywords of the applicator and validation vocabularies that input
//! schemas use (types, `enum`, `const`, numbers, strings, `format`
//! (`email`, `uuid`, `date`, `date-time`, `uri`), arrays, objects,
//! `$ref` into the schema, `allOf`/`anyOf`/`oneOf`/`not`,
//! `if`/`then`/`else`), with the same messages as the `jsonschema` crate.
//! A schema using anything else (a remote `$ref`, `$dynamicRef`,
//! `unevaluatedProperties`, ...) does not compile: the registry refuses it
//! at startup, naming the method, rather than validating less than it says.

use std::collections::HashMap;
use std::sync::Arc;

use regex::Regex;
use serde_json::Value;

use super::formats;

mod check;

/// How deep references may nest while one value is checked (a schema that
/// refers to itself without looking into the value must not loop).
const MAX_DEPTH: usize = 128;

/// Keywords that only annotate: nothing to check.
const ANNOTATIONS: [&str; 16] = [
    "$schema",
    "$comment",
    "$anchor",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "$id",
];

/// A compiled schema.
pub(crate) struct Compiled {
    root: Node,
    /// `#/$defs/...` and `#/definitions/...` pointers, and `#` itself.
    refs: Arc<HashMap<String, Node>>,
}

#[derive(Clone)]
enum Node {
    Bool(bool),
    Schema(Arc<Keywords>),
}

#[derive(Default)]
struct Keywords {
    types: Option<Vec<String>>,
    enumeration: Option<Value>,
    constant: Option<Value>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: Option<f64>,
    exclusive_maximum: Option<f64>,
    multiple_of: Option<f64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<(String, Regex)>,
    format: Option<String>,
    items: Option<Node>,
    prefix_items: Vec<Node>,
    contains: Option<Node>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    unique_items: bool,
    properties: Vec<(String, Node)>,
    pattern_properties: Vec<(Regex, Node)>,
    additional: Option<Node>,
    property_names: Option<Node>,
    required: Vec<String>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    dependent_required: Vec<(String, Vec<String>)>,
    all_of: Vec<Node>,
    any_of: Vec<Node>,
    one_of: Vec<Node>,
    /// The schema of `not`, and its text for messages.
    not: Option<(Node, Value)>,
    condition: Option<(Node, Option<Node>, Option<Node>)>,
    reference: Option<String>,
}

/// A refusal: where in the value (a JSON pointer), the value there, and
/// the message with `{shown}` standing for that value.
pub(crate) struct Failure<'v> {
    pub path: String,
    pub instance: &'v Value,
    message: Message,
}

enum Message {
    /// `{before}{shown}{after}`.
    Around(String, String),
    /// A whole message that does not show the value.
    Whole(String),
}

#[allow(non_snake_case)]
fn AfterValue(rest: String) -> Message {
    Message::Around(String::new(), rest)
}

impl Failure<'_> {
    /// The message with the value shown as `shown`.
    pub(crate) fn masked_with(&self, shown: &str) -> String {
        match &self.message {
            Message::Around(before, after) => format!("{before}{shown}{after}"),
            Message::Whole(text) => text.clone(),
        }
    }
}

fn unsupported(keyword: &str) -> String {
    format!(
        "`{keyword}` is not supported by the built-in validator: build rpc-core with its `jsonschema` feature (on by default)"
    )
}

fn number(value: &Value, keyword: &str) -> Result<f64, String> {
    value.as_f64().ok_or_else(|| format!("`{keyword}` must be a number"))
}

fn count(value: &Value, keyword: &str) -> Result<u64, String> {
    value.as_u64().ok_or_else(|| format!("`{keyword}` must be a non-negative integer"))
}

/// A pattern, written in ECMA-262 as JSON Schema says, translated to the
/// `regex` crate's syntax the way the `jsonschema` crate translates it
/// (`\d` is ASCII, `$` ends the text, ...), then compiled with a size bound.
/// Look-around and back-references have no linear-time translation: such a
/// schema is refused (the `jsonschema` feature applies them).
fn regex(pattern: &str) -> Result<Regex, String> {
    let translated = jsonschema_regex::to_rust_regex(pattern).map_err(|()| {
        format!(
            "`pattern` {pattern:?} is not an ECMA-262 regular expression the built-in validator can apply \
             (look-around and back-references need the `jsonschema` feature)"
        )
    })?;
    regex::RegexBuilder::new(&translated).size_limit(1 << 20).build().map_err(|e| {
        let look = ["(?=", "(?!", "(?<=", "(?<!"].iter().any(|l| pattern.contains(l)) || pattern.contains("\\k<");
        if look {
            format!(
                "`pattern` {pattern:?} uses look-around or a back-reference, which the built-in validator \
                 (a build without the `jsonschema` feature) cannot apply: enable the feature"
            )
        } else {
            format!("`pattern` {pattern:?} does not compile: {e}")
        }
    })
}

fn compile_node(schema: &Value, refs: &mut HashMap<String, Node>, pointer: &str) -> Result<Node, String> {
    let map = match schema {
        Value::Bool(b) => return Ok(Node::Bool(*b)),
        Value::Object(map) => map,
        _ => return Err(format!("a schema must be an object or a boolean (at {pointer:?})")),
    };
    let mut k = Keywords::default();
    let child = |value: &Value, refs: &mut HashMap<String, Node>, key: &str| {
        compile_node(value, refs, &format!("{pointer}/{key}"))
    };
    let list = |value: &Value, refs: &mut HashMap<String, Node>, key: &str| -> Result<Vec<Node>, String> {
        let items = value.as_array().ok_or_else(|| format!("`{key}` must be an array of schemas"))?;
        items.iter().enumerate().map(|(i, item)| compile_node(item, refs, &format!("{pointer}/{key}/{i}"))).collect()
    };
    for (key, value) in map {
        match key.as_str() {
            "type" => {
                k.types = Some(match value {
                    Value::String(t) => vec![t.clone()],
                    Value::Array(ts) => ts.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
                    _ => return Err("`type` must be a string or an array".into()),
                });
            }
            "enum" => k.enumeration = Some(value.clone()),
            "const" => k.constant = Some(value.clone()),
            "minimum" => k.minimum = Some(number(value, key)?),
            "maximum" => k.maximum = Some(number(value, key)?),
            "exclusiveMinimum" => k.exclusive_minimum = Some(number(value, key)?),
            "exclusiveMaximum" => k.exclusive_maximum = Some(number(value, key)?),
            "multipleOf" => k.multiple_of = Some(number(value, key)?).filter(|m| *m > 0.0),
            "minLength" => k.min_length = Some(count(value, key)?),
            "maxLength" => k.max_length = Some(count(value, key)?),
            "pattern" => {
                let text = value.as_str().ok_or("`pattern` must be a string")?;
                k.pattern = Some((text.to_owned(), regex(text)?));
            }
            "format" => k.format = value.as_str().map(str::to_owned),
            "items" => k.items = Some(child(value, refs, key)?),
            "prefixItems" => k.prefix_items = list(value, refs, key)?,
            "contains" => k.contains = Some(child(value, refs, key)?),
            "minItems" => k.min_items = Some(count(value, key)?),
            "maxItems" => k.max_items = Some(count(value, key)?),
            "uniqueItems" => k.unique_items = value.as_bool() == Some(true),
            "properties" => {
                let props = value.as_object().ok_or("`properties` must be an object")?;
                for (name, schema) in props {
                    k.properties.push((name.clone(), child(schema, refs, &format!("properties/{name}"))?));
                }
            }
            "patternProperties" => {
                let props = value.as_object().ok_or("`patternProperties` must be an object")?;
                for (pattern, schema) in props {
                    k.pattern_properties.push((regex(pattern)?, child(schema, refs, "patternProperties")?));
                }
            }
            "additionalProperties" => k.additional = Some(child(value, refs, key)?),
            "propertyNames" => k.property_names = Some(child(value, refs, key)?),
            "required" => {
                let names = value.as_array().ok_or("`required` must be an array")?;
                k.required = names.iter().filter_map(Value::as_str).map(str::to_owned).collect();
            }
            "minProperties" => k.min_properties = Some(count(value, key)?),
            "maxProperties" => k.max_properties = Some(count(value, key)?),
            "dependentRequired" => {
                let deps = value.as_object().ok_or("`dependentRequired` must be an object")?;
                for (name, needs) in deps {
                    let needs = needs.as_array().ok_or("`dependentRequired` values must be arrays")?;
                    k.dependent_required
                        .push((name.clone(), needs.iter().filter_map(Value::as_str).map(str::to_owned).collect()));
                }
            }
            "allOf" => k.all_of = list(value, refs, key)?,
            "anyOf" => k.any_of = list(value, refs, key)?,
            "oneOf" => k.one_of = list(value, refs, key)?,
            "not" => k.not = Some((child(value, refs, key)?, value.clone())),
            "if" => {
                let then = map.get("then").map(|t| child(t, refs, "then")).transpose()?;
                let otherwise = map.get("else").map(|e| child(e, refs, "else")).transpose()?;
                k.condition = Some((child(value, refs, key)?, then, otherwise));
            }
            "then" | "else" => {}
            "$ref" => {
                let target = value.as_str().ok_or("`$ref` must be a string")?;
                if !(target == "#" || target.starts_with("#/")) {
                    return Err(unsupported(&format!("$ref: {target}")));
                }
                k.reference = Some(target.to_owned());
            }
            "$id" if pointer.is_empty() => {}
            other if ANNOTATIONS.contains(&other) || other.starts_with("x-") => {}
            other => return Err(unsupported(other)),
        }
    }
    Ok(Node::Schema(Arc::new(k)))
}

impl Compiled {
    /// Compiles `schema`; `Err` names what cannot be validated.
    pub(crate) fn new(schema: &Value) -> Result<Compiled, String> {
        let mut refs = HashMap::new();
        let root = compile_node(schema, &mut refs, "")?;
        refs.insert("#".to_owned(), root.clone());
        for section in ["$defs", "definitions"] {
            if let Some(defs) = schema.get(section).and_then(Value::as_object) {
                for (name, def) in defs {
                    let pointer = format!("#/{section}/{}", name.replace('~', "~0").replace('/', "~1"));
                    let node = compile_node(def, &mut refs, &pointer)?;
                    refs.insert(pointer, node);
                }
            }
        }
        let compiled = Compiled { root, refs: Arc::new(refs) };
        compiled.check_refs(&compiled.root, 0)?;
        Ok(compiled)
    }

    /// Every `$ref` names a schema of the document.
    fn check_refs(&self, node: &Node, depth: usize) -> Result<(), String> {
        let Node::Schema(k) = node else { return Ok(()) };
        if depth > MAX_DEPTH {
            return Ok(());
        }
        if let Some(target) = &k.reference
            && !self.refs.contains_key(target)
        {
            return Err(format!("`$ref` {target:?} names no schema of the document"));
        }
        let children = k
            .items
            .iter()
            .chain(&k.prefix_items)
            .chain(&k.contains)
            .chain(k.properties.iter().map(|(_, n)| n))
            .chain(k.pattern_properties.iter().map(|(_, n)| n))
            .chain(&k.additional)
            .chain(&k.property_names)
            .chain(&k.all_of)
            .chain(&k.any_of)
            .chain(&k.one_of)
            .chain(k.not.iter().map(|(n, _)| n));
        for child in children {
            self.check_refs(child, depth + 1)?;
        }
        if let Some((cond, then, otherwise)) = &k.condition {
            for n in std::iter::once(cond).chain(then).chain(otherwise) {
                self.check_refs(n, depth + 1)?;
            }
        }
        Ok(())
    }
}
