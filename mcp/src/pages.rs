//! List results serialised once: every page of `tools/list`,
//! `resources/list`, `resources/templates/list` and `prompts/list`, per
//! language and per protocol revision (written on the first request for
//! them, then served as they are), with opaque cursors.

use std::fmt;
use std::sync::{Arc, OnceLock};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use rpc::i18n::Language;
use serde_json::{Map, Value};

use crate::config::McpConfig;
use crate::protocol::ProtocolVersion;
use rpc::i18n::Translations;

/// What the lists of a group are written with: its translations and,
/// per language, the fields every 2026-07-28 list result carries. Shared
/// by the lists, which are written when first asked for.
#[derive(Debug, Default)]
pub struct ListTexts {
    /// The group.
    pub group: String,
    /// The translations.
    pub translations: Arc<Translations>,
    /// Per language, [`stateless_list_fields`](crate::tools::stateless_list_fields) with the server's identity in it.
    pub stateless_fields: Vec<Map<String, Value>>,
}

/// Writes the items of a list in a language at a protocol revision.
type Items = Box<dyn Fn(&ListTexts, Language, ProtocolVersion) -> Vec<Value> + Send + Sync>;

/// The pages of one list, per language (by [`Language`] index), per
/// protocol revision, each set serialised the first time it is asked for
/// (a server of a thousand tools starts without writing five revisions of
/// their list in every language; the first `tools/list` of a revision
/// writes its pages, every later one is served from those bytes).
pub struct Pages {
    key: &'static str,
    page_size: usize,
    texts: Arc<ListTexts>,
    languages: Vec<Language>,
    built: Vec<[OnceLock<Vec<Bytes>>; 5]>,
    items: Items,
    /// The list depends on who asks: 2026-07-28 pages say `cacheScope: private`.
    private: bool,
}

impl fmt::Debug for Pages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let built = self.built.iter().flatten().filter(|p| p.get().is_some()).count();
        f.debug_struct("Pages").field("key", &self.key).field("built", &built).finish_non_exhaustive()
    }
}

impl Default for Pages {
    /// A list of nothing in no language: every page is `None`.
    fn default() -> Self {
        Pages {
            key: "",
            page_size: 1,
            texts: Arc::default(),
            languages: Vec::new(),
            built: Vec::new(),
            items: Box::new(|_, _, _| Vec::new()),
            private: false,
        }
    }
}

impl Pages {
    /// The pages of the list under `key`, its items written by `items` for
    /// each language and revision when first asked for; 2026-07-28 pages
    /// carry the stateless list fields.
    pub fn build(
        key: &'static str,
        texts: &Arc<ListTexts>,
        config: &McpConfig,
        items: impl Fn(&ListTexts, Language, ProtocolVersion) -> Vec<Value> + Send + Sync + 'static,
    ) -> Pages {
        let languages: Vec<Language> = texts.translations.all().collect();
        Pages {
            key,
            page_size: config.page_size.max(1),
            texts: Arc::clone(texts),
            built: languages.iter().map(|_| Default::default()).collect(),
            languages,
            items: Box::new(items),
            private: false,
        }
    }

    /// The pages of a list that depends on who asks (2026-07-28
    /// `cacheScope: private`, whatever the endpoint's default).
    pub fn private(mut self) -> Pages {
        self.private = true;
        self
    }

    /// The page for `cursor` (`None`: the first), or `None` for an invalid cursor.
    pub fn get(&self, language: Language, version: ProtocolVersion, cursor: Option<&str>) -> Option<&Bytes> {
        let slot = if language.index() < self.built.len() { language.index() } else { 0 };
        let language = *self.languages.get(slot)?;
        let pages = self.built.get(slot)?[version.index()].get_or_init(|| {
            let texts = &*self.texts;
            let extra = version.is_stateless().then(|| texts.stateless_fields.get(language.index())).flatten();
            let private = self.private.then(|| {
                let mut fields = extra.cloned().unwrap_or_default();
                fields.insert("cacheScope".into(), Value::from(crate::config::CacheScope::Private.as_str()));
                fields
            });
            let extra = if version.is_stateless() { private.as_ref().or(extra) } else { None };
            paginate(self.key, (self.items)(texts, language, version), self.page_size, extra)
        });
        let index = match cursor {
            None => 0,
            Some(cursor) => decode_cursor(cursor).filter(|i| *i > 0 && *i < pages.len())?,
        };
        pages.get(index)
    }
}

