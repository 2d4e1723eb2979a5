//! DNS-rebinding protection: which host names a request may be addressed
//! to and which origins may send it.
//!
//! A browser page on `evil.example` that resolves its name to 127.0.0.1
//! still addresses its requests to `evil.example` (the `Host` header, or the
//! `:authority` of HTTP/2) and names its own origin in `Origin`. A request
//! whose effective authority or `Origin` names a host outside the allowed
//! list is refused with 403.
//!
//! The effective authority is the request target's authority (HTTP/2
//! `:authority`, an absolute-form HTTP/1.1 target) or else the one `Host`
//! header. Two `Host` headers, two `Origin` headers, a `Host` that differs
//! from the target's authority or a request with neither are refused
//! whatever the policy: a server and a proxy could read them differently.
//! Refusals carry a fixed message; the offending value is never echoed.

use std::net::{IpAddr, SocketAddr};

use http::header::{HOST, ORIGIN};
use http::uri::Authority;
use http::{HeaderMap, HeaderValue, Uri};

use crate::server::request_headers::Found;

/// Which host names an endpoint accepts in the authority and in `Origin`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPolicy {
    allowed: Option<Vec<String>>,
}

impl Default for HostPolicy {
    /// Loopback names only: `localhost`, `127.0.0.1`, `[::1]`.
    fn default() -> Self {
        HostPolicy::localhost()
    }
}

/// Why [`HostPolicy::check`] refused a request. Each has a fixed message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostRefusal {
    /// Neither a `Host` header nor an authority in the request target.
    MissingHost,
    /// More than one `Host` header.
    DuplicateHost,
    /// A `Host` header that differs from the request target's authority.
    AmbiguousHost,
    /// A `Host` that is not a valid authority (`name[:port]`).
    MalformedHost,
    /// A host name outside the allowed list.
    HostNotAllowed,
    /// More than one `Origin` header.
    DuplicateOrigin,
    /// An `Origin` outside the allowed hosts and origins (`null` included).
    OriginNotAllowed,
}

impl HostRefusal {
    /// The fixed message sent to the client (`Forbidden: ...`).
    pub fn message(self) -> &'static str {
        match self {
            HostRefusal::MissingHost => "Forbidden: the request names no host",
            HostRefusal::DuplicateHost => "Forbidden: more than one Host header",
            HostRefusal::AmbiguousHost => "Forbidden: the Host header and the request target disagree",
            HostRefusal::MalformedHost => "Forbidden: malformed Host header",
            HostRefusal::HostNotAllowed => {
                "Forbidden: host not allowed (allow it: --allow-host, allowed_hosts in settings, HostPolicy::allow)"
            }
            HostRefusal::DuplicateOrigin => "Forbidden: more than one Origin header",
            HostRefusal::OriginNotAllowed => {
                "Forbidden: origin not allowed (allow it: --cors-origin, cors_origins in settings, Cors::origins)"
            }
        }
    }
}

impl std::fmt::Display for HostRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for HostRefusal {}

impl HostPolicy {
    /// Loopback names only: `localhost`, `127.0.0.1`, `[::1]`.
    pub fn localhost() -> Self {
        HostPolicy::hosts(["localhost", "127.0.0.1", "[::1]"])
    }

    /// Exactly these host names (compared case-insensitively, without port;
    /// IPv6 addresses in brackets: `[::1]`).
    pub fn hosts<S: Into<String>>(hosts: impl IntoIterator<Item = S>) -> Self {
        HostPolicy { allowed: Some(hosts.into_iter().map(|h| h.into().to_ascii_lowercase()).collect()) }
    }

    /// Any host name: for servers reached under names not known in advance,
    /// behind a proxy that checks them. The structural checks (one `Host`,
    /// one `Origin`, agreeing with the target) still apply.
    pub fn any() -> Self {
        HostPolicy { allowed: None }
    }

    /// Also accepts `host` (no effect on [`any`](Self::any)).
    pub fn allow(mut self, host: impl Into<String>) -> Self {
        if let Some(allowed) = &mut self.allowed {
            let host = host.into().to_ascii_lowercase();
            if !allowed.contains(&host) {
                allowed.push(host);
            }
        }
        self
    }

