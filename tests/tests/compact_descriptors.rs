//! A method written as one string (`CompactMethod`, most methods) is read
//! back into the descriptor the macro would have written out: texts with
//! the format's own markers, characters of several bytes, every flag, a
//! header, a `Context` argument, scopes, a unit result, a default, a cache,
//! a lock and invalidations. Each method has a twin the macro writes out
//! as its descriptor (`task = forbidden`, the default said aloud, takes
//! that path): both must describe the same. And the bodies the macro
//! leaves unopened: a doc comment inside one still describes its method.

use mcp::mcp_tool;
use rpc::{MethodDescriptor, Registry};

rpc::api_group! {
    /// The test tools.
    pub struct Texts => "texts", mcp = true;
}

/// Methods whose texts hold the markers of the compact format.
pub struct Markers;

#[rpc::service(alias = "m-1", groups(Texts))]
impl Markers {
    /// 3: colons: and -dashes- # hashes
    ///
    /// Größe — ünïcode 😀, a second paragraph
    /// over two lines: `-` `t` `f` `#`.
    ///
    /// # Arguments
    /// * `id` - 12:34 -
    /// * `shard` - Ünï
    #[mcp_tool(title = "T-1: ü", read_only_hint = true, destructive_hint = false, open_world_hint)]
    #[rpc::info(scopes("r:1", "w-2"))]
    #[deprecated = "9: use `other` — ünï"]
    pub fn texts(
        &self,
        id: u64,
        #[rpc(header = "X-1#-t")] shard: Option<String>,
        ctx: mcp::Context,
        flag: bool,
    ) -> Result<String, rpc::RpcError> {
        let _ = ctx;
        Ok(format!("{id}{shard:?}{flag}"))
    }

    /// 3: colons: and -dashes- # hashes
    ///
    /// Größe — ünïcode 😀, a second paragraph
    /// over two lines: `-` `t` `f` `#`.
    ///
    /// # Arguments
    /// * `id` - 12:34 -
    /// * `shard` - Ünï
    #[mcp_tool(title = "T-1: ü", read_only_hint = true, destructive_hint = false, open_world_hint, task = forbidden)]
    #[rpc::info(scopes("r:1", "w-2"))]
    #[deprecated = "9: use `other` — ünï"]
    pub fn texts_written_out(
        &self,
        id: u64,
        #[rpc(header = "X-1#-t")] shard: Option<String>,
        ctx: mcp::Context,
        flag: bool,
    ) -> Result<String, rpc::RpcError> {
        let _ = ctx;
        Ok(format!("{id}{shard:?}{flag}"))
    }

    /// -
    #[rpc::info(undocumented)]
    pub fn unit(&self) {}

    /// -
    #[mcp_tool(task = forbidden)]
    pub fn unit_written_out(&self) {}

    /// Cached.
    #[rpc::cache(ttl = 90, env(dev, prod))]
    pub fn cached(&self, key: String, #[rpc(default = 7)] n: u32) -> String {
        format!("{key}{n}")
    }

    /// Cached.
    #[mcp_tool(task = forbidden)]
    #[rpc::cache(ttl = 90, env(dev, prod))]
    pub fn cached_written_out(&self, key: String, #[rpc(default = 7)] n: u32) -> String {
        format!("{key}{n}")
    }

    /// Locked; invalidates.
    #[rpc::lock(param = "key", ttl = 5)]
    #[rpc::invalidates("m-1.cached", warm_up)]
    #[rpc::invalidates("m-1.cached_written_out")]
    pub fn writes(&self, key: String) {
        let _ = key;
    }

    /// Locked; invalidates.
    #[mcp_tool(task = forbidden)]
    #[rpc::lock(param = "key", ttl = 5)]
    #[rpc::invalidates("m-1.cached", warm_up)]
    #[rpc::invalidates("m-1.cached_written_out")]
    pub fn writes_written_out(&self, key: String) {
        let _ = key;
    }

    pub fn inner_doc(&self) -> u8 {
        //! Documented inside its body.
        1
    }

    /// Says `#!` only in its body.
    pub fn shebang(&self) -> &'static str {
        "#!/bin/sh"
    }

    #[rpc::info(undocumented)]
    pub fn bare(&self, n: i64) -> i64 {
        n
    }

    #[rpc::info(undocumented)]
    #[mcp_tool(task = forbidden)]
    pub fn bare_written_out(&self, n: i64) -> i64 {
        n
    }
}

fn descriptor(registry: &Registry, name: &str) -> &'static MethodDescriptor {
    registry.method(1, name, None).unwrap_or_else(|| panic!("{name} is registered")).descriptor()
}

