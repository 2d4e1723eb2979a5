//! Validation of named arguments against a method's input schema, at a
//! cost bounded whatever the arguments hold.
//!
//! Valid arguments cost one allocation-free `is_valid` over the whole
//! schema. Invalid ones are examined parameter by parameter, each against
//! its own compiled validator (its property schema with the definitions it
//! refers to), and each reports its **first** error only; `required` and
//! unknown parameters are checked from the schema itself. So an invalid call
//! never collects more errors than it has parameters:
//!
//! * a message shows the offending value only when it renders in at most
//!   [`MAX_VALUE_SHOWN`] bytes (else "an array of 50000 items", ...), and is
//!   cut to [`MAX_MESSAGE_BYTES`];
//! * at most [`MAX_UNKNOWN_LISTED`] unknown names are listed, each cut to
//!   [`MAX_NAME_BYTES`], the others counted under the key `"..."`;
//! * the reasons together stay within about [`MAX_REPORT_BYTES`]; reasons
//!   beyond are counted under `"..."`;
//! * a large value (more than [`LARGE_VALUE_NODES`] JSON values) is not
//!   examined under `anyOf`/`oneOf`, whose errors carry those of every
//!   alternative: it gets a type mismatch or a general reason instead.

use std::fmt::{self, Write as _};

use serde_json::{Map, Value};

use crate::error::RpcError;
use crate::schema::{attach_defs, decode_pointer_token};
use engine::Engine;
use types::{TYPES, has_type, type_of};

#[cfg(any(test, not(feature = "jsonschema")))]
mod builtin;
mod engine;
#[cfg(any(test, not(feature = "jsonschema")))]
mod formats;
mod types;

/// The longest rendering of a value a message shows.
pub const MAX_VALUE_SHOWN: usize = 64;
/// The longest message per parameter, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 256;
/// The longest unknown parameter name shown, in bytes.
pub const MAX_NAME_BYTES: usize = 64;
/// Unknown parameter names listed; the others are counted.
pub const MAX_UNKNOWN_LISTED: usize = 10;
/// About the most bytes of names and reasons one error lists.
pub const MAX_REPORT_BYTES: usize = 2048;
/// Values with more JSON values than this are not examined under `anyOf`/`oneOf`.
pub const LARGE_VALUE_NODES: usize = 1000;
/// The key under which what is left out is counted.
pub const MORE_KEY: &str = "...";

/// A compiled validator for a method's input schema.
pub struct ParamValidator {
    /// The whole schema: valid arguments pass with one `is_valid`.
    whole: Engine,
    /// One per declared parameter.
    params: Vec<ParamCheck>,
    /// Parameters without a default.
    required: Vec<String>,
    /// Whether names outside `properties` are refused (`additionalProperties: false`).
    closed: bool,
}

struct ParamCheck {
    name: String,
    validator: Engine,
    /// Whether the schema (with what it refers to) has `anyOf`/`oneOf`.
    composite: bool,
    /// The JSON types its values may have at the top level; `None`: any.
    types: Option<Vec<&'static str>>,
}

impl fmt::Debug for ParamValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
        f.debug_struct("ParamValidator").field("params", &names).finish_non_exhaustive()
    }
}

fn compile(schema: &Value) -> Result<Engine, String> {
    Engine::compile(schema)
}

