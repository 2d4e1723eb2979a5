//! The arguments of the validation rules (`length(min = 3)`, `range(..)`,
//! `pattern = ".."`, `one_of(..)`, ...), read and checked as written.

use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::Flag;
use proc_macro2::Span;
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

/// `min = ..` / `max = ..` inside `length(..)` or `range(..)` (which also
/// takes `exclusive_min = ..` / `exclusive_max = ..`).
#[derive(Debug, Default)]
struct Bounds {
    min: Option<Number>,
    max: Option<Number>,
    exclusive_min: Option<Number>,
    exclusive_max: Option<Number>,
}

fn bounds(meta: &Meta, rule: &str, example: &str, exclusive: bool) -> darling::Result<(Bounds, Span)> {
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
    let keys: &[&str] = if exclusive { &["min", "max", "exclusive_min", "exclusive_max"] } else { &["min", "max"] };
    let mut out = Bounds::default();
    let mut errors = darling::Error::accumulator();
    for item in NestedMeta::parse_meta_list(list.tokens.clone())? {
        let NestedMeta::Meta(Meta::NameValue(nv)) = &item else {
            let message = match exclusive {
                true => format!("`{rule}` takes `min = ..`, `max = ..`, `exclusive_min = ..` and `exclusive_max = ..`"),
                false => format!("`{rule}` takes `min = ..` and `max = ..`"),
            };
            errors.push(darling::Error::custom(message).with_span(&item));
            continue;
        };
        let key = nv.path.get_ident().map(ToString::to_string).unwrap_or_default();
        let slot = match key.as_str() {
            "min" => &mut out.min,
            "max" => &mut out.max,
            "exclusive_min" if exclusive => &mut out.exclusive_min,
            "exclusive_max" if exclusive => &mut out.exclusive_max,
            _ => {
                errors.push(darling::Error::unknown_field_with_alts(&key, keys).with_span(&nv.path));
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
    for (inclusive, strict, side) in [(&out.min, &out.exclusive_min, "lower"), (&out.max, &out.exclusive_max, "upper")]
    {
        if let (Some(_), Some(strict)) = (inclusive, strict) {
            errors.push(
                darling::Error::custom(format!(
                    "`{rule}` has two {side} bounds, one inclusive and one exclusive: keep one of them"
                ))
                .with_span(&strict.span),
            );
        }
    }
    errors.finish()?;
    let lower = out.min.map(|n| (n, false)).or(out.exclusive_min.map(|n| (n, true)));
    let upper = out.max.map(|n| (n, false)).or(out.exclusive_max.map(|n| (n, true)));
    match (lower, upper) {
        (None, None) => {
            Err(darling::Error::custom(format!("`{rule}` needs at least one bound: `{rule}({example})`"))
                .with_span(&span))
        }
        (Some((min, strict_min)), Some((max, strict_max)))
            if min.value > max.value || (min.value == max.value && (strict_min || strict_max)) =>
        {
            let name =
                |strict: bool, plain: &'static str, exclusive: &'static str| if strict { exclusive } else { plain };
            Err(darling::Error::custom(format!(
                "`{rule}` has `{}` ({}) {} `{}` ({}): no value can satisfy it",
                name(strict_min, "min", "exclusive_min"),
                min.value,
                if min.value > max.value { "greater than" } else { "equal to" },
                name(strict_max, "max", "exclusive_max"),
                max.value
            ))
            .with_span(&min.span))
        }
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
        let (b, span) = bounds(meta, "length", "min = 3, max = 100", false)?;
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

/// `range(min = 1, max = 100)`: a number's inclusive bounds;
/// `exclusive_min = 0` / `exclusive_max = 1` for bounds the value must not reach.
#[derive(Debug, Clone)]
pub struct RangeArg {
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub exclusive_min: Option<f64>,
    pub exclusive_max: Option<f64>,
    pub span: Span,
}

impl FromMeta for RangeArg {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let (b, span) = bounds(meta, "range", "min = 1, max = 100", true)?;
        let value = |n: Option<Number>| n.map(|n| n.value);
        Ok(RangeArg {
            min: value(b.min),
            max: value(b.max),
            exclusive_min: value(b.exclusive_min),
            exclusive_max: value(b.exclusive_max),
            span,
        })
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
    pub fn of(lit: &Lit) -> Option<ChoiceKind> {
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

fn choice_json(lit: &Lit, rule: &str) -> darling::Result<String> {
    Ok(match lit {
        Lit::Str(s) => json_string(&s.value()),
        Lit::Int(i) => {
            i.base10_parse::<i128>().map_err(|e| darling::Error::custom(e.to_string()).with_span(i))?.to_string()
        }
        Lit::Float(f) => match f.base10_parse::<f64>() {
            Ok(v) if v.is_finite() => format!("{v}"),
            _ => return Err(darling::Error::custom(format!("`{rule}` values must be finite numbers")).with_span(f)),
        },
        Lit::Bool(b) => b.value.to_string(),
        other => {
            return Err(darling::Error::custom(format!("`{rule}` takes strings, numbers or booleans")).with_span(other));
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
            let Some(json) = errors.handle(choice_json(lit, "one_of")) else { continue };
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

/// `equals = "yes"` / `equals = 1` / `equals = true`: the one allowed value
/// (`const`), as JSON.
#[derive(Debug, Clone)]
pub struct EqualsArg {
    pub json: String,
    pub kind: ChoiceKind,
    pub span: Span,
}

impl FromMeta for EqualsArg {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let span = meta.path().span();
        let Meta::NameValue(nv) = meta else {
            return Err(
                darling::Error::custom("`equals` takes the one allowed value: `equals = \"yes\"`").with_span(&span)
            );
        };
        let lit = match &nv.value {
            Expr::Lit(lit) => lit.lit.clone(),
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => {
                let n = number_of(&nv.value, "equals")?;
                let json = if n.integral { format!("{}", n.value as i128) } else { format!("{}", n.value) };
                return Ok(EqualsArg { json, kind: ChoiceKind::Numbers, span });
            }
            other => {
                return Err(darling::Error::custom(
                    "`equals` takes a literal (a string, number or boolean): `equals = \"yes\"`",
                )
                .with_span(other));
            }
        };
        let json = choice_json(&lit, "equals")?;
        let kind = ChoiceKind::of(&lit)
            .ok_or_else(|| darling::Error::custom("`equals` takes a string, number or boolean").with_span(&lit))?;
        Ok(EqualsArg { json, kind, span })
    }
}

/// The rules one `#[rpc(...)]` may carry, for a parameter or (inside
/// `items(..)`) for each item of a collection.
#[derive(Debug, Default, FromMeta)]
pub struct RuleFields {
    /// `length(min = 3, max = 100)`: characters of a string, items of an array.
    #[darling(default)]
    pub length: Option<LengthArg>,
    /// `range(min = 1, max = 100)`: a number's bounds.
    #[darling(default)]
    pub range: Option<RangeArg>,
    /// `pattern = "^[a-z]+$"`: an ECMA-262 regular expression strings must match.
    #[darling(default)]
    pub pattern: Option<PatternArg>,
    /// `email`: the `email` string format.
    #[darling(default)]
    pub email: Flag,
    /// `uuid`: the `uuid` string format.
    #[darling(default)]
    pub uuid: Flag,
    /// `date`: the `date` string format (RFC 3339 full-date).
    #[darling(default)]
    pub date: Flag,
    /// `date_time`: the `date-time` string format (RFC 3339).
    #[darling(default)]
    pub date_time: Flag,
    /// `uri`: the `uri` string format.
    #[darling(default)]
    pub uri: Flag,
    /// `one_of("a", "b")` / `one_of(1, 2)`: the allowed values.
    #[darling(default)]
    pub one_of: Option<OneOfArg>,
    /// `not_blank`: a string with a non-whitespace character.
    #[darling(default)]
    pub not_blank: Flag,
    /// `equals = ..`: the one allowed value.
    #[darling(default)]
    pub equals: Option<EqualsArg>,
}

impl RuleFields {
    /// The rules as written; `items` for a parameter's `items(..)`.
    pub fn rules<'a>(&'a self, items: Option<&'a ItemsArg>) -> super::RuleArgs<'a> {
        super::RuleArgs {
            length: self.length.as_ref(),
            range: self.range.as_ref(),
            pattern: self.pattern.as_ref(),
            formats: vec![
                ("email", "Email", &self.email),
                ("uuid", "Uuid", &self.uuid),
                ("date", "Date", &self.date),
                ("date_time", "DateTime", &self.date_time),
                ("uri", "Uri", &self.uri),
            ],
            one_of: self.one_of.as_ref(),
            not_blank: &self.not_blank,
            equals: self.equals.as_ref(),
            items,
        }
    }
}

/// `items(length(max = 20), pattern = "..")`: rules for each item of a
/// collection parameter (the same rules a parameter takes).
#[derive(Debug)]
pub struct ItemsArg {
    pub rules: Box<RuleFields>,
    pub span: Span,
}

impl FromMeta for ItemsArg {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let span = meta.path().span();
        let Meta::List(list) = meta else {
            return Err(darling::Error::custom(
                "`items` takes the rules each item follows: `items(length(max = 20), pattern = \"^[a-z]+$\")`",
            )
            .with_span(&span));
        };
        let nested = NestedMeta::parse_meta_list(list.tokens.clone())?;
        if nested.is_empty() {
            return Err(darling::Error::custom("`items(..)` needs at least one rule: `items(length(max = 20))`")
                .with_span(&span));
        }
        let rules = RuleFields::from_list(&nested)?;
        Ok(ItemsArg { rules: Box::new(rules), span })
    }
}
