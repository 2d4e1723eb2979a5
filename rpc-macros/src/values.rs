//! Literal values of attribute keys (`alias = "Catalog"`), and the words
//! messages use for them.

use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::TokenStream;

use crate::errors::Errors;
use proc_macro2::Span;
use syn::{Expr, Lit, LitStr, Meta};

/// The key of a `key = value` item, for messages.
pub fn key_of(meta: &Meta) -> String {
    meta.path().segments.last().map(|s| s.ident.to_string()).unwrap_or_default()
}

/// The literal value of `key = value`, or an error saying what `key` takes.
pub fn literal_of(meta: &Meta) -> Result<&Lit, darling::Error> {
    let key = key_of(meta);
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(lit) => Ok(&lit.lit),
            Expr::Group(group) => match &*group.expr {
                Expr::Lit(lit) => Ok(&lit.lit),
                other => Err(darling::Error::custom(format!("`{key}` takes a literal value")).with_span(other)),
            },
            other => Err(darling::Error::custom(format!("`{key}` takes a literal value")).with_span(other)),
        },
        Meta::Path(path) => {
            Err(darling::Error::custom(format!("`{key}` needs a value: `{key} = ...`")).with_span(path))
        }
        Meta::List(list) => {
            Err(darling::Error::custom(format!("`{key}` takes `{key} = value`, not a list")).with_span(list))
        }
    }
}

/// What kind of literal `lit` is, for messages ("a string", ...).
pub fn kind_of(lit: &Lit) -> &'static str {
    match lit {
        Lit::Str(_) => "a string",
        Lit::Int(_) => "an integer",
        Lit::Bool(_) => "a boolean",
        Lit::Float(_) => "a number",
        Lit::Char(_) => "a character",
        _ => "a literal of another kind",
    }
}

/// A string literal value (`alias = "Catalog"`).
#[derive(Debug, Clone)]
pub struct Str(pub LitStr);

impl FromMeta for Str {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        match literal_of(meta)? {
            Lit::Str(s) => Ok(Str(s.clone())),
            other => {
                let key = key_of(meta);
                Err(darling::Error::custom(format!(
                    "expected a string for `{key}`, found {}: write `{key} = \"...\"`",
                    kind_of(other)
                ))
                .with_span(other))
            }
        }
    }
}

impl Str {
    /// The string.
    pub fn value(&self) -> String {
        self.0.value()
    }

    /// Where it was written.
    pub fn span(&self) -> Span {
        self.0.span()
    }
}

pub fn parse_args<T: FromMeta + Default>(tokens: TokenStream, errors: &mut Errors) -> T {
    let items = match NestedMeta::parse_meta_list(tokens) {
        Ok(items) => items,
        Err(e) => {
            errors.push(e);
            return T::default();
        }
    };
    // A bare value names no key: say so, rather than darling's "unexpected literal".
    let (literals, keyed): (Vec<NestedMeta>, Vec<NestedMeta>) =
        items.into_iter().partition(|item| matches!(item, NestedMeta::Lit(_)));
    for literal in &literals {
        if let NestedMeta::Lit(lit) = literal {
            let shown = match lit {
                Lit::Str(s) => format!("{:?}", s.value()),
                other => quote::quote!(#other).to_string(),
            };
            errors.push(syn::Error::new(
                lit.span(),
                format!(
                    "a bare value names no argument: arguments are `key = value`, e.g. `title = {shown}` or \
                     `name = {shown}`"
                ),
            ));
        }
    }
    match T::from_list(&keyed) {
        Ok(args) => args,
        Err(e) => {
            errors.push_darling(e);
            T::default()
        }
    }
}

/// The arguments, or `None` when they did not parse (the errors are in `errors`).
pub fn try_parse_args<T: FromMeta>(tokens: TokenStream, errors: &mut Errors) -> Option<T> {
    match NestedMeta::parse_meta_list(tokens).map_err(darling::Error::from).and_then(|list| T::from_list(&list)) {
        Ok(args) => Some(args),
        Err(e) => {
            errors.push_darling(e);
            None
        }
    }
}
