//! Validation rules on a parameter (`#[rpc(length(min = 3), email)]`):
//! their arguments, checked here, and the code they become — a
//! `rpc::rules::Rule` in the parameter's descriptor, and a compile-time
//! check that the rule fits the parameter's type, at the rule's span.

use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::Flag;
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{Expr, Lit, LitStr, Meta, UnOp};

use crate::values::Str;

/// A number written in an attribute: an integer or float literal, possibly negated.
#[derive(Debug, Clone, Copy)]
pub struct Number {
    pub value: f64,
    /// Whether it was written as an integer.
    pub integral: bool,
    pub span: Span,
}

fn number_of(expr: &Expr, key: &str) -> darling::Result<Number> {
    let wrong = |span: Span, found: &str| {
        darling::Error::custom(format!("expected a number for `{key}`, found {found}: write e.g. `{key} = 10`"))
            .with_span(&span)
    };
    match expr {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Int(i) => i
                .base10_parse::<i128>()
                .map(|v| Number { value: v as f64, integral: true, span: i.span() })
                .map_err(|e| darling::Error::custom(e.to_string()).with_span(i)),
            Lit::Float(f) => match f.base10_parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Number { value: v, integral: false, span: f.span() }),
                _ => Err(darling::Error::custom(format!("`{key}` must be a finite number")).with_span(f)),
            },
            Lit::Str(s) if s.value().trim().parse::<f64>().is_ok() => Err(darling::Error::custom(format!(
                "expected a number for `{key}`, found a string: write `{key} = {}` without quotes",
                s.value().trim()
            ))
            .with_span(s)),
            other => Err(wrong(other.span(), "another kind of literal")),
        },
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => {
            let inner = number_of(&u.expr, key)?;
            Ok(Number { value: -inner.value, span: u.span(), ..inner })
        }
        Expr::Group(g) => number_of(&g.expr, key),
        other => Err(wrong(other.span(), "an expression")),
    }
}

/// `min = ..` / `max = ..` inside `length(..)` or `range(..)`.
#[derive(Debug, Default)]
struct Bounds {
    min: Option<Number>,
    max: Option<Number>,
}

fn bounds(meta: &Meta, rule: &str, example: &str) -> darling::Result<(Bounds, Span)> {
    let span = meta.path().span();
    let list = match meta {
        Meta::List(list) => list,
        _ => {
            return Err(darling::Error::custom(format!(
                "`{rule}` takes bounds: `{rule}({example})` (either bound may be left out)"
            ))
            .with_span(&span));
        }
    };
    let mut out = Bounds::default();
    let mut errors = darling::Error::accumulator();
    for item in NestedMeta::parse_meta_list(list.tokens.clone())? {
        let NestedMeta::Meta(Meta::NameValue(nv)) = &item else {
            errors.push(darling::Error::custom(format!("`{rule}` takes `min = ..` and `max = ..`")).with_span(&item));
            continue;
        };
        let key = nv.path.get_ident().map(ToString::to_string).unwrap_or_default();
        let slot = match key.as_str() {
            "min" => &mut out.min,
            "max" => &mut out.max,
            _ => {
                errors.push(darling::Error::unknown_field_with_alts(&key, &["min", "max"]).with_span(&nv.path));
                continue;
            }
        };
        if slot.is_some() {
            errors.push(darling::Error::duplicate_field(&key).with_span(&nv.path));
            continue;
        }
        if let Some(number) = errors.handle(number_of(&nv.value, &key)) {
            *slot = Some(number);
        }
    }
    errors.finish()?;
    match (out.min, out.max) {
        (None, None) => {
            Err(darling::Error::custom(format!("`{rule}` needs at least one bound: `{rule}({example})`"))
                .with_span(&span))
        }
        (Some(min), Some(max)) if min.value > max.value => Err(darling::Error::custom(format!(
            "`{rule}` has `min` ({}) greater than `max` ({}): no value can satisfy it",
            min.value, max.value
        ))
        .with_span(&min.span)),
        _ => Ok((out, span)),
    }
}

/// `length(min = 3, max = 100)`: characters of a string, items of an array.
#[derive(Debug, Clone)]
pub struct LengthArg {
    pub min: Option<u64>,
    pub max: Option<u64>,
    pub span: Span,
}

impl FromMeta for LengthArg {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let (b, span) = bounds(meta, "length", "min = 3, max = 100")?;
        let count = |n: Option<Number>| -> darling::Result<Option<u64>> {
            match n {
                Some(n) if !n.integral || n.value < 0.0 || n.value > u64::MAX as f64 => {
                    Err(darling::Error::custom("a `length` bound is a whole number from 0 (characters or items)")
                        .with_span(&n.span))
                }
                Some(n) => Ok(Some(n.value as u64)),
                None => Ok(None),
            }
        };
        Ok(LengthArg { min: count(b.min)?, max: count(b.max)?, span })
    }
}

