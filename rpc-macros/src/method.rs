//! One method of a service block: its attributes, and the model the code
//! generator works from.
//!
//! The same analysis runs in two places: in `#[rpc::service]` for methods
//! whose attributes it recognises by path, and in the per-method
//! `__rpc_method` attribute for methods that carry other attribute macros
//! (a renamed `use mcp::mcp_tool as tool`, `#[tracing::instrument]`, ...),
//! which must expand first.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ImplItemFn, Lit, LitStr, ReturnType, Type, Visibility};

use crate::attrs::{InfoArgs, ToolArgs};
use crate::docs;
use crate::errors::Errors;
use crate::krate::Krate;
pub use crate::method_attrs::{MethodAttrs, RawAttrs, is_foreign_macro, parse_attrs, take_known_attrs};
use crate::names::unraw;
pub use crate::param::Param;
use crate::param::strip_param_attrs;
use crate::policies::Policies;

/// Settings a method inherits from its `#[rpc::service]` block.
#[derive(Clone)]
pub struct ServiceCtx {
    pub krate: Krate,
    /// The alias, with the span of where it came from (the `alias` literal, or the type).
    pub alias: LitStr,
    /// The separator, with its span (call site when defaulted).
    pub separator: LitStr,
    pub groups: Vec<syn::Path>,
    pub undocumented: bool,
    /// `#[rpc::service(scopes(...))]`: every method needs them, checked.
    pub scopes: Vec<LitStr>,
}

/// A method's return type.
pub enum Output {
    /// No return type or `()`.
    Unit,
    /// Any other type: a `Result` (by meaning, decided by the generated
    /// code) or a plain value.
    Typed(Box<Type>),
}

