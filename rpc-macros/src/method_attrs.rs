//! The framework's attributes on a method (`#[rpc::info]`, `#[rpc::cache]`,
//! `#[rpc::lock]`, `#[rpc::invalidates]`, `#[mcp_tool]`, `#[mcp_resource]`,
//! `#[mcp_prompt]`, `#[mcp_complete]`): taken off the method by their path,
//! then parsed, each kind once (but `invalidates`).

use proc_macro2::{Span, TokenStream};
use syn::Attribute;
use syn::spanned::Spanned;

use crate::attrs::{CompleteArgs, InfoArgs, PromptArgs, ResourceArgs, ToolArgs};
use crate::errors::Errors;
use crate::krate::Krate;
use crate::policies::{CacheArgs, InvalidatesArgs, LockArgs};
use crate::values::{parse_args, try_parse_args};

/// `#[rpc::info]` / `#[mcp_tool]` arguments of one method, as tokens,
/// each with the span of the attribute it was written in.
#[derive(Default)]
pub struct RawAttrs {
    pub info: Vec<(Span, TokenStream)>,
    pub tool: Vec<(Span, TokenStream)>,
    pub cache: Vec<(Span, TokenStream)>,
    pub lock: Vec<(Span, TokenStream)>,
    pub invalidates: Vec<(Span, TokenStream)>,
    pub resource: Vec<(Span, TokenStream)>,
    pub prompt: Vec<(Span, TokenStream)>,
    pub complete: Vec<(Span, TokenStream)>,
}

impl RawAttrs {
    /// The list of `kind`, by the name the `__rpc_method` marker gives it.
    pub fn slot(&mut self, kind: &str) -> Option<&mut Vec<(Span, TokenStream)>> {
        Some(match kind {
            "info" => &mut self.info,
            "tool" => &mut self.tool,
            "cache" => &mut self.cache,
            "lock" => &mut self.lock,
            "invalidates" => &mut self.invalidates,
            "resource" => &mut self.resource,
            "prompt" => &mut self.prompt,
            "complete" => &mut self.complete,
            _ => return None,
        })
    }

    /// Every attribute, with the marker's name for its kind.
    pub fn entries(self) -> impl Iterator<Item = (&'static str, Span, TokenStream)> {
        let tag = |kind: &'static str, list: Vec<(Span, TokenStream)>| {
            list.into_iter().map(move |(span, tokens)| (kind, span, tokens))
        };
        tag("info", self.info)
            .chain(tag("tool", self.tool))
            .chain(tag("cache", self.cache))
            .chain(tag("lock", self.lock))
            .chain(tag("invalidates", self.invalidates))
            .chain(tag("resource", self.resource))
            .chain(tag("prompt", self.prompt))
            .chain(tag("complete", self.complete))
    }
}

/// The method attributes of `rpc` the service macro recognises, by the
/// last segment of their path (and the marker's name for each).
pub const RPC_METHOD_ATTRS: &[&str] = &["info", "cache", "lock", "invalidates"];

/// The method attributes of `mcp`, and the marker's name for each.
pub const MCP_METHOD_ATTRS: &[(&str, &str)] =
    &[("mcp_tool", "tool"), ("mcp_resource", "resource"), ("mcp_prompt", "prompt"), ("mcp_complete", "complete")];

/// Removes from `attrs` the `#[rpc::info]`, `#[rpc::cache]`, `#[rpc::lock]`,
/// `#[rpc::invalidates]` and `#[mcp_tool]` attributes the
/// service macro recognises by their path (under the crates' names as the
/// manifest gives them). Single-segment paths, which rely on a `use`, are
/// recorded in `imported` so the expansion can keep those imports used.
pub fn take_known_attrs(attrs: &mut Vec<Attribute>, krate: &Krate, imported: &mut Vec<syn::Path>) -> RawAttrs {
    let mut raw = RawAttrs::default();
    attrs.retain(|attr| {
        let path = attr.path();
        let segments = crate::krate::segments(path);
        let kind = RPC_METHOD_ATTRS.iter().find(|kind| krate.names_rpc_attr(&segments, kind)).copied();
        let slot = match kind {
            Some(kind) => raw.slot(kind),
            None => match MCP_METHOD_ATTRS.iter().find(|(attr, _)| krate.names_mcp_attr(&segments, attr)) {
                Some((_, slot)) => raw.slot(slot),
                None => None,
            },
        };
        let Some(slot) = slot else { return true };
        if path.segments.len() == 1 {
            imported.push(path.clone());
        }
        let tokens = match &attr.meta {
            syn::Meta::List(list) => list.tokens.clone(),
            _ => TokenStream::new(),
        };
        // The attribute's name (its last segment) is where errors about it point.
        let span = path.segments.last().map_or_else(|| path.span(), |s| s.ident.span());
        slot.push((span, tokens));
        false
    });
    raw
}

