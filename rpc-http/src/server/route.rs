//! Small routing helpers shared by the endpoints.

use std::any::Any;

use http::{Request, Uri};

use super::connection::Connection;

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

/// Splits the path below an endpoint's mount point into the API version
/// and the name of a document below it: `"/v2"` is `(2, "")`, `"/postman"`
/// is `(1, "postman")`, `"/v2/postman"` is `(2, "postman")`. The name is
/// one segment of `a-z 0-9 . _ -`; `None` for anything else (the version
/// part is read by [`version_from_path`], which stays strict).
pub fn version_and_document(path: &str) -> Option<(u32, &str)> {
    if let Some(version) = version_from_path(path) {
        return Some((version, ""));
    }
    let rest = path.strip_suffix('/').unwrap_or(path);
    let (prefix, name) = rest.rsplit_once('/')?;
    let valid = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-');
    if name.is_empty() || name.len() > 64 || !name.bytes().all(valid) || name.starts_with('.') {
        return None;
    }
    let version = if prefix.is_empty() { 1 } else { version_from_path(prefix).filter(|_| prefix != "/")? };
    Some((version, name))
}

/// The path an endpoint is mounted at, from the path the client asked for
/// (`original`) and the path below the mount point (`inner`): `/rpc` for
/// `/rpc/v2/postman` and `/v2/postman`. `original` itself when they do not fit.
pub fn mount_path<'a>(original: &'a str, inner: &str) -> &'a str {
    let inner = inner.trim_end_matches('/');
    let original_trimmed = original.trim_end_matches('/');
    original_trimmed.strip_suffix(inner).unwrap_or(original_trimmed)
}

/// The request target the client sent, before any router stripped a mount
/// prefix: from this crate's [`Router`](super::Router) (as [`OriginalUri`]
/// for a service whose target it rewrote; it leaves the target of a
/// service that reads its routed body as it is), from axum's
/// `nest_service` (with the `axum` feature), or the request's own. Its
/// authority (HTTP/2 `:authority`, an absolute-form target) is kept.
pub fn original_uri<B>(request: &Request<B>) -> &Uri {
    original_uri_of(request.uri(), request.extensions())
}

/// The path of the request below the point where the service it reached
/// is mounted: for a service that reads its routed body (see
/// [`reads_routed_body`](super::request_body::reads_routed_body)), whose
/// target a [`Router`](super::Router) leaves as the client sent it, the
/// part after the mount prefixes (`/` when nothing is left); for any other
/// service, the request's own path (a router rewrote it).
pub fn inner_path<B: 'static>(request: &Request<B>) -> &str {
    inner_path_from(request.uri(), request.body())
}

/// [`inner_path`] of a request split into its target and its body.
pub fn inner_path_from<'a, B: 'static>(uri: &'a Uri, body: &B) -> &'a str {
    match (body as &dyn Any).downcast_ref::<super::RequestBody>().map(super::RequestBody::mount) {
        Some(mount) if mount > 0 => below(uri.path(), mount),
        _ => uri.path(),
    }
}

/// The part of `path` below a mount prefix `mount` bytes long: `/` when
/// nothing is left.
pub(crate) fn below(path: &str, mount: usize) -> &str {
    match path.get(mount..) {
        Some("") | None => "/",
        Some(rest) => rest,
    }
}

/// [`original_uri`] from a request's target and extensions.
pub fn original_uri_of<'a>(uri: &'a Uri, extensions: &'a http::Extensions) -> &'a Uri {
    mounted_uri(extensions).unwrap_or(uri)
}

/// The connection a request came on (see [`Connection`]): carried in its
/// body by the router ([`RequestBody`](super::RequestBody)) or the runner
/// for a service that declared
/// [`reads_routed_body`](super::request_body::reads_routed_body), else in
/// its extensions; `None` for a request the bundled runner did not accept.
pub fn connection_of<'a, B: 'static>(extensions: &'a http::Extensions, body: &'a B) -> Option<&'a Connection> {
    let body = body as &dyn Any;
    if let Some(routed) = body.downcast_ref::<super::RequestBody>().and_then(super::RequestBody::connection) {
        return Some(routed);
    }
    #[cfg(feature = "server")]
    if let Some(incoming) = body.downcast_ref::<super::IncomingBody>().and_then(super::IncomingBody::connection) {
        return Some(incoming);
    }
    extensions.get::<Connection>()
}

/// The target a router that mounted this request recorded in its
/// extensions (this crate's [`OriginalUri`], or axum's with the `axum`
/// feature), if any.
pub fn mounted_uri(extensions: &http::Extensions) -> Option<&Uri> {
    if let Some(original) = extensions.get::<OriginalUri>() {
        return Some(&original.0);
    }
    #[cfg(feature = "axum")]
    if let Some(original) = extensions.get::<axum::extract::OriginalUri>() {
        return Some(&original.0);
    }
    None
}

