//! `#[derive(rpc::ApplicationError)]`: an error enum (or struct) whose
//! variants carry their JSON-RPC codes becomes an `ApplicationError` (the
//! code and data of each value) and an `ErrorCodes` (the list of codes the
//! OpenRPC document gives for every method returning it).
//!
//! ```ignore
//! #[derive(Debug, rpc::ApplicationError)]
//! pub enum ShopError {
//!     /// Product not found.                 <- the message in OpenRPC
//!     #[rpc(code = 404)]
//!     NotFound { #[rpc(data)] id: u64 },     <- `data.extra` = {"id": ...}
//!     #[rpc(code = 409, message = "Out of stock")]
//!     OutOfStock(#[rpc(data = "sku")] String),
//! }
//! ```
//!
//! Checked here, each on its token: a variant without a code or a message,
//! two variants with one code, a code the framework answers with itself
//! (`-32602`, ...), a tuple field exposed without a name, a name exposed
//! twice.

use std::collections::HashMap;

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Expr, Fields, Lit, LitStr, UnOp};

use crate::errors::Errors;
use crate::krate::Krate;

/// The codes of JSON-RPC's reserved range the framework answers with
/// itself (a copy of `rpc_core::error_codes::FRAMEWORK_CODES`).
const FRAMEWORK_CODES: &[(i32, &str)] = &[
    (-32700, "parse error"),
    (-32600, "invalid request"),
    (-32601, "method not found"),
    (-32602, "invalid params"),
    (-32603, "internal error"),
    (-32400, "method locked"),
    (-32403, "insufficient scope"),
    (-32429, "rate limited"),
    (-32000, "timeout; MCP: no session"),
    (-32001, "MCP: session not found"),
    (-32002, "MCP: resource not found"),
    (-32020, "MCP: header mismatch"),
    (-32021, "MCP: missing client capability"),
    (-32022, "MCP: unsupported protocol version"),
    (-32030, "cannot ask the client"),
    (-32031, "input required"),
];

/// One exposed field of a variant.
struct DataField {
    /// The name in `data.extra`.
    name: String,
    /// The field's member (`id`, or `0` for a tuple field).
    member: syn::Member,
    ty: syn::Type,
}

/// One error: a variant, or the struct itself.
struct ErrorCase {
    /// The variant (`None` for a struct).
    variant: Option<syn::Ident>,
    code: i32,
    message: String,
    data: Vec<DataField>,
}

/// What `#[rpc(...)]` on a variant (or the struct) says.
#[derive(Default)]
struct CaseArgs {
    code: Option<i32>,
    /// A code was given, but it is not a literal that fits (reported already).
    bad_code: bool,
    message: Option<LitStr>,
}

/// Expands `#[derive(rpc::ApplicationError)]`, every problem reported on its token.
pub fn derive(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    let mut errors = Errors::default();
    let krate = type_crate(&input.attrs, &mut errors);
    if !input.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &input.generics,
            "`#[derive(rpc::ApplicationError)]` does not take generic types: derive it on a concrete error type",
        ));
    }
    check_codes(&input, &mut errors);
    let mut cases = Vec::new();
    match &input.data {
        Data::Enum(data) => {
            enum_keys(&input.attrs, &mut errors);
            for variant in &data.variants {
                let args = case_args(&variant.attrs, &mut errors);
                if let Some(case) = case(Some(&variant.ident), &variant.attrs, &variant.fields, args, &mut errors) {
                    cases.push(case);
                }
            }
        }
        Data::Struct(data) => {
            let args = case_args(&input.attrs, &mut errors);
            if let Some(case) = case(None, &input.attrs, &data.fields, args, &mut errors) {
                cases.push(case);
            }
        }
        Data::Union(u) => errors.push(syn::Error::new(
            u.union_token.span,
            "`#[derive(rpc::ApplicationError)]` goes on an enum (one code per variant) or a struct",
        )),
    }
    if !errors.is_empty() {
        return errors.to_compile_errors();
    }
    generate(&input.ident, &cases, &krate.private())
}

/// The runtime crate: `#[rpc(crate = "path")]` on the type, or found in the manifest.
fn type_crate(attrs: &[Attribute], errors: &mut Errors) -> Krate {
    let mut explicit = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("rpc")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let lit: LitStr = meta.value()?.parse()?;
                match lit.parse::<syn::Path>() {
                    Ok(path) => explicit = Some(path),
                    Err(_) => errors.push(syn::Error::new(lit.span(), "`crate` takes a path: `crate = \"my::rpc\"`")),
                }
            } else {
                // Other keys are the struct's code and message, read by `case_args`.
                let _ = meta.value().and_then(|v| v.parse::<Expr>());
            }
            Ok(())
        });
    }
    Krate::resolve(explicit.as_ref())
}

/// On an enum, the type takes `crate` only: codes go on the variants.
fn enum_keys(attrs: &[Attribute], errors: &mut Errors) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("rpc")) {
        let _ = attr.parse_nested_meta(|meta| {
            if !meta.path.is_ident("crate") {
                errors.push(meta.error(
                    "on an enum, each variant has its own `#[rpc(code = .., message = \"..\")]`; the enum itself \
                     takes only `crate = \"...\"`",
                ));
            }
            if meta.input.peek(syn::Token![=]) {
                let _ = meta.value().and_then(|v| v.parse::<Expr>());
            }
            Ok(())
        });
    }
}

