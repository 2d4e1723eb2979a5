//! Durations of `#[rpc::cache(ttl = ..)]` and `#[rpc::lock(ttl = ..)]`: a
//! bare number is seconds; a unit says otherwise (`ttl = 5m`, `ttl = 1h`,
//! `ttl = "1h30m"`); an unknown unit is an error, never a silent second.
//! `ttl_secs = 300` takes seconds only.

use darling::FromMeta;
use proc_macro2::Span;
use syn::{Lit, Meta};

use crate::values::{kind_of, literal_of};

/// A duration in whole seconds, from 1.
#[derive(Debug, Clone, Copy)]
pub struct Seconds {
    pub value: u64,
    pub span: Span,
}

/// The units a duration takes, with their seconds.
const UNITS: &[(&str, u64)] = &[
    ("s", 1),
    ("sec", 1),
    ("secs", 1),
    ("second", 1),
    ("seconds", 1),
    ("m", 60),
    ("min", 60),
    ("mins", 60),
    ("minute", 60),
    ("minutes", 60),
    ("h", 3600),
    ("hr", 3600),
    ("hour", 3600),
    ("hours", 3600),
    ("d", 86_400),
    ("day", 86_400),
    ("days", 86_400),
];

/// Integer type suffixes (`60u64`): a bare number.
const INTEGER_TYPES: &[&str] =
    &["u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize"];

/// The seconds of `unit`, or why it is not one.
fn unit_seconds(unit: &str) -> Result<u64, String> {
    if unit.is_empty() || INTEGER_TYPES.contains(&unit) {
        return Ok(1);
    }
    if let Some((_, secs)) = UNITS.iter().find(|(name, _)| *name == unit) {
        return Ok(*secs);
    }
    let hint = match unit {
        "ms" | "us" | "ns" | "millis" => " (the smallest unit is a second)".to_owned(),
        _ => crate::suggest::did_you_mean(unit, UNITS.iter().map(|(name, _)| *name)),
    };
    Err(format!("unknown unit `{unit}`: use `s`, `m`, `h` or `d`{hint}"))
}

/// `text` as seconds: `300`, `5m`, `1h30m`, `2 h` (whole numbers, each
/// with a unit but a lone last number).
fn parse_text(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("an empty duration: write e.g. `\"5m\"`".into());
    }
    let mut total: u64 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit() && c != '_').unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!("`{text}` is not a duration: write e.g. `\"90s\"`, `\"5m\"` or `\"1h30m\"`"));
        }
        let number: u64 =
            rest[..digits].replace('_', "").parse().map_err(|_| format!("`{text}` is too long a duration"))?;
        rest = rest[digits..].trim_start();
        let unit_len = rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = rest[unit_len..].trim_start();
        let secs = number.checked_mul(unit_seconds(unit)?).ok_or_else(|| format!("`{text}` is too long a duration"))?;
        total = total.checked_add(secs).ok_or_else(|| format!("`{text}` is too long a duration"))?;
    }
    Ok(total)
}

impl FromMeta for Seconds {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let key = meta.path().get_ident().map(ToString::to_string).unwrap_or_default();
        let seconds_only = key.ends_with("_secs");
        let lit = literal_of(meta)?;
        let span = lit.span();
        let error = |message: String| darling::Error::custom(message).with_span(lit);
        let value = match lit {
            Lit::Int(i) => {
                let unit = i.suffix();
                if seconds_only && !unit.is_empty() && !INTEGER_TYPES.contains(&unit) {
                    let digits = i.base10_digits();
                    let meant =
                        digits.parse::<u64>().ok().zip(unit_seconds(unit).ok()).and_then(|(n, s)| n.checked_mul(s));
                    return Err(error(match meant {
                        Some(secs) => {
                            format!("`{key}` is a number of seconds: write `{key} = {secs}`, or `ttl = {digits}{unit}`")
                        }
                        None => format!("`{key}` is a number of seconds, without a unit: write e.g. `{key} = 300`"),
                    }));
                }
                let number: u64 = i.base10_digits().parse().map_err(|_| error(format!("`{key}` is too long")))?;
                let secs =
                    unit_seconds(unit).map_err(|why| error(format!("{why} (in `{key} = {i}`)", i = i.token())))?;
                number.checked_mul(secs).ok_or_else(|| error(format!("`{key}` is too long")))?
            }
            Lit::Str(s) if seconds_only => {
                return Err(error(format!(
                    "expected a whole number of seconds for `{key}`, found a string: write e.g. `{key} = 300`, or `ttl = {:?}`",
                    s.value()
                )));
            }
            Lit::Str(s) => parse_text(&s.value()).map_err(error)?,
            Lit::Float(f) => {
                return Err(error(format!(
                    "`{key}` takes whole units, found `{}`: write e.g. `{key} = 90m` for 1.5 h",
                    f.token()
                )));
            }
            other => {
                return Err(error(format!(
                    "expected a duration for `{key}`, found {}: write e.g. `{key} = 60` (seconds) or `{key} = 5m`",
                    kind_of(other)
                )));
            }
        };
        if value == 0 {
            return Err(error(format!("`{key}` is at least one second")));
        }
        Ok(Seconds { value, span })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_texts() {
        assert_eq!(unit_seconds(""), Ok(1));
        assert_eq!(unit_seconds("u64"), Ok(1));
        assert_eq!(unit_seconds("m"), Ok(60));
        assert_eq!(unit_seconds("days"), Ok(86_400));
        assert!(unit_seconds("ms").unwrap_err().contains("smallest unit is a second"));
        assert!(unit_seconds("hours_").is_err());
        assert!(unit_seconds("minuts").unwrap_err().contains("did you mean `minutes`"));
        assert_eq!(parse_text("300"), Ok(300));
        assert_eq!(parse_text("5m"), Ok(300));
        assert_eq!(parse_text(" 1h30m "), Ok(5400));
        assert_eq!(parse_text("2 h 5 s"), Ok(7205));
        assert_eq!(parse_text("1_000s"), Ok(1000));
        assert!(parse_text("").is_err() && parse_text("m").is_err() && parse_text("5 fortnights").is_err());
        assert!(parse_text("99999999999999999999d").is_err() && parse_text("999999999999999d").is_err());
    }
}
