//! Validation rules on a parameter (`#[rpc(length(min = 3), email)]`):
//! their arguments (`args`), checked when read, and the code they become —
//! a `rpc::rules::Rule` in the parameter's descriptor, and a compile-time
//! check that the rule fits the parameter's type, at the rule's span.

mod args;

use darling::util::Flag;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};

use args::{ChoiceKind, EqualsArg};
pub use args::{ItemsArg, LengthArg, OneOfArg, PatternArg, RangeArg, RuleFields};

/// Which parameter types a rule applies to.
#[derive(Debug, Clone, Copy)]
enum Target {
    Strings,
    Numbers,
    Lengths,
    /// Collections (`items(..)`).
    Items,
}

/// One rule of a parameter, ready to generate.
#[derive(Debug, Clone)]
pub struct ParamRule {
    /// The rule's name as written (`pattern`, `email`, ...), for messages.
    name: &'static str,
    span: Span,
    target: Option<Target>,
    /// The `Rule` expression, given the `__private` path.
    value: RuleValue,
}

#[derive(Debug, Clone)]
enum RuleValue {
    Length(Option<u64>, Option<u64>),
    Range(Option<f64>, Option<f64>),
    Exclusive(Option<f64>, Option<f64>),
    Equals(String),
    Items(Vec<ParamRule>),
    Pattern(String),
    Format(&'static str),
    OneOf(String),
    NotBlank,
}

/// The rule arguments of one parameter attribute, as written.
#[derive(Debug)]
pub struct RuleArgs<'a> {
    pub length: Option<&'a LengthArg>,
    pub range: Option<&'a RangeArg>,
    pub pattern: Option<&'a PatternArg>,
    /// `(name as written, Format variant, flag)` for each format flag.
    pub formats: Vec<(&'static str, &'static str, &'a Flag)>,
    pub one_of: Option<&'a OneOfArg>,
    pub not_blank: &'a Flag,
    pub equals: Option<&'a EqualsArg>,
    /// `items(..)` (a parameter's only; `None` inside `items`).
    pub items: Option<&'a ItemsArg>,
}

/// The rules in a fixed order; two formats on one parameter are an error.
pub fn collect(args: RuleArgs<'_>, errors: &mut crate::errors::Errors) -> Vec<ParamRule> {
    let mut rules = Vec::new();
    if let Some(l) = args.length {
        rules.push(ParamRule {
            name: "length",
            span: l.span,
            target: Some(Target::Lengths),
            value: RuleValue::Length(l.min, l.max),
        });
    }
    if let Some(r) = args.range {
        if r.min.is_some() || r.max.is_some() {
            let value = RuleValue::Range(r.min, r.max);
            rules.push(ParamRule { name: "range", span: r.span, target: Some(Target::Numbers), value });
        }
        if r.exclusive_min.is_some() || r.exclusive_max.is_some() {
            let value = RuleValue::Exclusive(r.exclusive_min, r.exclusive_max);
            rules.push(ParamRule { name: "range", span: r.span, target: Some(Target::Numbers), value });
        }
    }
    if let Some(p) = args.pattern {
        rules.push(ParamRule {
            name: "pattern",
            span: p.span,
            target: Some(Target::Strings),
            value: RuleValue::Pattern(p.lit.value()),
        });
    }
    let mut format: Option<&'static str> = None;
    for (name, variant, flag) in args.formats {
        if !flag.is_present() {
            continue;
        }
        if let Some(first) = format {
            errors.push(syn::Error::new(
                flag.span(),
                format!("a parameter has one format, and this one is already `{first}`: keep one of them"),
            ));
            continue;
        }
        format = Some(name);
        rules.push(ParamRule {
            name,
            span: flag.span(),
            target: Some(Target::Strings),
            value: RuleValue::Format(variant),
        });
    }
    if let Some(o) = args.one_of {
        let target = match o.kind {
            ChoiceKind::Strings => Some(Target::Strings),
            ChoiceKind::Numbers => Some(Target::Numbers),
            ChoiceKind::Booleans => None,
        };
        rules.push(ParamRule { name: "one_of", span: o.span, target, value: RuleValue::OneOf(o.json.clone()) });
    }
    if args.not_blank.is_present() {
        rules.push(ParamRule {
            name: "not_blank",
            span: args.not_blank.span(),
            target: Some(Target::Strings),
            value: RuleValue::NotBlank,
        });
    }
    if let Some(e) = args.equals {
        if let Some(o) = args.one_of {
            errors.push(syn::Error::new(
                o.span,
                "`one_of` and `equals` together: keep `equals` (one value) or list the values in `one_of`",
            ));
        }
        let target = match e.kind {
            ChoiceKind::Strings => Some(Target::Strings),
            ChoiceKind::Numbers => Some(Target::Numbers),
            ChoiceKind::Booleans => None,
        };
        rules.push(ParamRule { name: "equals", span: e.span, target, value: RuleValue::Equals(e.json.clone()) });
    }
    if let Some(items) = args.items {
        let inner = collect(items.rules.rules(None), errors);
        rules.push(ParamRule {
            name: "items",
            span: items.span,
            target: Some(Target::Items),
            value: RuleValue::Items(inner),
        });
    }
    rules
}

fn opt<T: quote::ToTokens>(value: Option<T>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

impl ParamRule {
    /// The `Rule` value; `k` is the `__private` path.
    pub fn expr(&self, k: &crate::krate::Private) -> TokenStream {
        match &self.value {
            RuleValue::Length(min, max) => {
                let (min, max) = (opt(min.map(Literal::u64_suffixed)), opt(max.map(Literal::u64_suffixed)));
                quote!(#k::Rule::Length { min: #min, max: #max })
            }
            RuleValue::Range(min, max) => {
                let (min, max) = (opt(min.map(Literal::f64_suffixed)), opt(max.map(Literal::f64_suffixed)));
                quote!(#k::Rule::Range { min: #min, max: #max })
            }
            RuleValue::Pattern(p) => quote!(#k::Rule::Pattern(#p)),
            RuleValue::Format(variant) => {
                let variant = format_ident!("{}", variant);
                quote!(#k::Rule::Format(#k::Format::#variant))
            }
            RuleValue::Exclusive(min, max) => {
                let (min, max) = (opt(min.map(Literal::f64_suffixed)), opt(max.map(Literal::f64_suffixed)));
                quote!(#k::Rule::ExclusiveRange { min: #min, max: #max })
            }
            RuleValue::OneOf(json) => quote!(#k::Rule::OneOf(#json)),
            RuleValue::NotBlank => quote!(#k::Rule::NotBlank),
            RuleValue::Equals(json) => quote!(#k::Rule::Equals(#json)),
            RuleValue::Items(inner) => {
                let inner = inner.iter().map(|rule| rule.expr(k));
                quote!(#k::Rule::Items(&[#(#inner),*]))
            }
        }
    }

    /// A statement that fails to compile, at the rule's span, when the
    /// rule does not fit the parameter's type `ty`: a local trait whose
    /// message names the rule and the parameter `param`, implemented for
    /// the types the rule applies to.
    pub fn check(&self, ty: &syn::Type, param: &str) -> TokenStream {
        let ty = crate::spans::respan(quote!(#ty), self.span);
        self.check_of(&ty, &format!("`{param}`"), "parameter", param)
    }

    /// [`check`](Self::check) of the type `ty` of `subject` (`` `id` `` or
    /// ``each item of `ids` ``), a `kind` (`parameter`, `item`).
    /// `tag` names the check's trait (unique in the method, so rustc never
    /// notes that a type "implements a similarly named trait").
    fn check_of(&self, ty: &TokenStream, subject: &str, kind: &str, tag: &str) -> TokenStream {
        let Some(target) = self.target else { return TokenStream::new() };
        let rule = self.name;
        let (message, label) = match target {
            Target::Strings => (
                format!("`{rule}` applies to string {kind}s, but {subject} is `{{Self}}`"),
                format!("`{rule}` needs a string {kind} (`String`, `&str`, `Cow<str>`, or an `Option` of one)"),
            ),
            Target::Numbers => (
                format!("`{rule}` applies to number {kind}s, but {subject} is `{{Self}}`"),
                format!("`{rule}` needs an integer or float {kind} (or an `Option` of one)"),
            ),
            Target::Lengths => (
                format!("`{rule}` applies to string and array {kind}s, but {subject} is `{{Self}}`"),
                format!("`{rule}` counts the characters of a string or the items of a `Vec`, slice or array"),
            ),
            Target::Items => (
                format!("`items(..)` applies to collection {kind}s, but {subject} is `{{Self}}`"),
                "`items(..)` holds rules for each item of a `Vec`, slice, array or set (or an `Option` of one)"
                    .to_owned(),
            ),
        };
        // The type keeps its own span: an item type that cannot be named
        // (`items(..)` on no collection) is reported at `items`.
        let fits = crate::spans::respan(quote!(__rpc_rule_fits), self.span);
        let mut call = quote!(#fits::<#ty>(););
        let inner = match &self.value {
            // The item type is named through `__RpcItems` (which carries the
            // same message), at the `items` span: a type that is no
            // collection gives one error, not one per rule inside.
            RuleValue::Items(inner) if inner.iter().any(|rule| rule.target.is_some()) => {
                call = TokenStream::new();
                let item = crate::spans::respan(quote!(<#ty as __RpcItems>::Item), self.span);
                let subject = format!("each item of {subject}");
                let checks = inner.iter().map(|rule| rule.check_of(&item, &subject, "item", &format!("{tag}_items")));
                quote! {
                    #[diagnostic::on_unimplemented(message = #message, label = #label)]
                    trait __RpcItems { type Item: ?Sized; }
                    #(#checks)*
                }
            }
            RuleValue::Items(_) => quote!(
                trait __RpcItems {
                    type Item: ?Sized;
                }
            ),
            _ => TokenStream::new(),
        };
        // The impls are written here rather than by a macro of the runtime
        // crate: with a wrong `crate = "..."` path, the path's own error is
        // the only one (the trait would have no impl and every rule would
        // say its parameter does not fit).
        let tr = format_ident!("__RpcFits_{}_{}", rule, tag);
        let impls = rule_target_impls(target, &tr);
        quote! {{
            #[diagnostic::on_unimplemented(message = #message, label = #label)]
            #[allow(non_camel_case_types)]
            trait #tr {}
            #impls
            fn __rpc_rule_fits<T: #tr + ?Sized>() {}
            #call
            #inner
        }}
    }
}

/// The collections `items(..)` applies to: impls of the local trait
/// `__RpcItems` (naming the item type, whose own rules are checked in turn)
/// and of the check trait `tr`.
fn collection_impls(tr: &Ident) -> TokenStream {
    let collections = [
        quote!(::std::vec::Vec<T>),
        quote!(&[T]),
        quote!(::std::boxed::Box<[T]>),
        quote!(::std::collections::VecDeque<T>),
        quote!(::std::collections::BTreeSet<T>),
    ];
    quote! {
        impl<T> __RpcItems for [T] { type Item = T; }
        impl<T> #tr for [T] {}
        #(
            impl<T> __RpcItems for #collections { type Item = T; }
            impl<T> __RpcItems for ::core::option::Option<#collections> { type Item = T; }
            impl<T> #tr for #collections {}
            impl<T> #tr for ::core::option::Option<#collections> {}
        )*
        impl<T, const N: usize> __RpcItems for [T; N] { type Item = T; }
        impl<T, const N: usize> #tr for [T; N] {}
        impl<T, S> __RpcItems for ::std::collections::HashSet<T, S> { type Item = T; }
        impl<T, S> #tr for ::std::collections::HashSet<T, S> {}
        impl<T, S> __RpcItems for ::core::option::Option<::std::collections::HashSet<T, S>> { type Item = T; }
        impl<T, S> #tr for ::core::option::Option<::std::collections::HashSet<T, S>> {}
    }
}

/// The impls of the local check trait `tr` for the types a
/// rule of `target` applies to (and their `Option`).
fn rule_target_impls(target: Target, tr: &Ident) -> TokenStream {
    let each = |types: Vec<TokenStream>| {
        quote! {
            #(impl #tr for #types {})*
            #(impl #tr for ::core::option::Option<#types> {})*
        }
    };
    let strings = || {
        each(vec![
            quote!(::std::string::String),
            quote!(&str),
            quote!(::std::borrow::Cow<'_, str>),
            quote!(::std::boxed::Box<str>),
            quote!(::std::sync::Arc<str>),
            quote!(::std::rc::Rc<str>),
        ])
    };
    match target {
        Target::Items => collection_impls(tr),
        Target::Strings => strings(),
        Target::Numbers => each(
            ["u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32", "f64"]
                .iter()
                .map(|t| {
                    let t = format_ident!("{}", t);
                    quote!(#t)
                })
                .collect(),
        ),
        Target::Lengths => {
            let strings = strings();
            quote! {
                #strings
                impl<T> #tr for ::std::vec::Vec<T> {}
                impl<T> #tr for ::core::option::Option<::std::vec::Vec<T>> {}
                impl<T> #tr for [T] {}
                impl<T> #tr for &[T] {}
                impl<T, const N: usize> #tr for [T; N] {}
                impl<T> #tr for ::std::boxed::Box<[T]> {}
                impl<T> #tr for ::std::collections::VecDeque<T> {}
                impl<T> #tr for ::std::collections::BTreeSet<T> {}
                impl<T, S> #tr for ::std::collections::HashSet<T, S> {}
            }
        }
    }
}
