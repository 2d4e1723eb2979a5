//! Methods whose attribute macros must expand before they are analysed.
//!
//! `#[rpc::service]` cannot see what `#[tool(...)]` is when the user wrote
//! `use mcp::mcp_tool as tool;`, nor what `#[tracing::instrument]` does to a
//! method. For such a method it appends `#[<rpc>::__private::__rpc_method(
//! <block settings>)]` as the last attribute. The other attribute macros
//! expand first; `rpc::info` and `mcp_tool`, seeing the marker in their
//! input, fold their arguments into it instead of complaining. The marker
//! then analyses the method and emits its items next to it, in the impl
//! block, ending in the slot constant the service's method table names.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, ImplItemFn, LitBool, LitStr, Token};

use crate::codegen::{Placement, slot_ident};
use crate::errors::Errors;
use crate::krate::Krate;
use crate::method::{self, Exposure, RawAttrs, ServiceCtx};

/// The last segment of the marker's path.
pub const MARKER: &str = "__rpc_method";

/// The marker's arguments.
struct MarkerArgs {
    krate: syn::Path,
    alias: LitStr,
    separator: LitStr,
    groups: Vec<syn::Path>,
    undocumented: bool,
    scopes: Vec<LitStr>,
    raw: RawAttrs,
}

fn key(input: ParseStream<'_>, expected: &str) -> syn::Result<()> {
    let ident: Ident = input.parse()?;
    if ident != expected {
        return Err(syn::Error::new(ident.span(), format!("expected `{expected}`")));
    }
    input.parse::<Token![=]>()?;
    Ok(())
}

impl Parse for MarkerArgs {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        key(input, "krate")?;
        let krate = input.call(syn::Path::parse_mod_style)?;
        input.parse::<Token![,]>()?;
        key(input, "alias")?;
        let alias = input.parse()?;
        input.parse::<Token![,]>()?;
        key(input, "separator")?;
        let separator = input.parse()?;
        input.parse::<Token![,]>()?;
        key(input, "groups")?;
        let content;
        syn::bracketed!(content in input);
        let groups: Punctuated<syn::Path, Token![,]> = Punctuated::parse_terminated(&content)?;
        input.parse::<Token![,]>()?;
        key(input, "undocumented")?;
        let undocumented: LitBool = input.parse()?;
        input.parse::<Token![,]>()?;
        key(input, "scopes")?;
        let content;
        syn::bracketed!(content in input);
        let scopes: Punctuated<LitStr, Token![,]> = Punctuated::parse_terminated(&content)?;
        let mut raw = RawAttrs::default();
        while input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let kind: Ident = input.parse()?;
            let content;
            syn::parenthesized!(content in input);
            let tokens: TokenStream = content.parse()?;
            let name = kind.to_string();
            match raw.slot(&name) {
                Some(slot) => slot.push((kind.span(), tokens)),
                None => {
                    return Err(syn::Error::new(kind.span(), "expected `info(...)`, `tool(...)`, `cache(...)`, ..."));
                }
            }
        }
        Ok(MarkerArgs {
            krate,
            alias,
            separator,
            groups: groups.into_iter().collect(),
            undocumented: undocumented.value,
            scopes: scopes.into_iter().collect(),
            raw,
        })
    }
}

