//! Endpoint security shared by the JSON-RPC and MCP endpoints.
//!
//! Every request goes through the same steps, in this order:
//!
//! 1. DNS-rebinding protection ([`HostPolicy`]): the effective authority and
//!    `Origin` must name allowed hosts (or a CORS origin): else 403.
//! 2. The endpoint's own routing: a group or version it does not serve, or
//!    one an [`AvailabilityChecker`] switched off: 404.
//! 3. CORS ([`Cors`]): a preflight (`OPTIONS`) is answered here, without a token.
//! 4. The [`AccessPolicy`] (e.g. [`TokenPolicy`]): 401 without credentials,
//!    403 with wrong ones, both as `{"error": "..."}`; an allowed request
//!    may carry an [`Identity`] that methods and listeners read.
//!
//! A [`Security`] value holds all of it and is shared by the endpoints of
//! an application (`.security(security.clone())` on each builder).

mod access;
mod challenge;
mod cors;
pub(crate) mod hosts;
#[cfg(feature = "oauth")]
pub mod oauth;
mod token;

use std::future::Future;
use std::sync::Arc;

use http::header::{ALLOW, HOST, ORIGIN, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, Uri};
use serde_json::json;

pub use access::{Access, AccessPolicy, AccessRequest, AvailabilityChecker, Identity, Resource};
pub use challenge::{BearerError, Challenge, bearer_challenge};
pub use cors::{Cors, InvalidOrigin, serve_with as serve_with_cors};
pub use hosts::{HostPolicy, HostRefusal, effective_authority, effective_host};
pub use token::{DEFAULT_TOKEN_HEADER, TokenError, TokenPolicy};

use crate::server::body::{ResponseBody, json_response, status_response};
use crate::server::connection::Connection;
use crate::server::request_headers::{Found, RequestHeaders};
use crate::server::route::{connection_of, original_uri};

/// What an endpoint routed a request to, for the access decision.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Target<'a> {
    /// The API group the endpoint serves (`None`: every method).
    pub group: Option<&'a str>,
    /// The API version.
    pub version: u32,
    /// An API call or a document.
    pub resource: Resource,
    /// The `Allow` header of the endpoint (answers `OPTIONS` without CORS).
    pub allow: &'static str,
}

impl<'a> Target<'a> {
    /// A request for `resource` of `group` at `version`, on an endpoint
    /// allowing the HTTP methods `allow`.
    pub fn new(group: Option<&'a str>, version: u32, resource: Resource, allow: &'static str) -> Self {
        Target { group, version, resource, allow }
    }
}

/// The security settings of one or more endpoints. Cheap to clone.
#[derive(Clone, Default)]
pub struct Security {
    inner: Arc<Inner>,
}

#[derive(Clone, Default)]
struct Inner {
    hosts: HostPolicy,
    access: Option<Arc<dyn AccessPolicy>>,
    availability: Option<Arc<dyn AvailabilityChecker>>,
    cors: Option<(Cors, tower_http::cors::CorsLayer)>,
    #[cfg(feature = "oauth")]
    oauth: Option<oauth::OAuthPolicy>,
}

impl std::fmt::Debug for Security {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Security")
            .field("hosts", &self.inner.hosts)
            .field("access", &self.inner.access.is_some())
            .field("availability", &self.inner.availability.is_some())
            .field("cors", &self.inner.cors.as_ref().map(|(c, _)| c))
            .finish()
    }
}

/// A request refused by the [`AccessPolicy`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// 401: no credentials.
    Unauthorized(String),
    /// 403: wrong credentials.
    Forbidden(String),
    /// A status with a `WWW-Authenticate` challenge (an OAuth bearer
    /// challenge: 401, 403 `insufficient_scope`, 400).
    Challenge(Challenge),
}

impl Refusal {
    /// The response: 401 (with `WWW-Authenticate: Bearer`) or 403, body
    /// `{"error": "..."}`.
    pub fn into_response(self) -> http::Response<ResponseBody> {
        let (status, message, challenge) = match self {
            Refusal::Unauthorized(m) => {
                (StatusCode::UNAUTHORIZED, m.into(), Some(HeaderValue::from_static("Bearer realm=\"api\"")))
            }
            Refusal::Forbidden(m) => (StatusCode::FORBIDDEN, m.into(), None),
            Refusal::Challenge(c) => (c.status, c.message, Some(c.www_authenticate)),
        };
        let mut response = json_response(status, json!({ "error": message }).to_string());
        if let Some(challenge) = challenge {
            response.headers_mut().insert(WWW_AUTHENTICATE, challenge);
        }
        response
    }
}

impl Security {
    /// Loopback host names only, no CORS, no access policy.
    pub fn new() -> Self {
        Security::default()
    }