    /// The default for a server bound to `addr`: the loopback names, plus
    /// the bound address itself when it is a specific one (`192.0.2.7`,
    /// not `0.0.0.0`). Public names must be added with [`allow`](Self::allow).
    pub fn for_listen_addr(addr: SocketAddr) -> Self {
        let policy = HostPolicy::localhost();
        match addr.ip() {
            ip if ip.is_unspecified() || ip.is_loopback() => policy,
            IpAddr::V4(ip) => policy.allow(ip.to_string()),
            IpAddr::V6(ip) => policy.allow(format!("[{ip}]")),
        }
    }

    /// Whether every host name is accepted.
    pub fn is_any(&self) -> bool {
        self.allowed.is_none()
    }

    /// Whether `host` (a name without port) is allowed.
    pub fn allows_host(&self, host: &str) -> bool {
        self.allowed.as_ref().is_none_or(|allowed| allowed.iter().any(|a| a.eq_ignore_ascii_case(host)))
    }

    /// Checks the request's effective authority and its `Origin`; an origin
    /// whose host is not allowed still passes when `extra_origin` accepts
    /// it (the endpoint's CORS origins).
    pub fn check(
        &self,
        uri: &Uri,
        headers: &HeaderMap,
        extra_origin: impl Fn(&HeaderValue) -> bool,
    ) -> Result<(), HostRefusal> {
        self.check_found(uri, Found::of(headers, HOST), Found::of(headers, ORIGIN), extra_origin)
    }

    /// [`check`](Self::check) with the request's `Host` and `Origin` as
    /// [`RequestHeaders::scan`](crate::server::request_headers::RequestHeaders::scan)
    /// found them.
    pub fn check_found(
        &self,
        uri: &Uri,
        host: Found<'_>,
        origin: Found<'_>,
        extra_origin: impl Fn(&HeaderValue) -> bool,
    ) -> Result<(), HostRefusal> {
        let host = effective_host_found(uri, host)?;
        if !self.allows_host(host) {
            return Err(HostRefusal::HostNotAllowed);
        }
        if origin.more {
            return Err(HostRefusal::DuplicateOrigin);
        }
        let Some(origin) = origin.first else { return Ok(()) };
        if self.is_any() || extra_origin(origin) {
            return Ok(());
        }
        match origin.to_str().ok().and_then(origin_host) {
            Some(name) if self.allows_host(name) => Ok(()),
            _ => Err(HostRefusal::OriginNotAllowed),
        }
    }
}

/// The host name (without port) the request is addressed to.
pub fn effective_host<'a>(uri: &'a Uri, headers: &'a HeaderMap) -> Result<&'a str, HostRefusal> {
    effective_host_found(uri, Found::of(headers, HOST))
}

/// [`effective_host`] with the request's `Host` headers as found.
fn effective_host_found<'a>(uri: &'a Uri, host: Found<'a>) -> Result<&'a str, HostRefusal> {
    if host.more {
        return Err(HostRefusal::DuplicateHost);
    }
    let header = match host.first {
        None => None,
        Some(value) => {
            let text = value.to_str().map_err(|_| HostRefusal::MalformedHost)?;
            Some((text, authority_host(text).ok_or(HostRefusal::MalformedHost)?))
        }
    };
    match (uri.authority(), header) {
        (Some(target), Some((header, _))) if !target.as_str().eq_ignore_ascii_case(header) => {
            Err(HostRefusal::AmbiguousHost)
        }
        (Some(target), _) if target.as_str().contains('@') => Err(HostRefusal::MalformedHost),
        (Some(target), _) => Ok(target.host()),
        (None, Some((_, host))) => Ok(host),
        (None, None) => Err(HostRefusal::MissingHost),
    }
}

/// Whether `text` is a `Host` value: `name[:port]` or `[v6][:port]`, a
/// name being letters, digits, `-`, `.` and `_`; no user info, path or
/// anything else.
fn is_authority(text: &str) -> bool {
    authority_host(text).is_some()
}

/// The bytes of a host name: letters, digits, `-`, `.` and `_` (one table
/// lookup a byte: this runs on every request).
static NAME_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        table[b] = byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_');
        b += 1;
    }
    table
};

