//! The checks of the built-in validator: a value against a compiled
//! schema, its first refusal with the `jsonschema` crate's message.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::{AfterValue, Compiled, Failure, Keywords, MAX_DEPTH, Message, Node, formats};

impl Compiled {
    /// Whether `value` validates.
    pub(crate) fn is_valid(&self, value: &Value) -> bool {
        self.first(&self.root, value, &mut String::new(), 0).is_none()
    }

    /// The first refusal of `value`, if any.
    pub(crate) fn first_error<'v>(&self, value: &'v Value) -> Option<Failure<'v>> {
        self.first(&self.root, value, &mut String::new(), 0)
    }

    fn first<'v>(&self, node: &Node, value: &'v Value, path: &mut String, depth: usize) -> Option<Failure<'v>> {
        let fail = |path: &str, value: &'v Value, message: Message| {
            Some(Failure { path: path.to_owned(), instance: value, message })
        };
        let after = |text: String| AfterValue(text);
        let k = match node {
            Node::Bool(true) => return None,
            Node::Bool(false) => {
                return fail(path, value, Message::Around("False schema does not allow ".into(), String::new()));
            }
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
            && !types.iter().any(|t| crate::validation::types::has_type(value, t))
        {
            let message = match types.as_slice() {
                [one] => format!(" is not of type \"{one}\""),
                many => {
                    // In the reference's order: null, boolean, object, array, number, string, integer.
                    let mut sorted: Vec<&String> = many.iter().collect();
                    sorted.sort_by_key(|t| crate::validation::types::TYPES.iter().position(|o| o == t));
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
        let limit = |text: &str, bound: f64| {
            Some(Failure {
                path: path.to_owned(),
                instance: value,
                message: AfterValue(format!(" {text} {}", shown_number(bound))),
            })
        };
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

    fn array_checks<'v>(
        &self,
        k: &Keywords,
        items: &'v [Value],
        value: &'v Value,
        path: &mut String,
        depth: usize,
    ) -> Option<Failure<'v>> {
        let fail =
            |message: String| Some(Failure { path: path.clone(), instance: value, message: AfterValue(message) });
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

    fn object_checks<'v>(
        &self,
        k: &Keywords,
        members: &'v Map<String, Value>,
        value: &'v Value,
        path: &mut String,
        depth: usize,
    ) -> Option<Failure<'v>> {
        let whole = |path: &String, text: String| {
            Some(Failure { path: path.clone(), instance: value, message: Message::Whole(text) })
        };
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
            return Some(Failure {
                path: path.clone(),
                instance: value,
                message: AfterValue(format!(" has less than {min} propert{}", if min == 1 { "y" } else { "ies" })),
            });
        }
        if let Some(max) = k.max_properties.filter(|max| len > *max) {
            return Some(Failure {
                path: path.clone(),
                instance: value,
                message: AfterValue(format!(" has more than {max} propert{}", if max == 1 { "y" } else { "ies" })),
            });
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
                    return whole(path, crate::validation::describe("", &key, |shown| inner.masked_with(shown)));
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
            return whole(
                path,
                format!("Additional properties are not allowed ({} {verb} unexpected)", quoted.join(", ")),
            );
        }
        None
    }

    fn applicator_checks<'v>(
        &self,
        k: &Keywords,
        value: &'v Value,
        path: &mut String,
        depth: usize,
    ) -> Option<Failure<'v>> {
        for schema in &k.all_of {
            if let Some(failure) = self.first(schema, value, path, depth + 1) {
                return Some(failure);
            }
        }
        let valid = |schema: &Node| self.first(schema, value, &mut String::new(), depth + 1).is_none();
        let after =
            |text: &str| Some(Failure { path: path.clone(), instance: value, message: AfterValue(text.to_owned()) });
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
        return fail(format!(" does not match \"{source}\""));
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
