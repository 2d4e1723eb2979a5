//! Talking to the authorization server: reading its documents (its
//! metadata, its JWKS: GET) and asking it about tokens (introspection: a
//! form POST), JSON answers, bounded in time and size, no redirects,
//! `https` except on loopback.

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
    let response = client
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
    let body = read_body(response, MAX_DOCUMENT).await.map_err(failed)?;
    serde_json::from_slice(&body).map(Fetched::Found).map_err(|e| failed(format!("not the expected JSON: {e}")))
}

/// POSTs `form` (`application/x-www-form-urlencoded`) to `url`, with HTTP
/// Basic authentication as `basic` (user and password, sent as given: a
/// caller applying RFC 6749 §2.3.1 encodes them first), and reads the
/// answer as JSON of type `T`: 2xx only, at most `max` bytes.
pub(super) async fn post_form<T: DeserializeOwned>(
    client: &reqwest::Client,
    what: &str,
    url: &Url,
    form: &[(&str, &str)],
    basic: (&str, &str),
    max: usize,
) -> Result<T, OAuthError> {
    check_fetchable(what, url)?;
    let failed = |why: String| OAuthError::new(format!("{what} at {url} failed: {why}"));
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish();
    let response = client
        .post(url.clone())
        .header(http::header::ACCEPT, "application/json")
        .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .basic_auth(basic.0, Some(basic.1))
        .body(body)
        .send()
        .await
        .map_err(|e| failed(describe(&e)))?;
    let status = response.status();
    if !status.is_success() {
        let hint = match status.as_u16() {
            300..=399 => " (redirects are not followed)",
            401 | 403 => " (check this resource server's client id and secret)",
            _ => "",
        };
        return Err(failed(format!("HTTP {status}{hint}")));
    }
    let body = read_body(response, max).await.map_err(failed)?;
    serde_json::from_slice(&body).map_err(|e| failed(format!("not the expected JSON: {e}")))
}

/// The body of `response`, or why not: at most `max` bytes.
async fn read_body(mut response: reqwest::Response, max: usize) -> Result<Vec<u8>, String> {
    let too_large = || format!("larger than {} KiB", max / 1024);
    if response.content_length().is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| describe(&e))? {
        if body.len() + chunk.len() > max {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
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
