//! The tools of one API group: built once per version from the registry,
//! with every `tools/list` page serialised once for each language and
//! protocol revision (on its first request), so listing never touches schemas.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use rpc::i18n::{Field, Language};
use rpc::{Identity, Method, Registry, is_valid_tool_name};
use serde_json::{Map, Value, json};

use crate::config::McpConfig;
pub use crate::pages::ListTexts;
use crate::protocol::ProtocolVersion;
use crate::visibility::ScopedList;

/// A parameter mirrored into an `Mcp-Param-{header}` HTTP header (SEP-2243).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirroredParam {
    /// The argument's name.
    pub param: &'static str,
    /// The name part of the header (`Mcp-Param-{header}`).
    pub header: &'static str,
    /// Whether the parameter is an integer (compared numerically).
    pub integer: bool,
}

/// One tool: a method of the group.
#[derive(Debug, Clone)]
pub struct Tool {
    /// The method behind the tool.
    pub method: Arc<Method>,
    /// The method returns MCP content, passed through as `content`.
    pub returns_content: bool,
    /// Parameters mirrored into headers.
    pub mirrored: Vec<MirroredParam>,
    /// The method takes the request context (so it may ask the client).
    pub takes_context: bool,
}

impl Tool {
    /// Whether the tool has an `outputSchema` (and so `structuredContent`).
    pub fn has_output_schema(&self) -> bool {
        !self.returns_content && self.method.schemas().output.is_some()
    }
}

/// The tools of one version of the group.
#[derive(Debug)]
pub struct ToolSet {
    endpoint: String,
    /// By name (foldhash: names are the server's own, looked up on every call).
    tools: HashMap<&'static str, Tool, foldhash::fast::RandomState>,
    /// Serialised `ListToolsResult` pages, per grant of scopes.
    pages: ScopedList,
}

impl ToolSet {
    /// The endpoint this set is served at, `group/vN` (sessions are bound to it).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.get(name)
    }

    /// The tools, in no particular order.
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.values()
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the version has no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The serialised `tools/list` result `identity` sees (the tools its
    /// scopes allow; every tool for a caller not limited to scopes) in
    /// `language` for `cursor`, or `None` for an invalid cursor.
    pub fn page(
        &self,
        identity: Option<&Identity>,
        language: Language,
        version: ProtocolVersion,
        cursor: Option<&str>,
    ) -> Option<Bytes> {
        self.pages.get(identity, language, version, cursor)
    }
}

/// The tools of a group, per API version, or why the group cannot be served.
#[derive(Debug)]
pub struct GroupTools {
    versions: BTreeMap<u32, ToolSet>,
    broken: Option<String>,
}

impl GroupTools {
    /// Builds the tools of `group` for every version that has methods in
    /// it; each page is serialised in a language of `translations` on its
    /// first request. With `scoped_callers` (callers may be limited to
    /// scopes), a caller's list holds the tools its scopes allow.
    pub fn build(
        registry: &Registry,
        group: &str,
        config: &McpConfig,
        texts: &Arc<ListTexts>,
        scoped_callers: bool,
    ) -> GroupTools {
        let mut versions = BTreeMap::new();
        let mut problems = Vec::new();
        for version in registry.group_versions(group) {
            let Some(table) = registry.version(version) else { continue };
            let methods: Vec<&Arc<Method>> =
                table.group(group).filter(|m| matches!(m.descriptor().mcp, rpc::McpRole::Tool)).collect();
            for m in &methods {
                if !is_valid_tool_name(m.name()) {
                    problems.push(format!(
                        "method `{}` (v{version}, {}) is not a valid MCP tool name: tool names are 1-128 characters from A-Z a-z 0-9 _ - .",
                        m.name(),
                        m.location()
                    ));
                }
            }
            let endpoint = format!("{group}/v{version}");
            versions.insert(version, build_set(endpoint, &methods, config, texts, scoped_callers));
        }
        let broken = (!problems.is_empty()).then(|| {
            problems.dedup();
            format!("the MCP endpoint of group `{group}` cannot serve its tools: {}", problems.join("; "))
        });
        if let Some(why) = &broken {
            tracing::error!("{why}");
        }
        GroupTools { versions, broken }
    }

