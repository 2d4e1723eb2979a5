//! OpenRPC 1.3.2 documents, one per API version.
//!
//! Built from the same compile-time metadata as the MCP tools, with one
//! schema generator per document so DTOs land once in
//! `components.schemas` and are referenced as `#/components/schemas/...`.

use serde_json::{Map, Value, json};

use crate::i18n::{Field, Language, SERVER_KEY, Translations};
use crate::registry::{Method, Registry};
use crate::schema::{param_properties, shared_generator};

/// The `info` block of the documents: `ApiInfo::new(title, version)`,
/// then optionally [`description`](ApiInfo::description).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ApiInfo {
    /// API title.
    pub title: String,
    /// Application version (not the API version).
    pub version: String,
    /// Description.
    pub description: Option<String>,
}

impl ApiInfo {
    /// An API titled `title`, at application version `version`.
    pub fn new(title: impl Into<String>, version: impl Into<String>) -> Self {
        ApiInfo { title: title.into(), version: version.into(), description: None }
    }

    /// The API's description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

impl Default for ApiInfo {
    fn default() -> Self {
        ApiInfo { title: "JSON-RPC API".into(), version: "1.0.0".into(), description: None }
    }
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
    let methods: Vec<Value> = table
        .iter()
        .filter(|m| scope.is_none_or(|g| m.in_group(g)))
        .map(|m| method_object(m, &mut generator, &text))
        .collect();
    let schemas = generator.take_definitions(true);

    let versions: Vec<String> = registry.versions().map(|v| format!("v{v}")).collect();
    let mut info_obj = Map::new();
    info_obj.insert("title".into(), json!(text(SERVER_KEY, Field::Title).unwrap_or(&info.title)));
    info_obj.insert("version".into(), json!(info.version));
    if let Some(d) = text(SERVER_KEY, Field::Description).or(info.description.as_deref()) {
        info_obj.insert("description".into(), json!(d));
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
        "components": {"schemas": schemas},
    });
    Some(doc)
}

fn method_object<'t>(
    method: &Method,
    generator: &mut schemars::SchemaGenerator,
    text: &impl Fn(&str, Field) -> Option<&'t str>,
) -> Value {
    let d = method.descriptor();
    let schemas = (d.schemas)(generator);
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
