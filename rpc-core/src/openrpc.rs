//! OpenRPC 1.3.2 documents, one per API version.
//!
//! Built from the same compile-time metadata as the MCP tools, with one
//! schema generator per document so DTOs land once in
//! `components.schemas` and are referenced as `#/components/schemas/...`.

use serde_json::{Map, Value, json};

use std::collections::{BTreeMap, BTreeSet};

use crate::descriptor::{MethodDescriptor, ServiceDescriptor};
use crate::error_codes::{self, ErrorCode};
use crate::i18n::{Field, Language, SERVER_KEY, Translations};
use crate::registry::{Method, Registry};
use crate::schema::{param_properties, shared_generator};

/// The `info` block of the documents: `ApiInfo::new(title, version)`,
/// then optionally [`description`](ApiInfo::description),
/// [`license`](ApiInfo::license) and [`contact`](ApiInfo::contact).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ApiInfo {
    /// API title.
    pub title: String,
    /// Application version (not the API version).
    pub version: String,
    /// Description.
    pub description: Option<String>,
    /// The license the API is offered under (`info.license`).
    pub license: Option<License>,
    /// Who to contact about the API (`info.contact`).
    pub contact: Option<Contact>,
}

/// `info.license`: a license name and, optionally, its URL.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct License {
    /// The license's name (`MIT`, `Apache-2.0`, ...).
    pub name: String,
    /// Where its text is (left out when empty).
    pub url: String,
}

/// `info.contact`: a name, a URL and an email address, each left out when empty.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Contact {
    /// The person or organisation.
    pub name: String,
    /// A web page about the API or its maintainers.
    pub url: String,
    /// An email address.
    pub email: String,
}

impl ApiInfo {
    /// An API titled `title`, at application version `version`.
    pub fn new(title: impl Into<String>, version: impl Into<String>) -> Self {
        ApiInfo { title: title.into(), version: version.into(), description: None, license: None, contact: None }
    }

    /// The API's description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The license the API is offered under: its name and the URL of its
    /// text (`""`: none).
    pub fn license(mut self, name: impl Into<String>, url: impl Into<String>) -> Self {
        self.license = Some(License { name: name.into(), url: url.into() });
        self
    }

    /// Who to contact about the API: a name, a URL and an email address
    /// (each `""` to leave it out).
    pub fn contact(mut self, name: impl Into<String>, url: impl Into<String>, email: impl Into<String>) -> Self {
        self.contact = Some(Contact { name: name.into(), url: url.into(), email: email.into() });
        self
    }
}

impl Default for ApiInfo {
    fn default() -> Self {
        ApiInfo::new("JSON-RPC API", "1.0.0")
    }
}

/// The object of `fields` that are not empty.
fn non_empty(fields: &[(&str, &str)]) -> Value {
    Value::Object(fields.iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| ((*k).to_owned(), json!(v))).collect())
}

/// Where a document's texts come from: the translations, in a language.
#[derive(Debug, Clone, Copy)]
pub struct Texts<'a> {
    /// The translations.
    pub translations: &'a Translations,
    /// The language of the document.
    pub language: Language,
}