/// One exposed method.
pub struct Method {
    pub ident: syn::Ident,
    pub name: String,
    /// Where the name came from, for errors about it.
    pub name_span: Span,
    pub groups: Vec<syn::Path>,
    pub is_async: bool,
    pub params: Vec<Param>,
    pub output: Output,
    pub docs: docs::Docs,
    pub deprecated: Option<String>,
    pub tool: ToolArgs,
    /// `#[mcp_tool(input_schema = "...")]`, checked.
    pub input_schema: Option<crate::tool_checks::InputSchema>,
    /// `#[mcp_tool(output_schema = "...")]`, checked.
    pub output_schema: Option<crate::tool_checks::InputSchema>,
    /// `#[mcp_tool(meta = "...")]`, checked.
    pub meta: Option<String>,
    /// `#[mcp_tool(icon = "...")]`, checked.
    pub icons: Vec<String>,
    /// What the method is to MCP.
    pub role: crate::role::Role,
    /// `#[rpc::cache]`, `#[rpc::lock]`, `#[rpc::invalidates]`.
    pub policies: Policies,
    pub sig_span: Span,
    /// No warning when the method has no description.
    pub undocumented: bool,
    /// OAuth scopes a caller needs (`scopes(...)`), checked.
    pub scopes: Vec<String>,
    /// The MCP attribute the method carries (`#[mcp_tool]`, ...), if any:
    /// one of its groups must be published over MCP.
    pub mcp_attr: Option<(Span, &'static str)>,
    /// An invalid tool name is the alias's or the separator's doing (the
    /// block's, reported once for it).
    pub name_blames_block: bool,
    /// The tool-name check is left to another method of the block (the
    /// same alias or separator at fault).
    pub skip_name_check: bool,
}

/// One error for the methods carrying an MCP attribute (`#[mcp_tool]`,
/// ...) without any API group: they would be served nowhere. On the first
/// of them, naming how many more there are.
pub fn check_groupless_mcp(methods: &[&Method], errors: &mut Errors) {
    let groupless: Vec<(&Method, Span, &str)> = methods
        .iter()
        .filter(|m| m.groups.is_empty())
        .filter_map(|m| m.mcp_attr.map(|(span, attr)| (*m, span, attr)))
        .collect();
    let Some((first, span, attr)) = groupless.first() else { return };
    let more = and_more(groupless.len());
    errors.push(syn::Error::new(
        *span,
        format!(
            "`{attr}` on `{}`{more}, which belongs to no API group: it would be served nowhere; add a group \
             declared `mcp = true` to `#[rpc::service(groups(...))]` (or `#[rpc::info(groups(...))]`), or remove `{attr}`",
            first.name
        ),
    ));
}

/// " (and N more methods)", for an error on the first of `count` methods.
fn and_more(count: usize) -> String {
    match count.saturating_sub(1) {
        0 => String::new(),
        1 => " (and 1 more method)".to_owned(),
        n => format!(" (and {n} more methods)"),
    }
}

/// Expressions that fail to evaluate when none of the groups of methods
/// carrying an MCP attribute (`#[mcp_tool]`, ...) is published over MCP:
/// they would be served nowhere. One per list of groups, on the first
/// method with it, naming how many more there are (the same one error
/// for a block's methods, whose groups are usually the block's).
pub fn unpublished_mcp_checks(methods: &[&Method], k: &crate::krate::Private) -> Vec<TokenStream> {
    // (groups as spelt, the first method's attribute and name, how many)
    let mut lists: Vec<(String, &Method, Span, &str, usize)> = Vec::new();
    for m in methods.iter().filter(|m| !m.groups.is_empty()) {
        let Some((span, attr)) = m.mcp_attr else { continue };
        let key = m.groups.iter().map(|g| g.to_token_stream().to_string()).collect::<Vec<_>>().join(",");
        match lists.iter_mut().find(|list| list.0 == key) {
            Some(list) => list.4 += 1,
            None => lists.push((key, m, span, attr, 1)),
        }
    }
    lists
        .into_iter()
        .map(|(_, first, span, attr, count)| {
            let message = format!(
                "`{attr}` on `{}`{}, but none of its groups is published over MCP, so it would be served nowhere: \
                 add a group declared `mcp = true` to its groups, or remove `{attr}`",
                first.name,
                and_more(count)
            );
            let published = first.groups.iter().map(|g| {
                let g = g.to_token_stream();
                quote_spanned!(span=> <#g as #k::ApiGroup>::MCP)
            });
            quote_spanned! {span=>
                if !(#(#published)||*) { ::core::panic!(#message) }
            }
        })
        .collect()
}

/// What the analysis decided about an `fn` of the impl block.
pub enum Exposure {
    /// Not part of the API (private helper, constructor, `#[rpc::info(skip)]`).
    Hidden,
    /// An RPC method.
    Exposed(Box<Method>),
}

/// Whether `item` is a candidate RPC method: `pub`, with a receiver.
pub fn is_candidate(item: &ImplItemFn) -> bool {
    matches!(item.vis, Visibility::Public(_)) && item.sig.receiver().is_some()
}

/// Analyses one `fn` of the impl block, stripping the parameter attributes.
pub fn analyze(item: &mut ImplItemFn, ctx: &ServiceCtx, attrs: MethodAttrs, errors: &mut Errors) -> Exposure {
    let skip = attrs.info.as_ref().is_some_and(|(i, _)| i.skip.is_present());
    let is_pub = matches!(item.vis, Visibility::Public(_));
    let receiver = item.sig.receiver().cloned();
    let annotated = attrs
        .info
        .as_ref()
        .map(|(_, s)| *s)
        .or(attrs.tool.as_ref().map(|(_, s)| *s))
        .or(attrs.cache.as_ref().map(|(_, s)| *s))
        .or(attrs.lock.as_ref().map(|(_, s)| *s))
        .or(attrs.invalidates.first().map(|(_, s)| *s))
        .or(attrs.resource.as_ref().map(|(_, s)| *s))
        .or(attrs.prompt.as_ref().map(|(_, s)| *s))
        .or(attrs.complete.as_ref().map(|(_, s)| *s));

    if let Some((info, _)) = &attrs.info
        && skip
    {
        let others = [
            info.name.as_ref().map(|n| ("name", n.span())),
            info.groups.as_ref().map(|g| ("groups", g.first().map_or(Span::call_site(), Spanned::span))),
            info.undocumented.is_present().then(|| ("undocumented", info.undocumented.span())),
            info.scopes.first().map(|s| ("scopes", s.span())),
        ];
        for (key, span) in others.into_iter().flatten() {
            errors.push(syn::Error::new(
                span,
                format!("`{key}` has no effect on a method hidden with `skip`: remove `{key}`, or `skip`"),
            ));
        }
        if let Some((_, span)) = &attrs.tool {
            errors.push(syn::Error::new(
                *span,
                "`#[mcp_tool]` on a method hidden with `#[rpc::info(skip)]`: it is not a tool; remove one of them",
            ));
        }
        let kinds = [
            attrs.resource.as_ref().map(|(_, s)| ("#[mcp_resource]", *s)),
            attrs.prompt.as_ref().map(|(_, s)| ("#[mcp_prompt]", *s)),
            attrs.complete.as_ref().map(|(_, s)| ("#[mcp_complete]", *s)),
        ];
        for (name, span) in kinds.into_iter().flatten() {
            errors.push(syn::Error::new(
                span,
                format!("`{name}` on a method hidden with `#[rpc::info(skip)]` has no effect: remove one of them"),
            ));
        }
        let policies = [
            attrs.cache.as_ref().map(|(_, s)| ("cache", *s)),
            attrs.lock.as_ref().map(|(_, s)| ("lock", *s)),
            attrs.invalidates.first().map(|(_, s)| ("invalidates", *s)),
        ];
        for (name, span) in policies.into_iter().flatten() {
            errors.push(syn::Error::new(
                span,
                format!(
                    "`#[rpc::{name}]` on a method hidden with `#[rpc::info(skip)]` has no effect: remove one of them"
                ),
            ));
        }
    }
    if skip {
        strip_param_attrs(item, &ctx.krate, errors, false);
        return Exposure::Hidden;
    }
    if !is_pub || receiver.is_none() {
        if annotated.is_some() {
            // On what makes it no method: its visibility (or its name, when
            // it has none), or its signature.
            let (span, why, fix) = match (&item.vis, receiver.is_some()) {
                (Visibility::Inherited, _) => (item.sig.ident.span(), "it is not `pub`", "make it `pub fn`"),
                (Visibility::Restricted(vis), _) => {
                    (vis.span(), "it is not `pub` (restricted visibility)", "make it `pub fn`")
                }
                _ => (item.sig.paren_token.span.join(), "it has no `&self` receiver", "take `&self` first"),
            };
            errors.push(syn::Error::new(
                span,
                format!(
                    "`{}` carries the framework's attributes but is not an RPC method because {why}: {fix} to \
                     expose it, or remove the attributes (only `pub fn name(&self, ...)` methods are exposed)",
                    item.sig.ident
                ),
            ));
        }
        strip_param_attrs(item, &ctx.krate, errors, false);
        return Exposure::Hidden;
    }
    if let Some(receiver) = &receiver
        && !matches!(receiver.kind, syn::ReceiverKind::Reference(_, _, None))
    {
        errors.push(syn::Error::new_spanned(
            receiver,
            "RPC methods take `&self`: the service instance is shared by concurrent calls \
             (use interior mutability for state), or hide the method with `#[rpc::info(skip)]`",
        ));
    }
    if !item.sig.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(&item.sig.generics, "RPC methods cannot be generic"));
    }

    let doc_lines = docs::doc_lines(&item.attrs);
    let docs = docs::parse(&doc_lines);
    let mut params = strip_param_attrs(item, &ctx.krate, errors, true);
    // Every named input counts, those refused above included (an `impl
    // Trait` or a borrowed parameter has its own error already).
    let declared: Vec<String> = item
        .sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(typed) => match &*typed.pat {
                syn::Pat::Ident(pi) => Some(unraw(&pi.ident)),
                _ => None,
            },
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    check_argument_docs(&doc_lines, &declared, &item.sig.ident, errors);
    for p in &mut params {
        if p.description.is_none() {
            p.description = docs.arguments.get(&p.name).cloned();
        }
    }

    let fn_name = unraw(&item.sig.ident);
    let info = attrs.info.map(|(info, _)| info).unwrap_or_default();
    let (name, name_span, name_blames_block) = method_name(&info, ctx, &fn_name, item.sig.ident.span());
    // A name from the alias is checked once, on the alias (service.rs).
    if info.name.is_some() && name.starts_with("rpc.") {
        errors.push(syn::Error::new(
            name_span,
            format!(
                "`{name}`: method names beginning with `rpc.` are reserved by JSON-RPC 2.0 for the protocol's own \
                 methods; choose another alias or name"
            ),
        ));
    }
    let groups = match &info.groups {
        Some(list) => list.iter().cloned().collect(),
        None => ctx.groups.clone(),
    };
    let mcp_attr = [
        attrs.tool.as_ref().map(|(_, s)| (*s, "#[mcp_tool]")),
        attrs.resource.as_ref().map(|(_, s)| (*s, "#[mcp_resource]")),
        attrs.prompt.as_ref().map(|(_, s)| (*s, "#[mcp_prompt]")),
        attrs.complete.as_ref().map(|(_, s)| (*s, "#[mcp_complete]")),
    ]
    .into_iter()
    .flatten()
    .next();
    let resource_scopes = attrs.resource.as_ref().map(|(r, _)| r.scopes.clone()).unwrap_or_default();
    let prompt_scopes = attrs.prompt.as_ref().map(|(p, _)| p.scopes.clone()).unwrap_or_default();
    let role_attrs = crate::role::RoleAttrs {
        tool: attrs.tool.as_ref().map(|(_, s)| *s),
        resource: attrs.resource,
        prompt: attrs.prompt,
        complete: attrs.complete,
    };
    let role = crate::role::decide(role_attrs, &params, errors);
    let destructive = attrs.tool.as_ref().and_then(|(t, _)| crate::attrs::hint(t.destructive_hint));
    let cache_span = attrs.cache.as_ref().map(|(_, span)| *span);
    let writes = crate::policies::Writes {
        lock: attrs.lock.is_some(),
        invalidates: !attrs.invalidates.is_empty(),
        destructive: destructive == Some(true),
    };
    crate::policies::refuse_cached_writes(cache_span, writes, errors);
    let tool = attrs.tool.map(|(t, _)| t).unwrap_or_default();
    let given: [(&str, &[syn::LitStr]); 4] = [
        ("#[rpc::info", &info.scopes),
        ("#[mcp_tool", &tool.scopes),
        ("#[mcp_resource", &resource_scopes),
        ("#[mcp_prompt", &prompt_scopes),
    ];
    let scopes = crate::scopes::with_service(&ctx.scopes, crate::scopes::collect(&given, errors), errors);
    let policies = Policies::check(attrs.cache, attrs.lock, attrs.invalidates, &params, errors);
    crate::tool_checks::check_hints(&tool, errors);
    if tool.starts_task.is_present() && !params.iter().any(crate::role::is_context) {
        errors.push(syn::Error::new(
            tool.starts_task.span(),
            "a method that starts its task takes the call's context (`ctx: mcp::Context`) to call `ctx.start_task()`",
        ));
    }
    crate::tool_checks::check_headers(&params, errors);
    let input_schema = crate::tool_checks::input_schema(&tool, &params, errors);
    let output_schema = crate::tool_checks::output_schema(&tool, errors);
    let meta = crate::tool_checks::meta(&tool, errors);
    let icons = crate::tool_checks::icons(&tool, errors);
    let output = match output_of(&item.sig.output) {
        Ok(output) => output,
        Err(e) => {
            errors.push(e);
            Output::Unit
        }
    };
    Exposure::Exposed(Box::new(Method {
        ident: item.sig.ident.clone(),
        name,
        name_span,
        groups,
        is_async: item.sig.asyncness.is_some(),
        params,
        output,
        docs,
        deprecated: deprecation(&item.attrs),
        tool,
        input_schema,
        output_schema,
        meta,
        icons,
        role,
        policies,
        sig_span: item.sig.ident.span(),
        undocumented: ctx.undocumented || info.undocumented.is_present(),
        scopes,
        mcp_attr,
        name_blames_block,
        skip_name_check: false,
    }))
}

/// The full name and the span of what made it: the `name` literal, or
/// whichever of separator, alias and fn name breaks the tool-name rule
/// (a name too long because of its alias points at the alias).
fn method_name(info: &InfoArgs, ctx: &ServiceCtx, fn_name: &str, ident_span: Span) -> (String, Span, bool) {
    if let Some(lit) = &info.name {
        return (lit.value(), lit.span(), false);
    }
    let alias = ctx.alias.value();
    if alias.is_empty() {
        return (fn_name.to_owned(), ident_span, false);
    }
    let separator = ctx.separator.value();
    let name = format!("{alias}{separator}{fn_name}");
    let (span, blames_block) = if !crate::names::all_tool_chars(&separator) {
        (ctx.separator.span(), true)
    } else if !crate::names::all_tool_chars(&alias) {
        (ctx.alias.span(), true)
    } else if name.chars().count() > crate::names::MAX_LEN && fn_name.chars().count() <= crate::names::MAX_LEN {
        let span =
            if alias.chars().count() >= separator.chars().count() { ctx.alias.span() } else { ctx.separator.span() };
        (span, true)
    } else {
        (ident_span, false)
    };
    (name, span, blames_block)
}

/// Every `# Arguments` entry must name a parameter: a typo there would
/// silently drop a description.
fn check_argument_docs(lines: &[docs::DocLine], declared: &[String], fn_ident: &syn::Ident, errors: &mut Errors) {
    let names: Vec<&str> = declared.iter().map(String::as_str).collect();
    for entry in docs::argument_entries(lines) {
        if names.contains(&entry.name.as_str()) {
            continue;
        }
        let suggestion = names
            .iter()
            .map(|n| (strsim::jaro_winkler(n, &entry.name), *n))
            .filter(|(score, _)| *score > 0.8)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, n)| format!("; did you mean `{n}`?"))
            .unwrap_or_default();
        let list = if names.is_empty() {
            "it takes none".to_owned()
        } else {
            format!("its parameters are {}", names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "))
        };
        errors.push(syn::Error::new(
            entry.span,
            format!(
                "`# Arguments` documents `{}`, which is not a parameter of `{fn_ident}` ({list}){suggestion}",
                entry.name
            ),
        ));
    }
}