/// `range(min = 1, max = 100)`: a number's inclusive bounds.
#[derive(Debug, Clone)]
pub struct RangeArg {
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub span: Span,
}

impl FromMeta for RangeArg {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let (b, span) = bounds(meta, "range", "min = 1, max = 100")?;
        Ok(RangeArg { min: b.min.map(|n| n.value), max: b.max.map(|n| n.value), span })
    }
}

/// `pattern = "^[a-z]+$"`, an ECMA-262 regular expression (the dialect JSON
/// Schema publishes to clients, and the one the validator applies), checked
/// at compile time with the `u` flag, as JavaScript clients compile it.
#[derive(Debug, Clone)]
pub struct PatternArg {
    pub lit: LitStr,
    pub span: Span,
}

impl FromMeta for PatternArg {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let span = meta.path().span();
        let Str(lit) = Str::from_meta(meta)?;
        if let Some(message) = pattern_error(&lit.value()) {
            return Err(darling::Error::custom(message).with_span(&lit));
        }
        Ok(PatternArg { lit, span })
    }
}

/// Why `pattern` is not an ECMA-262 regular expression, with the fix where
/// the mistake is a Rust-only or PCRE-only construct.
fn pattern_error(pattern: &str) -> Option<String> {
    let error = regress::Regex::with_flags(pattern, "u").err()?.to_string();
    let mut reason = error.chars();
    let reason = reason.next().map(|c| c.to_lowercase().chain(reason).collect::<String>()).unwrap_or_default();
    let hint = if let Some(flags) = inline_flags(pattern) {
        format!(
            "; inline flags `(?{flags})` are Rust/PCRE syntax that JavaScript clients reject: \
             spell the cases out (`[Aa]`) or drop the flag"
        )
    } else if pattern.contains("\\A") || pattern.contains("\\z") || pattern.contains("\\Z") {
        "; `\\A` and `\\z` are not ECMA-262: use `^` and `$`".to_owned()
    } else if pattern.contains("(?P<") {
        "; named groups are written `(?<name>...)` in ECMA-262".to_owned()
    } else if pattern.contains("[[:") {
        "; POSIX classes like `[[:alpha:]]` are not ECMA-262: use `[A-Za-z]` or `\\p{L}`".to_owned()
    } else {
        String::new()
    };
    Some(format!(
        "`pattern` is not a valid ECMA-262 regular expression (the dialect JSON Schema clients apply): {reason}{hint}"
    ))
}

/// The flags of a leading inline-flag group such as `(?i)` or `(?x:`.
fn inline_flags(pattern: &str) -> Option<&str> {
    let rest = pattern.split("(?").nth(1)?;
    let end = rest.find([')', ':'])?;
    let flags = &rest[..end];
    (!flags.is_empty() && flags.chars().all(|c| matches!(c, 'i' | 'm' | 's' | 'x' | 'u' | 'U' | '-'))).then_some(flags)
}

/// What kind of literals a `one_of` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChoiceKind {
    Strings,
    Numbers,
    Booleans,
}

impl ChoiceKind {
    fn of(lit: &Lit) -> Option<ChoiceKind> {
        match lit {
            Lit::Str(_) => Some(ChoiceKind::Strings),
            Lit::Int(_) | Lit::Float(_) => Some(ChoiceKind::Numbers),
            Lit::Bool(_) => Some(ChoiceKind::Booleans),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ChoiceKind::Strings => "a string",
            ChoiceKind::Numbers => "a number",
            ChoiceKind::Booleans => "a boolean",
        }
    }
}