    fn edit(mut self, change: impl FnOnce(&mut Inner)) -> Self {
        change(Arc::make_mut(&mut self.inner));
        self
    }

    /// The host names requests may be addressed to (and origins may name).
    pub fn hosts(self, hosts: HostPolicy) -> Self {
        self.edit(|i| i.hosts = hosts)
    }

    /// Decides per request who may proceed (replaces any earlier policy).
    pub fn access(self, policy: impl AccessPolicy) -> Self {
        let policy: Arc<dyn AccessPolicy> = Arc::new(policy);
        self.edit(|i| {
            i.access = Some(policy);
            #[cfg(feature = "oauth")]
            {
                i.oauth = None;
            }
        })
    }

    /// Static tokens: shorthand for [`access`](Self::access) with a [`TokenPolicy`].
    pub fn tokens(self, tokens: TokenPolicy) -> Self {
        self.access(tokens)
    }

    /// OAuth access tokens of one authorization server (replaces any
    /// earlier policy); serve [`oauth_policy`](Self::oauth_policy)'s
    /// metadata beside the endpoints (`Router::oauth_metadata`).
    #[cfg(feature = "oauth")]
    pub fn oauth(self, policy: oauth::OAuthPolicy) -> Self {
        let access: Arc<dyn AccessPolicy> = Arc::new(policy.clone());
        self.edit(|i| {
            i.access = Some(access);
            i.oauth = Some(policy);
        })
    }

    /// The OAuth policy, when [`oauth`](Self::oauth) set one.
    #[cfg(feature = "oauth")]
    pub fn oauth_policy(&self) -> Option<&oauth::OAuthPolicy> {
        self.inner.oauth.as_ref()
    }

    /// Switches groups and versions on and off at run time (404 when off).
    pub fn availability(self, checker: impl AvailabilityChecker) -> Self {
        let checker: Arc<dyn AvailabilityChecker> = Arc::new(checker);
        self.edit(|i| i.availability = Some(checker))
    }

    /// Lets browser pages of these origins call the endpoints.
    pub fn cors(self, cors: Cors) -> Self {
        let layer = cors.layer();
        self.edit(|i| i.cors = Some((cors, layer)))
    }

    /// The host policy.
    pub fn host_policy(&self) -> &HostPolicy {
        &self.inner.hosts
    }

    /// Step 1: the DNS-rebinding check of a request (`uri` as the client
    /// sent it, before a mount prefix was stripped).
    pub fn check_hosts(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), HostRefusal> {
        self.check_found_hosts(uri, Found::of(headers, HOST), Found::of(headers, ORIGIN))
    }

    /// [`check_hosts`](Self::check_hosts) with the request's headers as
    /// [`RequestHeaders::scan`] found them.
    pub fn check_scanned_hosts(&self, uri: &Uri, headers: &RequestHeaders<'_>) -> Result<(), HostRefusal> {
        self.check_found_hosts(uri, headers.host, headers.origin)
    }

    /// The host policy's check, an origin of the CORS list passing too.
    fn check_found_hosts(&self, uri: &Uri, host: Found<'_>, origin: Found<'_>) -> Result<(), HostRefusal> {
        let cors = self.inner.cors.as_ref().map(|(c, _)| c);
        self.inner.hosts.check_found(uri, host, origin, |origin| cors.is_some_and(|c| c.allows(origin)))
    }

    /// Step 2: whether `group` at `version` is switched on.
    pub fn is_available(&self, group: Option<&str>, version: u32) -> bool {
        self.inner.availability.as_ref().is_none_or(|a| a.is_available(group, version))
    }

    /// Step 3: the CORS layer, when CORS is configured.
    pub fn cors_layer(&self) -> Option<&tower_http::cors::CorsLayer> {
        self.inner.cors.as_ref().map(|(_, layer)| layer)
    }

    /// Whether [`guard`](Self::guard) would hand a request of `method` to
    /// its handler as it is, with no identity: no CORS, no access policy,
    /// not a preflight. An endpoint can then skip the guard and its future.
    pub fn is_open_to(&self, method: &Method) -> bool {
        self.inner.cors.is_none() && self.inner.access.is_none() && *method != Method::OPTIONS
    }

    /// Whether an access policy is set.
    pub fn has_access_policy(&self) -> bool {
        self.inner.access.is_some()
    }

    /// The header API clients must send a credential in, if the access
    /// policy asks for one (see [`AccessPolicy::credential_header`]).
    pub fn credential_header(&self) -> Option<&str> {
        self.inner.access.as_deref().and_then(|policy| policy.credential_header())
    }

    /// The OAuth protected-resource metadata's address, if the access
    /// policy takes OAuth tokens (see [`AccessPolicy::oauth_resource_metadata`]).
    pub fn oauth_resource_metadata(&self) -> Option<&str> {
        self.inner.access.as_deref().and_then(|policy| policy.oauth_resource_metadata())
    }