    /// The tools of API version `version`.
    pub fn version(&self, version: u32) -> Option<&ToolSet> {
        self.versions.get(&version)
    }

    /// The API versions that have tools, in order.
    pub fn versions(&self) -> impl Iterator<Item = u32> + '_ {
        self.versions.keys().copied()
    }

    /// Why the group cannot be served, if it cannot.
    pub fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }
}

fn build_set(
    endpoint: String,
    methods: &[&Arc<Method>],
    config: &McpConfig,
    texts: &Arc<ListTexts>,
    scoped_callers: bool,
) -> ToolSet {
    let tools: Vec<Tool> = methods
        .iter()
        .map(|m| Tool {
            method: Arc::clone(m),
            returns_content: m.schemas().result.as_ref().is_some_and(is_content_schema),
            mirrored: mirrored_params(m),
            takes_context: m.descriptor().params.iter().any(|p| !p.is_param),
        })
        .collect();
    let list_config = config.clone();
    let pages = ScopedList::build(
        "tools",
        texts,
        config,
        tools.clone(),
        |t| t.method.descriptor().scopes,
        move |t, texts, language, version| list_item(t, texts, language, version, &list_config),
        scoped_callers,
    );
    let tools = tools.into_iter().map(|t| (t.method.name(), t)).collect();
    ToolSet { endpoint, tools, pages }
}

/// One tool of a `tools/list` page, with its translated title and description.
fn list_item(t: &Tool, texts: &ListTexts, language: Language, version: ProtocolVersion, config: &McpConfig) -> Value {
    let name = t.method.name();
    let text = |field| texts.translations.text(Some(&texts.group), language, name, field);
    let description = text(Field::Description).map(str::to_owned).or_else(|| t.method.full_description());
    tool_json(t, version, config, text(Field::Title), description.as_deref())
}

/// The fields every 2026-07-28 list result carries besides its items:
/// `resultType`, `ttlMs`, `cacheScope` and the server's identity.
pub fn stateless_list_fields(config: &McpConfig, server_info: &crate::config::ServerInfo) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert("resultType".into(), json!("complete"));
    fields.insert("ttlMs".into(), json!(u64::try_from(config.list_ttl.as_millis()).unwrap_or(u64::MAX)));
    fields.insert("cacheScope".into(), json!(config.cache_scope.as_str()));
    fields.insert("_meta".into(), server_info_meta(server_info));
    fields
}

/// `{"io.modelcontextprotocol/serverInfo": ...}`.
pub fn server_info_meta(server_info: &crate::config::ServerInfo) -> Value {
    let mut meta = Map::new();
    meta.insert(crate::protocol::meta::SERVER_INFO.into(), server_info.to_json(ProtocolVersion::V2026_07_28));
    Value::Object(meta)
}

fn mirrored_params(method: &Method) -> Vec<MirroredParam> {
    let properties = &method.schemas().input["properties"];
    method
        .descriptor()
        .params
        .iter()
        .filter_map(|p| {
            let header = p.header?;
            let integer = match &properties[p.name]["type"] {
                Value::String(t) => t == "integer",
                Value::Array(types) => types.iter().any(|t| t == "integer"),
                _ => false,
            };
            Some(MirroredParam { param: p.name, header, integer })
        })
        .collect()
}