/// The pages of a list result: `{key: [...], "nextCursor"?: ...}` plus `extra`.
/// Each item is serialised once and the pages are put together from those
/// bytes (the same bytes as serialising each page's object: a list of a
/// thousand tools in five revisions is built at start-up).
fn paginate(key: &str, objects: Vec<Value>, page_size: usize, extra: Option<&Map<String, Value>>) -> Vec<Bytes> {
    let items: Vec<Vec<u8>> = objects.iter().map(|o| serde_json::to_vec(o).unwrap_or_default()).collect();
    let tail = extra.map(|extra| {
        let object = serde_json::to_vec(extra).unwrap_or_default();
        // `{"a":1,...}` without its braces, after a comma.
        object.get(1..object.len().saturating_sub(1)).unwrap_or_default().to_vec()
    });
    let chunks: Vec<&[Vec<u8>]> = if items.is_empty() { vec![&[][..]] } else { items.chunks(page_size).collect() };
    let count = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let size = chunk.iter().map(|item| item.len() + 1).sum::<usize>() + key.len() + 64;
            let mut page = Vec::with_capacity(size + tail.as_ref().map_or(0, Vec::len));
            page.push(b'{');
            serde_json::to_writer(&mut page, key).unwrap_or_default();
            page.extend_from_slice(b":[");
            for (n, item) in chunk.iter().enumerate() {
                if n > 0 {
                    page.push(b',');
                }
                page.extend_from_slice(item);
            }
            page.push(b']');
            if i + 1 < count {
                page.extend_from_slice(b",\"nextCursor\":");
                serde_json::to_writer(&mut page, &encode_cursor(i + 1)).unwrap_or_default();
            }
            if let Some(tail) = tail.as_ref().filter(|t| !t.is_empty()) {
                page.push(b',');
                page.extend_from_slice(tail);
            }
            page.push(b'}');
            Bytes::from(page)
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

    #[test]
    fn pages_are_written_on_their_first_request_only() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let written = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&written);
        let texts = Arc::new(ListTexts::default());
        let mut config = McpConfig::new(crate::server_info::ServerInfo::new("t", "1"));
        config.page_size = 2;
        let pages = Pages::build("tools", &texts, &config, move |_, _, version| {
            counter.fetch_add(1, Ordering::Relaxed);
            (0..3).map(|i| json!({"n": i, "v": version.as_str()})).collect()
        });
        assert_eq!(written.load(Ordering::Relaxed), 0, "nothing is written at start-up");
        let first = pages.get(Language::DEFAULT, ProtocolVersion::V2025_11_25, None).unwrap().clone();
        let cursor = serde_json::from_slice::<Value>(&first).unwrap()["nextCursor"].as_str().unwrap().to_owned();
        assert!(pages.get(Language::DEFAULT, ProtocolVersion::V2025_11_25, Some(&cursor)).is_some());
        assert!(pages.get(Language::DEFAULT, ProtocolVersion::V2025_11_25, Some("nope")).is_none());
        assert_eq!(written.load(Ordering::Relaxed), 1, "one revision written once, all its pages");
        pages.get(Language::DEFAULT, ProtocolVersion::V2024_11_05, None).unwrap();
        assert_eq!(written.load(Ordering::Relaxed), 2);
        assert!(format!("{pages:?}").contains("built: 2"));
    }

    #[test]
    fn pages_are_the_bytes_of_their_objects() {
        let mut extra = Map::new();
        extra.insert("ttlMs".into(), json!(5));
        extra.insert("_meta".into(), json!({"a": "\"q\"", "b": [1, 2]}));
        let items: Vec<Value> = (0..5).map(|i| json!({"name": format!("t{i}"), "x": {"y": [i, "é\n"]}})).collect();
        for extra in [None, Some(&extra), Some(&Map::new())] {
            let pages = paginate("tools", items.clone(), 2, extra);
            for (i, page) in pages.iter().enumerate() {
                let mut object = Map::new();
                object.insert("tools".into(), Value::Array(items.chunks(2).nth(i).unwrap().to_vec()));
                if i + 1 < pages.len() {
                    object.insert("nextCursor".into(), Value::String(encode_cursor(i + 1)));
                }
                object.extend(extra.cloned().unwrap_or_default());
                assert_eq!(page, &serde_json::to_vec(&Value::Object(object)).unwrap(), "page {i}");
            }
        }
        assert_eq!(&paginate("tools", vec![], 2, None)[0][..], br#"{"tools":[]}"#);
    }
}