/// `one_of("a", "b")` / `one_of(1, 2, 3)`: the allowed values, as a JSON array.
#[derive(Debug, Clone)]
pub struct OneOfArg {
    pub json: String,
    pub kind: ChoiceKind,
    pub span: Span,
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn choice_json(lit: &Lit) -> darling::Result<String> {
    Ok(match lit {
        Lit::Str(s) => json_string(&s.value()),
        Lit::Int(i) => {
            i.base10_parse::<i128>().map_err(|e| darling::Error::custom(e.to_string()).with_span(i))?.to_string()
        }
        Lit::Float(f) => match f.base10_parse::<f64>() {
            Ok(v) if v.is_finite() => format!("{v}"),
            _ => return Err(darling::Error::custom("`one_of` values must be finite numbers").with_span(f)),
        },
        Lit::Bool(b) => b.value.to_string(),
        other => {
            return Err(darling::Error::custom("`one_of` lists strings, numbers or booleans").with_span(other));
        }
    })
}

impl FromMeta for OneOfArg {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let span = meta.path().span();
        let Meta::List(list) = meta else {
            return Err(
                darling::Error::custom("`one_of` lists the allowed values: `one_of(\"a\", \"b\")`").with_span(&span)
            );
        };
        let mut errors = darling::Error::accumulator();
        let mut first: Option<ChoiceKind> = None;
        let mut values: Vec<String> = Vec::new();
        for item in NestedMeta::parse_meta_list(list.tokens.clone())? {
            let NestedMeta::Lit(lit) = &item else {
                errors.push(
                    darling::Error::custom("`one_of` lists literal values: `one_of(\"a\", \"b\")` or `one_of(1, 2)`")
                        .with_span(&item),
                );
                continue;
            };
            let Some(json) = errors.handle(choice_json(lit)) else { continue };
            let kind = ChoiceKind::of(lit);
            match (first, kind) {
                (Some(first), Some(kind)) if first != kind => {
                    errors.push(
                        darling::Error::custom(format!(
                            "`one_of` values are all of one kind: this is {}, but the first value is {}",
                            kind.name(),
                            first.name()
                        ))
                        .with_span(lit),
                    );
                    continue;
                }
                (None, kind) => first = kind,
                _ => {}
            }
            if values.contains(&json) {
                errors.push(darling::Error::custom(format!("`one_of` lists {json} twice")).with_span(lit));
                continue;
            }
            values.push(json);
        }
        errors.finish()?;
        let Some(kind) = first.filter(|_| !values.is_empty()) else {
            return Err(
                darling::Error::custom("`one_of` needs at least one value: `one_of(\"a\", \"b\")`").with_span(&span)
            );
        };
        Ok(OneOfArg { json: format!("[{}]", values.join(",")), kind, span })
    }
}

/// Which parameter types a rule applies to.
#[derive(Debug, Clone, Copy)]
enum Target {
    Strings,
    Numbers,
    Lengths,
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
        rules.push(ParamRule {
            name: "range",
            span: r.span,
            target: Some(Target::Numbers),
            value: RuleValue::Range(r.min, r.max),
        });
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
    pub fn expr(&self, k: &TokenStream) -> TokenStream {
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
            RuleValue::OneOf(json) => quote!(#k::Rule::OneOf(#json)),
            RuleValue::NotBlank => quote!(#k::Rule::NotBlank),
        }
    }

    /// A statement that fails to compile, at the rule's span, when the
    /// rule does not fit the parameter's type `ty`: a local trait whose
    /// message names the rule and the parameter `param`, implemented for
    /// the types the rule applies to.
    pub fn check(&self, ty: &syn::Type, param: &str) -> TokenStream {
        let Some(target) = self.target else { return TokenStream::new() };
        let rule = self.name;
        let (message, label) = match target {
            Target::Strings => (
                format!("`{rule}` applies to string parameters, but `{param}` is `{{Self}}`"),
                format!("`{rule}` needs a string parameter (`String`, `&str`, `Cow<str>`, or an `Option` of one)"),
            ),
            Target::Numbers => (
                format!("`{rule}` applies to number parameters, but `{param}` is `{{Self}}`"),
                format!("`{rule}` needs an integer or float parameter (or an `Option` of one)"),
            ),
            Target::Lengths => (
                format!("`{rule}` applies to string and array parameters, but `{param}` is `{{Self}}`"),
                format!("`{rule}` counts the characters of a string or the items of a `Vec`, slice or array"),
            ),
        };
        let call = crate::spans::respan(quote!(__rpc_rule_fits::<#ty>();), self.span);
        // The impls are written here rather than by a macro of the runtime
        // crate: with a wrong `crate = "..."` path, the path's own error is
        // the only one (the trait would have no impl and every rule would
        // say its parameter does not fit).
        let impls = rule_target_impls(target);
        quote! {{
            #[diagnostic::on_unimplemented(message = #message, label = #label)]
            trait __RpcRuleTarget {}
            #impls
            fn __rpc_rule_fits<T: __RpcRuleTarget + ?Sized>() {}
            #call
        }}
    }
}

/// The impls of the local check trait `__RpcRuleTarget` for the types a
/// rule of `target` applies to (and their `Option`).
fn rule_target_impls(target: Target) -> TokenStream {
    let each = |types: Vec<TokenStream>| {
        quote! {
            #(impl __RpcRuleTarget for #types {})*
            #(impl __RpcRuleTarget for ::core::option::Option<#types> {})*
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
                impl<T> __RpcRuleTarget for ::std::vec::Vec<T> {}
                impl<T> __RpcRuleTarget for ::core::option::Option<::std::vec::Vec<T>> {}
                impl<T> __RpcRuleTarget for [T] {}
                impl<T> __RpcRuleTarget for &[T] {}
                impl<T, const N: usize> __RpcRuleTarget for [T; N] {}
                impl<T> __RpcRuleTarget for ::std::boxed::Box<[T]> {}
                impl<T> __RpcRuleTarget for ::std::collections::VecDeque<T> {}
                impl<T> __RpcRuleTarget for ::std::collections::BTreeSet<T> {}
                impl<T, S> __RpcRuleTarget for ::std::collections::HashSet<T, S> {}
            }
        }
    }
}
