//! What a session (or a 2026-07-28 request whose `_meta` is large) keeps of
//! the client's declared capabilities: the names a tool can require.

use std::borrow::Cow;

use serde::Deserialize;

/// Client capability names kept: the ones a tool can require (`requires_client(..)`,
/// checked at compile time against the same list in `rpc-macros`).
pub(crate) const KNOWN_CAPABILITIES: &[&str] = &["sampling", "elicitation", "roots", "experimental"];

/// The names in `capabilities` that are in [`KNOWN_CAPABILITIES`]; the
/// rest of the object is skipped without being built.
pub(crate) struct KnownCapabilities(pub(crate) Vec<&'static str>);

impl<'de> Deserialize<'de> for KnownCapabilities {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Names;
        impl<'de> serde::de::Visitor<'de> for Names {
            type Value = KnownCapabilities;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of capabilities")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = map.next_key::<Cow<'de, str>>()? {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    if let Some(known) = KNOWN_CAPABILITIES.iter().find(|k| **k == name)
                        && !names.contains(known)
                    {
                        names.push(*known);
                    }
                }
                Ok(KnownCapabilities(names))
            }
        }
        deserializer.deserialize_map(Names)
    }
}
