//! Reading the authorization server's documents (its metadata, its JWKS):
//! GET, JSON, bounded in time and size, no redirects, `https` except on
//! loopback.

use std::time::Duration;

use serde::de::DeserializeOwned;
use url::{Host, Url};

use super::OAuthError;

/// The most bytes a metadata document or key set may have.
const MAX_DOCUMENT: usize = 256 * 1024;

/// How long one fetch may take, from connecting to the last byte.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether `url` is a URL the resource server may fetch keys or metadata
/// from: `https`, or `http` to a loopback address (tests, local development).
pub(super) fn check_fetchable(what: &str, url: &Url) -> Result<(), OAuthError> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(url) => Ok(()),
        "http" => Err(OAuthError::new(format!(
            "{what} `{url}` is plain http on a host that is not loopback: use https (http is accepted on 127.0.0.1, ::1 and localhost only)"
        ))),
        other => Err(OAuthError::new(format!("{what} `{url}` has the scheme `{other}`: use https"))),
    }
}

/// Whether the URL's host is a loopback address or `localhost`.
pub(super) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// The HTTP client of every fetch.
pub(super) fn client() -> Result<reqwest::Client, OAuthError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(FETCH_TIMEOUT)
        .connect_timeout(FETCH_TIMEOUT)
        .user_agent(concat!("rpc-http/", env!("CARGO_PKG_VERSION"), " (OAuth resource server)"))
        .build()
        .map_err(|e| OAuthError::new(format!("cannot set up the HTTP client: {e}")))
}

/// What a fetch found.
pub(super) enum Fetched<T> {
    /// 200 and a document.
    Found(T),
    /// 404: nothing at that address.
    NotFound,
}

/// GETs `url` and reads its body as JSON of type `T`: 200 only (404 is
/// [`Fetched::NotFound`]), at most [`MAX_DOCUMENT`] bytes.
pub(super) async fn get_json<T: DeserializeOwned>(
    client: &reqwest::Client,
    what: &str,
    url: &Url,
) -> Result<Fetched<T>, OAuthError> {
    check_fetchable(what, url)?;
    let failed = |why: String| OAuthError::new(format!("cannot read {what} at {url}: {why}"));
    let mut response = client
        .get(url.clone())
        .header(http::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| failed(describe(&e)))?;
    let status = response.status();
    if status == reqwest::StatusCode::NOT_FOUND {
        return Ok(Fetched::NotFound);
    }
    if !status.is_success() {
        let hint = if status.is_redirection() { " (redirects are not followed)" } else { "" };
        return Err(failed(format!("HTTP {status}{hint}")));
    }
    if response.content_length().is_some_and(|n| n > MAX_DOCUMENT as u64) {
        return Err(failed(format!("larger than {} KiB", MAX_DOCUMENT / 1024)));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| failed(describe(&e)))? {
        if body.len() + chunk.len() > MAX_DOCUMENT {
            return Err(failed(format!("larger than {} KiB", MAX_DOCUMENT / 1024)));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map(Fetched::Found).map_err(|e| failed(format!("not the expected JSON: {e}")))
}

/// A fetch error in a few words.
fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        format!("no answer within {} s", FETCH_TIMEOUT.as_secs())
    } else if e.is_connect() {
        "cannot connect".to_owned()
    } else {
        let mut text = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_on_loopback_only() {
        let ok = |u: &str| check_fetchable("x", &Url::parse(u).unwrap()).is_ok();
        assert!(ok("https://as.example/jwks"));
        assert!(ok("http://127.0.0.1:9000/jwks") && ok("http://[::1]:9/") && ok("http://LOCALHOST/"));
        assert!(ok("http://127.8.9.1/"));
        assert!(!ok("http://as.example/jwks") && !ok("http://10.0.0.1/") && !ok("http://localhost.evil.example/"));
        assert!(!ok("ftp://as.example/") && !ok("file:///etc/passwd"));
    }
}
