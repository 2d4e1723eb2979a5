//! One parameter of a method: its name, type, default, description,
//! mirrored header and validation rules, read from the signature and the
//! inert `#[rpc(...)]` attribute.

use proc_macro2::{Span, TokenStream};
use syn::{Expr, FnArg, ImplItemFn, Pat, Type};

use crate::attrs::ParamArgs;
use crate::errors::Errors;
use crate::krate::Krate;
use crate::names::unraw;
use crate::values::parse_args;

/// One parameter.
pub struct Param {
    pub name: String,
    /// The span of the parameter's name.
    pub span: Span,
    pub ty: Type,
    pub default: Option<Expr>,
    pub description: Option<String>,
    pub optional: bool,
    /// The `Mcp-Param-{..}` header it is mirrored into, and where that was asked.
    pub header: Option<(String, Span)>,
    /// Validation rules (`length(..)`, `pattern = ..`, `email`, ...).
    pub rules: Vec<crate::rules::ParamRule>,
}

/// Strips the inert `#[rpc(...)]` attributes from the parameters; when
/// `collect`, also checks and returns the parameters.
pub fn strip_param_attrs(item: &mut ImplItemFn, krate: &Krate, errors: &mut Errors, collect: bool) -> Vec<Param> {
    let mut params = Vec::new();
    for arg in item.sig.inputs.iter_mut() {
        let FnArg::Typed(pat_type) = arg else {
            continue;
        };
        let mut args = ParamArgs::default();
        let mut seen = false;
        let mut kept = Vec::new();
        for attr in pat_type.attrs.drain(..) {
            if krate.is_param_attr(attr.path()) {
                if seen {
                    errors.push(syn::Error::new_spanned(&attr, "duplicate `#[rpc(...)]` on a parameter"));
                    continue;
                }
                seen = true;
                let tokens = match &attr.meta {
                    syn::Meta::List(list) => list.tokens.clone(),
                    _ => TokenStream::new(),
                };
                args = parse_args::<ParamArgs>(tokens, errors);
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
        if let Some(reference) = first_reference(&ty) {
            errors.push(syn::Error::new_spanned(reference, owned_hint(reference, &ty)));
            continue;
        }
        if let Type::ImplTrait(t) = &ty {
            errors.push(syn::Error::new_spanned(
                t,
                "`impl Trait` parameters are not supported in RPC methods: a parameter is deserialised from \
                 JSON into one concrete type; take that type (e.g. `String` for `impl Into<String>`)",
            ));
            continue;
        }
        let optional = is_option(&ty);
        let name = unraw(&ident);
        let header = args.header.take().map(|h| match h.name {
            Some(lit) => (lit.value(), h.span),
            None => (name.clone(), h.span),
        });
        if let Some((header, span)) = &header
            && !crate::attrs::is_token(header)
        {
            errors.push(syn::Error::new(
                *span,
                format!("`{header}` is not a valid header name part: name it with `header = \"Name\"`"),
            ));
        }
        let rules = crate::rules::collect(args.rules(), errors);
        params.push(Param {
            rules,
            span: ident.span(),
            name,
            ty,
            default: args.default.map(|d| d.0.0),
            description: args.description.map(|d| d.value()),
            optional,
            header,
        });
    }
    params
}

/// Whether the parameter may be left out without a default: `Option<T>`
/// (the schema marks it optional, `null` binds as `None`).
fn is_option(ty: &Type) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().is_some_and(|s| s.ident == "Option"),
        Type::Group(g) => is_option(&g.elem),
        Type::Paren(p) => is_option(&p.elem),
        _ => false,
    }
}

/// The first reference in `ty`, at its top or inside (`Option<&str>`,
/// `Vec<&[u8]>`, `(u32, &str)`).
fn first_reference(ty: &Type) -> Option<&syn::TypeReference> {
    match ty {
        Type::Reference(r) => Some(r),
        Type::Paren(p) => first_reference(&p.elem),
        Type::Group(g) => first_reference(&g.elem),
        Type::Slice(s) => first_reference(&s.elem),
        Type::Array(a) => first_reference(&a.elem),
        Type::Tuple(t) => t.elems.iter().find_map(first_reference),
        Type::Path(p) => p.path.segments.iter().find_map(|segment| match &segment.arguments {
            syn::PathArguments::AngleBracketed(args) => args.args.iter().find_map(|arg| match arg {
                syn::GenericArgument::Type(inner) => first_reference(inner),
                _ => None,
            }),
            _ => None,
        }),
        _ => None,
    }
}

/// What to say about `reference` in a parameter of type `ty`: the owned
/// type to take instead.
fn owned_hint(reference: &syn::TypeReference, ty: &Type) -> String {
    use quote::ToTokens;
    let inner = &*reference.elem;
    let last = match inner {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    };
    if last.as_deref() == Some("Context") {
        return "the call's context is taken by value: `ctx: rpc::Context` (or `mcp::Context`; it is cheap to clone)"
            .to_owned();
    }
    let owned = match inner {
        Type::Path(p) if p.path.is_ident("str") => "String".to_owned(),
        Type::Slice(s) => format!("Vec<{}>", tidy(s.elem.to_token_stream().to_string())),
        other => tidy(other.to_token_stream().to_string()),
    };
    let whole = tidy(ty.to_token_stream().to_string());
    let shown = tidy(reference.to_token_stream().to_string());
    if matches!(ty, Type::Reference(_)) {
        format!(
            "RPC parameters are deserialised from the request and must be owned: take `{owned}` instead of `{shown}`"
        )
    } else {
        format!(
            "RPC parameters are deserialised from the request and must be owned: `{whole}` borrows `{shown}`; \
             take `{owned}` in its place"
        )
    }
}

/// A type as tokens print it (`Option < & str >`), as one writes it (`Option<&str>`).
fn tidy(text: String) -> String {
    let mut out = text;
    for (from, to) in [
        (" < ", "<"),
        ("< ", "<"),
        (" <", "<"),
        (" >", ">"),
        ("& ", "&"),
        (" ,", ","),
        ("[ ", "["),
        (" ]", "]"),
        (" ;", ";"),
    ] {
        out = out.replace(from, to);
    }
    out
}
