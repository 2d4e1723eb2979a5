//! Endpoint security shared by the transports.
//!
//! [`HostPolicy`] is the DNS-rebinding protection the MCP specification
//! requires: a browser page on `evil.example` that resolves its name to
//! 127.0.0.1 still sends `Host: evil.example` (and `Origin:
//! http://evil.example`), so requests whose `Host` or `Origin` names a host
//! outside the allowed list are refused with 403.

use http::HeaderMap;
use http::header::{HOST, ORIGIN};

/// Which `Host` / `Origin` host names an endpoint accepts.
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

impl HostPolicy {
    /// Loopback names only: `localhost`, `127.0.0.1`, `[::1]`.
    pub fn localhost() -> Self {
        HostPolicy::hosts(["localhost", "127.0.0.1", "[::1]"])
    }

    /// Exactly these host names (compared case-insensitively, without port).
    pub fn hosts<S: Into<String>>(hosts: impl IntoIterator<Item = S>) -> Self {
        HostPolicy { allowed: Some(hosts.into_iter().map(|h| h.into().to_ascii_lowercase()).collect()) }
    }

    /// Any host: for servers reachable under names not known in advance
    /// (put the check in a reverse proxy then).
    pub fn any() -> Self {
        HostPolicy { allowed: None }
    }

    /// The policy for a server bound to `addr`: loopback names for a
    /// loopback address; any host otherwise (the public names are not known
    /// in advance: configure [`HostPolicy::hosts`] or check in a proxy).
    pub fn for_listen_addr(addr: std::net::SocketAddr) -> Self {
        if addr.ip().is_loopback() {
            HostPolicy::localhost()
        } else {
            tracing::warn!(%addr, "listening on a non-loopback address: Host/Origin checks are off");
            HostPolicy::any()
        }
    }

    /// Checks `Host` and, when present, `Origin`; the error says which
    /// header named which host.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), String> {
        let Some(allowed) = &self.allowed else { return Ok(()) };
        let is_allowed = |host: &str| allowed.iter().any(|a| a.eq_ignore_ascii_case(host));
        if let Some(host) = headers.get(HOST) {
            let host = host.to_str().map_err(|_| "the Host header is not valid text".to_owned())?;
            let name = strip_port(host);
            if !is_allowed(name) {
                return Err(format!("Host `{name}` is not allowed"));
            }
        }
        if let Some(origin) = headers.get(ORIGIN) {
            let origin = origin.to_str().map_err(|_| "the Origin header is not valid text".to_owned())?;
            let name = origin_host(origin).ok_or_else(|| format!("Origin `{origin}` is not allowed"))?;
            if !is_allowed(name) {
                return Err(format!("Origin `{origin}` is not allowed"));
            }
        }
        Ok(())
    }
}

/// `example.com:8080` → `example.com`, `[::1]:80` → `[::1]`.
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    host.rsplit_once(':')
        .map_or(host, |(name, port)| if port.bytes().all(|b| b.is_ascii_digit()) { name } else { host })
}

/// `http://example.com:8080` → `example.com`; `None` for `null` and the like.
fn origin_host(origin: &str) -> Option<&str> {
    let (_, rest) = origin.split_once("://")?;
    let authority = rest.split('/').next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    (!authority.is_empty()).then(|| strip_port(authority))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(HOST, HeaderValue::from_str(host).unwrap());
        if let Some(o) = origin {
            h.insert(ORIGIN, HeaderValue::from_str(o).unwrap());
        }
        h
    }

    #[test]
    fn localhost_policy() {
        let p = HostPolicy::localhost();
        assert!(p.check(&headers("127.0.0.1:3000", None)).is_ok());
        assert!(p.check(&headers("LOCALHOST", Some("http://localhost:5173"))).is_ok());
        assert!(p.check(&headers("[::1]:8080", None)).is_ok());
        assert!(p.check(&headers("evil.example.com", None)).is_err());
        assert!(p.check(&headers("localhost:3000", Some("http://evil.example.com"))).is_err());
        assert!(p.check(&headers("localhost", Some("null"))).is_err());
        assert!(HostPolicy::any().check(&headers("evil.example.com", Some("http://evil.example.com"))).is_ok());
    }

    #[test]
    fn ports() {
        assert_eq!(strip_port("a.b:80"), "a.b");
        assert_eq!(strip_port("a.b"), "a.b");
        assert_eq!(strip_port("[::1]"), "[::1]");
        assert_eq!(origin_host("https://u@x.y:1/p"), Some("x.y"));
    }
}
