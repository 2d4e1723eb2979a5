//! Content negotiation for POSTed messages, lenient the way the official
//! SDKs are: clients that send no `Accept`, `*/*`, or only one of the two
//! media types the specification asks for are served.

use http::HeaderMap;
use http::header::{ACCEPT, CONTENT_TYPE};

/// How to answer a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseMode {
    /// `application/json`.
    Json,
    /// `text/event-stream` with one `message` event.
    Sse,
}

/// Which of the two media types `Accept` allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Accepted {
    /// `application/json`.
    pub json: bool,
    /// `text/event-stream`.
    pub sse: bool,
}

impl Accepted {
    /// How to answer a request that produces one message: JSON when
    /// acceptable, else SSE; `None` when neither is acceptable.
    pub fn single(self) -> Option<ResponseMode> {
        if self.json {
            Some(ResponseMode::Json)
        } else if self.sse {
            Some(ResponseMode::Sse)
        } else {
            None
        }
    }
}

/// Reads `Accept` (no header: JSON only; `*/*`: both).
pub fn accepted(headers: &HeaderMap) -> Accepted {
    let mut values = headers.get_all(ACCEPT).iter().filter_map(|v| v.to_str().ok()).peekable();
    match values.peek() {
        None => return Accepted { json: true, sse: false },
        // What the SDKs send, recognised without splitting.
        Some(&"application/json, text/event-stream" | &"text/event-stream, application/json") => {
            let _ = values.next();
            if values.peek().is_none() {
                return Accepted { json: true, sse: true };
            }
            return accepted_slow(headers);
        }
        Some(_) => {}
    }
    accepted_slow(headers)
}

fn accepted_slow(headers: &HeaderMap) -> Accepted {
    let values = headers.get_all(ACCEPT).iter().filter_map(|v| v.to_str().ok());
    let mut accepted = Accepted::default();
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
            accepted.sse = true;
        } else if is("application/json") || is("application/*") {
            accepted.json = true;
        } else if is("text/event-stream") || is("text/*") {
            accepted.sse = true;
        }
    }
    accepted
}

/// Whether the body's `Content-Type` is JSON (or absent, which lenient
/// clients do).
pub fn is_json_body(headers: &HeaderMap) -> bool {
    match headers.get(CONTENT_TYPE).map(|v| v.to_str()) {
        None => true,
        Some(Ok(v)) => {
            let media = v.split(';').next().unwrap_or("").trim();
            media.eq_ignore_ascii_case("application/json")
                || (media.len() >= 5 && media.as_bytes()[media.len() - 5..].eq_ignore_ascii_case(b"+json"))
        }
        Some(Err(_)) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn accept(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT, HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn accepted_types() {
        assert_eq!(accepted(&HeaderMap::new()), Accepted { json: true, sse: false });
        assert_eq!(accepted(&accept("application/json, text/event-stream")), Accepted { json: true, sse: true });
        assert_eq!(accepted(&accept("*/*")), Accepted { json: true, sse: true });
        assert_eq!(accepted(&accept("text/event-stream;q=0, application/json")), Accepted { json: true, sse: false });
        assert_eq!(accepted(&accept("text/html")).single(), None);
        assert_eq!(accepted(&accept("text/event-stream")).single(), Some(ResponseMode::Sse));
        assert_eq!(accepted(&accept("application/json;q=0, text/event-stream")), Accepted { json: false, sse: true });
        let mut twice = accept("application/json, text/event-stream");
        twice.append(ACCEPT, HeaderValue::from_static("application/json;q=0"));
        assert_eq!(accepted(&twice), Accepted { json: true, sse: true }, "a later value adds, never removes");
    }

    #[test]
    fn content_types() {
        let mut h = HeaderMap::new();
        assert!(is_json_body(&h));
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json; charset=utf-8"));
        assert!(is_json_body(&h));
        h.insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        assert!(!is_json_body(&h));
    }
}
