//! The protected-resource metadata (RFC 9728): the document clients read to
//! find the authorization server of this resource and the scopes it knows,
//! served at `/.well-known/oauth-protected-resource` followed by the
//! resource's path (and at the bare well-known path), to any origin.

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::future::{Ready, ready};
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN, ALLOW, CACHE_CONTROL};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use serde_json::json;
use url::Url;

use crate::server::body::{ResponseBody, json_response, status_response};

/// Where the metadata of resources of this server are (RFC 9728 §3).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// What the metadata document says, and the scopes the endpoints behind
/// the policy declared, which `scopes_supported` lists after the
/// configured ones.
#[derive(Debug)]
pub(super) struct Described {
    resource: String,
    issuer: String,
    configured: Vec<String>,
    name: Option<String>,
    declared: BTreeSet<String>,
    document: Bytes,
}

impl Described {
    pub(super) fn new(resource: String, issuer: String, configured: Vec<String>, name: Option<String>) -> Self {
        let document = document(&resource, &issuer, &configured, name.as_deref());
        Described { resource, issuer, configured, name, declared: BTreeSet::new(), document }
    }

    /// Adds `scopes` (an endpoint's methods need them); the document is
    /// written again when one is new.
    fn declare(&mut self, scopes: &[&str]) {
        let mut added = false;
        for scope in scopes {
            if !self.configured.iter().any(|s| s == scope) {
                added |= self.declared.insert((*scope).to_owned());
            }
        }
        if added {
            let mut all = self.configured.clone();
            all.extend(self.declared.iter().cloned());
            self.document = document(&self.resource, &self.issuer, &all, self.name.as_deref());
        }
    }
}

/// The metadata document of `resource`.
fn document(resource: &str, issuer: &str, scopes: &[String], name: Option<&str>) -> Bytes {
    let mut document = json!({
        "resource": resource,
        "authorization_servers": [issuer],
        "bearer_methods_supported": ["header"],
    });
    if !scopes.is_empty() {
        document["scopes_supported"] = json!(scopes);
    }
    if let Some(name) = name {
        document["resource_name"] = json!(name);
    }
    Bytes::from(document.to_string())
}

/// The address of the metadata of `resource`: its origin, the well-known
/// path, then its path (without a trailing `/`).
pub(super) fn url_of(resource: &Url) -> String {
    let path = resource.path().trim_end_matches('/');
    format!("{}{METADATA_PATH}{path}", resource.origin().ascii_serialization())
}

/// Serves the protected-resource metadata (mount it at [`METADATA_PATH`];
/// [`OAuthPolicy::metadata_service`](super::OAuthPolicy::metadata_service)).
/// `GET` and `HEAD` of the bare path or of the resource's path or a path
/// under it; any origin may read it (it is public).
#[derive(Clone, Debug)]
pub struct MetadataService {
    pub(super) described: Arc<RwLock<Described>>,
    /// The resource's path without its trailing `/` (empty for an origin).
    pub(super) resource_path: String,
}

impl MetadataService {
    /// The document as it is now.
    pub(super) fn document(&self) -> Bytes {
        self.described.read().unwrap_or_else(std::sync::PoisonError::into_inner).document.clone()
    }

    /// Lists `scopes` in `scopes_supported` (see [`Described`]).
    pub(super) fn declare(&self, scopes: &[&str]) {
        self.described.write().unwrap_or_else(std::sync::PoisonError::into_inner).declare(scopes);
    }

    fn serves(&self, rest: &str) -> bool {
        let rest = rest.trim_end_matches('/');
        rest.is_empty()
            || rest
                .strip_prefix(self.resource_path.as_str())
                .is_some_and(|tail| tail.is_empty() || tail.starts_with('/'))
    }

    fn answer(&self, method: &Method, path: &str) -> Response<ResponseBody> {
        let mut response = if !self.serves(path) {
            json_response(StatusCode::NOT_FOUND, r#"{"error":"no protected resource at this path"}"#)
        } else if method == Method::GET || method == Method::HEAD {
            let mut response = json_response(StatusCode::OK, self.document());
            response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("public, max-age=300"));
            response
        } else if method == Method::OPTIONS {
            let mut response = status_response(StatusCode::NO_CONTENT);
            response.headers_mut().insert(ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, HEAD, OPTIONS"));
            response
        } else {
            let mut response =
                json_response(StatusCode::METHOD_NOT_ALLOWED, r#"{"error":"the metadata is read with GET"}"#);
            response.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD, OPTIONS"));
            response
        };
        response.headers_mut().insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        response
    }
}

impl<B> tower::Service<Request<B>> for MetadataService {
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Ready<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        ready(Ok(self.answer(request.method(), request.uri().path())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_paths() {
        assert_eq!(
            url_of(&Url::parse("http://127.0.0.1:8080").unwrap()),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            url_of(&Url::parse("https://api.example/mcp/").unwrap()),
            "https://api.example/.well-known/oauth-protected-resource/mcp"
        );
        let described = |configured: Vec<String>| {
            Arc::new(RwLock::new(Described::new(
                "https://api.example/mcp".into(),
                "https://as".into(),
                configured,
                None,
            )))
        };
        let service = MetadataService { described: described(vec!["a:read".into()]), resource_path: "/mcp".into() };
        assert!(service.serves("/") && service.serves("") && service.serves("/mcp") && service.serves("/mcp/v1"));
        assert!(!service.serves("/mcpx") && !service.serves("/rpc"));
        let root = MetadataService { described: described(Vec::new()), resource_path: String::new() };
        assert!(root.serves("/mcp/v1") && root.serves("/rpc"));
        assert_eq!(service.answer(&Method::GET, "/mcp/v1").status(), StatusCode::OK);
        assert_eq!(service.answer(&Method::POST, "/mcp").status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(service.answer(&Method::GET, "/other").status(), StatusCode::NOT_FOUND);
        let scopes = |service: &MetadataService| {
            let document: serde_json::Value = serde_json::from_slice(&service.document()).unwrap();
            document.get("scopes_supported").cloned()
        };
        assert_eq!(scopes(&root), None);
        service.declare(&["b:write", "a:read", "a:admin"]);
        service.declare(&["b:write"]);
        assert_eq!(
            scopes(&service),
            Some(json!(["a:read", "a:admin", "b:write"])),
            "configured, then declared, sorted"
        );
    }
}
