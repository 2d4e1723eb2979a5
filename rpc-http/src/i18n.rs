//! Languages over HTTP: the request's language from its `Accept-Language`
//! header, and the response's `Content-Language` and `Vary`
//! ([`LanguageHeaders`], implemented for [`Translations`]).

use http::header::{ACCEPT_LANGUAGE, CONTENT_LANGUAGE, CONTENT_TYPE, VARY};
use http::{HeaderMap, HeaderValue};
use rpc_core::i18n::{Language, Translations};

use crate::server::request_headers::Found;

/// Longer `Accept-Language` values are not read (the default language):
/// browsers send a few dozen bytes.
const MAX_HEADER: usize = 512;

/// The language headers of HTTP requests and responses.
pub trait LanguageHeaders {
    /// The language to answer a request with `headers` in.
    fn negotiate(&self, headers: &HeaderMap) -> Language {
        self.negotiate_found(Found::of(headers, ACCEPT_LANGUAGE))
    }

    /// [`negotiate`](Self::negotiate) with the request's `Accept-Language`
    /// as [`RequestHeaders::scan`](crate::server::request_headers::RequestHeaders::scan)
    /// found it.
    fn negotiate_found(&self, accept_language: Found<'_>) -> Language;

    /// Says in `headers` (a response's) which language it is in:
    /// `Content-Language` and `Vary: Accept-Language`, once translation
    /// files are configured (the code's own texts claim no language).
    fn mark_response(&self, headers: &mut HeaderMap, language: Language);
}

impl LanguageHeaders for Translations {
    fn negotiate_found(&self, accept_language: Found<'_>) -> Language {
        if self.languages().len() < 2 {
            return Language::DEFAULT;
        }
        // Two values are read as none: the default language.
        let Some(value) = accept_language.single() else { return Language::DEFAULT };
        match value.to_str() {
            Ok(text) if text.len() <= MAX_HEADER => self.negotiate_value(text),
            _ => Language::DEFAULT,
        }
    }

    fn mark_response(&self, headers: &mut HeaderMap, language: Language) {
        if self.is_configured() {
            headers.insert(CONTENT_LANGUAGE, HeaderValue::from_static(self.static_tag(language)));
            headers.append(VARY, HeaderValue::from_static("accept-language"));
        }
    }
}

/// The headers of a JSON response in each language a service answers in:
/// `Content-Type: application/json`, and, once translation files are
/// configured, `Content-Language` and `Vary: Accept-Language` (what
/// [`LanguageHeaders::mark_response`] adds). Built once; a response takes a
/// copy of its language's, where inserting them one by one hashes each
/// name and probes the map.
#[derive(Debug, Clone)]
pub struct JsonHeaders {
    /// By [`Language`] index.
    by_language: Vec<HeaderMap>,
    /// The default language's, for a language index not served.
    default: HeaderMap,
}

impl JsonHeaders {
    /// The headers for every language of `translations`.
    pub fn new(translations: &Translations) -> Self {
        let build = |language| {
            let mut headers = HeaderMap::new();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            translations.mark_response(&mut headers, language);
            headers
        };
        JsonHeaders { by_language: translations.all().map(build).collect(), default: build(Language::DEFAULT) }
    }

    /// The headers of a JSON response in `language`.
    pub fn get(&self, language: Language) -> &HeaderMap {
        self.by_language.get(language.index()).unwrap_or(&self.default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_headers_are_what_marking_a_json_response_gives() {
        for translations in [Translations::none(), translations(&["uk", "de"])] {
            let prebuilt = JsonHeaders::new(&translations);
            for language in translations.all().chain([Language::DEFAULT]) {
                let mut marked = HeaderMap::new();
                marked.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                translations.mark_response(&mut marked, language);
                assert_eq!(prebuilt.get(language), &marked, "{}", translations.tag(language));
            }
        }
        // (With translation files, `tests/tests/i18n.rs` checks the MCP
        // endpoint's answers, which take these headers, language by language.)
    }

    fn translations(languages: &[&str]) -> Translations {
        let mut t = Translations::none();
        for l in languages {
            t = t.with_default_language(l).unwrap();
        }
        t.with_default_language("en").unwrap()
    }

    #[test]
    fn headers() {
        let t = translations(&["uk"]);
        let mut headers = HeaderMap::new();
        assert_eq!(t.negotiate(&headers), Language::DEFAULT);
        headers.insert(ACCEPT_LANGUAGE, "uk".parse().unwrap());
        assert_eq!(t.tag(t.negotiate(&headers)), "uk");
        headers.append(ACCEPT_LANGUAGE, "en".parse().unwrap());
        assert_eq!(t.negotiate(&headers), Language::DEFAULT, "two headers: the default");
        headers.insert(ACCEPT_LANGUAGE, format!("uk, {}", "x".repeat(600)).parse().unwrap());
        assert_eq!(t.negotiate(&headers), Language::DEFAULT, "an oversized header is not read");
    }

    #[test]
    fn content_language_only_with_files() {
        let t = translations(&["uk"]);
        let mut headers = HeaderMap::new();
        t.mark_response(&mut headers, Language::DEFAULT);
        assert!(headers.get(CONTENT_LANGUAGE).is_none(), "the code's own texts claim no language");
    }
}
