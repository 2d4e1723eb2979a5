//! Which representation a `GET` asks for: the HTML page (a browser) or
//! JSON (everything else).

use http::HeaderMap;
use http::header::ACCEPT;

/// The quality `Accept` gives to `media` (`type/subtype`, lowercase): the
/// `q` of the most specific matching range (`type/subtype`, then `type/*`,
/// then `*/*`), `0` when none matches.
fn quality(headers: &HeaderMap, media: &str) -> f32 {
    let (kind, _) = media.split_once('/').unwrap_or((media, ""));
    // (specificity, quality) of the best match so far.
    let mut best: Option<(u8, f32)> = None;
    let values = headers.get_all(ACCEPT).iter().filter_map(|v| v.to_str().ok());
    for range in values.flat_map(|v| v.split(',')) {
        let mut parts = range.split(';');
        let name = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let specificity = if name == media {
            3
        } else if name.strip_suffix("/*") == Some(kind) {
            2
        } else if name == "*/*" {
            1
        } else {
            continue;
        };
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q=").or_else(|| p.trim().strip_prefix("Q=")))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .filter(|q| q.is_finite())
            .map_or(1.0, |q| q.clamp(0.0, 1.0));
        if best.is_none_or(|(s, _)| specificity > s) {
            best = Some((specificity, q));
        }
    }
    best.map_or(0.0, |(_, q)| q)
}

/// Whether a request's `Accept` prefers `text/html` to `application/json`:
/// a browser's `text/html,application/xhtml+xml,...,*/*;q=0.8` does; no
/// `Accept`, `*/*`, `application/json` or a tie do not (they get JSON, as
/// API clients always have).
pub fn prefers_html(headers: &HeaderMap) -> bool {
    let html = quality(headers, "text/html");
    html > 0.0 && html > quality(headers, "application/json")
}

/// Whether `Accept` names `text/event-stream` itself (with `q > 0`): a
/// client asking for an event stream, never a browser tab.
pub fn asks_for_event_stream(headers: &HeaderMap) -> bool {
    let values = headers.get_all(ACCEPT).iter().filter_map(|v| v.to_str().ok());
    values.flat_map(|v| v.split(',')).any(|range| {
        let mut parts = range.split(';');
        let named = parts.next().unwrap_or("").trim().eq_ignore_ascii_case("text/event-stream");
        named
            && !parts
                .any(|p| p.trim().strip_prefix("q=").is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn accept(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(ACCEPT, HeaderValue::from_str(v).unwrap());
        }
        headers
    }

    #[test]
    fn browsers_get_html_api_clients_json() {
        let firefox = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
        let chrome = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7";
        assert!(prefers_html(&accept(&[firefox])));
        assert!(prefers_html(&accept(&[chrome])));
        assert!(prefers_html(&accept(&["text/html"])));
        assert!(prefers_html(&accept(&["text/*, application/json;q=0.5"])));
        assert!(prefers_html(&accept(&["application/json;q=0.2", "text/html"])), "values add up");
        for json in [
            "",
            "*/*",
            "application/json",
            "application/json, text/html",
            "text/html;q=0.5, application/json",
            "text/html;q=0, */*",
            "text/html;q=nope, application/json",
            "TEXT/HTML;q=0.9, application/*",
            "text/plain",
        ] {
            assert!(!prefers_html(&accept(&[json])), "{json}");
        }
        assert!(!prefers_html(&HeaderMap::new()));
        assert!(prefers_html(&accept(&["Text/HTML, application/json;q=0.9"])), "names are case-insensitive");
    }

    #[test]
    fn event_streams() {
        assert!(asks_for_event_stream(&accept(&["application/json, text/event-stream"])));
        assert!(asks_for_event_stream(&accept(&["text/html", "text/event-stream;q=0.1"])));
        assert!(!asks_for_event_stream(&accept(&["text/html,*/*;q=0.8"])));
        assert!(!asks_for_event_stream(&accept(&["text/event-stream;q=0, text/html"])));
    }
}