    /// Tells the access policy the scopes an endpoint's methods need (see
    /// [`AccessPolicy::declare_scopes`]); endpoints do it when they are built.
    pub fn declare_scopes<'a>(&self, methods: impl IntoIterator<Item = &'a rpc_core::Method>) {
        let Some(policy) = self.inner.access.as_deref() else { return };
        // The policy keeps each scope once, sorted.
        let scopes: Vec<&str> = methods.into_iter().flat_map(|m| m.descriptor().scopes.iter().copied()).collect();
        if !scopes.is_empty() {
            policy.declare_scopes(&scopes);
        }
    }

    /// Whether callers may be limited to scopes (an access policy that may
    /// give such identities, see [`AccessPolicy::limits_scopes`]).
    pub fn limits_scopes(&self) -> bool {
        self.inner.access.as_deref().is_some_and(|policy| policy.limits_scopes())
    }

    /// The challenge of a call `identity` may not make for lack of scopes
    /// `needed` (see [`AccessPolicy::insufficient_scope`]).
    pub fn insufficient_scope(&self, identity: &Identity, needed: &[&str]) -> Option<http::HeaderValue> {
        self.inner.access.as_deref().and_then(|policy| policy.insufficient_scope(identity, needed))
    }

    /// Steps 3 and 4 around an endpoint's handler: a CORS preflight is
    /// answered (by the CORS layer, or with `204` and `Allow` when CORS is
    /// off) without asking the access policy; any other request runs
    /// `handle` with the caller's identity once the policy allows it, or
    /// gets 401/403. With CORS on, every response carries its headers
    /// (refusals too, so a page can read why).
    pub async fn guard<B: 'static, F, Fut>(
        &self,
        request: Request<B>,
        target: Target<'_>,
        handle: F,
    ) -> Response<ResponseBody>
    where
        F: FnOnce(Request<B>, Option<Arc<Identity>>) -> Fut,
        Fut: Future<Output = Response<ResponseBody>>,
    {
        match self.cors_layer() {
            Some(layer) => serve_with_cors(layer, request, |request| self.admit(request, target, handle)).await,
            None if request.method() == Method::OPTIONS => {
                let mut response = status_response(StatusCode::NO_CONTENT);
                response.headers_mut().insert(ALLOW, HeaderValue::from_static(target.allow));
                response
            }
            None => self.admit(request, target, handle).await,
        }
    }

    async fn admit<B: 'static, F, Fut>(
        &self,
        request: Request<B>,
        target: Target<'_>,
        handle: F,
    ) -> Response<ResponseBody>
    where
        F: FnOnce(Request<B>, Option<Arc<Identity>>) -> Fut,
        Fut: Future<Output = Response<ResponseBody>>,
    {
        if self.inner.access.is_none() {
            return handle(request, None).await;
        }
        let decision = {
            let access = AccessRequest {
                method: request.method(),
                uri: original_uri(&request),
                headers: request.headers(),
                group: target.group,
                version: target.version,
                resource: target.resource,
                peer: connection_of(request.extensions(), request.body()).map(Connection::peer),
            };
            self.authorize(&access).await
        };
        match decision {
            Ok(identity) => handle(request, identity).await,
            Err(refusal) => {
                tracing::debug!(?refusal, group = target.group, version = target.version, "access refused");
                refusal.into_response()
            }
        }
    }

    /// Step 4: the access decision; `Ok` carries the caller's identity, if known.
    pub async fn authorize(&self, request: &AccessRequest<'_>) -> Result<Option<Arc<Identity>>, Refusal> {
        let Some(policy) = &self.inner.access else { return Ok(None) };
        match policy.check(request).await {
            Access::Allow(identity) => Ok(identity.map(Arc::new)),
            Access::Unauthorized(message) => Err(Refusal::Unauthorized(message.into_owned())),
            Access::Forbidden(message) => Err(Refusal::Forbidden(message.into_owned())),
            Access::Challenge(challenge) => Err(Refusal::Challenge(challenge)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_security_without_cors_or_access_policy_lets_requests_skip_the_guard() {
        let open = Security::new();
        assert!(open.is_open_to(&Method::POST));
        assert!(open.is_open_to(&Method::GET));
        assert!(!open.is_open_to(&Method::OPTIONS), "a preflight gets 204 and `Allow` from the guard");
        let cors = Security::new().cors(Cors::any());
        assert!(!cors.is_open_to(&Method::POST), "CORS headers go on every response");
        let tokens = TokenPolicy::new().token("a-token-of-a-decent-length-0123456789").expect("a valid token");
        assert!(!Security::new().tokens(tokens).is_open_to(&Method::POST), "the access policy decides");
    }
}