/// Everything a descriptor says but its names and line, as text.
fn described(d: &MethodDescriptor) -> String {
    let params: Vec<String> = d
        .params
        .iter()
        .map(|p| {
            format!(
                "{} param={} header={:?} description={:?} required={} default={:?} rules={:?} schema={:?}",
                p.name,
                p.is_param,
                p.header,
                p.description,
                p.required,
                p.default.map(|default| default()),
                p.rules,
                (p.schema)(&mut schemars::SchemaGenerator::default()),
            )
        })
        .collect();
    format!(
        "groups={:?} summary={:?} description={:?} deprecated={:?} params={params:#?} output={:?} tool={:?} mcp={:?} \
         result={:?} scopes={:?} cache={:?} lock={:?} invalidates={:?} errors={:?}",
        d.groups,
        d.summary,
        d.description,
        d.deprecated,
        d.output,
        d.tool,
        d.mcp,
        d.result_schema.map(|schema| schema(&mut schemars::SchemaGenerator::default())),
        d.scopes,
        d.cache,
        d.lock,
        d.invalidates,
        (d.errors)(),
    )
}

#[test]
fn a_compact_method_reads_back_as_the_descriptor_written_out() {
    let registry = Registry::builder().service(Markers).build().expect("registry");
    for (compact, written_out) in [
        ("texts", "texts_written_out"),
        ("unit", "unit_written_out"),
        ("bare", "bare_written_out"),
        ("cached", "cached_written_out"),
        ("writes", "writes_written_out"),
    ] {
        let a = descriptor(&registry, &format!("m-1.{compact}"));
        let b = descriptor(&registry, &format!("m-1.{written_out}"));
        assert_eq!((a.name, a.fn_name), (format!("m-1.{compact}").as_str(), compact));
        assert_eq!(described(a), described(b), "{compact} and {written_out} differ");
        assert!(a.line > 0 && a.line < b.line, "{compact}: line {} before {}", a.line, b.line);
    }

    let texts = descriptor(&registry, "m-1.texts");
    assert_eq!(texts.summary, Some("3: colons: and -dashes- # hashes"));
    assert_eq!(texts.description, Some("Größe — ünïcode 😀, a second paragraph\nover two lines: `-` `t` `f` `#`."));
    assert_eq!(texts.deprecated, Some("9: use `other` — ünï"));
    assert_eq!(texts.tool.title, Some("T-1: ü"));
    assert_eq!(
        (
            texts.tool.read_only_hint,
            texts.tool.destructive_hint,
            texts.tool.idempotent_hint,
            texts.tool.open_world_hint
        ),
        (Some(true), Some(false), None, Some(true))
    );
    assert_eq!(texts.scopes, ["r:1", "w-2"]);
    let params: Vec<_> =
        texts.params.iter().map(|p| (p.name, p.is_param, p.header, p.description, p.required)).collect();
    assert_eq!(
        params,
        [
            ("id", true, None, Some("12:34 -"), true),
            ("shard", true, Some("X-1#-t"), Some("Ünï"), false),
            ("ctx", false, None, None, true),
            ("flag", true, None, None, true),
        ]
    );
    assert_eq!(descriptor(&registry, "m-1.unit").output, rpc::OutputKind::Unit);
    let cached = descriptor(&registry, "m-1.cached");
    let cache = cached.cache.expect("cached");
    assert_eq!((cache.ttl_secs, cache.environments), (90, &[rpc::Environment::Dev, rpc::Environment::Prod][..]));
    assert_eq!(cached.params[1].default.map(|default| default()), Some(serde_json::json!(7)));
    let writes = descriptor(&registry, "m-1.writes");
    assert_eq!(writes.lock.map(|lock| (lock.param, lock.ttl_secs)), Some((Some("key"), 5)));
    let invalidated: Vec<_> = writes.invalidates.iter().map(|r| (r.method, r.warm_up)).collect();
    assert_eq!(invalidated, [("m-1.cached", true), ("m-1.cached_written_out", false)]);
}

#[test]
fn a_doc_comment_inside_a_body_still_describes_its_method() {
    // The macro leaves bodies unopened unless their source holds `#!`,
    // `//!` or `/*!`: then it reads their inner attributes, as syn does.
    let registry = Registry::builder().service(Markers).build().expect("registry");
    assert_eq!(descriptor(&registry, "m-1.inner_doc").summary, Some("Documented inside its body."));
    assert_eq!(descriptor(&registry, "m-1.shebang").summary, Some("Says `#!` only in its body."));
}

#[test]
fn a_compact_method_is_decoded_once_for_every_registry() {
    let first = Registry::builder().service(Markers).build().expect("registry");
    let second = Registry::builder().service(Markers).build().expect("registry");
    assert!(std::ptr::eq(descriptor(&first, "m-1.texts"), descriptor(&second, "m-1.texts")));
}
