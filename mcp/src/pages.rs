//! List results serialised ahead of time: every page of `tools/list`,
//! `resources/list`, `resources/templates/list` and `prompts/list`, per
//! language and per protocol revision, with opaque cursors.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use rpc::i18n::Language;
use serde_json::{Map, Value};

use crate::config::McpConfig;
use crate::protocol::ProtocolVersion;
use rpc::i18n::Translations;

/// What the lists of a group are written with: its translations and,
/// per language, the fields every 2026-07-28 list result carries.
#[derive(Debug)]
pub struct ListTexts<'a> {
    /// The group.
    pub group: &'a str,
    /// The translations.
    pub translations: &'a Translations,
    /// Per language, [`stateless_list_fields`](crate::tools::stateless_list_fields) with the server's identity in it.
    pub stateless_fields: Vec<Map<String, Value>>,
}

/// The pages of one list, per language (by [`Language`] index), per
/// protocol revision.
#[derive(Debug, Default)]
pub struct Pages(Vec<[Vec<Bytes>; 5]>);

impl Pages {
    /// The pages of the list under `key`, its items written by `items` for
    /// each language and revision; 2026-07-28 pages carry the stateless
    /// list fields.
    pub fn build(
        key: &str,
        texts: &ListTexts<'_>,
        config: &McpConfig,
        mut items: impl FnMut(Language, ProtocolVersion) -> Vec<Value>,
    ) -> Pages {
        let pages = texts
            .translations
            .all()
            .map(|language| {
                ProtocolVersion::ALL.map(|version| {
                    let extra = version.is_stateless().then(|| texts.stateless_fields.get(language.index())).flatten();
                    paginate(key, items(language, version), config.page_size.max(1), extra)
                })
            })
            .collect();
        Pages(pages)
    }

    /// The page for `cursor` (`None`: the first), or `None` for an invalid cursor.
    pub fn get(&self, language: Language, version: ProtocolVersion, cursor: Option<&str>) -> Option<&Bytes> {
        let pages = &self.0.get(language.index()).or_else(|| self.0.first())?[version.index()];
        let index = match cursor {
            None => 0,
            Some(cursor) => decode_cursor(cursor).filter(|i| *i > 0 && *i < pages.len())?,
        };
        pages.get(index)
    }
}

/// The pages of a list result: `{key: [...], "nextCursor"?: ...}` plus `extra`.
fn paginate(key: &str, objects: Vec<Value>, page_size: usize, extra: Option<&Map<String, Value>>) -> Vec<Bytes> {
    let chunks: Vec<&[Value]> = if objects.is_empty() { vec![&[][..]] } else { objects.chunks(page_size).collect() };
    let count = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let mut result = Map::new();
            result.insert(key.into(), Value::Array(chunk.to_vec()));
            if i + 1 < count {
                result.insert("nextCursor".into(), Value::String(encode_cursor(i + 1)));
            }
            if let Some(extra) = extra {
                result.extend(extra.clone());
            }
            Bytes::from(serde_json::to_vec(&Value::Object(result)).unwrap_or_default())
        })
        .collect()
}

fn encode_cursor(page: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("page:{page}"))
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    std::str::from_utf8(&bytes).ok()?.strip_prefix("page:")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn cursors_round_trip() {
        assert_eq!(decode_cursor(&encode_cursor(3)), Some(3));
        assert_eq!(decode_cursor("nope!"), None);
        assert_eq!(decode_cursor(""), None);
    }

    #[test]
    fn paginates() {
        let pages = paginate("tools", (0..5).map(|i| json!(i)).collect(), 2, None);
        assert_eq!(pages.len(), 3);
        let last: Value = serde_json::from_slice(&pages[2]).unwrap();
        assert!(last.get("nextCursor").is_none());
        let first: Value = serde_json::from_slice(&pages[0]).unwrap();
        assert_eq!(decode_cursor(first["nextCursor"].as_str().unwrap()), Some(1));
        assert_eq!(paginate("tools", vec![], 2, None).len(), 1);
        let mut extra = Map::new();
        extra.insert("ttlMs".into(), json!(5));
        let with: Value = serde_json::from_slice(&paginate("prompts", vec![json!(1)], 2, Some(&extra))[0]).unwrap();
        assert_eq!(with, json!({"prompts": [1], "ttlMs": 5}));
    }
}
