//! Parsing the `impl` block `#[rpc::service]` is on, with its methods'
//! bodies left as they came: the macro reads attributes and signatures
//! only, and parsing every statement of every body (syn's `ItemImpl`) was
//! the largest part of its own time, growing with the bodies. A body is
//! kept as its tokens (a verbatim item inside the block) and written back
//! unchanged; the compiler has already parsed it.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use syn::parse::discouraged::Speculative;
use syn::parse::{ParseStream, Parser};
use syn::{Attribute, Block, FnModifiers, ImplItem, ImplItemFn, Item, ItemImpl, Signature, Stmt, Token, token};

/// `tokens` as an `impl` block whose methods' bodies are unparsed.
pub fn parse(tokens: TokenStream) -> syn::Result<ItemImpl> {
    let mut trees: Vec<TokenTree> = tokens.into_iter().collect();
    // An `impl` item ends with its braces; the header before them is
    // parsed with an empty body, the items one by one.
    let body = match trees.pop() {
        Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace => group,
        other => {
            trees.extend(other);
            return syn::parse2(trees.into_iter().collect());
        }
    };
    let mut header: TokenStream = trees.into_iter().collect();
    header.extend([TokenTree::Group(Group::new(Delimiter::Brace, TokenStream::new()))]);
    let mut item: ItemImpl = syn::parse2(header)?;
    item.brace_token = token::Brace(body.delim_span());
    item.items = items.parse2(body.stream())?;
    Ok(item)
}

fn items(input: ParseStream) -> syn::Result<Vec<ImplItem>> {
    let mut items = Vec::new();
    while !input.is_empty() {
        items.push(item(input)?);
    }
    Ok(items)
}

/// A method with its body as tokens, or any other item, parsed. A method
/// is read once, ahead (`advance_to`); only another item (a constant, a
/// type, a macro) is read again, by syn.
fn item(input: ParseStream) -> syn::Result<ImplItem> {
    let ahead = input.fork();
    match method(&ahead) {
        Ok(Some(method)) => {
            input.advance_to(&ahead);
            Ok(ImplItem::Fn(method))
        }
        Ok(None) | Err(_) => input.parse(),
    }
}

/// A method whose body is kept as tokens, or `None` when the item is not
/// a method with a body.
fn method(input: ParseStream) -> syn::Result<Option<ImplItemFn>> {
    let mut attrs = input.call(Attribute::parse_outer)?;
    let vis = input.parse()?;
    let mut modifiers = FnModifiers::default();
    modifiers.defaultness = input.parse()?;
    if !(input.peek(Token![fn])
        || input.peek(Token![const])
        || input.peek(Token![async])
        || input.peek(Token![unsafe])
        || input.peek(Token![extern]))
    {
        return Ok(None);
    }
    let sig: Signature = input.parse()?;
    if !input.peek(token::Brace) {
        return Ok(None);
    }
    let body: Group = input.parse()?;
    // Inner attributes (`#![...]` at the top of the body) belong to the
    // method, as syn has them: the rest is kept as it came.
    let (inner, rest) = (|body: ParseStream| {
        let inner = body.call(Attribute::parse_inner)?;
        let rest: TokenStream = body.parse()?;
        Ok((inner, rest))
    })
    .parse2(body.stream())?;
    attrs.extend(inner);
    let block = Block { brace_token: token::Brace(body.delim_span()), stmts: vec![Stmt::Item(Item::Verbatim(rest))] };
    Ok(Some(ImplItemFn { attrs, vis, modifiers, sig, block }))
}

#[cfg(test)]
mod tests {
    use quote::{ToTokens, quote};

    #[test]
    fn bodies_are_written_back_unchanged_and_other_items_parsed() {
        let block = quote! {
            #[doc = "block"]
            impl<T> Service<T> where T: Clone {
                /// One.
                #[mcp_tool(title = "x")]
                pub async fn one(&self, #[rpc(header)] id: u64) -> Result<Foo<{ 1 + 1 }>, E> {
                    #![allow(unused)]
                    let x = { id + 1 };
                    match x { 0 => {} _ => {} }
                    Ok(todo!())
                }
                const LIMIT: usize = { 3 };
                fn two(&self) {}
                type Alias = u8;
                pub(crate) unsafe fn three() -> impl Fn() { || {} }
            }
        };
        let parsed = super::parse(block.clone()).expect("parses");
        assert_eq!(parsed.items.len(), 5);
        assert!(matches!(parsed.items[1], syn::ImplItem::Const(_)));
        let syn::ImplItem::Fn(one) = &parsed.items[0] else { panic!("a method") };
        assert_eq!(one.sig.ident, "one");
        assert_eq!(one.attrs.len(), 3, "with the inner attribute, as syn has it");
        assert_eq!(parsed.to_token_stream().to_string(), block.to_string());
        // syn itself would write the closure's `||` as `| |`: a body is
        // kept as it came.
        let reparsed: syn::ItemImpl = syn::parse2(block.clone()).expect("syn parses it too");
        assert_ne!(reparsed.to_token_stream().to_string(), block.to_string());
    }

    #[test]
    fn what_is_not_an_impl_block_is_syns_error() {
        assert!(
            super::parse(quote!(
                struct S;
            ))
            .is_err()
        );
        assert!(
            super::parse(quote!(
                struct S {
                    a: u8,
                }
            ))
            .is_err()
        );
        assert!(super::parse(quote!()).is_err());
    }
}
