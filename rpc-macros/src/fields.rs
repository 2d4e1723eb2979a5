//! The fields of a generated descriptor literal that differ from its base
//! (`..METHOD`, `..PARAM`, `..ToolHints::NONE`), whose `None`s, `&[]`s
//! and `false`s stand for every field the generated code leaves out.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{ToTokens, quote};

/// `field: value,` pairs, in the order they are set.
#[derive(Default)]
pub struct Fields(TokenStream);

impl Fields {
    /// `field: value,`.
    pub fn set(&mut self, field: &str, value: impl ToTokens) {
        let field = Ident::new(field, Span::call_site());
        self.0.extend(quote!(#field: #value,));
    }

    /// `field: Some(value),` when there is a value (the base's is `None`).
    pub fn some(&mut self, field: &str, value: Option<impl ToTokens>) {
        if let Some(value) = value {
            self.set(field, quote!(::core::option::Option::Some(#value)));
        }
    }

    /// `field: &[item, ...],` when there are items (the base's is `&[]`).
    pub fn list<T: ToTokens>(&mut self, field: &str, items: impl IntoIterator<Item = T>) {
        let items: Vec<T> = items.into_iter().collect();
        if !items.is_empty() {
            self.set(field, quote!(&[#(#items),*]));
        }
    }

    /// Whether no field differs from the base.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl ToTokens for Fields {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        self.0.to_tokens(tokens);
    }
}