/// Builds the OpenRPC document of `version`, restricted to group `scope` if
/// given, with titles and descriptions from `texts` (falling back to the
/// doc comments). `server_url` goes into `servers`. `None` if the version
/// does not exist.
pub fn document(
    registry: &Registry,
    version: u32,
    scope: Option<&str>,
    info: &ApiInfo,
    server_url: &str,
    texts: Texts<'_>,
) -> Option<Value> {
    let text = |key: &str, field| texts.translations.text(scope, texts.language, key, field);
    let table = registry.version(version)?;
    let mut generator = shared_generator("/components/schemas");
    let mut errors = Map::new();
    let served: Vec<&Method> = table.iter().filter(|m| scope.is_none_or(|g| m.in_group(g))).map(|m| &**m).collect();
    let tags = tags(&served);
    let methods: Vec<Value> = served
        .iter()
        .map(|m| {
            let mut object = method_object(m, &mut generator, &text);
            if let Value::Object(fields) = &mut object {
                let name = tag_name(m.service());
                fields.insert("tags".into(), json!([tags.get(name).cloned().unwrap_or(Value::Null)]));
                let listed = method_errors(m.descriptor(), &mut generator, &mut errors);
                if !listed.is_empty() {
                    fields.insert("errors".into(), Value::Array(listed));
                }
            }
            object
        })
        .collect();
    let schemas = generator.take_definitions(true);

    let versions: Vec<String> = registry.versions().map(|v| format!("v{v}")).collect();
    let mut info_obj = Map::new();
    info_obj.insert("title".into(), json!(text(SERVER_KEY, Field::Title).unwrap_or(&info.title)));
    info_obj.insert("version".into(), json!(info.version));
    if let Some(d) = text(SERVER_KEY, Field::Description).or(info.description.as_deref()) {
        info_obj.insert("description".into(), json!(d));
    }
    if let Some(license) = &info.license {
        info_obj.insert("license".into(), non_empty(&[("name", &license.name), ("url", &license.url)]));
    }
    if let Some(contact) = &info.contact {
        let fields = [("name", contact.name.as_str()), ("url", &contact.url), ("email", &contact.email)];
        info_obj.insert("contact".into(), non_empty(&fields));
    }
    info_obj.insert("x-api-version".into(), json!(format!("v{version}")));
    info_obj.insert("x-versions".into(), json!(versions));

    let mut schemas = Value::Object(schemas.into_iter().collect());
    if let Value::Object(defs) = &mut schemas {
        defs.values_mut().for_each(crate::schema::add_integer_bounds);
    }
    let doc = json!({
        "openrpc": "1.3.2",
        "info": info_obj,
        "servers": [{"name": format!("v{version}"), "url": server_url}],
        "methods": methods,
        "components": {"schemas": schemas, "errors": errors},
    });
    Some(doc)
}

fn method_object<'t>(
    method: &Method,
    generator: &mut schemars::SchemaGenerator,
    text: &impl Fn(&str, Field) -> Option<&'t str>,
) -> Value {
    let d = method.descriptor();
    let schemas = d.schemas(generator);
    let properties = param_properties(d, schemas.params);
    let params: Vec<Value> = d
        .params
        .iter()
        .filter(|p| p.is_param)
        .map(|p| {
            let mut obj = Map::new();
            obj.insert("name".into(), json!(p.name));
            if let Some(desc) = p.description {
                obj.insert("description".into(), json!(desc));
            }
            obj.insert("required".into(), json!(p.required));
            let mut schema = properties.get(p.name).cloned().unwrap_or(Value::Bool(true));
            crate::schema::add_integer_bounds(&mut schema);
            obj.insert("schema".into(), schema);
            Value::Object(obj)
        })
        .collect();
    let mut result_schema = match (d.output, schemas.result) {
        (crate::descriptor::OutputKind::Value, Some(s)) => s.to_value(),
        _ => json!({"type": "null"}),
    };
    crate::schema::add_integer_bounds(&mut result_schema);
    let mut obj = Map::new();
    obj.insert("name".into(), json!(d.name));
    if let Some(s) = text(d.name, Field::Title).or(d.summary) {
        obj.insert("summary".into(), json!(s));
    }
    if let Some(desc) = text(d.name, Field::Description).or(d.description) {
        obj.insert("description".into(), json!(desc));
    }
    obj.insert("params".into(), Value::Array(params));
    obj.insert("result".into(), json!({"name": "result", "schema": result_schema}));
    obj.insert("deprecated".into(), json!(d.deprecated.is_some()));
    obj.insert("paramStructure".into(), json!("either"));
    if !d.scopes.is_empty() {
        // The OAuth scopes a caller needs, all of them (`scopes(...)`).
        obj.insert("x-scopes".into(), json!(d.scopes));
    }
    Value::Object(obj)
}

