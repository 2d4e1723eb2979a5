//! The resources of one API group and version: methods marked
//! `#[mcp_resource(uri = ...)]`. A URI without variables is a resource
//! (`resources/list`); one with variables is a resource template
//! (`resources/templates/list`). `resources/read` finds the resource whose
//! URI or template matches, runs its method with the URI's variables as
//! arguments, and turns the result into contents:
//!
//! * a string: text, of the resource's MIME type (default `text/plain`);
//! * [`Blob`](crate::Blob): base64 `blob`, of its own or the resource's
//!   MIME type (default `application/octet-stream`);
//! * [`ResourceContents`](crate::ResourceContents) or a `Vec` of them: as
//!   they are;
//! * any other value: its JSON as text (default `application/json`).

use std::sync::Arc;

use rpc::i18n::{Field, Language};
use rpc::{McpRole, Method, ResourceSpec};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::config::McpConfig;
use crate::markers;
use crate::pages::ListTexts;
use crate::protocol::ProtocolVersion;
use crate::uri_template::UriTemplate;
use crate::visibility::ScopedList;

/// How a resource method's result becomes contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    Text,
    Blob,
    Contents,
    Json,
}

/// One resource or resource template.
#[derive(Debug, Clone)]
pub struct Resource {
    /// The method behind it.
    pub method: Arc<Method>,
    /// Its annotation.
    pub spec: ResourceSpec,
    /// Its URI, compiled.
    pub template: UriTemplate,
    body: Body,
}

impl Resource {
    /// The resource's name: `#[mcp_resource(name)]`, else the method's.
    pub fn name(&self) -> &'static str {
        self.spec.name.unwrap_or(self.method.name())
    }

    /// The `contents` of a read of `uri`, from the method's result.
    pub fn contents(&self, uri: &str, result: &RawValue) -> Result<Value, String> {
        let mime = self.spec.mime_type;
        match self.body {
            Body::Text => {
                let text: String = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
                Ok(json!([{"uri": uri, "mimeType": mime.unwrap_or("text/plain"), "text": text}]))
            }
            Body::Json => {
                Ok(json!([{"uri": uri, "mimeType": mime.unwrap_or("application/json"), "text": result.get()}]))
            }
            Body::Blob => {
                let mut blob: Map<String, Value> = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
                let data = blob.remove("blob").ok_or("a blob without `blob`")?;
                let mime = blob
                    .remove("mimeType")
                    .and_then(|m| m.as_str().map(str::to_owned))
                    .unwrap_or_else(|| mime.unwrap_or("application/octet-stream").to_owned());
                Ok(json!([{"uri": uri, "mimeType": mime, "blob": data}]))
            }
            Body::Contents => {
                let value: Value = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
                Ok(match value {
                    Value::Array(items) => Value::Array(items),
                    one => Value::Array(vec![one]),
                })
            }
        }
    }
}

/// The resources and templates of one version of a group.
#[derive(Debug, Default)]
pub struct ResourceSet {
    /// Literal URIs first, then templates from the most literal text down.
    resources: Vec<Resource>,
    list: ScopedList,
    templates: ScopedList,
}

impl ResourceSet {
    /// The resources among `methods`; a URI template that does not compile
    /// (a descriptor written by hand) is logged and left out. With
    /// `scoped_callers`, a caller's lists hold what its scopes allow.
    pub fn build(
        methods: &[&Arc<Method>],
        config: &McpConfig,
        texts: &Arc<ListTexts>,
        scoped_callers: bool,
    ) -> ResourceSet {
        let mut resources: Vec<Resource> = methods
            .iter()
            .filter_map(|m| {
                let McpRole::Resource(spec) = m.descriptor().mcp else { return None };
                let template = match UriTemplate::parse(spec.uri) {
                    Ok(template) => template,
                    Err(why) => {
                        tracing::error!(method = m.name(), "resource left out: {why}");
                        return None;
                    }
                };
                Some(Resource { method: Arc::clone(m), spec, template, body: body_of(m) })
            })
            .collect();
        resources.sort_by_key(|r| (!r.template.is_literal(), std::cmp::Reverse(r.template.literal_len())));
        fn object(r: &Resource, texts: &ListTexts, language: Language, version: ProtocolVersion) -> Value {
            let name = r.method.name();
            let text = |field| texts.translations.text(Some(&texts.group), language, name, field);
            let mut obj = Map::new();
            let key = if r.template.is_literal() { "uri" } else { "uriTemplate" };
            obj.insert(key.into(), json!(r.spec.uri));
            obj.insert("name".into(), json!(r.name()));
            if version.has_structured_output()
                && let Some(title) = text(Field::Title).or(r.spec.title)
            {
                obj.insert("title".into(), json!(title));
            }
            let description = text(Field::Description).map(str::to_owned).or_else(|| r.method.full_description());
            if let Some(description) = description {
                obj.insert("description".into(), json!(description));
            }
            if let Some(mime) = r.spec.mime_type {
                obj.insert("mimeType".into(), json!(mime));
            }
            Value::Object(obj)
        }
        // Listed by URI; matched from the most specific down.
        let mut listed = resources.clone();
        listed.sort_by_key(|r| r.spec.uri);
        let (literal, templated): (Vec<Resource>, Vec<Resource>) =
            listed.into_iter().partition(|r| r.template.is_literal());
        let needs = |r: &Resource| r.method.descriptor().scopes;
        let list = ScopedList::build("resources", texts, config, literal, needs, object, scoped_callers);
        let templates = ScopedList::build("resourceTemplates", texts, config, templated, needs, object, scoped_callers);
        ResourceSet { resources, list, templates }
    }

    /// Whether there is no resource.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty()
    }

    /// The resource `uri` names, with the URI's variables.
    pub fn find(&self, uri: &str) -> Option<(&Resource, Vec<(String, String)>)> {
        self.resources.iter().find_map(|r| r.template.matches(uri).map(|vars| (r, vars)))
    }

    /// The resource template written `template` (completion refers to it so).
    pub fn template(&self, template: &str) -> Option<&Resource> {
        self.resources.iter().find(|r| r.spec.uri == template)
    }

    /// The `resources/list` pages, per caller.
    pub fn list(&self) -> &ScopedList {
        &self.list
    }

    /// The `resources/templates/list` pages, per caller.
    pub fn templates(&self) -> &ScopedList {
        &self.templates
    }
}

fn body_of(method: &Method) -> Body {
    let Some(result) = &method.schemas().result else { return Body::Json };
    if result.get("type") == Some(&json!("string")) {
        Body::Text
    } else if markers::marked(result, markers::BLOB) {
        Body::Blob
    } else if markers::marked(result, markers::RESOURCE_CONTENTS) {
        Body::Contents
    } else {
        Body::Json
    }
}
