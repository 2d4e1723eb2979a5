//! The code generated for one method: hidden associated functions and
//! constants of the service type (so `Self` works everywhere, defaults
//! included), ending in the method's descriptor.
//!
//! For a method `get` of `Catalog`:
//!
//! * `fn __rpc_invoke_get(Invocation) -> Invoked` (`crate::invoke`): it
//!   calls the method, or describes its arguments. A method that is not
//!   `async` passes its argument types (in a turbofish), itself, its
//!   return type's finish and, when it has any, its defaults to
//!   `__private::call<N>` (shared by the methods of the service with the
//!   same signature), which binds the service and each argument under the
//!   name its descriptor gives, calls it and hands the outcome to the
//!   finish; an `async` one binds through `__private::bind<N>` and hands
//!   the outcome, itself and its finish to `__private::call_async`, which
//!   boxes its future. Both are `#[track_caller]` and called at the return
//!   type: that is the location the finish records an error at. A method
//!   with more than eight arguments, or written out as its descriptor,
//!   gets the sequence written out;
//! * for its return type, shared by the methods of the block that return
//!   the same type (as spelt): `fn __rpc_finish_get(Outcome<R>, &'static
//!   Location) -> InvokeResult`, which turns the return value into a
//!   result by the type's meaning (or passes on the error that kept the
//!   method from being called; an error it converts is recorded at the
//!   location); `fn __rpc_result_schema_get(&mut SchemaGenerator) ->
//!   Schema`; and `fn __rpc_errors_get() -> &'static [ErrorCode]`;
//! * each parameter's schema is its type's `Arg::schema` (shared by every
//!   method with a parameter of that type), named by the shared code or,
//!   for a descriptor written out, in the descriptor;
//! * `fn __rpc_checks_get()`, only for a method whose parameters have
//!   `#[rpc(header)]` or rules: compile-time checks of their types;
//! * `fn __rpc_default_get_<param>()` per default, and its JSON form;
//! * its `MethodSlot`: for most methods `Compact`, every text and flag of
//!   the descriptor in one string (`crate::compact`) beside its functions,
//!   its parameters' defaults and its groups (a constant the block's
//!   methods in the same groups share), which the compiler checks far
//!   faster than a typed descriptor (its arguments' schemas and kinds are
//!   asked of its invoke function, where their types are named once); for
//!   a method with an MCP role other than a tool, parameter rules, or tool
//!   attributes beyond the title and the hints, `Described`, its
//!   descriptor naming only the fields that differ from `__private::METHOD`
//!   (and each parameter's from `__private::PARAM`). The slot is an entry
//!   of the block's table (`__RPC_TABLE_<first method>`, a constant of the
//!   type), or, for a method whose attribute macros expanded first,
//!   `const __RPC_METHOD_get: MethodSlot`, which the table names;
//! * `fn __rpc_described_get()`, which warns (through `#[deprecated]`) when
//!   an undocumented method is published over MCP.
//!
//! Every use of a parameter's or result's traits goes through one trait
//! method at one span, so a type that lacks them gives one error.

use std::collections::HashMap;

use proc_macro2::{Ident, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, Lit};

use crate::fields::Fields;
use crate::method::{Method, Output};
use crate::names::unraw;

pub(crate) use crate::spans::respan;

/// The most arguments `__private::call<N>` and `bind<N>` take (rpc-core's `binders`);
/// a method with more gets the same body written out.
const MAX_ARGS: usize = 8;

/// Where the generated items go.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// In an `impl` block inside the service's `const _: () = { ... }`:
    /// name checks are separate `const _` items, always evaluated.
    Module,
    /// In the user's impl block (a method whose attribute macros expanded
    /// first): name checks are evaluated through the method's slot constant.
    Deferred,
}

/// The generated code of one method.
pub struct Generated {
    /// Associated items for an `impl` of the service type.
    pub items: TokenStream,
    /// `const _` items for [`Placement::Module`].
    pub module_checks: TokenStream,
    /// For [`Placement::Module`], the method's entry in the service's
    /// table, its `MethodSlot`, written into the table
    /// itself (no constant per method: fewer items to check). For
    /// [`Placement::Deferred`], `None`: the entry is the slot constant,
    /// `__RPC_METHOD_<fn>`, among the items.
    pub entry: Option<TokenStream>,
}