/// The tag of a service block: its alias, or its type's name when the
/// alias is empty.
fn tag_name(service: &ServiceDescriptor) -> &'static str {
    match service.alias {
        "" => service.type_name.rsplit("::").next().unwrap_or(service.type_name),
        alias => alias,
    }
}

/// The tag object of each service name among `methods`, described by the
/// doc comment of one of its impl blocks: of the latest version that has
/// one (several blocks, and versions, may share an alias).
fn tags(methods: &[&Method]) -> BTreeMap<&'static str, Value> {
    let mut described: BTreeMap<&'static str, (u32, &'static str)> = BTreeMap::new();
    let mut names = BTreeSet::new();
    let mut services: Vec<&ServiceDescriptor> = methods.iter().map(|m| m.service()).collect();
    services.sort_by_key(|s| (s.version, s.file, s.line));
    for service in services {
        let name = tag_name(service);
        names.insert(name);
        if let Some(description) = service.description
            && described.get(name).is_none_or(|(version, _)| *version < service.version)
        {
            described.insert(name, (service.version, description));
        }
    }
    names
        .into_iter()
        .map(|name| {
            let mut tag = Map::new();
            tag.insert("name".into(), json!(name));
            if let Some((_, description)) = described.get(name) {
                tag.insert("description".into(), json!(description));
            }
            (name, Value::Object(tag))
        })
        .collect()
}

/// The method's `errors`: the framework's errors it can get (by what it
/// declares), then its error type's codes, each a `$ref` into
/// `components.errors` (inline when another error took its key).
fn method_errors(
    method: &MethodDescriptor,
    generator: &mut schemars::SchemaGenerator,
    components: &mut Map<String, Value>,
) -> Vec<Value> {
    let mut listed = Vec::new();
    let own = (method.errors)();
    for error in framework_errors(method).iter().chain(own) {
        let object = error_object(error, generator);
        let key = error.component_key();
        match components.get(&key) {
            Some(existing) if *existing != object => listed.push(object),
            Some(_) => listed.push(json!({"$ref": format!("#/components/errors/{key}")})),
            None => {
                listed.push(json!({"$ref": format!("#/components/errors/{key}")}));
                components.insert(key, object);
            }
        }
    }
    listed
}

/// An OpenRPC error object: code, message, and the schema of the error's
/// `data` (`x-data-schema`: `exception`, the error type, and `extra`, what
/// the error exposes; in dev and test `data` carries more) when it exposes data.
fn error_object(error: &ErrorCode, generator: &mut schemars::SchemaGenerator) -> Value {
    let mut object = Map::new();
    object.insert("code".into(), json!(error.code));
    object.insert("message".into(), json!(error.message));
    if let Some(data) = error.data {
        let mut extra = data(generator).to_value();
        crate::schema::add_integer_bounds(&mut extra);
        object.insert(
            "x-data-schema".into(),
            json!({
                "type": "object",
                "properties": {"exception": {"type": "string"}, "extra": extra},
                "required": ["exception", "extra"],
            }),
        );
    }
    Value::Object(object)
}

/// The framework's errors that `method` can answer with, by what it
/// declares: `-32602` when it takes parameters, `-32400` when it is locked,
/// `-32403` when it needs scopes. Errors any call may get (`-32601`,
/// `-32603`, `-32000` on `$rpc.timeout`, `-32429` under a rate limit) are
/// not repeated for every method.
fn framework_errors(method: &MethodDescriptor) -> Vec<ErrorCode> {
    let mut errors = Vec::new();
    if method.params.iter().any(|p| p.is_param) {
        errors.push(error_codes::INVALID_PARAMS);
    }
    if method.lock.is_some() {
        errors.push(error_codes::LOCKED);
    }
    if !method.scopes.is_empty() {
        errors.push(error_codes::INSUFFICIENT_SCOPE);
    }
    errors
}