/// Expands `#[__rpc_method(args)] fn ...`.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let args: MarkerArgs = match syn::parse2(args) {
        Ok(args) => args,
        Err(e) => {
            let error = e.to_compile_error();
            return quote!(#error #item);
        }
    };
    let mut f: ImplItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let error = e.to_compile_error();
            return quote!(#error #item);
        }
    };
    let krate = Krate::resolve(Some(&args.krate));
    let k = crate::krate::Private::Path(krate.private());
    let ctx = ServiceCtx {
        krate,
        alias: args.alias,
        separator: args.separator,
        groups: args.groups,
        undocumented: args.undocumented,
        scopes: args.scopes,
    };
    let candidate = method::is_candidate(&f);
    let slot = slot_ident(&f.sig.ident);
    let hidden_slot = quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        const #slot: #k::MethodSlot = #k::MethodSlot::Hidden;
    };
    let mut errors = Errors::default();
    let attrs = method::parse_attrs(args.raw, &mut errors);
    let exposure = method::analyze(&mut f, &ctx, attrs, &mut errors);
    if let Exposure::Exposed(m) = &exposure {
        method::check_groupless_mcp(&[&**m], &mut errors);
    }
    let slot_when_hidden = if candidate { hidden_slot } else { TokenStream::new() };
    if !errors.is_empty() {
        let compile_errors = errors.to_compile_errors();
        return quote!(#compile_errors #f #slot_when_hidden);
    }
    match exposure {
        Exposure::Hidden => quote!(#f #slot_when_hidden),
        Exposure::Exposed(m) => {
            let generated = m.generate(&k, Placement::Deferred, &mut crate::codegen::Shared::default());
            let items = generated.items;
            quote!(#f #items)
        }
    }
}

/// `#[rpc::info]` / `#[mcp_tool]` (and `cache`, `lock`, `invalidates`) expanding on their own: inside a service
/// block (the marker is among the item's attributes) they fold their
/// arguments into the marker; anywhere else they are an error.
pub fn fold_or_refuse(kind: &str, display: &str, args: TokenStream, item: TokenStream) -> TokenStream {
    if args.to_string() == "__rpc_service" {
        // The form the service macro emits to keep imports used.
        return TokenStream::new();
    }
    if let Ok(mut f) = syn::parse2::<ImplItemFn>(item.clone())
        && let Some(marker) = f.attrs.iter_mut().find(|a| a.path().segments.last().is_some_and(|s| s.ident == MARKER))
        && let syn::Meta::List(list) = &mut marker.meta
    {
        let key = Ident::new(kind, Span::call_site());
        let tokens = &list.tokens;
        list.tokens = quote!(#tokens, #key(#args));
        return f.into_token_stream();
    }
    let Ok(mut f) = syn::parse2::<ImplItemFn>(item.clone()) else {
        let message = format!("{display} only works on a method inside an `#[rpc::service]` impl block");
        let error = syn::Error::new(Span::call_site(), message).to_compile_error();
        return quote!(#error #item);
    };
    // One error for the method: its other attributes of ours, and its
    // parameters' `#[rpc(...)]`, are taken off (each would say the same).
    let others = strip_framework_attrs(&mut f);
    let message = match others.as_slice() {
        [] => format!("{display} only works on a method inside an `#[rpc::service]` impl block"),
        others => {
            format!("{display} and {} only work on a method inside an `#[rpc::service]` impl block", others.join(", "))
        }
    };
    let name = &f.sig.ident;
    let message = match f.sig.receiver() {
        Some(_) => format!("{message}: put `#[rpc::service]` on the `impl` block that holds `{name}`"),
        None => format!("{message}: `{name}` is not a method (`pub fn {name}(&self, ...)` in that block)"),
    };
    let error = syn::Error::new(Span::call_site(), message).to_compile_error();
    quote!(#error #f)
}

/// Removes the framework's attributes from a method outside a service (its
/// other method attributes and its parameters' `#[rpc(...)]`), and names the
/// method attributes removed, as written.
fn strip_framework_attrs(f: &mut ImplItemFn) -> Vec<String> {
    let krate = Krate::resolve(None);
    let mut names = Vec::new();
    f.attrs.retain(|attr| {
        let path = attr.path();
        let segments = crate::krate::segments(path);
        let ours = crate::method_attrs::RPC_METHOD_ATTRS.iter().any(|kind| krate.names_rpc_attr(&segments, kind))
            || crate::method_attrs::MCP_METHOD_ATTRS.iter().any(|(attr, _)| krate.names_mcp_attr(&segments, attr));
        if ours {
            names.push(format!("#[{}]", segments.join("::")));
        }
        !ours
    });
    for input in &mut f.sig.inputs {
        if let syn::FnArg::Typed(pat) = input {
            pat.attrs.retain(|attr| !attr.path().is_ident("rpc"));
        }
    }
    names
}
