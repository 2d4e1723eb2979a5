//! Call results in a [`CacheStore`](super::CacheStore): how a result is
//! written as text (`<json>`, or `g:<stamp>:<json>` for a method some
//! relation invalidates), and how a read decides whether it is current.
//!
//! A method that some `#[rpc::invalidates]` names is cached with a
//! *generation stamp*: its entries (one per caller) carry the stamp that
//! was under the method's generation key when the result was computed, and
//! are current only while that key still holds the same stamp. An
//! invalidation writes a new stamp there, which makes every caller's entry
//! stale at once.

use serde_json::value::RawValue;

use crate::logged::logged;
use crate::result_json::ResultJson;

/// The stamp of a method that was never invalidated.
pub const FIRST_STAMP: &str = "0";

/// What a read of a cached result found.
#[derive(Debug)]
#[non_exhaustive]
pub enum ResultRead {
    /// A current result.
    Current(ResultJson),
    /// Nothing current (absent, expired, stale or not JSON). A result
    /// computed now is stored under this stamp: the generation's (or
    /// [`FIRST_STAMP`]) for a method with generations, `None` for one
    /// without.
    Missing(Option<String>),
}

/// The text a result is stored as: its JSON, after `g:<stamp>:` when it
/// carries a generation stamp.
pub fn result_text(stamp: Option<&str>, json: &RawValue) -> String {
    match stamp {
        None => json.get().to_owned(),
        Some(stamp) => {
            let mut text = String::with_capacity(3 + stamp.len() + json.get().len());
            text.push_str("g:");
            text.push_str(stamp);
            text.push(':');
            text.push_str(json.get());
            text
        }
    }
}

/// `g:<stamp>:<json>` split into the stamp and the JSON.
pub(crate) fn stamped(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("g:")?;
    let end = rest.find(':')?;
    Some((&rest[..end], &rest[end + 1..]))
}

/// What a read of the texts under a result's key (`value`) and, for a
/// method with generations, under its generation key (`generation`:
/// `Some(stamp)`, `Some(None)` when absent) means. The JSON is checked: a
/// shared store may hold anything.
pub(crate) fn read_text(key: &str, value: Option<String>, generation: Option<Option<String>>) -> ResultRead {
    let Some(stamp) = generation else {
        return match value.and_then(|text| parse(key, text)) {
            Some(json) => ResultRead::Current(json.into()),
            None => ResultRead::Missing(None),
        };
    };
    let stamp = stamp.unwrap_or_else(|| FIRST_STAMP.to_owned());
    if let Some(mut text) = value
        && let Some((written, json)) = stamped(&text)
        && written == stamp
    {
        // The JSON moved to the front of the same buffer (no second copy).
        let start = text.len() - json.len();
        text.drain(..start);
        if let Some(json) = parse(key, text) {
            return ResultRead::Current(json.into());
        }
    }
    ResultRead::Missing(Some(stamp))
}

fn parse(key: &str, text: String) -> Option<Box<RawValue>> {
    match RawValue::from_string(text) {
        Ok(raw) => Some(raw),
        Err(e) => {
            tracing::warn!(key = %logged(key), error = %e, "a cached result is not JSON; calling the method");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn stamps_split_from_the_json() {
        assert_eq!(stamped(r#"g:0:{"a":1}"#), Some(("0", r#"{"a":1}"#)));
        assert_eq!(stamped(r#"g:ab-1:"x:y""#), Some(("ab-1", r#""x:y""#)));
        assert_eq!(stamped(r#"{"a":1}"#), None, "an entry without a stamp is never current");
        assert_eq!(stamped("g:0"), None);
    }

    #[test]
    fn texts_read_back() {
        let text = result_text(Some("s-1"), &json(r#"{"a":"g:1:x"}"#));
        assert_eq!(text, r#"g:s-1:{"a":"g:1:x"}"#);
        let read = |value: Option<&str>, generation: Option<Option<&str>>| {
            read_text("k", value.map(str::to_owned), generation.map(|g| g.map(str::to_owned)))
        };
        assert!(
            matches!(read(Some(&text), Some(Some("s-1"))), ResultRead::Current(j) if j.get() == r#"{"a":"g:1:x"}"#)
        );
        assert!(matches!(read(Some(&text), Some(Some("s-2"))), ResultRead::Missing(Some(s)) if s == "s-2"));
        assert!(matches!(read(None, Some(None)), ResultRead::Missing(Some(s)) if s == FIRST_STAMP));
        assert!(matches!(read(Some("g:0:{nope"), Some(None)), ResultRead::Missing(Some(_))), "not JSON");
        assert!(matches!(read(Some("[1]"), None), ResultRead::Current(j) if j.get() == "[1]"));
        assert!(matches!(read(Some("[1"), None), ResultRead::Missing(None)));
        assert_eq!(result_text(None, &json("[1]")), "[1]");
    }
}
