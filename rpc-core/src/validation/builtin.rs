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
use std::fmt::Write as _;
use std::sync::Arc;

use regex::Regex;
use serde_json::{Map, Value};

use super::formats;

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

fn regex(pattern: &str) -> Result<Regex, String> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| format!("`pattern` {pattern:?} does not compile: {e}"))
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

    /// Whether `value` validates.
    pub(crate) fn is_valid(&self, value: &Value) -> bool {
        self.first(&self.root, value, &mut String::new(), 0).is_none()
    }

    /// The first refusal of `value`, if any.
    pub(crate) fn first_error<'v>(&self, value: &'v Value) -> Option<Failure<'v>> {
        self.first(&self.root, value, &mut String::new(), 0)
    }

    fn first<'v>(&self, node: &Node, value: &'v Value, path: &mut String, depth: usize) -> Option<Failure<'v>> {
        let fail = |path: &str, value: &'v Value, message: Message| Some(Failure { path: path.to_owned(), instance: value, message });
        let after = |text: String| AfterValue(text);
        let k = match node {
            Node::Bool(true) => return None,
            Node::Bool(false) => return fail(path, value, Message::Around("False schema does not allow ".into(), String::new())),
            Node::Schema(k) => k,
        };
        if depth > MAX_DEPTH {
            return fail(path, value, Message::Whole("the schema refers to itself too deeply".into()));
        }
        if let Some(target) = &k.reference
            && let Some(referenced) = self.refs.get(target)
            && let Some(failure) = self.first(referenced, value, path, depth + 1)
        {
            return Some(failure);
        }
        if let Some(types) = &k.types
            && !types.iter().any(|t| super::types::has_type(value, t))
        {
            let message = match types.as_slice() {
                [one] => format!(" is not of type \"{one}\""),
                many => {
                    // In the reference's order: null, boolean, object, array, number, string, integer.
                    let mut sorted: Vec<&String> = many.iter().collect();
                    sorted.sort_by_key(|t| super::types::TYPES.iter().position(|o| o == t));
                    let quoted: Vec<String> = sorted.iter().map(|t| format!("\"{t}\"")).collect();
                    format!(" is not of types {}", quoted.join(", "))
                }
            };
            return fail(path, value, after(message));
        }
        if let Some(expected) = &k.constant
            && !formats::equal(value, expected)
        {
            return fail(path, value, Message::Whole(format!("{expected} was expected")));
        }
        if let Some(Value::Array(options)) = &k.enumeration
            && !options.iter().any(|o| formats::equal(value, o))
        {
            return fail(path, value, after(enum_message(options)));
        }
        if let Some(failure) = self.number_checks(k, value, path) {
            return Some(failure);
        }
        if let Value::String(text) = value
            && let Some(failure) = string_checks(k, text, value, path)
        {
            return Some(failure);
        }
        if let Value::Array(items) = value
            && let Some(failure) = self.array_checks(k, items, value, path, depth)
        {
            return Some(failure);
        }
        if let Value::Object(members) = value
            && let Some(failure) = self.object_checks(k, members, value, path, depth)
        {
            return Some(failure);
        }
        self.applicator_checks(k, value, path, depth)
    }

    fn number_checks<'v>(&self, k: &Keywords, value: &'v Value, path: &str) -> Option<Failure<'v>> {
        let n = value.as_f64()?;
        let limit = |text: &str, bound: f64| Some(Failure { path: path.to_owned(), instance: value, message: AfterValue(format!(" {text} {}", shown_number(bound))) });
        if let Some(min) = k.minimum.filter(|min| n < *min) {
            return limit("is less than the minimum of", min);
        }
        if let Some(max) = k.maximum.filter(|max| n > *max) {
            return limit("is greater than the maximum of", max);
        }
        if let Some(min) = k.exclusive_minimum.filter(|min| n <= *min) {
            return limit("is less than or equal to the minimum of", min);
        }
        if let Some(max) = k.exclusive_maximum.filter(|max| n >= *max) {
            return limit("is greater than or equal to the maximum of", max);
        }
        if let Some(m) = k.multiple_of {
            let ratio = n / m;
            if ratio.is_finite() && (ratio - ratio.round()).abs() > 1e-9 {
                return limit("is not a multiple of", m);
            }
        }
        None
    }

    fn array_checks<'v>(&self, k: &Keywords, items: &'v [Value], value: &'v Value, path: &mut String, depth: usize) -> Option<Failure<'v>> {
        let fail = |message: String| Some(Failure { path: path.clone(), instance: value, message: AfterValue(message) });
        let len = items.len() as u64;
        if let Some(min) = k.min_items.filter(|min| len < *min) {
            return fail(format!(" has less than {min} item{}", plural(min)));
        }
        if let Some(max) = k.max_items.filter(|max| len > *max) {
            return fail(format!(" has more than {max} item{}", plural(max)));
        }
        if k.unique_items {
            for (i, a) in items.iter().enumerate() {
                if items[..i].iter().any(|b| formats::equal(a, b)) {
                    return fail(" has non-unique elements".into());
                }
            }
        }
        for (i, item) in items.iter().enumerate() {
            let schema = k.prefix_items.get(i).or(if i >= k.prefix_items.len() { k.items.as_ref() } else { None });
            if let Some(schema) = schema {
                let mark = path.len();
                let _ = write!(path, "/{i}");
                let failure = self.first(schema, item, path, depth + 1);
                path.truncate(mark);
                if failure.is_some() {
                    return failure;
                }
            }
        }
        if let Some(contains) = &k.contains
            && !items.iter().any(|item| self.first(contains, item, &mut String::new(), depth + 1).is_none())
        {
            let message = Message::Around("None of ".into(), " are valid under the given schema".into());
            return Some(Failure { path: path.clone(), instance: value, message });
        }
        None
    }

    fn object_checks<'v>(&self, k: &Keywords, members: &'v Map<String, Value>, value: &'v Value, path: &mut String, depth: usize) -> Option<Failure<'v>> {
        let whole = |path: &String, text: String| Some(Failure { path: path.clone(), instance: value, message: Message::Whole(text) });
        for name in &k.required {
            if !members.contains_key(name) {
                return whole(path, format!("{} is a required property", Value::String(name.clone())));
            }
        }
        for (name, needs) in &k.dependent_required {
            if members.contains_key(name)
                && let Some(missing) = needs.iter().find(|n| !members.contains_key(*n))
            {
                return whole(path, format!("{} is a required property", Value::String(missing.clone())));
            }
        }
        let len = members.len() as u64;
        if let Some(min) = k.min_properties.filter(|min| len < *min) {
            return Some(Failure { path: path.clone(), instance: value, message: AfterValue(format!(" has less than {min} propert{}", if min == 1 { "y" } else { "ies" })) });
        }
        if let Some(max) = k.max_properties.filter(|max| len > *max) {
            return Some(Failure { path: path.clone(), instance: value, message: AfterValue(format!(" has more than {max} propert{}", if max == 1 { "y" } else { "ies" })) });
        }
        let mut unexpected = Vec::new();
        for (name, member) in members {
            let mark = path.len();
            let _ = write!(path, "/{}", name.replace('~', "~0").replace('/', "~1"));
            let mut matched = false;
            if let Some((_, schema)) = k.properties.iter().find(|(n, _)| n == name) {
                matched = true;
                if let Some(failure) = self.first(schema, member, path, depth + 1) {
                    return Some(failure);
                }
            }
            for (pattern, schema) in &k.pattern_properties {
                if pattern.is_match(name) {
                    matched = true;
                    if let Some(failure) = self.first(schema, member, path, depth + 1) {
                        return Some(failure);
                    }
                }
            }
            path.truncate(mark);
            if let Some(names) = &k.property_names {
                let key = Value::String(name.clone());
                if let Some(inner) = self.first(names, &key, &mut String::new(), depth + 1) {
                    // As the reference: the name's own refusal, at the object.
                    return whole(path, super::describe("", &key, |shown| inner.masked_with(shown)));
                }
            }
            if !matched {
                match &k.additional {
                    Some(Node::Bool(false)) => unexpected.push(name.as_str()),
                    Some(schema) => {
                        let _ = write!(path, "/{}", name.replace('~', "~0").replace('/', "~1"));
                        let failure = self.first(schema, member, path, depth + 1);
                        path.truncate(mark);
                        if failure.is_some() {
                            return failure;
                        }
                    }
                    None => {}
                }
            }
        }
        if !unexpected.is_empty() {
            let quoted: Vec<String> = unexpected.iter().map(|n| format!("'{n}'")).collect();
            let verb = if unexpected.len() == 1 { "was" } else { "were" };
            return whole(path, format!("Additional properties are not allowed ({} {verb} unexpected)", quoted.join(", ")));
        }
        None
    }

    fn applicator_checks<'v>(&self, k: &Keywords, value: &'v Value, path: &mut String, depth: usize) -> Option<Failure<'v>> {
        for schema in &k.all_of {
            if let Some(failure) = self.first(schema, value, path, depth + 1) {
                return Some(failure);
            }
        }
        let valid = |schema: &Node| self.first(schema, value, &mut String::new(), depth + 1).is_none();
        let after = |text: &str| Some(Failure { path: path.clone(), instance: value, message: AfterValue(text.to_owned()) });
        if !k.any_of.is_empty() && !k.any_of.iter().any(valid) {
            return after(" is not valid under any of the schemas listed in the 'anyOf' keyword");
        }
        if !k.one_of.is_empty() {
            match k.one_of.iter().filter(|s| valid(s)).count() {
                0 => return after(" is not valid under any of the schemas listed in the 'oneOf' keyword"),
                1 => {}
                _ => return after(" is valid under more than one of the schemas listed in the 'oneOf' keyword"),
            }
        }
        if let Some((not, schema)) = &k.not
            && valid(not)
        {
            let message = Message::Around(format!("{schema} is not allowed for "), String::new());
            return Some(Failure { path: path.clone(), instance: value, message });
        }
        if let Some((condition, then, otherwise)) = &k.condition {
            let branch = if valid(condition) { then } else { otherwise };
            if let Some(schema) = branch {
                return self.first(schema, value, path, depth + 1);
            }
        }
        None
    }
}

