//! One exposed method: parsed from an `fn` item, then turned into the
//! descriptor, parameter struct, schema builder and invoker.

use darling::FromMeta;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Attribute, Expr, FnArg, ImplItemFn, Lit, LitStr, Pat, ReturnType, Type, Visibility};

use crate::attrs::{InfoArgs, ParamArgs, ToolArgs};
use crate::docs;
use crate::errors::Errors;

/// Attributes the service macro consumes from methods.
pub struct MethodAttrs {
    pub info: Option<(InfoArgs, Attribute)>,
    pub tool: Option<(ToolArgs, Attribute)>,
}

/// Whether `attr` is `#[rpc::info]` / `#[info]`.
fn is_info(attr: &Attribute) -> bool {
    path_ends_with(attr, "info", &["rpc"])
}

/// Whether `attr` is `#[mcp_tool]` / `#[mcp::mcp_tool]`.
fn is_tool(attr: &Attribute) -> bool {
    path_ends_with(attr, "mcp_tool", &["mcp", "rpc"])
}

fn path_ends_with(attr: &Attribute, last: &str, parents: &[&str]) -> bool {
    let segments: Vec<String> = attr.path().segments.iter().map(|s| s.ident.to_string()).collect();
    match segments.as_slice() {
        [one] => one == last,
        [parent, one] => one == last && parents.contains(&parent.as_str()),
        _ => false,
    }
}

/// Removes and parses `#[rpc::info]` and `#[mcp_tool]` from `attrs`.
/// Single-segment paths (which rely on a `use`) are recorded in `imported`
/// so the expansion can keep those imports used.
pub fn take_attrs(attrs: &mut Vec<Attribute>, errors: &mut Errors, imported: &mut Vec<syn::Path>) -> MethodAttrs {
    let mut out = MethodAttrs { info: None, tool: None };
    let mut kept = Vec::with_capacity(attrs.len());
    for attr in attrs.drain(..) {
        if (is_info(&attr) || is_tool(&attr)) && attr.path().segments.len() == 1 {
            imported.push(attr.path().clone());
        }
        if is_info(&attr) {
            if out.info.is_some() {
                errors.push(syn::Error::new_spanned(&attr, "duplicate `#[rpc::info]` attribute"));
                continue;
            }
            let args = parse_meta_args::<InfoArgs>(&attr, errors);
            out.info = Some((args, attr));
        } else if is_tool(&attr) {
            if out.tool.is_some() {
                errors.push(syn::Error::new_spanned(&attr, "duplicate `#[mcp_tool]` attribute"));
                continue;
            }
            let args = parse_meta_args::<ToolArgs>(&attr, errors);
            out.tool = Some((args, attr));
        } else {
            kept.push(attr);
        }
    }
    *attrs = kept;
    out
}

fn parse_meta_args<T: FromMeta + Default>(attr: &Attribute, errors: &mut Errors) -> T {
    let result = match &attr.meta {
        syn::Meta::Path(_) => T::from_list(&[]),
        meta => T::from_meta(meta),
    };
    result.unwrap_or_else(|e| {
        errors.push_darling(e);
        T::default()
    })
}

/// One parameter.
pub struct Param {
    pub name: String,
    pub ty: Type,
    pub default: Option<Expr>,
    pub description: Option<String>,
    pub optional: bool,
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
    pub sig_span: Span,
}

/// A method's return type.
pub enum Output {
    /// No return type or `()`.
    Unit,
    /// `Result<T, E>` (detected by the last path segment `Result`).
    Fallible(Type),
    /// Any other type.
    Value(Type),
}

/// What the service macro decided about an `fn` in the impl block.
pub enum Exposure {
    /// Not part of the API (private helper, constructor, `#[rpc::info(skip)]`).
    Hidden,
    /// An RPC method.
    Exposed(Box<Method>),
}

/// Settings inherited from `#[rpc::service]`.
pub struct ServiceCtx<'a> {
    pub self_ty: &'a Type,
    pub alias: &'a str,
    pub alias_span: Span,
    pub separator: &'a str,
    pub separator_span: Span,
    pub groups: &'a [syn::Path],
}

