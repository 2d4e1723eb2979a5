//! What a session keeps of the client's `clientInfo`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The `name`, `title` and `version` of a client's `clientInfo`, each at
/// most [`MAX_FIELD_BYTES`](Self::MAX_FIELD_BYTES) bytes (longer values are
/// cut at a character boundary). Everything else the client sent (icons,
/// website, unknown members) is dropped: nothing reads it, and a session
/// lives for an hour.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<String>,
}

/// The members of `clientInfo` that are kept, unparsed.
#[derive(Deserialize)]
struct Members<'a> {
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    title: Option<&'a RawValue>,
    #[serde(borrow, default)]
    version: Option<&'a RawValue>,
}

/// A JSON string, borrowed from the input unless it has escapes.
#[derive(Deserialize)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

impl ClientInfo {
    /// The most bytes kept of each field.
    pub const MAX_FIELD_BYTES: usize = 256;

    /// No fields.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads `clientInfo` as sent (raw JSON) without building anything but
    /// the kept fields: other members are skipped, not parsed into values.
    ///
    /// Lenient: `clientInfo` is informational, so a value that is not an
    /// object (or repeats a member) gives `None`, and a kept member that is
    /// not a string is left out; neither fails the `initialize`.
    pub fn parse(raw: &str) -> Option<Self> {
        if !raw.trim_start().starts_with('{') {
            return None;
        }
        let members: Members<'_> = serde_json::from_str(raw).ok()?;
        let text = |raw: Option<&RawValue>| {
            raw.and_then(|r| serde_json::from_str::<Text<'_>>(r.get()).ok()).map(|t| bounded(&t.0))
        };
        Some(ClientInfo { name: text(members.name), title: text(members.title), version: text(members.version) })
    }

    /// With `name` (cut to [`MAX_FIELD_BYTES`](Self::MAX_FIELD_BYTES)).
    pub fn with_name(mut self, name: &str) -> Self {
        self.name = Some(bounded(name));
        self
    }

    /// With `title` (cut to [`MAX_FIELD_BYTES`](Self::MAX_FIELD_BYTES)).
    pub fn with_title(mut self, title: &str) -> Self {
        self.title = Some(bounded(title));
        self
    }

    /// With `version` (cut to [`MAX_FIELD_BYTES`](Self::MAX_FIELD_BYTES)).
    pub fn with_version(mut self, version: &str) -> Self {
        self.version = Some(bounded(version));
        self
    }

    /// The client's programmatic name.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The client's display name.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The client's version.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// The kept fields as a `clientInfo` object (what a method's context shows).
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        for (key, value) in [("name", &self.name), ("title", &self.title), ("version", &self.version)] {
            if let Some(value) = value {
                object.insert(key.into(), Value::String(value.clone()));
            }
        }
        Value::Object(object)
    }
}

/// `text` cut to at most [`ClientInfo::MAX_FIELD_BYTES`] bytes, at a character boundary.
fn bounded(text: &str) -> String {
    text[..text.floor_char_boundary(ClientInfo::MAX_FIELD_BYTES)].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_three_fields_cut_at_a_char_boundary() {
        let name = "é".repeat(1000);
        let raw = json!({"name": name, "title": "T", "version": "1.0", "icons": [{"src": "x"}], "more": {"a": [1]}});
        let info = ClientInfo::parse(&raw.to_string()).unwrap();
        let kept = info.name().unwrap();
        assert!(kept.len() <= ClientInfo::MAX_FIELD_BYTES && kept.len() >= ClientInfo::MAX_FIELD_BYTES - 1);
        assert!(name.starts_with(kept), "a prefix, cut between characters");
        assert_eq!((info.title(), info.version()), (Some("T"), Some("1.0")));
        assert_eq!(info.to_json().as_object().unwrap().len(), 3, "nothing else is kept");
    }

    #[test]
    fn escaped_strings_are_read() {
        let info = ClientInfo::parse(r#"{"name": "a\"b\u00e9", "version": "1"}"#).unwrap();
        assert_eq!(info.name(), Some("a\"bé"));
    }

    #[test]
    fn lenient_about_shape() {
        for not_an_object in ["\"cli\"", "[1, 2]", "42", "null", "true"] {
            assert_eq!(ClientInfo::parse(not_an_object), None, "{not_an_object}");
        }
        let odd = ClientInfo::parse(r#"{"name": 5, "version": ["1"], "title": "ok"}"#).unwrap();
        assert_eq!((odd.name(), odd.version(), odd.title()), (None, None, Some("ok")));
        assert_eq!(ClientInfo::parse("{}").unwrap().to_json(), json!({}));
    }

    #[test]
    fn a_huge_client_info_is_skipped_not_built() {
        let pad: Vec<String> = (0..50_000).map(|i| format!("{i:0>80}")).collect();
        let raw = json!({"name": "cli", "version": "1", "pad": pad, "deep": [[[[["x"]]]]]}).to_string();
        assert!(raw.len() > 4_000_000);
        let info = ClientInfo::parse(&raw).unwrap();
        assert_eq!(info.to_json(), json!({"name": "cli", "version": "1"}));
        assert!(serde_json::to_string(&info).unwrap().len() < 64);
    }

    #[test]
    fn builders_bound_their_input() {
        let info = ClientInfo::new().with_name(&"n".repeat(10_000)).with_title("t").with_version("v");
        assert_eq!(info.name().map(str::len), Some(ClientInfo::MAX_FIELD_BYTES));
        assert_eq!(info.to_json(), json!({"name": "n".repeat(256), "title": "t", "version": "v"}));
    }
}