/// The `Tool` object of `tool` as revision `version` defines it, with its
/// title (a translation's, else `#[mcp_tool(title)]`, else the tool's
/// name) and description (a translation's, else the doc comment's).
pub fn tool_json(
    tool: &Tool,
    version: ProtocolVersion,
    config: &McpConfig,
    title: Option<&str>,
    description: Option<&str>,
) -> Value {
    let method = &tool.method;
    let d = method.descriptor();
    let title = title.or(d.tool.title);
    let mut obj = Map::new();
    obj.insert("name".into(), json!(d.name));
    if version.has_structured_output() {
        obj.insert("title".into(), json!(title.unwrap_or(d.name)));
    }
    if let Some(description) = description {
        obj.insert("description".into(), json!(description));
    }
    let mut input = method.schemas().input.clone();
    let written = d.tool.input_schema.is_some();
    if !version.is_stateless() && !written {
        // `x-mcp-header` is a 2026-07-28 keyword; strict clients of earlier
        // revisions would warn about it.
        if let Some(Value::Object(properties)) = input.get_mut("properties") {
            for property in properties.values_mut() {
                if let Value::Object(schema) = property {
                    schema.remove(rpc::schema::X_MCP_HEADER);
                }
            }
        }
    }
    if !written {
        rpc::schema::single_types(&mut input);
    }
    obj.insert("inputSchema".into(), input);
    if version.has_structured_output()
        && tool.has_output_schema()
        && let Some(output) = &method.schemas().output
    {
        let mut output = output.clone();
        rpc::schema::single_types(&mut output);
        obj.insert("outputSchema".into(), output);
    }
    if version.has_tool_annotations() {
        let hints = d.tool;
        let mut annotations = Map::new();
        let fields = [
            ("readOnlyHint", hints.read_only_hint),
            ("destructiveHint", hints.destructive_hint),
            ("idempotentHint", hints.idempotent_hint),
            ("openWorldHint", hints.open_world_hint),
        ];
        if let Some(title) = title.filter(|_| hints.title.is_some()) {
            annotations.insert("title".into(), json!(title));
        }
        for (key, value) in fields {
            if let Some(v) = value {
                annotations.insert(key.into(), json!(v));
            }
        }
        if !annotations.is_empty() {
            obj.insert("annotations".into(), Value::Object(annotations));
        }
    }
    if version.has_rich_server_info() && !d.tool.icons.is_empty() {
        let icons: Vec<Value> = d.tool.icons.iter().map(|src| icon_json(src)).collect();
        obj.insert("icons".into(), Value::Array(icons));
    }
    if version.has_structured_output() {
        // The annotation's `_meta`, then the endpoint's for this tool over it.
        let mut meta: Map<String, Value> =
            d.tool.meta.and_then(|text| serde_json::from_str(text).ok()).unwrap_or_default();
        if let Some(configured) = config.tool_meta.get(d.name) {
            meta.extend(configured.clone());
        }
        if !meta.is_empty() {
            obj.insert("_meta".into(), Value::Object(meta));
        }
    }
    Value::Object(obj)
}

/// An `Icon` object: the source, and its MIME type when the extension (or
/// the data URI) says it.
fn icon_json(src: &str) -> Value {
    let lower = src.to_ascii_lowercase();
    let path = lower.split(['?', '#']).next().unwrap_or_default();
    let mime = if let Some(data) = lower.strip_prefix("data:") {
        data.split([';', ',']).next().map(str::to_owned)
    } else {
        [
            (".png", "image/png"),
            (".svg", "image/svg+xml"),
            (".jpg", "image/jpeg"),
            (".jpeg", "image/jpeg"),
            (".webp", "image/webp"),
        ]
        .iter()
        .find(|(ext, _)| path.ends_with(ext))
        .map(|(_, mime)| (*mime).to_owned())
    };
    match mime {
        Some(mime) => json!({"src": src, "mimeType": mime}),
        None => json!({"src": src}),
    }
}

/// Whether a self-contained result schema describes MCP content (one block
/// or an array of blocks).
fn is_content_schema(schema: &Value) -> bool {
    crate::markers::marked(schema, crate::markers::CONTENT)
}
