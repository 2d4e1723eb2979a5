//! A call's result as its response writes it: serialised once, and shared
//! rather than copied when it comes from the result cache.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde_json::value::RawValue;

/// A call's serialised result ([`Execution::result`](crate::Execution::result)):
/// the bytes the method's result was written into, or the bytes an
/// in-process result cache holds, shared. A cache hit then costs a
/// reference count, where a copy of the result cost an allocation, the copy
/// and a free. Reads as the [`RawValue`] it holds (`json.get()`).
#[derive(Clone)]
pub enum ResultJson {
    /// The call's own bytes.
    Owned(Box<RawValue>),
    /// Bytes shared with the cache that holds them.
    Shared(Arc<RawValue>),
}

impl ResultJson {
    /// The result as an owned box (a copy when it is shared).
    pub fn into_box(self) -> Box<RawValue> {
        match self {
            ResultJson::Owned(json) => json,
            ResultJson::Shared(json) => (*json).to_owned(),
        }
    }
}

impl Deref for ResultJson {
    type Target = RawValue;

    fn deref(&self) -> &RawValue {
        match self {
            ResultJson::Owned(json) => json,
            ResultJson::Shared(json) => json,
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
        ResultJson::Owned(json)
    }
}

impl From<Arc<RawValue>> for ResultJson {
    fn from(json: Arc<RawValue>) -> Self {
        ResultJson::Shared(json)
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
    }
}
