//! The language an `Accept-Language` value asks for (transports read the
//! header; see `rpc_http::i18n` for HTTP).
//!
//! The ranges are read in order of their q-values (a q of 0 refuses a
//! range) and matched against the languages that have files, as language
//! ranges match ([`tag`](super::tag): `en-US` takes `en`, `de` takes
//! `de-AT`). `*` stands for any language: the default. Without a header, or
//! when nothing matches, the default language.

use super::tag::{accepted_ranges, lookup};
use super::{Language, Translations};

impl Translations {
    /// The language an `Accept-Language` value asks for.
    pub fn negotiate_value(&self, accept_language: &str) -> Language {
        let available = self.languages();
        for range in accepted_ranges(accept_language) {
            if range == "*" {
                return Language::DEFAULT;
            }
            if let Some(found) = lookup(range, available) {
                return Language(found);
            }
        }
        Language::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn translations(languages: &[&str]) -> Translations {
        let mut t = Translations::none();
        for l in languages {
            t = t.with_default_language(l).unwrap();
        }
        t.with_default_language("en").unwrap()
    }

    #[test]
    fn q_values_ranges_and_wildcards() {
        let t = translations(&["uk", "de-AT"]);
        let tag = |header: &str| t.tag(t.negotiate_value(header)).to_owned();
        assert_eq!(tag("uk;q=0.9, en;q=0.8"), "uk");
        assert_eq!(tag("en;q=0.8, uk;q=0.9"), "uk", "by q-value, not by position");
        assert_eq!(tag("uk-UA"), "uk", "a more specific range takes the language");
        assert_eq!(tag("de"), "de-AT");
        assert_eq!(tag("fr"), "en", "nothing matches: the default");
        assert_eq!(tag("*"), "en");
        assert_eq!(tag("fr, *;q=0.5, uk;q=0.1"), "en", "* before uk");
        assert_eq!(tag("uk;q=0, en;q=0.1"), "en", "q=0 refuses");
        assert_eq!(tag("uk;q=nan"), "en");
        assert_eq!(tag(""), "en");
        assert_eq!(tag(",,;;==q,"), "en");
        assert_eq!(tag("UK"), "uk", "case-insensitive");
    }
}