fn string_checks<'v>(k: &Keywords, text: &str, value: &'v Value, path: &str) -> Option<Failure<'v>> {
    let fail = |message: String| Some(Failure { path: path.to_owned(), instance: value, message: AfterValue(message) });
    let chars = || text.chars().count() as u64;
    if let Some(min) = k.min_length.filter(|min| chars() < *min) {
        return fail(format!(" is shorter than {min} character{}", plural(min)));
    }
    if let Some(max) = k.max_length.filter(|max| chars() > *max) {
        return fail(format!(" is longer than {max} character{}", plural(max)));
    }
    if let Some((source, pattern)) = &k.pattern
        && !pattern.is_match(text)
    {
        return fail(format!(" does not match {}", Value::String(source.clone())));
    }
    if let Some(format) = &k.format
        && !formats::valid(format, text)
    {
        return fail(format!(" is not a \"{format}\""));
    }
    None
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A bound as the `jsonschema` crate shows it: integers without a fraction.
fn shown_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 9.0e15 { format!("{}", n as i64) } else { format!("{n}") }
}

/// ` is not one of "a", "b" or "c"` (three at most, then a count).
fn enum_message(options: &[Value]) -> String {
    let mut out = String::from(" is not one of ");
    if options.len() <= 3 {
        for (i, option) in options.iter().enumerate() {
            let sep = match i {
                0 => "",
                i if i == options.len() - 1 => " or ",
                _ => ", ",
            };
            let _ = write!(out, "{sep}{option}");
        }
    } else {
        for (i, option) in options.iter().take(2).enumerate() {
            let _ = write!(out, "{}{option}", if i == 0 { "" } else { ", " });
        }
        let _ = write!(out, " or {} other candidates", options.len() - 2);
    }
    out
}
