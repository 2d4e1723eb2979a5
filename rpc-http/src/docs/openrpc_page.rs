//! The [`Page`] of a JSON-RPC version, from its OpenRPC document.

use serde_json::{Map, Value};

use super::example::params_example;
use super::page::{Entry, Page, PageKind, Param, VersionLink};

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
/// (`tags`, `errors`, extensions) is shown as an annotation.
const SHOWN: [&str; 7] = ["name", "summary", "description", "params", "result", "deprecated", "paramStructure"];

/// The page of `doc` (an OpenRPC document).
pub fn jsonrpc_page(doc: &Value, context: PageContext<'_>) -> Page {
    let text = |value: &Value| value.as_str().map(str::to_owned);
    let methods = doc["methods"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mount = context.mount;
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
        entries: methods.iter().map(|m| entry(m, doc)).collect(),
        schemas: doc["components"]["schemas"].clone(),
    }
}

fn entry(method: &Value, doc: &Value) -> Entry {
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
        annotations,
        example,
    }
}
