//! Language tags (BCP 47, RFC 5646, in the form endpoints serve: a
//! language and optional subtags) and the ranges of an `Accept-Language`
//! value (RFC 9110 §12.5.4), matched as RFC 4647 lookup does: the
//! requested range as it is, then shorter and shorter, then any served tag
//! of the same language.

/// A language tag, checked and in canonical case (`en`, `uk`, `pt-BR`,
/// `zh-Hant-TW`): kept for the life of the process (each distinct tag
/// once), so headers carry it without copying.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LanguageTag(&'static str);

impl LanguageTag {
    /// `text` as a tag: a language of 2-3 or 5-8 letters, then subtags of
    /// 1-8 letters or digits, separated by `-` (at most 64 bytes); `None`
    /// otherwise.
    pub fn parse(text: &str) -> Option<LanguageTag> {
        if text.is_empty() || text.len() > 64 {
            return None;
        }
        let mut canonical = String::with_capacity(text.len());
        for (i, subtag) in text.split(['-', '_']).enumerate() {
            let alphanumeric = subtag.bytes().all(|b| b.is_ascii_alphanumeric());
            if subtag.is_empty() || subtag.len() > 8 || !alphanumeric {
                return None;
            }
            if i == 0 {
                let letters = subtag.bytes().all(|b| b.is_ascii_alphabetic());
                if !letters || subtag.len() == 4 || subtag.len() == 1 {
                    return None;
                }
                canonical.push_str(&subtag.to_ascii_lowercase());
                continue;
            }
            canonical.push('-');
            match subtag.len() {
                // A script: Titlecase.
                4 if subtag.bytes().all(|b| b.is_ascii_alphabetic()) => {
                    canonical.push_str(&subtag[..1].to_ascii_uppercase());
                    canonical.push_str(&subtag[1..].to_ascii_lowercase());
                }
                // A region: upper case.
                2 if subtag.bytes().all(|b| b.is_ascii_alphabetic()) => {
                    canonical.push_str(&subtag.to_ascii_uppercase())
                }
                _ => canonical.push_str(&subtag.to_ascii_lowercase()),
            }
        }
        Some(LanguageTag(interned(&canonical)))
    }

    /// The tag.
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// The language subtag (`pt` of `pt-BR`).
    pub fn language(self) -> &'static str {
        self.0.split('-').next().unwrap_or(self.0)
    }
}

impl std::fmt::Display for LanguageTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// `tag` for the life of the process, each distinct tag stored once (so
/// reading tags again leaks nothing).
fn interned(tag: &str) -> &'static str {
    static TAGS: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut tags = TAGS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = tags.iter().find(|t| **t == tag) {
        return known;
    }
    let leaked: &'static str = Box::leak(tag.to_owned().into_boxed_str());
    tags.push(leaked);
    leaked
}

/// Ranges of an `Accept-Language` value with their q-values, best first
/// (ties in the order written); ranges refused (`q=0`) or unreadable are
/// left out. At most the first 32 ranges are read.
pub(crate) fn accepted_ranges(value: &str) -> Vec<&str> {
    let mut ranges: Vec<(&str, f32)> = value
        .split(',')
        .take(32)
        .filter_map(|item| {
            let mut parts = item.split(';');
            let range = parts.next()?.trim();
            if range.is_empty() {
                return None;
            }
            let mut quality = 1.0f32;
            for param in parts {
                let (key, value) = param.split_once('=')?;
                if key.trim().eq_ignore_ascii_case("q") {
                    quality = value.trim().parse().ok()?;
                }
            }
            (quality.is_finite() && quality > 0.0).then_some((range, quality))
        })
        .collect();
    ranges.sort_by(|a, b| b.1.total_cmp(&a.1));
    ranges.into_iter().map(|(range, _)| range).collect()
}

/// The served tag `range` asks for: the same tag; else the range made
/// shorter subtag by subtag (`uk-UA` takes `uk`); else a served tag of the
/// same language (`de` takes `de-AT`). Case does not matter.
pub(crate) fn lookup(range: &str, served: &[LanguageTag]) -> Option<usize> {
    let requested = LanguageTag::parse(range)?;
    let mut candidate = requested.as_str();
    loop {
        if let Some(found) = served.iter().position(|t| t.as_str() == candidate) {
            return Some(found);
        }
        match candidate.rfind('-') {
            Some(end) => candidate = &candidate[..end],
            None => break,
        }
    }
    served.iter().position(|t| t.language() == requested.language())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_checked_and_canonical() {
        assert_eq!(LanguageTag::parse("en").map(LanguageTag::as_str), Some("en"));
        assert_eq!(LanguageTag::parse("PT-br").map(LanguageTag::as_str), Some("pt-BR"));
        assert_eq!(LanguageTag::parse("zh-hant-tw").map(LanguageTag::as_str), Some("zh-Hant-TW"));
        assert_eq!(LanguageTag::parse("de_AT").map(LanguageTag::as_str), Some("de-AT"));
        assert_eq!(LanguageTag::parse("es-419").map(LanguageTag::as_str), Some("es-419"));
        for bad in ["", "e", "englishlong-x", "en-", "-en", "e1", "en US", "en-toolongsub", "enus", "x"] {
            assert!(LanguageTag::parse(bad).is_none(), "{bad:?}");
        }
        assert!(LanguageTag::parse(&"a".repeat(100)).is_none());
        assert_eq!(LanguageTag::parse("uk"), LanguageTag::parse("UK"), "one interned tag");
    }

    #[test]
    fn ranges_by_quality() {
        assert_eq!(accepted_ranges("en;q=0.8, uk;q=0.9, *;q=0.1"), ["uk", "en", "*"]);
        assert_eq!(accepted_ranges("uk;q=0, en"), ["en"]);
        assert_eq!(accepted_ranges("uk;q=nan, en;q=x"), Vec::<&str>::new());
        assert_eq!(accepted_ranges(",,;;==q,"), Vec::<&str>::new());
        assert_eq!(accepted_ranges(&"en,".repeat(1000)).len(), 32, "bounded");
    }

    #[test]
    fn lookup_as_ranges_match() {
        let served: Vec<LanguageTag> = ["en", "uk", "de-AT"].iter().filter_map(|t| LanguageTag::parse(t)).collect();
        assert_eq!(lookup("uk-UA", &served), Some(1));
        assert_eq!(lookup("de", &served), Some(2));
        assert_eq!(lookup("DE-at", &served), Some(2));
        assert_eq!(lookup("fr", &served), None);
        assert_eq!(lookup("not a tag", &served), None);
    }
}