fn output_of(output: &ReturnType) -> syn::Result<Output> {
    let ReturnType::Type(_, ty) = output else {
        return Ok(Output::Unit);
    };
    match &**ty {
        Type::Tuple(t) if t.elems.is_empty() => Ok(Output::Unit),
        Type::ImplTrait(t) => Err(syn::Error::new_spanned(
            t,
            "`impl Trait` return types are not supported in RPC methods: the result needs a nameable type \
             for its JSON Schema",
        )),
        ty => Ok(Output::Typed(Box::new(ty.clone()))),
    }
}

fn deprecation(attrs: &[Attribute]) -> Option<String> {
    let attr = attrs.iter().find(|a| a.path().is_ident("deprecated"))?;
    let note = match &attr.meta {
        syn::Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) => Some(s.value()),
            _ => None,
        },
        syn::Meta::List(list) => {
            let mut note = None;
            let _ = list.parse_nested_meta(|m| {
                if m.path.is_ident("note") {
                    note = Some(m.value()?.parse::<LitStr>()?.value());
                } else if m.input.peek(syn::Token![=]) {
                    let _: Expr = m.value()?.parse()?;
                }
                Ok(())
            });
            note
        }
        syn::Meta::Path(_) => None,
    };
    Some(note.unwrap_or_default())
}
