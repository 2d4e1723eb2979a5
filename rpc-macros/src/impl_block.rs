//! Parsing the `impl` block `#[rpc::service]` is on, with its methods'
//! bodies left as they came: the macro reads attributes and signatures
//! only. Parsing every statement of every body (syn's `ItemImpl`), and
//! before that handing each of their tokens over from the compiler, was
//! the largest part of the macro's time, and grew with the bodies.
//!
//! Each method's body (the first top-level `{ .. }` after a `fn` that
//! begins an item, outside generic arguments, before any `;`) is set aside
//! unopened and replaced
//! by `{}`; syn parses what is left; each method then gets its body back
//! as tokens (a verbatim item inside its block), written back unchanged.
//! When the bodies set aside and the methods syn found do not match one
//! to one, syn parses the block whole, as before. Inner attributes at the
//! top of a body (`#![..]`, `//!`) still belong to the method, as in syn.

use proc_macro2::{Delimiter, Group, Spacing, TokenStream, TokenTree};
use syn::parse::{ParseStream, Parser};
use syn::{Attribute, ImplItem, Item, ItemImpl, Stmt, token};

/// `tokens` as an `impl` block whose methods' bodies are unparsed.
pub fn parse(tokens: TokenStream) -> syn::Result<ItemImpl> {
    let mut trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    // An `impl` item ends with its braces: the items are inside them.
    let Some(TokenTree::Group(block)) = trees.pop().filter(is_brace) else {
        return syn::parse2(tokens);
    };
    let (items, bodies) = set_bodies_aside(block.stream());
    let mut emptied = Group::new(Delimiter::Brace, items);
    emptied.set_span(block.span());
    trees.push(TokenTree::Group(emptied));
    let mut item: ItemImpl = syn::parse2(trees.into_iter().collect())?;
    item.brace_token = token::Brace(block.delim_span());
    let mut bodies = bodies.into_iter();
    for impl_item in &mut item.items {
        let ImplItem::Fn(method) = impl_item else { continue };
        match bodies.next() {
            Some(body) if method.block.stmts.is_empty() => {
                let (inner, rest) = inner_attributes(&body)?;
                method.attrs.extend(inner);
                method.block.brace_token = token::Brace(body.delim_span());
                method.block.stmts = vec![Stmt::Item(Item::Verbatim(rest))];
            }
            _ => return syn::parse2(tokens),
        }
    }
    if bodies.next().is_some() {
        return syn::parse2(tokens);
    }
    Ok(item)
}

/// The inner attributes at the top of a method's body (`#![..]`, `//!`),
/// which belong to the method as syn has them, and the rest of the body.
/// A body whose source has no `#!`, `//!` or `/*!` has none, and is not
/// opened.
fn inner_attributes(body: &Group) -> syn::Result<(Vec<Attribute>, TokenStream)> {
    let marked = |text: String| ["#!", "//!", "/*!"].iter().any(|mark| text.contains(mark));
    if body.span().source_text().is_some_and(|text| !marked(text)) {
        return Ok((Vec::new(), body.stream()));
    }
    (|body: ParseStream| {
        let inner = body.call(Attribute::parse_inner)?;
        let rest: TokenStream = body.parse()?;
        Ok((inner, rest))
    })
    .parse2(body.stream())
}

fn is_brace(tree: &TokenTree) -> bool {
    matches!(tree, TokenTree::Group(group) if group.delimiter() == Delimiter::Brace)
}