/// Parses one `fn` of the impl block, stripping the attributes the macro owns.
pub fn parse(
    item: &mut ImplItemFn,
    ctx: &ServiceCtx<'_>,
    errors: &mut Errors,
    imported: &mut Vec<syn::Path>,
) -> Exposure {
    let attrs = take_attrs(&mut item.attrs, errors, imported);
    let skip = attrs.info.as_ref().is_some_and(|(i, _)| i.skip.is_present());
    let is_pub = matches!(item.vis, Visibility::Public(_));
    let receiver = item.sig.receiver().cloned();
    let annotated = attrs.info.as_ref().map(|(_, a)| a).or(attrs.tool.as_ref().map(|(_, a)| a));

    if skip {
        strip_param_attrs(item, errors, false);
        return Exposure::Hidden;
    }
    if !is_pub || receiver.is_none() {
        if let Some(attr) = annotated {
            let why = if is_pub { "it has no `&self` receiver" } else { "it is not `pub`" };
            errors.push(syn::Error::new_spanned(
                attr,
                format!(
                    "`{}` is not an RPC method because {why}; only `pub fn name(&self, ...)` methods are exposed",
                    item.sig.ident
                ),
            ));
        }
        strip_param_attrs(item, errors, false);
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
    let params = strip_param_attrs(item, errors, true)
        .into_iter()
        .map(|mut p| {
            if p.description.is_none() {
                p.description = docs.arguments.get(&p.name).cloned();
            }
            p
        })
        .collect();

    let fn_name = unraw(&item.sig.ident);
    let info = attrs.info.map(|(info, _)| info).unwrap_or_default();
    let (name, name_span) = match &info.name {
        Some(lit) => (lit.value(), lit.span()),
        None if ctx.alias.is_empty() => (fn_name.clone(), item.sig.ident.span()),
        None => {
            let name = format!("{}{}{}", ctx.alias, ctx.separator, fn_name);
            let span = if !crate::names::all_tool_chars(ctx.separator) {
                ctx.separator_span
            } else if !crate::names::all_tool_chars(ctx.alias) {
                ctx.alias_span
            } else {
                item.sig.ident.span()
            };
            (name, span)
        }
    };
    let groups = match info.groups {
        Some(list) => list.iter().cloned().collect(),
        None => ctx.groups.to_vec(),
    };
    Exposure::Exposed(Box::new(Method {
        ident: item.sig.ident.clone(),
        name,
        name_span,
        groups,
        is_async: item.sig.asyncness.is_some(),
        params,
        output: output_of(&item.sig.output, ctx.self_ty),
        docs,
        deprecated: deprecation(&item.attrs),
        tool: attrs.tool.map(|(t, _)| t).unwrap_or_default(),
        sig_span: item.sig.ident.span(),
    }))
}

fn unraw(ident: &syn::Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

/// Strips `#[rpc(...)]` from the parameters; when `collect`, also checks
/// and returns them.
fn strip_param_attrs(item: &mut ImplItemFn, errors: &mut Errors, collect: bool) -> Vec<Param> {
    let mut params = Vec::new();
    for arg in item.sig.inputs.iter_mut() {
        let FnArg::Typed(pat_type) = arg else {
            continue;
        };
        let mut args = ParamArgs::default();
        let mut seen = false;
        let mut kept = Vec::new();
        for attr in pat_type.attrs.drain(..) {
            if attr.path().is_ident("rpc") {
                if seen {
                    errors.push(syn::Error::new_spanned(&attr, "duplicate `#[rpc(...)]` on a parameter"));
                    continue;
                }
                seen = true;
                args = parse_meta_args::<ParamArgs>(&attr, errors);
            } else {
                kept.push(attr);
            }
        }
        pat_type.attrs = kept;
        if !collect {
            continue;
        }
        let ident = match &*pat_type.pat {
            Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => pi.ident.clone(),
            other => {
                errors.push(syn::Error::new_spanned(
                    other,
                    "unsupported parameter pattern: RPC parameters must be plain identifiers \
                     (the identifier is the parameter's JSON name)",
                ));
                continue;
            }
        };
        let ty = (*pat_type.ty).clone();
        match &ty {
            Type::Reference(r) => {
                errors.push(syn::Error::new_spanned(
                    r,
                    "RPC parameters are deserialised from the request and must be owned: \
                     take `String` instead of `&str`, `Vec<T>` instead of `&[T]`",
                ));
                continue;
            }
            Type::ImplTrait(t) => {
                errors.push(syn::Error::new_spanned(t, "`impl Trait` parameters are not supported in RPC methods"));
                continue;
            }
            _ => {}
        }
        let optional = is_option(&ty);
        params.push(Param {
            name: unraw(&ident),
            ty,
            default: args.default.map(|d| d.0),
            description: args.description.map(|d| d.value()),
            optional,
        });
    }
    params
}

fn is_option(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|s| s.ident == "Option")
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

fn output_of(output: &ReturnType, self_ty: &Type) -> Output {
    let ReturnType::Type(_, ty) = output else {
        return Output::Unit;
    };
    let mut ty = (**ty).clone();
    ReplaceSelf(self_ty).visit_type_mut(&mut ty);
    match &ty {
        Type::Tuple(t) if t.elems.is_empty() => Output::Unit,
        _ if last_segment(&ty).is_some_and(|s| s.ident == "Result") => Output::Fallible(ty),
        _ => Output::Value(ty),
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

/// Replaces `Self` with the service type in parameter and return types.
pub struct ReplaceSelf<'a>(pub &'a Type);

impl VisitMut for ReplaceSelf<'_> {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::Path(p) = ty
            && p.qself.is_none()
            && p.path.is_ident("Self")
        {
            *ty = self.0.clone();
            return;
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

fn opt_str(s: Option<&str>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

fn opt_bool(b: Option<bool>) -> TokenStream {
    match b {
        Some(b) => quote!(::core::option::Option::Some(#b)),
        None => quote!(::core::option::Option::None),
    }
}

impl Method {
    /// The items generated for this method (inside the service's const
    /// block) and the descriptor expression.
    pub fn expand(&self, index: usize, self_ty: &Type) -> (TokenStream, TokenStream) {
        let name = &self.name;
        let fn_name = unraw(&self.ident);
        let ident = &self.ident;
        let invoke_fn = format_ident!("__rpc_invoke_{}", index);
        let schemas_fn = format_ident!("__rpc_schemas_{}", index);

        let mut items = TokenStream::new();
        let mut param_descs = Vec::new();
        let mut param_schemas = Vec::new();
        let mut bindings = Vec::new();
        let mut args = Vec::new();
        for (pi, p) in self.params.iter().enumerate() {
            let mut ty = p.ty.clone();
            ReplaceSelf(self_ty).visit_type_mut(&mut ty);
            let var = format_ident!("__p{}", pi);
            let pname = &p.name;
            let span = p.ty.span();
            items.extend(quote_spanned! {span=>
                const _: () = __rpc::assert_param::<#ty>();
            });
            let (default_fn_arg, default_desc) = match &p.default {
                Some(expr) => {
                    let default_fn = format_ident!("__rpc_default_{}_{}", index, pi);
                    let default_json = format_ident!("__rpc_default_json_{}_{}", index, pi);
                    let value = match expr {
                        Expr::Lit(syn::ExprLit { lit: Lit::Str(_), .. }) => {
                            quote_spanned!(expr.span()=> ::core::convert::Into::into(#expr))
                        }
                        _ => quote!(#expr),
                    };
                    items.extend(quote! {
                        #[allow(clippy::useless_conversion)]
                        fn #default_fn() -> #ty {
                            let __value: #ty = #value;
                            __value
                        }
                        fn #default_json() -> __rpc::serde_json::Value {
                            __rpc::default_value(#default_fn())
                        }
                    });
                    (
                        quote!(::core::option::Option::Some(#default_fn)),
                        quote!(::core::option::Option::Some(#default_json)),
                    )
                }
                None => (quote!(::core::option::Option::None), quote!(::core::option::Option::None)),
            };
            bindings.push(quote_spanned! {span=>
                let #var: #ty = __rpc::param(#name, &mut params, #pname, #default_fn_arg)?;
            });
            let required = p.default.is_none() && !p.optional;
            let description = opt_str(p.description.as_deref());
            param_descs.push(quote! {
                __rpc::ParamDescriptor { name: #pname, description: #description, required: #required, default: #default_desc }
            });
            param_schemas.push(quote_spanned!(span=> generator.subschema_for::<#ty>()));
            args.push(quote!(#var));
        }

        let call = if self.is_async {
            quote_spanned!(self.sig_span=> __svc.#ident(#(#args),*).await)
        } else {
            quote_spanned!(self.sig_span=> __svc.#ident(#(#args),*))
        };
        let (finish, result_schema, output_kind) = match &self.output {
            Output::Unit => (
                quote!(let () = #call; __rpc::output(&())),
                quote!(::core::option::Option::None),
                quote!(__rpc::OutputKind::Unit),
            ),
            Output::Value(ty) => (
                quote_spanned!(ty.span()=> let __out: #ty = #call; __rpc::output(&__out)),
                quote_spanned!(ty.span()=> ::core::option::Option::Some(generator.subschema_for::<#ty>())),
                quote!(__rpc::OutputKind::Value),
            ),
            Output::Fallible(ty) => {
                let ok = quote_spanned!(ty.span()=> <#ty as __rpc::Fallible>::Ok);
                (
                    quote_spanned! {ty.span()=>
                        let __out: #ty = #call;
                        let __out: #ok = __rpc::Fallible::into_rpc(__out)?;
                        __rpc::output(&__out)
                    },
                    quote_spanned!(ty.span()=> ::core::option::Option::Some(generator.subschema_for::<#ok>())),
                    quote!(__rpc::OutputKind::Value),
                )
            }
        };
        let output_check = match &self.output {
            Output::Unit => quote!(),
            Output::Value(ty) => {
                quote_spanned!(ty.span()=> const _: () = __rpc::assert_output::<#ty>();)
            }
            Output::Fallible(ty) => quote_spanned! {ty.span()=>
                const _: () = __rpc::assert_output::<<#ty as __rpc::Fallible>::Ok>();
            },
        };
        let is_unit_output = matches!(self.output, Output::Unit);
        let result_schema = if is_unit_output { quote!(::core::option::Option::None) } else { result_schema };

        items.extend(quote! {
            #output_check

            #[allow(deprecated, clippy::unit_arg, clippy::let_unit_value)]
            fn #invoke_fn(
                instance: __rpc::ServiceInstance,
                #[allow(unused_mut, unused_variables)]
                mut params: __rpc::serde_json::Map<::std::string::String, __rpc::serde_json::Value>,
            ) -> __rpc::BoxFuture<'static, __rpc::InvokeResult> {
                ::std::boxed::Box::pin(async move {
                    let __svc = __rpc::downcast::<#self_ty>(instance)?;
                    #(#bindings)*
                    #finish
                })
            }

            fn #schemas_fn(generator: &mut __rpc::schemars::SchemaGenerator) -> __rpc::MethodSchemas {
                __rpc::MethodSchemas {
                    params: ::std::vec![#(#param_schemas),*],
                    result: #result_schema,
                }
            }
        });

        let groups = self.groups.iter().map(|g| quote_spanned!(g.span()=> __rpc::GroupRef::of::<#g>()));
        let summary = opt_str(self.docs.summary.as_deref());
        let description = opt_str(self.docs.description.as_deref());
        let deprecated = opt_str(self.deprecated.as_deref());
        let t = &self.tool;
        let title = opt_str(t.title.as_ref().map(LitStr::value).as_deref());
        let (ro, de, id, ow) = (
            opt_bool(t.read_only_hint),
            opt_bool(t.destructive_hint),
            opt_bool(t.idempotent_hint),
            opt_bool(t.open_world_hint),
        );
        let line = quote_spanned!(self.sig_span=> ::core::line!());
        let descriptor = quote! {
            __rpc::MethodDescriptor {
                name: #name,
                fn_name: #fn_name,
                groups: &[#(#groups),*],
                summary: #summary,
                description: #description,
                deprecated: #deprecated,
                params: &[#(#param_descs),*],
                output: #output_kind,
                tool: __rpc::ToolHints {
                    title: #title,
                    read_only_hint: #ro,
                    destructive_hint: #de,
                    idempotent_hint: #id,
                    open_world_hint: #ow,
                },
                schemas: #schemas_fn,
                invoke: #invoke_fn,
                line: #line,
            }
        };
        (items, descriptor)
    }

    /// A const item that fails to compile, at the span of the name's source,
    /// when the name is not a valid MCP tool name and one of its groups is
    /// published over MCP.
    pub fn tool_name_checks(&self) -> TokenStream {
        if crate::names::is_valid_tool_name(&self.name) {
            return TokenStream::new();
        }
        let message = format!(
            "`{}` is not a valid MCP tool name ({}), but the method belongs to an API group \
             published over MCP; tool names are 1-128 characters from A-Z a-z 0-9 _ - . \
             (rename it with #[rpc::info(name = \"...\")] or change the alias/separator)",
            self.name,
            crate::names::why_invalid(&self.name)
        );
        let span = self.name_span;
        self.groups
            .iter()
            .map(|g| {
                let g = g.to_token_stream();
                quote_spanned! {span=>
                    const _: () = if <#g as __rpc::ApiGroup>::MCP { ::core::panic!(#message) };
                }
            })
            .collect()
    }
}