/// Attributes the compiler itself defines: anything else on a method may
/// be an attribute macro (possibly one of ours under another name) that
/// must expand before the method is analysed.
pub fn is_foreign_macro(attr: &Attribute) -> bool {
    const BUILTIN: &[&str] = &[
        "doc",
        "allow",
        "warn",
        "deny",
        "forbid",
        "expect",
        "deprecated",
        "must_use",
        "inline",
        "cold",
        "track_caller",
        "cfg",
        "cfg_attr",
        "no_mangle",
        "export_name",
        "link_section",
        "target_feature",
        "optimize",
    ];
    const TOOLS: &[&str] = &["rustfmt", "clippy", "diagnostic", "rustdoc"];
    let path = attr.path();
    match path.segments.first() {
        Some(first) if path.segments.len() == 1 => !BUILTIN.iter().any(|b| first.ident == b),
        Some(first) => !TOOLS.iter().any(|t| first.ident == t),
        None => false,
    }
}

/// Parsed `#[rpc::info]` / `#[mcp_tool]` arguments.
#[derive(Default)]
pub struct MethodAttrs {
    pub info: Option<(InfoArgs, Span)>,
    pub tool: Option<(ToolArgs, Span)>,
    pub cache: Option<(CacheArgs, Span)>,
    pub lock: Option<(LockArgs, Span)>,
    /// May repeat: each attribute lists methods with its own `warm_up`.
    pub invalidates: Vec<(InvalidatesArgs, Span)>,
    pub resource: Option<(ResourceArgs, Span)>,
    pub prompt: Option<(PromptArgs, Span)>,
    pub complete: Option<(CompleteArgs, Span)>,
}

/// Parses raw attribute arguments; duplicates are errors.
pub fn parse_attrs(raw: RawAttrs, errors: &mut Errors) -> MethodAttrs {
    let mut out = MethodAttrs::default();
    for (i, (span, tokens)) in raw.info.into_iter().enumerate() {
        if i > 0 {
            errors.push(syn::Error::new(span, "duplicate `#[rpc::info]` attribute: merge it into the first one"));
            continue;
        }
        out.info = Some((parse_args(tokens, errors), span));
    }
    for (i, (span, tokens)) in raw.tool.into_iter().enumerate() {
        if i > 0 {
            errors.push(syn::Error::new(span, "duplicate `#[mcp_tool]` attribute: merge it into the first one"));
            continue;
        }
        out.tool = Some((parse_args(tokens, errors), span));
    }
    for (i, (span, tokens)) in raw.cache.into_iter().enumerate() {
        if i > 0 {
            errors.push(syn::Error::new(span, "duplicate `#[rpc::cache]` attribute: a method has one cache policy"));
            continue;
        }
        // Arguments that did not parse are reported already: nothing more to check.
        if let Some(args) = try_parse_args(tokens, errors) {
            out.cache = Some((args, span));
        }
    }
    for (i, (span, tokens)) in raw.lock.into_iter().enumerate() {
        if i > 0 {
            errors.push(syn::Error::new(span, "duplicate `#[rpc::lock]` attribute: a method has one lock"));
            continue;
        }
        out.lock = Some((parse_args(tokens, errors), span));
    }
    for (span, tokens) in raw.invalidates {
        if let Some(args) = try_parse_args(tokens, errors) {
            out.invalidates.push((args, span));
        }
    }
    out.resource = parse_once(raw.resource, "#[mcp_resource]", errors);
    out.prompt = parse_once(raw.prompt, "#[mcp_prompt]", errors);
    out.complete = parse_once(raw.complete, "#[mcp_complete]", errors);
    out
}

/// The arguments of an attribute that may appear once.
fn parse_once<T: darling::FromMeta + Default>(
    raw: Vec<(Span, TokenStream)>,
    display: &str,
    errors: &mut Errors,
) -> Option<(T, Span)> {
    let mut out = None;
    for (i, (span, tokens)) in raw.into_iter().enumerate() {
        if i > 0 {
            errors.push(syn::Error::new(span, format!("duplicate `{display}` attribute: merge it into the first one")));
            continue;
        }
        out = Some((parse_args(tokens, errors), span));
    }
    out
}