/// The path the client asked for, before any router stripped a mount prefix.
pub fn original_path<B>(request: &Request<B>) -> &str {
    original_uri(request).path()
}

/// A public base URL from configuration (`https://api.example.com`,
/// optionally with a path prefix): `http` or `https`, a host, an optional
/// port and path, nothing else (no user info, query or fragment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl(String);

/// A text that is not an `http(s)://host[:port][/path]` base URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidPublicUrl(String);

impl std::fmt::Display for InvalidPublicUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` is not an http(s) base URL (scheme://host[:port][/path])", self.0.escape_default())
    }
}

impl std::error::Error for InvalidPublicUrl {}

impl PublicUrl {
    /// Checks `base`.
    pub fn parse(base: &str) -> Result<Self, InvalidPublicUrl> {
        let invalid = || InvalidPublicUrl(base.chars().take(100).collect());
        let uri: Uri = base.parse().map_err(|_| invalid())?;
        let scheme_ok = matches!(uri.scheme_str(), Some("http" | "https"));
        let authority_ok = uri.authority().is_some_and(|a| !a.as_str().contains('@') && !a.host().is_empty());
        if !scheme_ok || !authority_ok || uri.query().is_some() || base.contains('#') {
            return Err(invalid());
        }
        Ok(PublicUrl(base.trim_end_matches('/').to_owned()))
    }

    /// The base, without a trailing `/`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for PublicUrl {
    type Err = InvalidPublicUrl;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PublicUrl::parse(s)
    }
}

/// The public URL of the endpoint a request reached: `base` (from
/// configuration) followed by the path the client asked for; without a
/// configured base, `http://`, the request's authority (as the host policy
/// checked it: a `name[:port]`, nothing else) and the path.
/// `X-Forwarded-*` headers are never trusted: behind a proxy that
/// terminates TLS, configure the base.
pub fn public_url<B>(request: &Request<B>, base: Option<&PublicUrl>) -> String {
    let path = original_path(request);
    if let Some(base) = base {
        return format!("{}{path}", base.as_str());
    }
    match crate::security::hosts::effective_authority(original_uri(request), request.headers()) {
        Ok(authority) => format!("http://{authority}{path}"),
        Err(_) => path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{PublicUrl, mount_path, public_url, version_and_document, version_from_path};

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

    #[test]
    fn documents_below_versions() {
        assert_eq!(version_and_document(""), Some((1, "")));
        assert_eq!(version_and_document("/v2/"), Some((2, "")));
        assert_eq!(version_and_document("/postman"), Some((1, "postman")));
        assert_eq!(version_and_document("/v2/postman"), Some((2, "postman")));
        assert_eq!(version_and_document("/v2/postman/"), Some((2, "postman")));
        assert_eq!(version_and_document("/v2/server.json"), Some((2, "server.json")));
        for bad in ["//postman", "/v2/a/b", "/v01/postman", "/x/postman", "/v2/Postman", "/v2/..", "/v2/a%20b", "/v/x"]
        {
            assert_eq!(version_and_document(bad), None, "{bad}");
        }
        assert_eq!(version_and_document(&format!("/v2/{}", "a".repeat(65))), None);
    }

    #[test]
    fn mount_paths() {
        assert_eq!(mount_path("/rpc", "/"), "/rpc");
        assert_eq!(mount_path("/rpc/", "/"), "/rpc");
        assert_eq!(mount_path("/api/rpc/v2/postman", "/v2/postman"), "/api/rpc");
        assert_eq!(mount_path("/rpc/v2", "/v2"), "/rpc");
    }

    #[test]
    fn public_urls_never_trust_forwarded_headers() {
        let request = |host: &str| {
            http::Request::builder()
                .uri("/rpc")
                .header("host", host)
                .header("x-forwarded-proto", "javascript")
                .header("x-forwarded-host", "evil.example")
                .body(())
                .unwrap()
        };
        assert_eq!(public_url(&request("localhost:8080"), None), "http://localhost:8080/rpc");
        let base = PublicUrl::parse("https://api.example/").unwrap();
        assert_eq!(public_url(&request("localhost:8080"), Some(&base)), "https://api.example/rpc");
        assert_eq!(public_url(&request("a b"), None), "/rpc", "an invalid Host gives a relative URL");
        assert_eq!(
            PublicUrl::parse("https://api.example:8443/base/").unwrap().as_str(),
            "https://api.example:8443/base"
        );
        for bad in ["javascript://x/", "https://u@x", "ftp://x", "https://x/?q", "https://x/#f", "x", ""] {
            assert!(PublicUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
