//! Collects every error of an expansion so they are reported together,
//! each on its own span.

use proc_macro2::TokenStream;

/// Accumulated `syn::Error`s.
#[derive(Default)]
pub struct Errors {
    inner: Option<syn::Error>,
}

impl Errors {
    /// Adds an error.
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.inner {
            Some(existing) => existing.combine(error),
            None => self.inner = Some(error),
        }
    }

    /// Adds darling errors (one per problem, with "did you mean" hints).
    pub fn push_darling(&mut self, error: darling::Error) {
        self.push(error.into());
    }

    /// Whether nothing went wrong.
    pub fn is_empty(&self) -> bool {
        self.inner.is_none()
    }

    /// The `compile_error!` invocations, or nothing.
    pub fn to_compile_errors(&self) -> TokenStream {
        self.inner.as_ref().map(syn::Error::to_compile_error).unwrap_or_default()
    }
}