impl ParamValidator {
    /// Compiles `schema` (an input schema: an object schema with one
    /// property per parameter, its definitions in `$defs`). Fails when the
    /// schema itself is invalid.
    pub fn new(schema: &Value) -> Result<Self, String> {
        let whole = compile(schema)?;
        let empty = Map::new();
        let defs = schema.get("$defs").and_then(Value::as_object).unwrap_or(&empty);
        let mut params = Vec::new();
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                let own = attach_defs(property.clone(), defs);
                let validator = compile(&own).map_err(|e| format!("parameter `{name}`: {e}"))?;
                let mut composite = false;
                let mut probe = own;
                crate::schema::visit_schemas(&mut probe, &mut |map| {
                    composite |= map.contains_key("anyOf") || map.contains_key("oneOf");
                });
                params.push(ParamCheck {
                    name: name.clone(),
                    validator,
                    composite,
                    types: top_types(property, defs, 0),
                });
            }
        }
        let required = match schema.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            _ => Vec::new(),
        };
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        Ok(ParamValidator { whole, params, required, closed })
    }

    /// Validates named arguments; on failure the `-32602` error maps each
    /// offending parameter to its reason (see the [module](self) for bounds).
    pub fn validate(&self, method: &str, args: &Value) -> Result<(), RpcError> {
        if self.whole.is_valid(args) {
            return Ok(());
        }
        let mut report = Report::default();
        let Some(object) = args.as_object() else {
            report.push("", first_error(&self.whole, args));
            return Err(report.into_error(method));
        };
        for name in &self.required {
            if !object.contains_key(name) {
                report.push(name, "required parameter is missing".into());
            }
        }
        if self.closed {
            let mut unknown = 0usize;
            for name in object.keys().filter(|n| !self.params.iter().any(|p| p.name == **n)) {
                unknown += 1;
                if unknown <= MAX_UNKNOWN_LISTED {
                    report.push(&cut(name, MAX_NAME_BYTES), "unknown parameter".into());
                }
            }
            if unknown > MAX_UNKNOWN_LISTED {
                report.note(format!("{} more unknown parameters", unknown - MAX_UNKNOWN_LISTED));
            }
        }
        for param in &self.params {
            if let Some(value) = object.get(&param.name)
                && !param.validator.is_valid(value)
            {
                report.push(&param.name, param.first_error(value));
            }
        }
        if report.is_empty() {
            // Refused by a keyword of the whole schema, not by a parameter.
            report.push("", first_error(&self.whole, args));
        }
        Err(report.into_error(method))
    }

    /// Whether `value` validates.
    pub fn is_valid(&self, value: &Value) -> bool {
        self.whole.is_valid(value)
    }
}

impl ParamCheck {
    /// The reason `value` (known to be invalid) is refused.
    fn first_error(&self, value: &Value) -> String {
        if self.composite && more_nodes_than(value, LARGE_VALUE_NODES) {
            let mut out = Bounded::new(MAX_MESSAGE_BYTES);
            let shown = summary(value);
            let _ = match &self.types {
                Some(types) if !types.iter().any(|t| has_type(value, t)) => {
                    let quoted: Vec<String> = types.iter().map(|t| format!("\"{t}\"")).collect();
                    let plural = if types.len() == 1 { "" } else { "s" };
                    write!(out, "{shown} is not of type{plural} {}", quoted.join(", "))
                }
                _ => write!(out, "{shown} does not match the schema (values this large are not examined further)"),
            };
            return out.finish();
        }
        first_error(&self.validator, value)
    }
}

/// The first error of `validator` on `value`, bounded.
fn first_error(validator: &Engine, value: &Value) -> String {
    validator.first_error(value).unwrap_or_else(|| "invalid value".into())
}

/// An error as a message: where (within the parameter, a JSON pointer),
/// then what, showing the value (`instance`) only if it is short;
/// `masked_with` gives the message with the value shown as told.
pub(super) fn describe(path: &str, instance: &Value, masked_with: impl FnOnce(&str) -> String) -> String {
    let shown = render(instance, MAX_VALUE_SHOWN).unwrap_or_else(|| summary(instance));
    let mut out = Bounded::new(MAX_MESSAGE_BYTES);
    let _ = if path.is_empty() {
        write!(out, "{}", masked_with(&shown))
    } else {
        write!(out, "at {path}: {}", masked_with(&shown))
    };
    out.finish()
}

/// `value` as compact JSON if that takes at most `max` bytes.
fn render(value: &Value, max: usize) -> Option<String> {
    let mut out = Bounded::new(max);
    write!(out, "{value}").ok()?;
    (!out.truncated).then_some(out.text)
}

/// A few words on a value too long to show.
fn summary(value: &Value) -> String {
    match value {
        Value::Array(items) => format!("an array of {} items", items.len()),
        Value::Object(members) => format!("an object of {} members", members.len()),
        Value::String(s) => format!("a string of {} bytes", s.len()),
        Value::Number(_) => "a number".into(),
        Value::Bool(_) | Value::Null => value.to_string(),
    }
}

/// Whether `value` holds more than `limit` JSON values (itself included);
/// stops counting past the limit.
fn more_nodes_than(value: &Value, limit: usize) -> bool {
    let mut stack = vec![value];
    let mut count = 0usize;
    while let Some(v) = stack.pop() {
        count += 1;
        if count > limit {
            return true;
        }
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(members) => stack.extend(members.values()),
            _ => {}
        }
    }
    false
}

