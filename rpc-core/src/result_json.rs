//! A call's result as its response writes it: serialised once, and shared
//! rather than copied when it comes from the result cache, with the result
//! written as a JSON string kept beside it when its caller wants that too.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde_json::value::RawValue;

use crate::jsonrpc::json_string;

/// A call's serialised result ([`Execution::result`](crate::Execution::result)):
/// the bytes the method's result was written into, or the bytes an
/// in-process result cache holds, shared. A cache hit then costs a
/// reference count, where a copy of the result cost an allocation, the copy
/// and a free. Reads as the [`RawValue`] it holds (`json.get()`).
#[derive(Clone)]
pub struct ResultJson(Repr);

#[derive(Clone)]
enum Repr {
    /// The call's own bytes.
    Owned(Box<RawValue>),
    /// Bytes shared with the cache that holds them.
    Shared(Arc<RawValue>),
    /// Bytes shared with the cache that holds them, which has room for
    /// them written as a JSON string.
    Kept(Arc<KeptJson>),
}

/// A cached result with room for it written as a JSON string (counted in
/// the cache's bound when it was stored), written the first time a hit
/// asks for it ([`ResultJson::json_string`]).
pub(crate) struct KeptJson {
    json: Box<RawValue>,
    string: OnceLock<Box<str>>,
}

impl ResultJson {
    /// A copy of `json` for a cache to hold and share with its hits, with
    /// room for it written as a JSON string (`with_string`), written by the
    /// first hit that asks for it.
    pub(crate) fn cached(json: &RawValue, with_string: bool) -> Self {
        match with_string {
            false => ResultJson(Repr::Shared(Arc::from(json.to_owned()))),
            true => ResultJson(Repr::Kept(Arc::new(KeptJson { json: json.to_owned(), string: OnceLock::new() }))),
        }
    }

    /// The result as an owned box (a copy when it is shared).
    pub fn into_box(self) -> Box<RawValue> {
        match self.0 {
            Repr::Owned(json) => json,
            Repr::Shared(json) => (*json).to_owned(),
            Repr::Kept(kept) => kept.json.clone(),
        }
    }

    /// Whether the bytes are shared with a cache (a hit) rather than the
    /// call's own.
    pub fn is_shared(&self) -> bool {
        !matches!(self.0, Repr::Owned(_))
    }

    /// The result written as a JSON string (quotes included, byte for byte
    /// what [`write_json_string`](crate::jsonrpc::write_json_string)
    /// writes), when the cache it comes from keeps it: a result cached for
    /// a caller that writes it so ([`Call::result_as_string`](crate::Call::result_as_string),
    /// MCP's text content) has room for it, and it is written on the first
    /// hit that asks, then copied by every later one. `None` for any other
    /// result: the caller writes the string itself.
    pub fn json_string(&self) -> Option<&str> {
        match &self.0 {
            Repr::Kept(kept) => Some(kept.string.get_or_init(|| json_string::to_json_string(kept.json.get()))),
            Repr::Owned(_) | Repr::Shared(_) => None,
        }
    }
}

impl Deref for ResultJson {
    type Target = RawValue;

    fn deref(&self) -> &RawValue {
        match &self.0 {
            Repr::Owned(json) => json,
            Repr::Shared(json) => json,
            Repr::Kept(kept) => &kept.json,
        }
    }
}

impl AsRef<RawValue> for ResultJson {
    fn as_ref(&self) -> &RawValue {
        self
    }
}

impl From<Box<RawValue>> for ResultJson {
    fn from(json: Box<RawValue>) -> Self {
        ResultJson(Repr::Owned(json))
    }
}

impl From<Arc<RawValue>> for ResultJson {
    fn from(json: Arc<RawValue>) -> Self {
        ResultJson(Repr::Shared(json))
    }
}

impl PartialEq for ResultJson {
    /// The same JSON text.
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl fmt::Debug for ResultJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl fmt::Display for ResultJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_and_shared_read_alike_and_a_shared_one_is_not_copied() {
        let owned = ResultJson::from(RawValue::from_string(r#"{"id":7}"#.to_owned()).unwrap());
        let held: Arc<RawValue> = Arc::from(RawValue::from_string(r#"{"id":7}"#.to_owned()).unwrap());
        let shared = ResultJson::from(Arc::clone(&held));
        assert_eq!(owned.get(), shared.get());
        assert_eq!(owned, shared);
        assert_eq!(format!("{shared}"), r#"{"id":7}"#);
        assert!(std::ptr::eq(shared.get(), held.get()), "a shared result reads the cache's bytes");
        assert_eq!(Arc::strong_count(&held), 2);
        assert_eq!(shared.into_box().get(), r#"{"id":7}"#);
        assert_eq!(Arc::strong_count(&held), 1, "the copy lets the shared bytes go");
        assert!(!owned.is_shared() && owned.json_string().is_none(), "written by its caller");
    }

    #[test]
    fn a_kept_result_writes_its_string_once_and_shares_it() {
        let kept = ResultJson::cached(&RawValue::from_string(r#"{"a":"b\nc"}"#.to_owned()).unwrap(), true);
        let (first, second) = (kept.clone(), kept);
        assert!(first.is_shared());
        assert_eq!(first.get(), r#"{"a":"b\nc"}"#);
        assert_eq!(first.json_string(), Some(r#""{\"a\":\"b\\nc\"}""#));
        assert!(std::ptr::eq(first.json_string().unwrap(), second.json_string().unwrap()), "written once");
        assert_eq!(first.clone().into_box().get(), r#"{"a":"b\nc"}"#);
        assert_eq!(first, ResultJson::from(RawValue::from_string(r#"{"a":"b\nc"}"#.to_owned()).unwrap()));
    }
}