/// The items with each method's body replaced by `{}` (same span), and
/// the bodies, in order.
fn set_bodies_aside(items: TokenStream) -> (TokenStream, Vec<Group>) {
    let mut out = Vec::new();
    let mut bodies = Vec::new();
    // Where an item may start (a `fn` there begins a method, not a type
    // such as `const F: fn() -> u8 = { .. }`'s); after a method's `fn`:
    // looking for its body, with `angles` open `<`.
    let mut item_start = true;
    let mut in_fn = false;
    let mut angles = 0usize;
    let mut previous_joint_minus = false;
    for tree in items {
        let mut joint_minus = false;
        let mut starts_item = false;
        match &tree {
            TokenTree::Ident(ident) if !in_fn => {
                if ident == "fn" && item_start {
                    in_fn = true;
                    angles = 0;
                } else {
                    // Qualifiers keep an item's start: `pub`, `async`, `const fn` ...
                    starts_item = item_start
                        && ["pub", "async", "const", "unsafe", "extern", "default", "safe", "crate"]
                            .iter()
                            .any(|word| ident == word);
                }
            }
            TokenTree::Punct(punct) if in_fn => match punct.as_char() {
                '<' => angles += 1,
                // `->` is a `-` joined to a `>`, not a closing angle.
                '>' if !previous_joint_minus => angles = angles.saturating_sub(1),
                '-' => joint_minus = punct.spacing() == Spacing::Joint,
                ';' if angles == 0 => {
                    in_fn = false;
                    starts_item = true;
                }
                _ => {}
            },
            // `;` ends an item; `#` begins an attribute, kept with its `[..]`.
            TokenTree::Punct(punct) => starts_item = punct.as_char() == ';' || punct.as_char() == '#',
            TokenTree::Group(group) if in_fn && angles == 0 && group.delimiter() == Delimiter::Brace => {
                in_fn = false;
                let mut empty = Group::new(Delimiter::Brace, TokenStream::new());
                empty.set_span(group.span());
                bodies.push(group.clone());
                out.push(TokenTree::Group(empty));
                previous_joint_minus = false;
                item_start = true;
                continue;
            }
            // An attribute's `[..]`, `pub(crate)`'s `(..)` and an ABI keep
            // an item's start; an item's closing `{ .. }` begins the next.
            TokenTree::Group(group) if !in_fn => {
                starts_item = match group.delimiter() {
                    Delimiter::Brace => true,
                    Delimiter::Bracket | Delimiter::Parenthesis => item_start,
                    Delimiter::None => false,
                };
            }
            TokenTree::Literal(_) if !in_fn => starts_item = item_start,
            _ => {}
        }
        if !in_fn {
            item_start = starts_item;
        }
        previous_joint_minus = joint_minus;
        out.push(tree);
    }
    (out.into_iter().collect(), bodies)
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
                pub async fn one(&self, #[rpc(header)] id: u64) -> Result<Foo<{ 1 + 1 }>, E> where E: Into<Bar<{ 2 }>> {
                    #![allow(unused)]
                    let x = { id + 1 };
                    match x { 0 => {} _ => {} }
                    Ok(todo!())
                }
                const LIMIT: usize = { 3 };
                fn two(&self) -> Vec<Vec<u8>> { vec![] }
                type Alias = u8;
                pub(crate) unsafe fn three() -> fn(u8) -> impl Fn() { || {} }
                m! { fn inside() {} }
                const F: fn() -> u8 = { Self::f };
                type G = fn(u8) -> u8;
                #[inline] pub(crate) extern "C" fn four(&self) -> u8 { 4 }
            }
        };
        let parsed = super::parse(block.clone()).expect("parses");
        assert_eq!(parsed.items.len(), 9);
        let syn::ImplItem::Const(limit) = &parsed.items[1] else { panic!("a constant") };
        assert_eq!(limit.expr.to_token_stream().to_string(), "{ 3 }");
        let syn::ImplItem::Const(f) = &parsed.items[6] else { panic!("a constant") };
        assert_eq!(
            f.expr.to_token_stream().to_string(),
            "{ Self :: f }",
            "a constant of a function type keeps its value"
        );
        let syn::ImplItem::Fn(one) = &parsed.items[0] else { panic!("a method") };
        assert_eq!(one.sig.ident, "one");
        assert_eq!(one.attrs.len(), 3, "with the inner attribute, as syn has it");
        assert!(one.to_token_stream().to_string().contains("{ # ! [allow (unused)] let x"), "written back in the body");
        let bodies: Vec<String> = parsed
            .items
            .iter()
            .filter_map(|item| match item {
                syn::ImplItem::Fn(method) => Some(method.block.to_token_stream().to_string()),
                _ => None,
            })
            .collect();
        let original = |body: proc_macro2::TokenStream| body.to_string();
        assert_eq!(
            bodies,
            [
                original(quote!({
                    let x = { id + 1 };
                    match x {
                        0 => {}
                        _ => {}
                    }
                    Ok(todo!())
                })),
                original(quote!({ vec![] })),
                // syn itself would write the closure's `||` as `| |`: a
                // body is kept as it came.
                original(quote!({ || {} })),
                original(quote!({ 4 })),
            ]
        );
        // The rest as syn writes it (`>>` as `> >`).
        let reparsed: syn::ItemImpl = syn::parse2(block.clone()).expect("syn parses it too");
        let without_bodies = |item: &syn::ItemImpl| {
            let mut item = item.clone();
            for impl_item in &mut item.items {
                if let syn::ImplItem::Fn(method) = impl_item {
                    method.block.stmts.clear();
                    method.attrs.retain(|a| matches!(a.style, syn::AttrStyle::Outer));
                }
            }
            item.to_token_stream().to_string()
        };
        assert_eq!(without_bodies(&parsed), without_bodies(&reparsed));
    }

    #[test]
    fn a_method_without_a_body_takes_none_of_the_next_ones() {
        let block = quote! {
            impl S {
                fn declared(&self) -> u8;
                fn defined(&self) -> u8 { 1 }
            }
        };
        let parsed = super::parse(block.clone()).expect("parses");
        assert!(matches!(parsed.items[0], syn::ImplItem::Verbatim(_)), "syn's form of a method without a body");
        let syn::ImplItem::Fn(defined) = &parsed.items[1] else { panic!("a method") };
        assert_eq!(defined.block.to_token_stream().to_string(), "{ 1 }");
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
