//! Content negotiation for POSTed messages, lenient the way the official
//! SDKs are: clients that send no `Accept`, `*/*`, or only one of the two
//! media types the specification asks for are served.

use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue};
use rpc::server::request_headers::Found;

use crate::server::Accepts;

/// Which of the two media types `Accept` allows: `application/json`
/// ([`Accepts::json`]) and `text/event-stream` ([`Accepts::stream`]); no
/// header: JSON only; `*/*`: both.
pub fn accepted(headers: &HeaderMap) -> Accepts {
    accepted_found(Found::of(headers, ACCEPT), headers)
}

/// [`accepted`] with the request's `Accept` as a scan found it (`headers`
/// are read again only for more than one value or a value of another shape).
pub(crate) fn accepted_found(accept: Found<'_>, headers: &HeaderMap) -> Accepts {
    match accept.first.map(HeaderValue::as_bytes) {
        None => Accepts { json: true, stream: false },
        // What the SDKs send, recognised by its bytes (visible ASCII, so
        // what `to_str` gives) without splitting.
        Some(b"application/json, text/event-stream" | b"text/event-stream, application/json") if !accept.more => {
            Accepts::BOTH
        }
        Some(_) => accepted_slow(headers),
    }
}

fn accepted_slow(headers: &HeaderMap) -> Accepts {
    let values = headers.get_all(ACCEPT).iter().filter_map(|v| v.to_str().ok());
    let mut accepted = Accepts::default();
    for range in values.flat_map(|v| v.split(',')) {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim();
        let is = |m: &str| media.eq_ignore_ascii_case(m);
        let refused = parts
            .any(|p| matches!(p.trim().strip_prefix("q="), Some(q) if q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0)));
        if refused {
            continue;
        }
        if is("*/*") || media.is_empty() {
            accepted.json = true;
            accepted.stream = true;
        } else if is("application/json") || is("application/*") {
            accepted.json = true;
        } else if is("text/event-stream") || is("text/*") {
            accepted.stream = true;
        }
    }
    accepted
}

/// Whether the body's `Content-Type` is JSON (or absent, which lenient
/// clients do).
pub fn is_json_body(headers: &HeaderMap) -> bool {
    is_json_content(headers.get(CONTENT_TYPE))
}

/// [`is_json_body`] of the request's first `Content-Type` value.
pub(crate) fn is_json_content(content_type: Option<&HeaderValue>) -> bool {
    let Some(value) = content_type else { return true };
    // What clients send, recognised by its bytes.
    if value.as_bytes() == b"application/json" {
        return true;
    }
    let Ok(value) = value.to_str() else { return false };
    let media = value.split(';').next().unwrap_or("").trim();
    media.eq_ignore_ascii_case("application/json")
        || (media.len() >= 5 && media.as_bytes()[media.len() - 5..].eq_ignore_ascii_case(b"+json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT, HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn accepted_types() {
        let both = Accepts::BOTH;
        assert_eq!(accepted(&HeaderMap::new()), Accepts { json: true, stream: false });
        assert_eq!(accepted(&accept("application/json, text/event-stream")), both);
        assert_eq!(accepted(&accept("*/*")), both);
        assert_eq!(accepted(&accept("text/event-stream;q=0, application/json")), Accepts { json: true, stream: false });
        assert!(!accepted(&accept("text/html")).any());
        assert_eq!(accepted(&accept("text/event-stream")), Accepts { json: false, stream: true });
        assert_eq!(accepted(&accept("application/json;q=0, text/event-stream")), Accepts { json: false, stream: true });
        let mut twice = accept("application/json, text/event-stream");
        twice.append(ACCEPT, HeaderValue::from_static("application/json;q=0"));
        assert_eq!(accepted(&twice), both, "a later value adds, never removes");
        let mut twice = accept("application/json, text/event-stream");
        twice.append(ACCEPT, HeaderValue::from_static("text/html"));
        assert_eq!(accepted(&twice), both, "the fast path's value read again with the others");
        assert_eq!(accepted(&accept("text/event-stream, application/json")), both);
    }

    #[test]
    fn content_types() {
        let mut h = HeaderMap::new();
        assert!(is_json_body(&h));
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json; charset=utf-8"));
        assert!(is_json_body(&h));
        h.insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        assert!(!is_json_body(&h));
        for json in ["application/json", "Application/JSON", "application/vnd.api+json"] {
            h.insert(CONTENT_TYPE, HeaderValue::from_static(json));
            assert!(is_json_body(&h), "{json}");
        }
        h.insert(CONTENT_TYPE, HeaderValue::from_bytes(b"application/json\xff").unwrap());
        assert!(!is_json_body(&h), "not text");
    }
}
