//! The [`Page`] of a JSON-RPC version, from its OpenRPC document: each
//! method's errors (its `$ref`s resolved here into `components.errors`,
//! bounded; a missing, cyclic or foreign reference is reported, never
//! followed) and tags (services), and the tags' descriptions.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use super::example::params_example;
use super::page::{Entry, ErrorDoc, ErrorUse, Page, PageKind, Param, Tag, VersionLink};

/// What the page needs besides the document.
#[derive(Debug, Clone)]
pub struct PageContext<'a> {
    /// The endpoint's public URL (shown).
    pub endpoint: String,
    /// The path the endpoint is mounted at (`/rpc`).
    pub mount: &'a str,
    /// The version shown.
    pub version: u32,
    /// The versions served.
    pub versions: Vec<u32>,
    /// Whether the endpoint has an access policy.
    pub protected: bool,
    /// The language tag of the document's texts.
    pub language: &'a str,
}

/// Method fields the page shows in their own places; any other field
/// (extensions such as `x-scopes`) is shown as an annotation.
const SHOWN: [&str; 9] =
    ["name", "summary", "description", "params", "result", "deprecated", "paramStructure", "tags", "errors"];

/// Where a method's `{"$ref": ...}` to a shared error points.
const ERRORS_PREFIX: &str = "#/components/errors/";
/// Where a method's `{"$ref": ...}` to a shared tag points.
const TAGS_PREFIX: &str = "#/components/tags/";
/// How many references in a row are followed (a component that refers to
/// another): past this, the reference is reported, not followed.
const MAX_REF_HOPS: usize = 8;

/// The page of `doc` (an OpenRPC document).
pub fn jsonrpc_page(doc: &Value, context: PageContext<'_>) -> Page {
    let text = |value: &Value| value.as_str().map(str::to_owned);
    let methods = doc["methods"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mount = context.mount;
    let mut errors = Errors::new(doc);
    let mut tags = Tags::new(doc);
    let entries = methods.iter().map(|m| entry(m, doc, &mut errors, &mut tags)).collect();
    Page {
        kind: PageKind::JsonRpc,
        title: text(&doc["info"]["title"]).unwrap_or_else(|| "JSON-RPC API".to_owned()),
        description: text(&doc["info"]["description"]),
        app_version: text(&doc["info"]["version"]),
        language: context.language.to_owned(),
        version: context.version,
        versions: context
            .versions
            .iter()
            .map(|v| VersionLink {
                name: format!("v{v}"),
                href: format!("{mount}/v{v}"),
                current: *v == context.version,
            })
            .collect(),
        endpoint: context.endpoint,
        post_path: format!("{mount}/v{}", context.version),
        protected: context.protected,
        links: vec![("Postman collection".to_owned(), format!("{mount}/v{}/postman", context.version))],
        note: None,
        protocol: None,
        try_it: true,
        entries,
        schemas: doc["components"]["schemas"].clone(),
        tags: tags.list,
        errors: errors.used,
    }
}

fn entry(method: &Value, doc: &Value, errors: &mut Errors<'_>, tags: &mut Tags) -> Entry {
    let text = |value: &Value| value.as_str().map(str::to_owned);
    let params: Vec<Param> = method["params"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|p| Param {
            name: p["name"].as_str().unwrap_or_default().to_owned(),
            description: text(&p["description"]),
            required: p["required"].as_bool().unwrap_or(false),
            schema: p["schema"].clone(),
        })
        .collect();
    let example = params_example(params.iter().map(|p| (p.name.as_str(), p.required, &p.schema)), doc);
    let annotations: Map<String, Value> = method
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(key, _)| !SHOWN.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    Entry {
        name: method["name"].as_str().unwrap_or_default().to_owned(),
        title: text(&method["summary"]),
        description: text(&method["description"]),
        deprecated: method["deprecated"].as_bool().unwrap_or(false),
        params,
        input_schema: None,
        result: method["result"].get("schema").cloned(),
        tags: tags.of_method(&method["tags"], doc),
        errors: method["errors"].as_array().into_iter().flatten().map(|e| errors.of_method(e)).collect(),
        annotations,
        example,
    }
}

/// The key a local reference `#/components/<kind>/<key>` names (JSON
/// Pointer escapes undone), if `reference` starts with `prefix`.
fn local_key(reference: &str, prefix: &str) -> Option<String> {
    let key = reference.strip_prefix(prefix)?;
    (!key.contains('/')).then(|| key.replace("~1", "/").replace("~0", "~"))
}

/// An error object of the document as the page shows it.
fn error_doc(object: &Value) -> ErrorDoc {
    let text = |value: &Value| value.as_str().map(str::to_owned);
    ErrorDoc {
        code: object["code"].as_i64(),
        message: text(&object["message"]),
        description: text(&object["description"]).or_else(|| text(&object["x-description"])),
        data_schema: object.get("x-data-schema").cloned(),
        data: object.get("data").cloned(),
    }
}

/// The document's shared errors (`components.errors`): each reference
/// followed once (a cache), hops bounded, cycles and foreign references
/// reported instead of followed.
struct Errors<'a> {
    components: Option<&'a Map<String, Value>>,
    /// Reference -> the key it ends at, or why it does not.
    resolved: HashMap<String, Result<String, String>>,
    /// The components the page shows, by key.
    used: BTreeMap<String, ErrorDoc>,
}