/// The host of a `Host` value ([`is_authority`]) without its port:
/// `example.com:8080` is `example.com`, `[::1]:80` is `[::1]`; `None` when
/// `text` is not one. One pass, without allocating: it runs on every request.
fn authority_host(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let (host_len, port) = if let Some(rest) = bytes.strip_prefix(b"[") {
        let close = rest.iter().position(|&b| b == b']')?;
        let v6 = &rest[..close];
        if v6.is_empty() || !v6.iter().all(|&b| b.is_ascii_hexdigit() || b == b':' || b == b'.') {
            return None;
        }
        (close + 2, &bytes[close + 2..])
    } else {
        // The name's bytes up to a `:`, each checked on the way.
        let end = bytes.iter().position(|&b| !NAME_BYTE[usize::from(b)]).unwrap_or(bytes.len());
        if end < bytes.len() && bytes[end] != b':' {
            return None;
        }
        if end == 0 {
            return None;
        }
        (end, &bytes[end..])
    };
    // A port is 1 to 65535 (what `server.json` and manifests would carry).
    let port_ok = match port {
        [] => true,
        [b':', digits @ ..] => {
            (1..=5).contains(&digits.len())
                && digits.iter().all(u8::is_ascii_digit)
                && (1..=65535).contains(&digits.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0')))
        }
        _ => false,
    };
    port_ok.then(|| &text[..host_len])
}

/// The authority (`host[:port]`) the request is addressed to, checked as
/// [`effective_host`] checks it: for building public URLs from a request.
pub fn effective_authority(uri: &Uri, headers: &HeaderMap) -> Result<Authority, HostRefusal> {
    effective_host(uri, headers)?;
    match uri.authority() {
        Some(target) => Ok(target.clone()),
        None => {
            headers.get(HOST).and_then(|v| v.to_str().ok()).and_then(parse_authority).ok_or(HostRefusal::MissingHost)
        }
    }
}

/// A `Host` value as an [`Authority`], when it is one ([`is_authority`]).
fn parse_authority(text: &str) -> Option<Authority> {
    if !is_authority(text) {
        return None;
    }
    text.parse::<Authority>().ok()
}

/// `example.com:8080` → `example.com`, `[::1]:80` → `[::1]`.
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    match host.as_bytes().iter().rposition(|&b| b == b':') {
        Some(colon) if host.as_bytes()[colon + 1..].iter().all(u8::is_ascii_digit) => &host[..colon],
        _ => host,
    }
}

