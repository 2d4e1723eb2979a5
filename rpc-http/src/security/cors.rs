//! CORS for browser clients, through tower-http's `CorsLayer`: which
//! origins may call an endpoint from a page (none by default, a list, or
//! any), preflight answers, `Vary: Origin`, and the response headers a page
//! may read (the MCP session and protocol headers).
//!
//! An origin allowed here is also accepted by the DNS-rebinding check
//! ([`HostPolicy`](super::HostPolicy)), which otherwise only accepts
//! origins on the allowed host names.

use std::convert::Infallible;
use std::time::Duration;

use http::{HeaderName, HeaderValue, Method, Request, Response};
use tower::{Layer, ServiceExt};
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, CorsLayer, ExposeHeaders};

use crate::server::body::{ResponseBody, status_response};

/// Which origins may call an endpoint from a browser.
#[derive(Debug, Clone)]
pub struct Cors {
    origins: Origins,
    max_age: Duration,
    expose: Vec<HeaderName>,
}

#[derive(Debug, Clone)]
enum Origins {
    Any,
    List(Vec<HeaderValue>),
}

/// An origin that is not `scheme://host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidOrigin(pub String);

impl std::fmt::Display for InvalidOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown: String = self.0.chars().take(80).collect();
        write!(f, "`{}` is not an origin (scheme://host[:port], no path)", shown.escape_default())
    }
}

impl std::error::Error for InvalidOrigin {}

/// The headers a page may read from responses: the MCP session and
/// revision, a challenge (OAuth clients in a browser start from it) and
/// when to retry (429).
const EXPOSED: [&str; 4] = ["mcp-session-id", "mcp-protocol-version", "www-authenticate", "retry-after"];

impl Cors {
    /// Pages of exactly these origins (`https://app.example`,
    /// `http://localhost:5173`); `"*"` in the list means any.
    pub fn origins<S: AsRef<str>>(origins: impl IntoIterator<Item = S>) -> Result<Self, InvalidOrigin> {
        let mut list = Vec::new();
        for origin in origins {
            let origin = origin.as_ref().trim().trim_end_matches('/');
            if origin == "*" {
                return Ok(Cors::any());
            }
            let valid = origin.split_once("://").is_some_and(|(scheme, rest)| {
                !scheme.is_empty()
                    && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
                    && !rest.is_empty()
                    && !rest.contains(['/', '?', '#', '@', ' '])
            });
            let value = HeaderValue::from_str(&origin.to_ascii_lowercase())
                .ok()
                .filter(|_| valid)
                .ok_or_else(|| InvalidOrigin(origin.to_owned()))?;
            list.push(value);
        }
        Ok(Cors { origins: Origins::List(list), ..Cors::any() })
    }

    /// Pages of any origin (`Access-Control-Allow-Origin: *`; credentials
    /// such as cookies are never allowed, tokens in headers are).
    pub fn any() -> Self {
        Cors {
            origins: Origins::Any,
            max_age: Duration::from_secs(600),
            expose: EXPOSED.iter().map(|h| HeaderName::from_static(h)).collect(),
        }
    }

    /// How long a browser may cache a preflight answer (default 10 minutes).
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// Also lets pages read response header `name`.
    pub fn expose(mut self, name: HeaderName) -> Self {
        if !self.expose.contains(&name) {
            self.expose.push(name);
        }
        self
    }

    /// Whether pages of `origin` may call the endpoint.
    pub fn allows(&self, origin: &HeaderValue) -> bool {
        match &self.origins {
            Origins::Any => true,
            Origins::List(list) => list.iter().any(|o| o.as_bytes().eq_ignore_ascii_case(origin.as_bytes())),
        }
    }

    /// The tower-http layer for these rules.
    pub fn layer(&self) -> CorsLayer {
        let origin = match &self.origins {
            Origins::Any => AllowOrigin::any(),
            Origins::List(list) => {
                let list = list.clone();
                // Case-insensitive, as the DNS-rebinding check compares.
                AllowOrigin::predicate(move |origin, _| {
                    list.iter().any(|o| o.as_bytes().eq_ignore_ascii_case(origin.as_bytes()))
                })
            }
        };
        CorsLayer::new()
            .allow_origin(origin)
            .allow_methods(AllowMethods::list([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS]))
            // The MCP headers include `Mcp-Param-{Name}`, one per mirrored parameter.
            .allow_headers(AllowHeaders::mirror_request())
            .expose_headers(ExposeHeaders::list(self.expose.clone()))
            .max_age(self.max_age)
    }
}

/// Runs `handle` behind `layer`: preflights are answered by the layer, other
/// requests get its headers on their response.
pub async fn serve_with<B, F, Fut>(layer: &CorsLayer, request: Request<B>, handle: F) -> Response<ResponseBody>
where
    F: FnOnce(Request<B>) -> Fut,
    Fut: Future<Output = Response<ResponseBody>>,
{
    let mut handle = Some(handle);
    let service = tower::service_fn(move |request: Request<B>| {
        let handle = handle.take();
        async move {
            Ok::<_, Infallible>(match handle {
                Some(handle) => handle(request).await,
                // The layer calls its service once per request.
                None => status_response(http::StatusCode::INTERNAL_SERVER_ERROR),
            })
        }
    });
    match layer.layer(service).oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        let cors = Cors::origins(["https://App.example", "http://localhost:5173/"]).unwrap();
        assert!(cors.allows(&HeaderValue::from_static("https://app.example")));
        assert!(cors.allows(&HeaderValue::from_static("http://localhost:5173")));
        assert!(!cors.allows(&HeaderValue::from_static("https://evil.example")));
        assert!(Cors::origins(["*"]).unwrap().allows(&HeaderValue::from_static("https://x.y")));
        for bad in ["app.example", "https://a.example/path", "null", "https://", "://x", "https://u@x.y"] {
            assert!(Cors::origins([bad]).is_err(), "{bad}");
        }
    }
}