impl<'a> Errors<'a> {
    fn new(doc: &'a Value) -> Self {
        Errors { components: doc["components"]["errors"].as_object(), resolved: HashMap::new(), used: BTreeMap::new() }
    }

    /// One item of a method's `errors`.
    fn of_method(&mut self, item: &Value) -> ErrorUse {
        let Some(object) = item.as_object() else {
            return ErrorUse::Unresolved { reference: String::new(), reason: "not an error object".to_owned() };
        };
        let Some(reference) = object.get("$ref") else {
            return ErrorUse::Inline(error_doc(item));
        };
        let Some(reference) = reference.as_str() else {
            return ErrorUse::Unresolved { reference: String::new(), reason: "$ref is not a string".to_owned() };
        };
        let outcome = match self.resolved.get(reference) {
            Some(outcome) => outcome.clone(),
            None => {
                let outcome = self.follow(reference);
                self.resolved.insert(reference.to_owned(), outcome.clone());
                outcome
            }
        };
        match outcome {
            Ok(key) => ErrorUse::Shared(key),
            Err(reason) => ErrorUse::Unresolved { reference: reference.to_owned(), reason },
        }
    }

    /// Follows `reference` (and the references it leads to) to an error
    /// object in `components.errors`; records it in `used`.
    fn follow(&mut self, reference: &str) -> Result<String, String> {
        let mut seen: Vec<String> = Vec::new();
        let mut reference = reference.to_owned();
        loop {
            let Some(key) = local_key(&reference, ERRORS_PREFIX) else {
                return Err(format!("not a reference into {ERRORS_PREFIX}"));
            };
            if seen.contains(&key) {
                return Err("a reference cycle".to_owned());
            }
            if seen.len() >= MAX_REF_HOPS {
                return Err(format!("more than {MAX_REF_HOPS} references in a row"));
            }
            let Some(object) = self.components.and_then(|c| c.get(&key)) else {
                return Err("no such error in components.errors".to_owned());
            };
            match object.get("$ref") {
                Some(Value::String(next)) => {
                    seen.push(key);
                    reference = next.clone();
                }
                Some(_) => return Err("$ref is not a string".to_owned()),
                None if !object.is_object() => return Err("not an error object".to_owned()),
                None => {
                    if !self.used.contains_key(&key) {
                        self.used.insert(key.clone(), error_doc(object));
                    }
                    return Ok(key);
                }
            }
        }
    }
}

/// The document's tags: the top-level `tags` list (if any), then
/// `components.tags`, then each method's, once by name (the first
/// description given wins).
struct Tags {
    list: Vec<Tag>,
    index: HashMap<String, usize>,
}

impl Tags {
    fn new(doc: &Value) -> Self {
        let mut tags = Tags { list: Vec::new(), index: HashMap::new() };
        for tag in doc["tags"].as_array().into_iter().flatten() {
            tags.add(tag, doc);
        }
        for tag in doc["components"]["tags"].as_object().into_iter().flatten().map(|(_, tag)| tag) {
            tags.add(tag, doc);
        }
        tags
    }

    /// The names of a method's tags (each once), adding new ones to the list.
    fn of_method(&mut self, method_tags: &Value, doc: &Value) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for tag in method_tags.as_array().into_iter().flatten() {
            if let Some(name) = self.add(tag, doc)
                && !names.contains(&name)
            {
                names.push(name);
            }
        }
        names
    }

    /// Adds a tag object (a name, a `$ref` into `components.tags`, one hop)
    /// and gives its name.
    fn add(&mut self, tag: &Value, doc: &Value) -> Option<String> {
        let tag = match tag.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let key = local_key(reference, TAGS_PREFIX)?;
                let target = &doc["components"]["tags"][key.as_str()];
                // A component's own `$ref` is not followed (no chains, no cycles).
                if target.get("$ref").is_some() { &Value::Null } else { target }
            }
            None => tag,
        };
        let (name, description) = match tag {
            Value::String(name) => (name.clone(), None),
            Value::Object(object) => (
                object.get("name").and_then(Value::as_str)?.to_owned(),
                object.get("description").and_then(Value::as_str).map(str::to_owned),
            ),
            _ => return None,
        };
        match self.index.get(&name) {
            Some(&at) => {
                if self.list[at].description.is_none() {
                    self.list[at].description = description;
                }
            }
            None => {
                self.index.insert(name.clone(), self.list.len());
                self.list.push(Tag { name: name.clone(), description });
            }
        }
        Some(name)
    }
}
