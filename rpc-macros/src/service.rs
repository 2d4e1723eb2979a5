//! `#[rpc::service]`: expands an impl block into the block itself (with
//! the macro's own attributes removed) plus a `const _: () = { ... };` that
//! holds the generated items and submits the service descriptor.

use std::collections::HashMap;

use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ImplItem, ItemImpl, Type};

use crate::attrs::ServiceArgs;
use crate::errors::Errors;
use crate::method::{self, Exposure, ServiceCtx};

/// Expands `#[rpc::service(args)] item`.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let mut item: ItemImpl = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(e) => {
            let e = syn::Error::new(e.span(), "#[rpc::service] goes on an inherent `impl` block");
            let compile_error = e.to_compile_error();
            return quote!(#compile_error #item);
        }
    };
    let args = match NestedMeta::parse_meta_list(args)
        .map_err(darling::Error::from)
        .and_then(|l| ServiceArgs::from_list(&l))
    {
        Ok(args) => args,
        Err(e) => {
            errors.push_darling(e);
            ServiceArgs::default()
        }
    };

    if let Some((path, _)) = &item.trait_ {
        errors
            .push(syn::Error::new_spanned(path, "#[rpc::service] goes on an inherent `impl` block, not a trait impl"));
    }
    if !item.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &item.generics,
            "generic service types are not supported: implement the service on a concrete type",
        ));
    }
    let self_ty = (*item.self_ty).clone();
    let type_name = match &self_ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    };
    let Some(type_name) = type_name else {
        errors.push(syn::Error::new_spanned(&self_ty, "the service type must be a named type"));
        let compile_errors = errors.to_compile_errors();
        return quote!(#compile_errors #item);
    };

    let (alias, alias_span) = match &args.alias {
        Some(lit) => (lit.value(), lit.span()),
        None => (type_name.clone(), self_ty.span()),
    };
    let (separator, separator_span) = match &args.separator {
        Some(lit) => (lit.value(), lit.span()),
        None => (".".to_owned(), Span::call_site()),
    };
    let version: u32 = match &args.version {
        Some(lit) => match lit.base10_parse::<u32>() {
            Ok(v) if v >= 1 => v,
            _ => {
                errors.push(syn::Error::new_spanned(lit, "the API version is a whole number from 1"));
                1
            }
        },
        None => 1,
    };
    let groups: Vec<syn::Path> = args.groups.iter().cloned().collect();

    let ctx = ServiceCtx {
        self_ty: &self_ty,
        alias: &alias,
        alias_span,
        separator: &separator,
        separator_span,
        groups: &groups,
    };
    let mut methods = Vec::new();
    let mut imported = Vec::new();
    for impl_item in item.items.iter_mut() {
        if let ImplItem::Fn(f) = impl_item
            && let Exposure::Exposed(m) = method::parse(f, &ctx, &mut errors, &mut imported)
        {
            methods.push(*m);
        }
    }

    // Duplicate names within this block and version.
    let mut seen: HashMap<&str, Span> = HashMap::new();
    for m in &methods {
        if let Some(first) = seen.insert(&m.name, m.name_span) {
            let mut e = syn::Error::new(
                m.name_span,
                format!("duplicate RPC method name `{}` in API version {version}", m.name),
            );
            e.combine(syn::Error::new(first, format!("`{}` is first defined here", m.name)));
            errors.push(e);
        }
    }

    // Re-apply imported attribute macros in marker form, so `use mcp::mcp_tool;`
    // counts as used although the attributes themselves were consumed.
    imported.sort_by_key(|p| quote!(#p).to_string());
    imported.dedup_by_key(|p| quote!(#p).to_string());
    let markers: TokenStream = imported.iter().map(|p| quote!(#[#p(__rpc_service)] const _: () = ();)).collect();

    let compile_errors = errors.to_compile_errors();
    if !errors.is_empty() {
        // Keep the item so the rest of the crate (and the IDE) still sees it.
        return quote!(#compile_errors #item #markers);
    }

    let mut generated = TokenStream::new();
    let mut descriptors = Vec::new();
    for (i, m) in methods.iter().enumerate() {
        let (items, descriptor) = m.expand(i, &self_ty);
        generated.extend(items);
        generated.extend(m.tool_name_checks());
        descriptors.push(descriptor);
    }
    let removed: Vec<String> = args.removed.iter().map(syn::LitStr::value).collect();
    let count = descriptors.len();
    let type_check = quote_spanned!(self_ty.span()=> const _: () = __rpc::assert_service::<#self_ty>(););
    let type_name_lit = type_name;

    quote! {
        #item

        #[doc(hidden)]
        #[allow(non_snake_case, non_camel_case_types, clippy::all)]
        const _: () = {
            use ::rpc::__private as __rpc;

            #type_check
            #markers
            #generated

            static __RPC_METHODS: [__rpc::MethodDescriptor; #count] = [#(#descriptors),*];

            __rpc::inventory::submit! {
                __rpc::ServiceDescriptor {
                    type_id: ::core::any::TypeId::of::<#self_ty>,
                    type_name: ::core::concat!(::core::module_path!(), "::", #type_name_lit),
                    alias: #alias,
                    version: #version,
                    removed: &[#(#removed),*],
                    methods: &__RPC_METHODS,
                    file: ::core::file!(),
                    line: ::core::line!(),
                }
            }
        };
    }
}
