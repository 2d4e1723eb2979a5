//! Finding a field in a serialised result without building it: each
//! level is read as borrowed members, the others skipped unread.

use std::fmt;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// The value at `path` (names and array indexes separated by dots; empty:
/// `result` itself) in the serialised `result`, found without building it.
pub fn field<'r>(result: &'r RawValue, path: &str) -> Option<&'r RawValue> {
    let mut current = result;
    if path.is_empty() {
        return Some(current);
    }
    for name in path.split('.') {
        let text = current.get().trim_start();
        let mut de = serde_json::Deserializer::from_str(text);
        current = match text.as_bytes().first()? {
            b'{' => Member(name).deserialize(&mut de).ok()??,
            b'[' => {
                let canonical = name.bytes().all(|b| b.is_ascii_digit()) && (name == "0" || !name.starts_with('0'));
                let index: usize = name.parse().ok().filter(|_| canonical)?;
                Item(index).deserialize(&mut de).ok()??
            }
            _ => return None,
        };
    }
    Some(current)
}

/// Finds a member of an object, leaving the others unread.
struct Member<'n>(&'n str);

impl<'de> DeserializeSeed<'de> for Member<'_> {
    type Value = Option<&'de RawValue>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Member<'_> {
    type Value = Option<&'de RawValue>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(is) = map.next_key_seed(NameIs(self.0))? {
            if is && found.is_none() {
                found = Some(map.next_value::<&'de RawValue>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// Whether a member name is this one (escaped or not).
struct NameIs<'n>(&'n str);

impl<'de> DeserializeSeed<'de> for NameIs<'_> {
    type Value = bool;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for NameIs<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }
    fn visit_str<E>(self, name: &str) -> Result<bool, E> {
        Ok(name == self.0)
    }
}

/// Finds an item of an array, leaving the others unread.
struct Item(usize);

impl<'de> DeserializeSeed<'de> for Item {
    type Value = Option<&'de RawValue>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Item {
    type Value = Option<&'de RawValue>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        let mut i = 0;
        loop {
            if i == self.0 {
                match seq.next_element::<&'de RawValue>()? {
                    Some(value) => found = Some(value),
                    None => break,
                }
            } else if seq.next_element::<IgnoredAny>()?.is_none() {
                break;
            }
            i += 1;
        }
        Ok(found)
    }
}
