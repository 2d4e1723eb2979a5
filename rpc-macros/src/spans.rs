//! Spans of generated code: where a diagnostic about it points.

use proc_macro2::TokenStream;

/// `tokens` with every token (groups included) at `span`, so a diagnostic
/// about the whole expression points there.
pub(crate) fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tree| {
            if let proc_macro2::TokenTree::Group(group) = &tree {
                let mut new = proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                new.set_span(span);
                tree = proc_macro2::TokenTree::Group(new);
            } else {
                tree.set_span(span);
            }
            tree
        })
        .collect()
}