/// The name of a method's slot constant.
pub fn slot_ident(fn_ident: &Ident) -> Ident {
    format_ident!("__RPC_METHOD_{}", unraw(fn_ident))
}

/// The lints the generated items allow (`deprecated` too, but item by
/// item: the description check raises it on purpose).
pub fn allowed_lints() -> TokenStream {
    quote! {
        #[allow(non_snake_case, non_upper_case_globals, dead_code, unused_mut, unused_variables,
            clippy::all, clippy::pedantic, clippy::nursery)]
    }
}

/// Attributes of every generated item: hidden, calling deprecated methods
/// freely, and (in the user's own `impl` block; the macro's own block
/// carries them once) its other lints allowed.
fn hidden(placement: Placement) -> TokenStream {
    match placement {
        Placement::Module => quote!(#[doc(hidden)] #[allow(deprecated)]),
        Placement::Deferred => {
            let lints = allowed_lints();
            quote!(#[doc(hidden)] #[allow(deprecated)] #lints)
        }
    }
}

/// What the methods of one `impl` block share, by the first method that
/// needs it: fewer items for the compiler to check.
#[derive(Default)]
pub struct Shared {
    /// By return type (as spelt), the method whose return-type functions
    /// (finish, result schema, error codes) the methods returning that type
    /// share.
    result_fns: HashMap<String, String>,
    /// By list of groups (as spelt), the method whose constant
    /// `__RPC_GROUPS_<fn>` the methods in those groups name (most methods
    /// of a block are in the block's groups).
    group_lists: HashMap<String, String>,
}

impl Method {
    /// Generates the method's items; `k` is the `__private` path; `shared`
    /// holds what the methods of the same `impl` block share.
    pub fn generate(&self, k: &crate::krate::Private, placement: Placement, shared: &mut Shared) -> Generated {
        let result_fns = &mut shared.result_fns;
        let fn_name = unraw(&self.ident);
        let invoke_fn = format_ident!("__rpc_invoke_{}", fn_name);
        let checks_fn = format_ident!("__rpc_checks_{}", fn_name);
        let check = format_ident!("__RPC_CHECK_{}", fn_name);
        let slot = slot_ident(&self.ident);
        let hidden = hidden(placement);
        let name = &self.name;

        let mut items = TokenStream::new();
        // Most methods are written as one string and their functions
        // (`CompactMethod`); the others as their descriptor.
        let compact = crate::compact::text(self, &fn_name);
        // The binding sequence, written out for a method with more
        // arguments than `bind<N>` takes, and for one written out as its
        // descriptor (which names each argument's traits at its type, as
        // a sequence written out does: one error for a type that lacks
        // them).
        let written_out = self.params.len() > MAX_ARGS || compact.is_none();
        let mut invoke_args = Vec::new();
        let mut param_descs = Vec::new();
        let mut param_defaults = Vec::new();
        let mut header_checks = Vec::new();
        let mut rule_checks = TokenStream::new();
        for p in &self.params {
            let ty = &p.ty;
            let pname = &p.name;
            let span = crate::spans::type_span(ty);
            let (default_arg, default_desc) = match &p.default {
                Some(expr) => {
                    let default_fn = format_ident!("__rpc_default_{}_{}", fn_name, pname);
                    let default_json = format_ident!("__rpc_default_json_{}_{}", fn_name, pname);
                    // A string literal or a constant (whose type is known, so
                    // nothing is left to infer) converts with `Into`:
                    // `Self::PREFIX: &str` fills a `String` parameter.
                    let value = match expr {
                        Expr::Lit(syn::ExprLit { lit: Lit::Str(_), .. }) | Expr::Path(_) => {
                            quote_spanned!(expr.span()=> ::core::convert::Into::into(#expr))
                        }
                        _ => expr.to_token_stream(),
                    };
                    items.extend(quote! {
                        #hidden
                        #[allow(clippy::useless_conversion)]
                        fn #default_fn() -> #ty {
                            let __value: #ty = #value;
                            __value
                        }
                        #hidden
                        fn #default_json() -> #k::serde_json::Value {
                            #k::default_value(Self::#default_fn())
                        }
                    });
                    (
                        Some(quote!(Self::#default_fn as fn() -> #ty)),
                        quote!(::core::option::Option::Some(Self::#default_json as fn() -> #k::serde_json::Value)),
                    )
                }
                None => (None, quote!(::core::option::Option::None)),
            };
            if let Some((_, header_span)) = &p.header {
                let check = quote_spanned!(*header_span=> #k::assert_header::<#ty>);
                header_checks.push(quote!(#check();));
            }
            rule_checks.extend(p.rules.iter().map(|r| r.check(ty, pname)));
            if compact.is_some() {
                param_defaults.push(default_desc);
            } else {
                let is_param = quote_spanned!(span=> <#ty as #k::Arg>::IS_PARAM);
                let schema = quote_spanned!(span=> <#ty as #k::Arg>::schema);
                // Only the fields that differ from `PARAM`, the base: fewer
                // expressions for the compiler to check, per parameter.
                let required = p.default.is_none() && !p.optional;
                let mut fields = Fields::default();
                fields.some("header", p.header.as_ref().map(|(header, _)| header));
                fields.some("description", p.description.as_deref());
                if p.default.is_some() {
                    fields.set("default", default_desc);
                }
                fields.list("rules", p.rules.iter().map(|r| r.expr(k)));
                param_descs.push(quote! {
                    #k::ParamDescriptor {
                        name: #pname,
                        is_param: #is_param,
                        required: #required,
                        schema: #schema,
                        #fields
                        ..#k::PARAM
                    }
                });
            }
            invoke_args.push(crate::invoke::Arg { ty, span, name: pname, default: default_arg });
        }

        let sig_span = self.sig_span;
        let kinds = quote! {
            #[allow(unused_imports)]
            use #k::{ResultKind as _, ValueKind as _};
        };
        // The return value's handling, its schema and its error codes: one
        // function each per return type (as spelt) of the block. The
        // finish function turns an `Outcome<R>` into an `InvokeResult`,
        // recording an error it converts at the location it is given.
        let (finisher, result_schema, output_kind, errors) = match &self.output {
            Output::Unit => (quote!(#k::unit_outcome), None, Some(quote!(#k::OutputKind::Unit)), None),
            Output::Typed(ty) => {
                let span = crate::spans::type_span(ty);
                let key = ty.to_token_stream().to_string();
                // The first method of the block returning this type names them.
                let shared = result_fns.get(&key).cloned();
                let first = shared.as_deref().unwrap_or(&fn_name);
                let finish_fn = format_ident!("__rpc_finish_{}", first);
                let schema_fn = format_ident!("__rpc_result_schema_{}", first);
                let errors_fn = format_ident!("__rpc_errors_{}", first);
                if shared.is_none() {
                    let tag = quote_spanned!(span=> (&#k::Probe::<#ty>::new()).__rpc_kind());
                    let ops = quote_spanned!(span=> __tag.ops());
                    let outcome = quote_spanned!(span=> __tag.outcome(__out, __at));
                    let schema = quote_spanned!(span=> #tag.ops().schema(__generator));
                    items.extend(quote! {
                        #hidden
                        // `__at`: the method's return type, where an error
                        // the conversion creates is recorded.
                        fn #finish_fn(
                            __out: #k::Outcome<#ty>,
                            __at: &'static ::core::panic::Location<'static>,
                        ) -> #k::InvokeResult {
                            #kinds
                            let __tag = #tag;
                            match __out {
                                ::core::result::Result::Ok(__out) => #ops.finish(#outcome),
                                ::core::result::Result::Err(__error) => ::core::result::Result::Err(__error),
                            }
                        }

                        #hidden
                        fn #schema_fn(__generator: &mut #k::schemars::SchemaGenerator) -> #k::schemars::Schema {
                            #kinds
                            #schema
                        }

                        #hidden
                        fn #errors_fn() -> &'static [#k::ErrorCode] {
                            #[allow(unused_imports)]
                            use #k::{CodesKind as _, NoCodesKind as _};
                            (&#k::Probe::<#ty>::new()).__rpc_codes()
                        }
                    });
                    result_fns.insert(key, fn_name.clone());
                }
                (quote!(Self::#finish_fn), Some(quote!(Self::#schema_fn)), None, Some(quote!(Self::#errors_fn)))
            }
        };
        // The location an error records is the return type's. The shared
        // functions (`call<N>`, `call_async`) are `#[track_caller]` and
        // called at the return type's span (rustc takes a call's location
        // from the spans of its path, so every token of the path is
        // there): the caller's location is passed as a constant,
        // with no call that could unwind (and so no cleanup path) before
        // the arguments are handed over. A sequence written out takes it
        // from `Location::caller()`, evaluated at compile time.
        let at_span = match &self.output {
            Output::Typed(ty) => crate::spans::type_span(ty),
            Output::Unit => sig_span,
        };
        let invoke = crate::invoke::Invoke {
            k,
            k_at: k.at(at_span),
            name,
            ident: &self.ident,
            is_async: self.is_async,
            written_out,
            describes: compact.is_some(),
            sig_span,
            at_span,
            finisher,
            args: invoke_args,
        }
        .body();
        items.extend(quote! {
            #hidden
            #[allow(clippy::unit_arg, clippy::let_unit_value)]
            fn #invoke_fn(__call: #k::Invocation<'_>) -> #k::Invoked<'_> {
                #invoke
            }
        });
        if !header_checks.is_empty() || !rule_checks.is_empty() {
            items.extend(quote! {
                #hidden
                fn #checks_fn() {
                    #(#header_checks)*
                    #rule_checks
                }
            });
        }

        // The method's groups: a constant of the block, written by its first
        // method in them (each group at its own span, where an error about
        // it points).
        let groups_key = self.groups.iter().map(|g| g.to_token_stream().to_string()).collect::<Vec<_>>().join(",");
        let groups_const = match shared.group_lists.get(&groups_key) {
            Some(first) => format_ident!("__RPC_GROUPS_{}", first),
            None => {
                let name = format_ident!("__RPC_GROUPS_{}", fn_name);
                let groups = self.groups.iter().map(|g| quote_spanned!(g.span()=> #k::GroupRef::of::<#g>()));
                items.extend(quote! {
                    #hidden
                    const #name: &'static [#k::GroupRef] = &[#(#groups),*];
                });
                shared.group_lists.insert(groups_key, fn_name.clone());
                name
            }
        };
        let groups = quote!(Self::#groups_const);
        let line = quote_spanned!(sig_span=> ::core::line!());
        let value = match compact {
            Some(text) => {
                let result_schema = match result_schema {
                    Some(schema) => quote!(::core::option::Option::Some(#schema)),
                    None => quote!(::core::option::Option::None),
                };
                let errors = errors.unwrap_or_else(|| quote!(#k::no_codes));
                // Defaults are rare: a shared empty list when no parameter
                // has one.
                let param_defaults = if self.params.iter().all(|p| p.default.is_none()) {
                    quote!(#k::NO_DEFAULTS)
                } else {
                    quote!(&[#(#param_defaults),*])
                };
                quote! {
                    #k::MethodSlot::Compact(#k::CompactMethod {
                        text: #text,
                        invoke: Self::#invoke_fn,
                        result_schema: #result_schema,
                        errors: #errors,
                        param_defaults: #param_defaults,
                        groups: #groups,
                        line: #line,
                    })
                }
            }
            None => {
                // Only the fields that differ from `METHOD`, the base: fewer
                // expressions for the compiler to check, per method.
                let mut fields = Fields::default();
                fields.some("summary", self.docs.summary.as_deref());
                fields.some("description", self.docs.description.as_deref());
                fields.some("deprecated", self.deprecated.as_deref());
                fields.list("params", param_descs);
                if let Some(output_kind) = output_kind {
                    fields.set("output", output_kind);
                }
                let tool = self.tool_hints(k);
                if !tool.is_empty() {
                    fields.set("tool", quote!(#k::ToolHints { #tool ..#k::ToolHints::NONE }));
                }
                if !matches!(self.role, crate::role::Role::Tool) {
                    fields.set("mcp", crate::role::tokens(&self.role, k));
                }
                fields.some("result_schema", result_schema);
                fields.list("scopes", &self.scopes);
                if let Some(errors) = errors {
                    fields.set("errors", errors);
                }
                self.policies.fields(k, &mut fields);
                quote! {
                    #k::MethodSlot::Described(&#k::MethodDescriptor {
                        name: #name,
                        fn_name: #fn_name,
                        groups: #groups,
                        invoke: Self::#invoke_fn,
                        line: #line,
                        #fields
                        ..#k::METHOD
                    })
                }
            }
        };

        let checks = self.tool_name_checks(k, placement);
        let module_checks = match placement {
            Placement::Module => checks.iter().map(|c| quote!(const _: () = #c;)).collect(),
            Placement::Deferred => TokenStream::new(),
        };
        items.extend(self.description_check(k));
        if placement == Placement::Module {
            return Generated { items, module_checks, entry: Some(value) };
        }
        let slot_value = if checks.is_empty() {
            value
        } else {
            items.extend(quote! {
                #hidden
                const #check: () = { #(#checks;)* };
            });
            quote! {{
                let () = Self::#check;
                #value
            }}
        };
        items.extend(quote! {
            #hidden
            const #slot: #k::MethodSlot = #slot_value;
        });
        Generated { items, module_checks, entry: None }
    }

    /// The `ToolHints` fields that differ from `ToolHints::NONE`; empty
    /// when none does.
    fn tool_hints(&self, k: &crate::krate::Private) -> Fields {
        let t = &self.tool;
        let mut fields = Fields::default();
        fields.some("title", t.title.as_ref().map(|title| title.value()));
        fields.some("read_only_hint", crate::attrs::hint(t.read_only_hint));
        fields.some("destructive_hint", crate::attrs::hint(t.destructive_hint));
        fields.some("idempotent_hint", crate::attrs::hint(t.idempotent_hint));
        fields.some("open_world_hint", crate::attrs::hint(t.open_world_hint));
        fields.list("requires_client", t.requires_client.iter().filter_map(|p| p.get_ident().map(ToString::to_string)));
        if let Some(task) = crate::tool_checks::task_variant(t).ok().filter(|task| *task != "Forbidden") {
            let task = format_ident!("{}", task);
            fields.set("task", quote!(#k::TaskSupport::#task));
        }
        if t.starts_task.is_present() {
            fields.set("starts_task", true);
        }
        let json_text = |source: &Option<crate::tool_checks::InputSchema>| {
            source.as_ref().map(|source| match source {
                crate::tool_checks::InputSchema::File(path) => quote!(::core::include_str!(#path)),
                crate::tool_checks::InputSchema::Inline(text) => quote!(#text),
            })
        };
        fields.some("input_schema", json_text(&self.input_schema));
        fields.some("output_schema", json_text(&self.output_schema));
        fields.some("meta", self.meta.as_deref());
        fields.list("icons", &self.icons);
        fields
    }

    /// Expressions that fail to evaluate, at the span of the name's source,
    /// when the name is not a valid MCP tool name and one of its groups is
    /// published over MCP; for a deferred method (`placement`), also the
    /// check that one of its groups is published when it carries an MCP
    /// attribute (a service block checks its methods' together:
    /// [`crate::method::unpublished_mcp_checks`]).
    fn tool_name_checks(&self, k: &crate::krate::Private, placement: Placement) -> Vec<TokenStream> {
        let mut checks = Vec::new();
        if placement == Placement::Deferred {
            checks.extend(crate::method::unpublished_mcp_checks(&[self], k));
        }
        if self.skip_name_check || crate::names::is_valid_tool_name(&self.name) {
            return checks;
        }
        let message = format!(
            "`{}` is not a valid MCP tool name ({}), but the method belongs to an API group \
             published over MCP; tool names are 1-128 characters from A-Z a-z 0-9 _ - . \
             (rename it with #[rpc::info(name = \"...\")] or change the alias/separator)",
            self.name,
            crate::names::why_invalid(&self.name)
        );
        let span = self.name_span;
        checks.extend(self.groups.iter().map(|g| {
            let g = g.to_token_stream();
            quote_spanned! {span=>
                if <#g as #k::ApiGroup>::MCP { ::core::panic!(#message) }
            }
        }));
        checks
    }

    /// A function calling `McpPublished::<published>::method_without_description`,
    /// which is `#[deprecated]` (with the advice as its note) when one of the
    /// method's groups is published over MCP, so the compiler warns at the
    /// method's signature when it has no description.
    fn description_check(&self, k: &crate::krate::Private) -> TokenStream {
        if self.undocumented || self.docs.summary.is_some() || self.docs.description.is_some() || self.groups.is_empty()
        {
            return TokenStream::new();
        }
        let check = format_ident!("__rpc_described_{}", unraw(&self.ident));
        let published = self.groups.iter().map(|g| quote!(<#g as #k::ApiGroup>::MCP));
        let call = respan(
            quote! {
                #k::McpPublished::<{ false #(|| #published)* }>::method_without_description();
            },
            self.ident.span(),
        );
        quote! {
            #[doc(hidden)]
            #[allow(dead_code, non_snake_case)]
            fn #check() {
                #call
            }
        }
    }
}