/// Reads `#[rpc(code = .., message = "..")]`.
fn case_args(attrs: &[Attribute], errors: &mut Errors) -> CaseArgs {
    let mut args = CaseArgs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("rpc")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("code") {
                let expr: Expr = meta.value()?.parse()?;
                match code_value(&expr) {
                    Ok(code) => args.code = Some(code),
                    Err(e) => {
                        args.bad_code = true;
                        errors.push(e);
                    }
                }
            } else if meta.path.is_ident("message") {
                args.message = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident("crate") {
                let _: LitStr = meta.value()?.parse()?;
            } else {
                return Err(meta.error(
                    "unknown key: an error variant takes `#[rpc(code = 404)]` and optionally \
                     `message = \"...\"` (the doc comment's first paragraph otherwise)",
                ));
            }
            Ok(())
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    args
}

/// An integer literal, possibly negated, that fits an `i32`.
fn code_value(expr: &Expr) -> syn::Result<i32> {
    let (negative, lit) = match expr {
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => (true, &*u.expr),
        other => (false, other),
    };
    let wrong = || syn::Error::new_spanned(expr, "the code is an integer literal: `code = 404`, `code = -32001`");
    let Expr::Lit(syn::ExprLit { lit: Lit::Int(int), .. }) = lit else { return Err(wrong()) };
    let value: i64 = int.base10_parse().map_err(|_| wrong())?;
    let value = if negative { -value } else { value };
    i32::try_from(value)
        .map_err(|_| syn::Error::new_spanned(expr, format!("{value} does not fit a JSON-RPC error code (an `i32`)")))
}

/// One case, checked: a code, a message, and its exposed fields.
fn case(
    variant: Option<&syn::Ident>,
    attrs: &[Attribute],
    fields: &Fields,
    args: CaseArgs,
    errors: &mut Errors,
) -> Option<ErrorCase> {
    let at = variant.map_or_else(Span::call_site, syn::Ident::span);
    let what = variant.map_or_else(|| "the error".to_owned(), |v| format!("variant `{v}`"));
    let data = data_fields(fields, errors);
    let Some(code) = args.code else {
        if args.bad_code {
            return None;
        }
        errors.push(syn::Error::new(at, format!("{what} needs its JSON-RPC error code: `#[rpc(code = 404)]`")));
        return None;
    };
    let docs = crate::docs::parse(&crate::docs::doc_lines(attrs));
    let message = match (args.message, docs.summary) {
        (Some(lit), _) => lit.value(),
        (None, Some(summary)) => summary,
        (None, None) => {
            errors.push(syn::Error::new(
                at,
                format!(
                    "{what} needs a message, what the error means to a client (the OpenRPC document lists it): \
                     a doc comment, or `#[rpc(code = {code}, message = \"...\")]`"
                ),
            ));
            return None;
        }
    };
    Some(ErrorCase { variant: variant.cloned(), code, message, data })
}

/// The fields marked `#[rpc(data)]` / `#[rpc(data = "name")]`.
fn data_fields(fields: &Fields, errors: &mut Errors) -> Vec<DataField> {
    let mut out: Vec<DataField> = Vec::new();
    let mut seen: HashMap<String, Span> = HashMap::new();
    for (index, field) in fields.iter().enumerate() {
        for attr in field.attrs.iter().filter(|a| a.path().is_ident("rpc")) {
            let mut named: Option<(String, Span)> = None;
            let mut marked = false;
            let parsed = attr.parse_nested_meta(|meta| {
                if !meta.path.is_ident("data") {
                    return Err(meta.error("unknown key: a field takes `#[rpc(data)]` or `#[rpc(data = \"name\")]`"));
                }
                marked = true;
                if meta.input.peek(syn::Token![=]) {
                    let lit: LitStr = meta.value()?.parse()?;
                    named = Some((lit.value(), lit.span()));
                }
                Ok(())
            });
            if let Err(e) = parsed {
                errors.push(e);
                continue;
            }
            if !marked {
                continue;
            }
            let (name, span) = match (named, &field.ident) {
                (Some(named), _) => named,
                (None, Some(ident)) => (crate::names::unraw(ident), ident.span()),
                (None, None) => {
                    errors.push(syn::Error::new_spanned(
                        attr,
                        "a tuple field needs the name it has in the error's data: `#[rpc(data = \"id\")]`",
                    ));
                    continue;
                }
            };
            if seen.insert(name.clone(), span).is_some() {
                errors.push(syn::Error::new(span, format!("`{name}` is exposed twice in the error's data")));
                continue;
            }
            let member = match &field.ident {
                Some(ident) => syn::Member::Named(ident.clone()),
                None => syn::Member::Unnamed(syn::Index { index: index as u32, span: field.ty.span() }),
            };
            out.push(DataField { name, member, ty: field.ty.clone() });
        }
    }
    out
}

/// Two variants with one code, and codes the framework answers with itself.
fn check_codes(input: &DeriveInput, errors: &mut Errors) {
    let Data::Enum(data) = &input.data else {
        if let Some((code, tokens)) = case_args_quiet(&input.attrs) {
            check_reserved(code, &tokens, errors);
        }
        return;
    };
    let mut first: HashMap<i32, &syn::Ident> = HashMap::new();
    for variant in &data.variants {
        let Some((code, tokens)) = case_args_quiet(&variant.attrs) else { continue };
        check_reserved(code, &tokens, errors);
        if let Some(previous) = first.get(&code) {
            errors.push(syn::Error::new_spanned(
                &tokens,
                format!(
                    "code {code} is already the code of `{previous}`: give each variant its own code (clients tell \
                     errors apart by code), or make the two one variant"
                ),
            ));
        } else {
            first.insert(code, &variant.ident);
        }
    }
}

/// The code of `#[rpc(code = ..)]`, without reporting problems (`case_args` does).
fn case_args_quiet(attrs: &[Attribute]) -> Option<(i32, Expr)> {
    let mut found = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("rpc")) {
        let _ = attr.parse_nested_meta(|meta| {
            let expr: Expr = meta.value()?.parse()?;
            if meta.path.is_ident("code")
                && let Ok(code) = code_value(&expr)
            {
                found = Some((code, expr.clone()));
            }
            Ok(())
        });
    }
    found
}