/// `http://example.com:8080` → `example.com`; `None` for `null` and the like.
fn origin_host(origin: &str) -> Option<&str> {
    let (scheme, rest) = origin.split_once("://")?;
    if scheme.is_empty() || rest.contains(['/', '@', '?', '#']) || rest.is_empty() {
        return None;
    }
    Some(strip_port(rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::request_headers::header_map as headers;

    fn check(policy: &HostPolicy, uri: &str, pairs: &[(&str, &str)]) -> Result<(), HostRefusal> {
        policy.check(&uri.parse().unwrap(), &headers(pairs), |_| false)
    }

    #[test]
    fn localhost_policy() {
        let p = HostPolicy::localhost();
        assert_eq!(check(&p, "/mcp", &[("host", "127.0.0.1:3000")]), Ok(()));
        assert_eq!(check(&p, "/mcp", &[("host", "LOCALHOST"), ("origin", "http://localhost:5173")]), Ok(()));
        assert_eq!(check(&p, "/mcp", &[("host", "[::1]:8080")]), Ok(()));
        assert_eq!(check(&p, "/mcp", &[("host", "evil.example")]), Err(HostRefusal::HostNotAllowed));
        assert_eq!(
            check(&p, "/mcp", &[("host", "localhost"), ("origin", "http://evil.example")]),
            Err(HostRefusal::OriginNotAllowed)
        );
        assert_eq!(check(&p, "/mcp", &[("host", "localhost"), ("origin", "null")]), Err(HostRefusal::OriginNotAllowed));
        assert_eq!(
            check(&p, "/mcp", &[("host", "localhost"), ("origin", "http://localhost@evil.example")]),
            Err(HostRefusal::OriginNotAllowed)
        );
    }

    #[test]
    fn the_effective_authority_wins() {
        let p = HostPolicy::localhost();
        // HTTP/2 :authority and absolute-form targets carry the authority in the URI.
        assert_eq!(check(&p, "http://evil.example/mcp", &[]), Err(HostRefusal::HostNotAllowed));
        assert_eq!(check(&p, "http://localhost:8080/mcp", &[]), Ok(()));
        assert_eq!(check(&p, "http://localhost/mcp", &[("host", "evil.example")]), Err(HostRefusal::AmbiguousHost));
        assert_eq!(check(&p, "http://localhost/mcp", &[("host", "LOCALHOST")]), Ok(()));
        assert_eq!(check(&p, "http://u@localhost/mcp", &[]), Err(HostRefusal::MalformedHost));
    }

    #[test]
    fn structural_refusals_apply_to_every_policy() {
        for p in [HostPolicy::localhost(), HostPolicy::any()] {
            assert_eq!(check(&p, "/mcp", &[]), Err(HostRefusal::MissingHost));
            assert_eq!(
                check(&p, "/mcp", &[("host", "localhost"), ("host", "evil.example")]),
                Err(HostRefusal::DuplicateHost)
            );
            assert_eq!(
                check(&p, "/mcp", &[("host", "localhost"), ("origin", "http://localhost"), ("origin", "http://x")]),
                Err(HostRefusal::DuplicateOrigin)
            );
            assert_eq!(check(&p, "/mcp", &[("host", "u@localhost")]), Err(HostRefusal::MalformedHost));
            assert_eq!(check(&p, "/mcp", &[("host", "localhost/x")]), Err(HostRefusal::MalformedHost));
        }
        assert_eq!(check(&HostPolicy::any(), "/", &[("host", "evil.example"), ("origin", "http://x.y")]), Ok(()));
    }

    #[test]
    fn extra_origins_and_bound_addresses() {
        let p = HostPolicy::localhost();
        let uri: Uri = "/mcp".parse().unwrap();
        let h = headers(&[("host", "localhost"), ("origin", "https://app.example")]);
        assert_eq!(p.check(&uri, &h, |o| o == "https://app.example"), Ok(()));
        let bound = HostPolicy::for_listen_addr("192.0.2.7:80".parse().unwrap());
        assert!(bound.allows_host("192.0.2.7") && bound.allows_host("localhost") && !bound.allows_host("0.0.0.0"));
        let wildcard = HostPolicy::for_listen_addr("0.0.0.0:80".parse().unwrap());
        assert!(!wildcard.allows_host("0.0.0.0") && !wildcard.allows_host("example.com"));
        assert!(HostPolicy::localhost().allow("api.example").allows_host("API.example"));
    }

    #[test]
    fn host_values() {
        for good in ["localhost", "LOCALHOST:8080", "127.0.0.1:1", "[::1]", "[::1]:443", "a-b.c_d.example:65535"] {
            assert!(is_authority(good), "{good}");
        }
        for bad in [
            "",
            ":80",
            "a:",
            "a:123456",
            "a:8x",
            "u@h",
            "h/p",
            "h?q",
            "h#f",
            "[::1",
            "[]",
            "[::1]x",
            "a b",
            "h:1:2",
            "[::1]:",
            "localhost:99999",
            "a:65536",
            "a:0",
            "[::1]:00000",
        ] {
            assert!(!is_authority(bad), "{bad}");
        }
    }

    #[test]
    fn ports() {
        assert_eq!(strip_port("a.b:80"), "a.b");
        assert_eq!(strip_port("a.b"), "a.b");
        assert_eq!(strip_port("[::1]"), "[::1]");
        for (authority, host) in [
            ("a.b:80", "a.b"),
            ("a.b", "a.b"),
            ("[::1]", "[::1]"),
            ("[::1]:8080", "[::1]"),
            ("LOCALHOST:65535", "LOCALHOST"),
            ("x_y-z.1:1", "x_y-z.1"),
        ] {
            assert_eq!(authority_host(authority), Some(host), "{authority}");
            assert_eq!(strip_port(authority), host, "the host strip_port finds in {authority}");
        }
        assert_eq!(origin_host("https://x.y:1"), Some("x.y"));
        assert_eq!(origin_host("https://x.y/p"), None);
    }
}
