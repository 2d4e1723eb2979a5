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

/// Where a diagnostic about type `ty` points: its first token, which is
/// what `syn::spanned::Spanned::span` gives on a stable compiler (that
/// cannot join spans), without writing the whole type out as tokens
/// first. A type whose first token is not at hand asks `Spanned`.
pub(crate) fn type_span(ty: &syn::Type) -> proc_macro2::Span {
    use syn::Type;
    match ty {
        Type::Path(path) if path.qself.is_none() => match (&path.path.leading_colon, path.path.segments.first()) {
            (Some(colon), _) => colon.spans[0],
            (None, Some(segment)) => segment.ident.span(),
            (None, None) => syn::spanned::Spanned::span(ty),
        },
        Type::Reference(reference) => reference.and_token.span,
        Type::Tuple(tuple) => tuple.paren_token.span.join(),
        Type::Slice(slice) => slice.bracket_token.span.join(),
        Type::Array(array) => array.bracket_token.span.join(),
        Type::Paren(paren) => paren.paren_token.span.join(),
        _ => syn::spanned::Spanned::span(ty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first token's span, as `Spanned` gives on stable, for every
    /// kind of type handled here (the others are `Spanned`'s own).
    #[test]
    fn a_types_span_is_its_first_tokens() {
        for source in [
            "u64",
            "Option<Vec<String>>",
            "::std::string::String",
            "&'static str",
            "(u8, String)",
            "[u8]",
            "[u8; 4]",
            "(u8)",
        ] {
            let ty: syn::Type = syn::parse_str(source).expect(source);
            let first = quote::ToTokens::to_token_stream(&ty).into_iter().next().expect("a token").span();
            assert_eq!(format!("{:?}", type_span(&ty)), format!("{first:?}"), "{source}");
        }
    }
}