/// The JSON types an instance of `schema` may have at its top level, from
/// `type`, `const`, `enum`, `$ref` (into `defs`) and `anyOf`/`oneOf`;
/// `None` when unconstrained or not understood (a superset is fine: it only
/// picks a clearer message).
fn top_types(schema: &Value, defs: &Map<String, Value>, depth: usize) -> Option<Vec<&'static str>> {
    let map = match schema {
        Value::Object(map) if depth < 16 => map,
        Value::Bool(false) => return Some(Vec::new()),
        _ => return None,
    };
    let mut allowed: Option<Vec<&'static str>> = None;
    let mut narrow = |set: Vec<&'static str>| {
        allowed = Some(match allowed.take() {
            None => set,
            Some(before) => before.into_iter().filter(|t| set.contains(t)).collect(),
        });
    };
    match map.get("type") {
        Some(Value::String(t)) => narrow(TYPES.iter().copied().filter(|k| k == t).collect()),
        Some(Value::Array(ts)) => {
            narrow(TYPES.iter().copied().filter(|k| ts.iter().any(|t| t.as_str() == Some(k))).collect())
        }
        _ => {}
    }
    if let Some(value) = map.get("const") {
        narrow(vec![type_of(value)]);
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        narrow(values.iter().map(type_of).collect());
    }
    if let Some(Value::String(reference)) = map.get("$ref")
        && let Some(def) = reference.strip_prefix("#/$defs/").and_then(|n| defs.get(&decode_pointer_token(n)))
        && let Some(types) = top_types(def, defs, depth + 1)
    {
        narrow(types);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = map.get(key) {
            let union: Option<Vec<Vec<&'static str>>> =
                branches.iter().map(|b| top_types(b, defs, depth + 1)).collect();
            if let Some(union) = union {
                narrow(union.into_iter().flatten().collect());
            }
        }
    }
    // "number" admits integers; "integer" alone is checked by `has_type`.
    if let Some(types) = &mut allowed {
        types.sort_unstable();
        types.dedup();
    }
    allowed
}

/// `name` cut to `max` bytes at a character boundary, marked with `…` when cut.
fn cut(name: &str, max: usize) -> String {
    if name.len() <= max { name.to_owned() } else { format!("{}…", &name[..name.floor_char_boundary(max)]) }
}

/// A string that stops growing at a bound: writing past it fails, so
/// formatting a large value stops early instead of rendering it whole.
struct Bounded {
    text: String,
    max: usize,
    truncated: bool,
}

impl Bounded {
    fn new(max: usize) -> Self {
        Bounded { text: String::new(), max, truncated: false }
    }

    /// The text, marked with `…` if it was cut.
    fn finish(mut self) -> String {
        if self.truncated {
            self.text.push('…');
        }
        self.text
    }
}

impl fmt::Write for Bounded {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = self.max - self.text.len();
        if s.len() <= room {
            self.text.push_str(s);
            return Ok(());
        }
        self.text.push_str(&s[..s.floor_char_boundary(room)]);
        self.truncated = true;
        Err(fmt::Error)
    }
}

/// The reasons of one error, within [`MAX_REPORT_BYTES`].
#[derive(Default)]
struct Report {
    reasons: Map<String, Value>,
    bytes: usize,
    left_out: usize,
    notes: Vec<Value>,
}

impl Report {
    fn push(&mut self, name: &str, reason: String) {
        let cost = name.len() + reason.len() + 8;
        if self.bytes + cost > MAX_REPORT_BYTES {
            self.left_out += 1;
            return;
        }
        self.bytes += cost;
        if let Value::Array(list) = self.reasons.entry(name).or_insert_with(|| Value::Array(Vec::new())) {
            list.push(Value::String(reason));
        }
    }

    /// A remark on what is not listed, under [`MORE_KEY`].
    fn note(&mut self, text: String) {
        self.notes.push(Value::String(text));
    }

    fn is_empty(&self) -> bool {
        self.reasons.is_empty() && self.left_out == 0
    }

    fn into_error(mut self, method: &str) -> RpcError {
        if self.left_out > 0 {
            self.notes.push(Value::String(format!("{} more reasons not shown", self.left_out)));
        }
        if !self.notes.is_empty() {
            self.reasons.insert(MORE_KEY.into(), Value::Array(self.notes));
        }
        RpcError::invalid_param_list(method, self.reasons)
    }
}

#[cfg(test)]
mod differential;
#[cfg(test)]
mod tests;
