//! The request headers the bundled endpoints read, found in one pass.
//!
//! A lookup by name hashes the name and probes the map: the endpoints read
//! `Host`, `Origin`, `Content-Type`, `Content-Length`, `Accept` and
//! `Accept-Language` of every request, six lookups. [`RequestHeaders::scan`]
//! visits each header once instead and keeps, for each of them, its first
//! value and whether there are more ([`Found`]), which is all the checks
//! need: a second `Host` or `Origin` is refused, a second `Accept` is read
//! with the first. An endpoint with headers of its own (MCP's) finds them
//! in the same pass with [`RequestHeaders::scan_with`].

use http::header::{ACCEPT, ACCEPT_LANGUAGE, CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderMap, HeaderName, HeaderValue};

/// One header as found: its first value, and whether it has more.
#[derive(Debug, Default, Clone, Copy)]
pub struct Found<'h> {
    /// The first value, `None` when the header is absent.
    pub first: Option<&'h HeaderValue>,
    /// Whether the header appears more than once.
    pub more: bool,
}

impl<'h> Found<'h> {
    /// Every value of `name` in `headers`, as a scan finds them (one lookup
    /// by name, for a caller without a [`RequestHeaders`]).
    pub fn of(headers: &'h HeaderMap, name: HeaderName) -> Self {
        let mut found = Found::default();
        headers.get_all(name).iter().for_each(|value| found.note(value));
        found
    }

    /// Counts one more value.
    pub fn note(&mut self, value: &'h HeaderValue) {
        if self.first.is_some() {
            self.more = true;
        } else {
            self.first = Some(value);
        }
    }

    /// The first value as text (`""` when it is not visible ASCII), as
    /// `HeaderMap::get(..).to_str()` would give it.
    pub fn text(&self) -> Option<&'h str> {
        self.first.map(|v| v.to_str().unwrap_or(""))
    }

    /// The only value: `None` when the header is absent or repeated.
    pub fn single(&self) -> Option<&'h HeaderValue> {
        self.first.filter(|_| !self.more)
    }
}

/// The headers of one request the endpoints read (see the module).
#[derive(Debug, Default, Clone, Copy)]
#[non_exhaustive]
pub struct RequestHeaders<'h> {
    /// `Host`.
    pub host: Found<'h>,
    /// `Origin`.
    pub origin: Found<'h>,
    /// `Content-Type`.
    pub content_type: Found<'h>,
    /// `Content-Length`.
    pub content_length: Found<'h>,
    /// `Accept`.
    pub accept: Found<'h>,
    /// `Accept-Language`.
    pub accept_language: Found<'h>,
}

impl<'h> RequestHeaders<'h> {
    /// Finds them in `headers`, every value of every header visited once.
    pub fn scan(headers: &'h HeaderMap) -> Self {
        Self::scan_with(headers, |_, _| {})
    }

    /// [`scan`](Self::scan), handing every other header to `other` in the
    /// same pass.
    pub fn scan_with(headers: &'h HeaderMap, mut other: impl FnMut(&'h HeaderName, &'h HeaderValue)) -> Self {
        let mut found = RequestHeaders::default();
        for (name, value) in headers {
            // Standard names compare as one small number each.
            let slot = if *name == HOST {
                &mut found.host
            } else if *name == CONTENT_TYPE {
                &mut found.content_type
            } else if *name == CONTENT_LENGTH {
                &mut found.content_length
            } else if *name == ACCEPT {
                &mut found.accept
            } else if *name == ORIGIN {
                &mut found.origin
            } else if *name == ACCEPT_LANGUAGE {
                &mut found.accept_language
            } else {
                other(name, value);
                continue;
            };
            slot.note(value);
        }
        found
    }

    /// The length `Content-Length` declares, when it is one number.
    pub fn declared_length(&self) -> Option<u64> {
        declared_length(self.content_length.first)
    }
}

/// The number a `Content-Length` value declares, if it is one.
pub(crate) fn declared_length(value: Option<&HeaderValue>) -> Option<u64> {
    value.and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok())
}

/// A header map of `pairs`, in order (repeated names appended), for tests.
#[cfg(test)]
pub(crate) fn header_map(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in pairs {
        headers.append(HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_str(value).unwrap());
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::header_map as map;

    #[test]
    fn finds_each_header_as_a_lookup_by_name_would() {
        let headers = map(&[
            ("host", "localhost:8080"),
            ("content-type", "application/json"),
            ("x-other", "1"),
            ("accept", "application/json"),
            ("accept", "text/event-stream"),
            ("content-length", "42"),
            ("accept-language", "de"),
            ("origin", "http://localhost"),
            ("mcp-method", "tools/call"),
        ]);
        let mut others = Vec::new();
        let found = RequestHeaders::scan_with(&headers, |name, value| others.push((name.clone(), value.clone())));
        for (slot, name) in [
            (Found::of(&headers, ACCEPT), ACCEPT),
            (Found::of(&headers, HeaderName::from_static("x-missing")), HeaderName::from_static("x-missing")),
            (found.host, HOST),
            (found.origin, ORIGIN),
            (found.content_type, CONTENT_TYPE),
            (found.content_length, CONTENT_LENGTH),
            (found.accept, ACCEPT),
            (found.accept_language, ACCEPT_LANGUAGE),
        ] {
            assert_eq!(slot.first, headers.get(&name), "{name}");
            assert_eq!(slot.more, headers.get_all(&name).iter().count() > 1, "{name}");
        }
        assert!(found.accept.more && found.accept.single().is_none());
        assert_eq!(found.declared_length(), Some(42));
        let others: Vec<_> = others.iter().map(|(n, v)| (n.as_str(), v.to_str().unwrap())).collect();
        assert_eq!(others, [("x-other", "1"), ("mcp-method", "tools/call")]);
    }

    #[test]
    fn an_absent_header_is_none_and_a_repeated_one_is_marked() {
        let empty = HeaderMap::new();
        let found = RequestHeaders::scan(&empty);
        assert!(found.host.first.is_none() && !found.host.more && found.host.text().is_none());
        let headers = map(&[("host", "a"), ("Host", "b"), ("origin", "x")]);
        let found = RequestHeaders::scan(&headers);
        assert_eq!(found.host.text(), Some("a"));
        assert!(found.host.more, "the second Host is seen");
        assert_eq!(found.origin.single().map(|v| v.as_bytes()), Some(&b"x"[..]));
        assert_eq!(found.declared_length(), None);
    }

    #[test]
    fn a_length_that_is_not_one_number_declares_nothing() {
        for text in ["", "x", "-1", "1 2", "99999999999999999999999"] {
            let headers = map(&[("content-length", text)]);
            assert_eq!(RequestHeaders::scan(&headers).declared_length(), None, "{text:?}");
        }
    }
}
