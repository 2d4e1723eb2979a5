//! Value checks of the built-in validator: equality as JSON Schema
//! defines it, and the formats validation rules declare
//! (`email`, `uuid`, `date`, `date-time`, `uri`; others are annotations).

use serde_json::Value;

/// JSON Schema equality: numbers by value (`1` equals `1.0`), objects
/// whatever their member order.
pub(crate) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
            (Some(x), Some(y), _, _) => x == y,
            (_, _, Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// Whether `text` is valid for `format`; formats this validator does not
/// know are annotations (always valid), as the specification says.
pub(crate) fn valid(format: &str, text: &str) -> bool {
    match format {
        "email" => email(text),
        "uuid" => uuid(text),
        "date" => date(text),
        "date-time" => date_time(text),
        "uri" => uri(text),
        _ => true,
    }
}

/// `local@domain`: a dot-atom or quoted local part of at most 64 bytes, a
/// domain of labels (or an address literal `[...]`), 254 bytes at most.
fn email(text: &str) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else { return false };
    if local.is_empty() || local.len() > 64 || domain.is_empty() || text.len() > 254 {
        return false;
    }
    let local_ok = if local.starts_with('"') && local.ends_with('"') && local.len() >= 2 {
        local[1..local.len() - 1].chars().all(|c| c != '"' && !c.is_control())
    } else {
        !local.starts_with('.')
            && !local.ends_with('.')
            && !local.contains("..")
            && local.chars().all(|c| c.is_alphanumeric() || "!#$%&'*+-/=?^_`{|}~.".contains(c))
    };
    if !local_ok {
        return false;
    }
    if domain.starts_with('[') && domain.ends_with(']') {
        return domain.len() > 2
            && domain[1..domain.len() - 1].chars().all(|c| c.is_ascii_hexdigit() || ".:".contains(c));
    }
    domain.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label.chars().all(|c| c.is_alphanumeric() || c == '-')
    })
}

/// `8-4-4-4-12` hexadecimal digits.
fn uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups.iter().zip([8, 4, 4, 4, 12]).all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn digits(text: &str, n: usize) -> Option<u32> {
    (text.len() == n && text.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().ok()).flatten()
}

/// `YYYY-MM-DD`, a day of that month (leap years included).
fn date(text: &str) -> bool {
    let mut parts = text.split('-');
    let (Some(y), Some(m), Some(d), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let (Some(year), Some(month), Some(day)) = (digits(y, 4), digits(m, 2), digits(d, 2)) else { return false };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// RFC 3339: a date, `T`, `hh:mm:ss[.frac]`, and `Z` or `±hh:mm`.
fn date_time(text: &str) -> bool {
    let Some((day, time)) = text.split_once(['T', 't']) else { return false };
    if !date(day) {
        return false;
    }
    let (clock, offset) = if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        (clock, None)
    } else {
        let at = time.rfind(['+', '-']);
        match at {
            Some(at) => (&time[..at], Some(&time[at + 1..])),
            None => return false,
        }
    };
    let (clock, fraction) = match clock.split_once('.') {
        Some((clock, fraction)) => (clock, Some(fraction)),
        None => (clock, None),
    };
    if fraction.is_some_and(|f| f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let hms: Vec<&str> = clock.split(':').collect();
    let [h, m, s] = hms.as_slice() else { return false };
    let (Some(h), Some(m), Some(s)) = (digits(h, 2), digits(m, 2), digits(s, 2)) else { return false };
    if h > 23 || m > 59 || s > 60 {
        return false;
    }
    match offset {
        None => true,
        Some(offset) => {
            let Some((oh, om)) = offset.split_once(':') else { return false };
            matches!((digits(oh, 2), digits(om, 2)), (Some(oh), Some(om)) if oh <= 23 && om <= 59)
        }
    }
}

/// An absolute URI: a scheme (a letter, then letters, digits, `+`, `-`,
/// `.`), `:`, and no spaces, controls or characters outside a URI.
fn uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else { return false };
    let mut chars = scheme.chars();
    let scheme_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    scheme_ok
        && rest
            .chars()
            .all(|c| c.is_ascii_graphic() && !"<>\"{}|\\^`".contains(c) || (!c.is_ascii() && !c.is_control()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn formats() {
        for good in ["a@example.com", "first.last+tag@sub.example.org", "\"odd one\"@example.com", "x@[127.0.0.1]"] {
            assert!(email(good), "{good}");
        }
        for bad in ["nope", "@example.com", "a@", "a..b@example.com", "a@-x.com", "a b@example.com"] {
            assert!(!email(bad), "{bad}");
        }
        assert!(uuid("67e55044-10b1-426f-9247-bb680e5fe0c8"));
        assert!(!uuid("67e55044-10b1-426f-9247-bb680e5fe0c"));
        assert!(date("2024-02-29") && !date("2023-02-29") && !date("2024-13-01") && !date("24-01-01"));
        assert!(date_time("2026-12-02T06:30:51Z") && date_time("2026-12-02T06:30:51.123+02:00"));
        assert!(
            !date_time("2026-12-02 06:30:51Z") && !date_time("2026-12-02T25:00:00Z") && !date_time("2026-12-02T06:30")
        );
        assert!(
            uri("https://example.com/a?b=c") && uri("urn:isbn:0451450523") && !uri("no scheme") && !uri("1http://x")
        );
        assert!(valid("uint32", "anything"), "unknown formats annotate");
    }

    #[test]
    fn types_and_equality() {
        assert!(equal(&json!(1), &json!(1.0)));
        assert!(equal(&json!({"a": [1, {"b": 2}]}), &json!({"a": [1.0, {"b": 2}]})));
        assert!(!equal(&json!("1"), &json!(1)));
    }
}
