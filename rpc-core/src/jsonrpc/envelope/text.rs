//! The two members of a message that must be strings (`jsonrpc`,
//! `method`), read as strings in the envelope's typed pass.

use std::borrow::Cow;

use serde_json::value::RawValue;

/// A member that must be a string (`jsonrpc`, `method`), as read.
pub(super) enum Text<'a> {
    /// A string: borrowed when written without escapes.
    Str(Cow<'a, str>),
    /// Any other value but `null`.
    Other,
}

impl<'a> Text<'a> {
    /// From the raw pass's value.
    pub(super) fn of_raw(raw: &'a RawValue) -> Text<'a> {
        crate::jsonrpc::raw_json_str(raw).map_or(Text::Other, Text::Str)
    }

    /// The text of a string written without escapes.
    pub(super) fn plain(&self) -> Option<&'a str> {
        match self {
            Text::Str(Cow::Borrowed(text)) => Some(text),
            _ => None,
        }
    }
}

/// A [`Text`] read in the typed pass (`None`: `null`). Serde hands over a
/// string written without escapes borrowed from the body, as it is; any
/// other value is skipped.
pub(super) struct TextSeed;

impl<'de> serde::de::DeserializeSeed<'de> for TextSeed {
    type Value = Option<Text<'de>>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for TextSeed {
    type Value = Option<Text<'de>>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Text::Str(Cow::Borrowed(text))))
    }

    fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Some(Text::Str(Cow::Owned(text.to_owned()))))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Some(Text::Other))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Some(Text::Other))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Some(Text::Other))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Some(Text::Other))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Some(Text::Other))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
        Ok(Some(Text::Other))
    }
}
