//! Small routing helpers shared by the endpoints.

use http::{Request, Uri};

/// The URI a request had before a [`Router`](super::Router) stripped its
/// mount prefix; stored in the request extensions.
#[derive(Debug, Clone)]
pub struct OriginalUri(pub Uri);

/// Reads the API version from the path below an endpoint's mount point:
/// `""` or `"/"` is version 1, `"/v2"` (or `"/v2/"`) is version 2.
/// `None` for anything else.
pub fn version_from_path(path: &str) -> Option<u32> {
    let rest = path.trim_end_matches('/');
    if rest.is_empty() {
        return Some(1);
    }
    let digits = rest.strip_prefix("/v")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0') {
        return None;
    }
    digits.parse().ok()
}

/// The request target the client sent, before any router stripped a mount
/// prefix: from this crate's [`Router`](super::Router) ([`OriginalUri`]),
/// from axum's `nest_service` (with the `axum` feature), or the request's own.
/// Its authority (HTTP/2 `:authority`, an absolute-form target) is kept.
pub fn original_uri<B>(request: &Request<B>) -> &Uri {
    original_uri_of(request.uri(), request.extensions())
}

/// [`original_uri`] from a request's parts.
pub fn original_uri_of<'a>(uri: &'a Uri, extensions: &'a http::Extensions) -> &'a Uri {
    if let Some(original) = extensions.get::<OriginalUri>() {
        return &original.0;
    }
    #[cfg(feature = "axum")]
    if let Some(original) = extensions.get::<axum::extract::OriginalUri>() {
        return &original.0;
    }
    uri
}

/// The path the client asked for, before any router stripped a mount prefix.
pub fn original_path<B>(request: &Request<B>) -> &str {
    original_uri(request).path()
}

/// The public URL of the request: `X-Forwarded-Proto` (or http), the
/// `Host` header and the original path.
pub fn public_url<B>(request: &Request<B>) -> String {
    let path = original_path(request).to_owned();
    let headers = request.headers();
    let host = headers
        .get(http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| request.uri().authority().map(|a| a.as_str()));
    let scheme = headers.get("x-forwarded-proto").and_then(|h| h.to_str().ok()).unwrap_or("http");
    match host {
        Some(host) => format!("{scheme}://{host}{path}"),
        None => path,
    }
}

#[cfg(test)]
mod tests {
    use super::version_from_path;

    #[test]
    fn versions() {
        assert_eq!(version_from_path(""), Some(1));
        assert_eq!(version_from_path("/"), Some(1));
        assert_eq!(version_from_path("/v2"), Some(2));
        assert_eq!(version_from_path("/v12/"), Some(12));
        assert_eq!(version_from_path("/v"), None);
        assert_eq!(version_from_path("/v01"), None);
        assert_eq!(version_from_path("/x2"), None);
        assert_eq!(version_from_path("/v2/extra"), None);
        assert_eq!(version_from_path("/v99999999999"), None);
    }
}
