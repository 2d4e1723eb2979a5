//! The HTML page of an MCP endpoint version (`GET /mcp/v{N}` from a
//! browser): the tools with their localised titles and descriptions,
//! schemas and annotations, and try-it forms that call them over the
//! 2026-07-28 (stateless) protocol. Rendered by `rpc::docs::page`, the
//! same template as the JSON-RPC page.

use http::{HeaderMap, Request, Response};
use rpc::docs::page::{Entry, Page, PageKind, Param, VersionLink};
use rpc::docs::{asks_for_event_stream, example, prefers_html};
use rpc::i18n::Language;
use rpc::server::ResponseBody;
use rpc::server::route::{inner_path, mount_path, original_path, public_url};
use serde_json::{Map, Value};

use super::McpEndpoint;
use crate::protocol::ProtocolVersion;

/// Tool fields the page shows in their own places; others (`_meta`) are
/// shown as annotations.
const SHOWN: [&str; 6] = ["name", "title", "description", "inputSchema", "outputSchema", "annotations"];

/// Whether a `GET` asks for the page: `Accept` prefers `text/html` to JSON
/// and does not name `text/event-stream` (a client opening a stream).
pub(crate) fn wants_page(headers: &HeaderMap) -> bool {
    prefers_html(headers) && !asks_for_event_stream(headers)
}

/// The page of `version` in `language`.
pub(crate) fn response<B: 'static>(
    endpoint: &McpEndpoint,
    version: u32,
    request: &Request<B>,
    language: Language,
) -> Response<ResponseBody> {
    let inner = &*endpoint.server.inner;
    let security = &endpoint.edge.security;
    let protocol = ProtocolVersion::V2026_07_28;
    let mut tools: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    // Every page of the prebuilt list (bounded: a cursor never repeats),
    // every tool: the page documents the server, as OpenRPC does.
    while let Some(bytes) = endpoint.tools_list(version, None, language, protocol, cursor.as_deref()) {
        let Ok(mut list) = serde_json::from_slice::<Value>(&bytes) else { break };
        if let Some(Value::Array(page)) = list.get_mut("tools").map(Value::take) {
            tools.extend(page);
        }
        match list.get("nextCursor").and_then(Value::as_str) {
            Some(next) if cursor.as_deref() != Some(next) => cursor = Some(next.to_owned()),
            _ => break,
        }
    }
    let texts = inner.texts(language);
    let group = Some(inner.group.as_str());
    let mount = mount_path(original_path(request), inner_path(request));
    let versions: Vec<VersionLink> = inner
        .tools
        .versions()
        .filter(|v| security.is_available(group, *v))
        .map(|v| VersionLink { name: format!("v{v}"), href: format!("{mount}/v{v}"), current: v == version })
        .collect();
    let stateless = inner.config.eras.stateless();
    let info = &texts.server_info;
    let page = Page {
        kind: PageKind::Mcp,
        title: info.title.clone().unwrap_or_else(|| info.name.clone()),
        description: info.description.clone().or_else(|| texts.instructions.clone()),
        app_version: Some(info.version.clone()),
        language: inner.translations.tag(language).to_owned(),
        version,
        versions,
        endpoint: public_url(request, None),
        post_path: format!("{mount}/v{version}"),
        protected: security.has_access_policy(),
        links: Vec::new(),
        note: (!stateless).then(|| {
            "This endpoint serves the handshake era only (initialize, then a session): \
             the page cannot call its tools."
                .to_owned()
        }),
        protocol: Some(protocol.as_str().to_owned()),
        try_it: stateless,
        entries: tools.iter().map(entry).collect(),
        schemas: Value::Null,
        tags: Vec::new(),
        errors: Default::default(),
    };
    rpc::docs::page::response(&page)
}

fn entry(tool: &Value) -> Entry {
    let text = |value: &Value| value.as_str().map(str::to_owned);
    let input = &tool["inputSchema"];
    let required: Vec<&str> = input["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let params: Vec<Param> = input["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, schema)| Param {
            name: name.clone(),
            description: text(&schema["description"]),
            required: required.contains(&name.as_str()),
            schema: schema.clone(),
        })
        .collect();
    let mut annotations: Map<String, Value> = tool["annotations"].as_object().cloned().unwrap_or_default();
    for (key, value) in tool.as_object().into_iter().flatten() {
        if !SHOWN.contains(&key.as_str()) {
            annotations.insert(key.clone(), value.clone());
        }
    }
    Entry {
        name: tool["name"].as_str().unwrap_or_default().to_owned(),
        title: text(&tool["title"]),
        description: text(&tool["description"]),
        deprecated: false,
        params,
        input_schema: Some(input.clone()),
        result: tool.get("outputSchema").cloned(),
        tags: Vec::new(),
        errors: Vec::new(),
        annotations,
        example: example(input, input),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use http::header::ACCEPT;
    use serde_json::json;

    #[test]
    fn only_browsers_get_the_page() {
        let accept = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(ACCEPT, HeaderValue::from_str(value).unwrap());
            headers
        };
        assert!(wants_page(&accept("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")));
        assert!(!wants_page(&accept("text/event-stream")));
        assert!(!wants_page(&accept("text/html, text/event-stream")), "a stream asked for is a client");
        assert!(!wants_page(&accept("application/json, text/event-stream")));
        assert!(!wants_page(&HeaderMap::new()));
    }

    #[test]
    fn tools_become_entries() {
        let tool = json!({
            "name": "Shop.get", "title": "Get", "description": "Gets one.",
            "inputSchema": {"type": "object", "required": ["id"], "properties": {
                "id": {"type": "integer", "minimum": 3, "description": "Which."},
                "region": {"type": "string", "x-mcp-header": "Region"}}},
            "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true},
            "_meta": {"x": 1}
        });
        let entry = entry(&tool);
        assert_eq!(entry.example, json!({"id": 3}));
        assert_eq!(entry.params.len(), 2);
        assert!(
            entry.params.iter().any(|p| p.name == "id" && p.required && p.description.as_deref() == Some("Which."))
        );
        assert_eq!(entry.annotations["readOnlyHint"], true);
        assert_eq!(entry.annotations["_meta"], json!({"x": 1}));
        assert_eq!(entry.result, Some(json!({"type": "object"})));
    }
}