/// A code inside JSON-RPC's reserved range that the framework uses itself.
fn check_reserved(code: i32, tokens: &Expr, errors: &mut Errors) {
    if let Some((_, meaning)) = FRAMEWORK_CODES.iter().find(|(c, _)| *c == code) {
        errors.push(syn::Error::new_spanned(
            tokens,
            format!(
                "{code} is the framework's own code ({meaning}), and clients take it for that error: choose a code \
                 outside -32768..=-32000, the range JSON-RPC 2.0 reserves (e.g. 404, or -31999 and below)"
            ),
        ));
    }
}

/// The impls.
fn generate(ident: &syn::Ident, cases: &[ErrorCase], k: &TokenStream) -> TokenStream {
    let type_name = ident.to_string();
    let mut schema_fns = TokenStream::new();
    let mut code_arms = Vec::new();
    let mut data_arms = Vec::new();
    let mut entries = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let path = match &case.variant {
            Some(v) => quote!(Self::#v),
            None => quote!(Self),
        };
        let code = case.code;
        code_arms.push(quote!(#path { .. } => #code,));
        let message = &case.message;
        let name = case.variant.as_ref().map_or_else(|| type_name.clone(), ToString::to_string);
        let mut entry = quote!(#k::ErrorCode::new(#code, #message).named(#type_name, #name));
        if !case.data.is_empty() {
            let bindings: Vec<_> = (0..case.data.len()).map(|j| format_ident!("__rpc_data_{}", j)).collect();
            let members = case.data.iter().map(|f| &f.member);
            let names: Vec<&str> = case.data.iter().map(|f| f.name.as_str()).collect();
            let values = case.data.iter().zip(&bindings).map(|(f, b)| {
                let ty = &f.ty;
                quote_spanned!(ty.span()=> <#ty as #k::ErrorData>::to_data(#b))
            });
            data_arms.push(quote! {
                #path { #(#members: #bindings,)* .. } => {
                    let mut __extra = #k::serde_json::Map::new();
                    #(__extra.insert(::std::string::String::from(#names), #values);)*
                    ::core::option::Option::Some(#k::serde_json::Value::Object(__extra))
                }
            });
            let schema_fn = format_ident!("__rpc_error_data_{}", i);
            let schemas = case.data.iter().map(|f| {
                let ty = &f.ty;
                quote_spanned!(ty.span()=> <#ty as #k::ErrorData>::data_schema(__generator))
            });
            schema_fns.extend(quote! {
                fn #schema_fn(__generator: &mut #k::schemars::SchemaGenerator) -> #k::schemars::Schema {
                    #k::error_data_schema(::std::vec![#((#names, #schemas)),*])
                }
            });
            entry = quote!(#entry.with_data(#schema_fn));
        }
        entries.push(entry);
    }
    let data_body = if data_arms.is_empty() {
        quote!(::core::option::Option::None)
    } else {
        quote! {
            match self {
                #(#data_arms)*
                _ => ::core::option::Option::None,
            }
        }
    };
    quote! {
        #[doc(hidden)]
        #[allow(non_snake_case, clippy::all)]
        const _: () = {
            #schema_fns

            impl #k::ApplicationError for #ident {
                fn code(&self) -> i32 {
                    match self {
                        #(#code_arms)*
                    }
                }

                #[allow(unreachable_patterns)]
                fn data(&self) -> ::core::option::Option<#k::serde_json::Value> {
                    #data_body
                }
            }

            impl #k::ErrorCodes for #ident {
                const CODES: &'static [#k::ErrorCode] = &[#(#entries),*];
            }
        };
    }
}
