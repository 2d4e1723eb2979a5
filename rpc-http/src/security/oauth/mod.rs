//! OAuth 2.1 resource server (feature `oauth`): the endpoints accept JWT
//! access tokens of one authorization server, as the MCP authorization spec
//! asks of a remote MCP server (and as `/rpc` clients may use too).
//!
//! * [`OAuthSettings::new`]`(issuer, audience)` names the authorization
//!   server and this resource (its RFC 8707 identifier, the `aud` tokens
//!   must carry); [`OAuthSettings::discover`] reads the server's metadata
//!   (RFC 8414, else OpenID discovery) and key set, and gives the
//!   [`OAuthPolicy`], an [`AccessPolicy`] for [`Security::oauth`](super::Security::oauth).
//! * A request without a token gets 401 and `WWW-Authenticate: Bearer
//!   resource_metadata="…"` (and the scopes every call needs); a bad token
//!   401 `error="invalid_token"` with the reason; a token without a needed
//!   scope 403 `error="insufficient_scope"` naming it (RFC 6750 §3).
//! * [`OAuthPolicy::metadata_service`] serves the protected-resource
//!   metadata (RFC 9728) clients start from, at [`METADATA_PATH`].
//!
//! Tokens: signature by a key of the issuer's JWKS (by `kid`; an unknown
//! `kid` fetches the set again, at most once per minute), an algorithm of a
//! pinned list (RS256 by default; never `none` or a shared secret), `iss`
//! the issuer, `aud` naming this resource, `exp` required, `nbf` honoured,
//! 30 s of leeway. The caller's [`Identity`](super::Identity) is the
//! token's `sub` (else its `client_id`), with its scopes and client id.
//!
//! Opaque tokens (anything that is not a JWT) are refused, unless
//! [`OAuthSettings::introspection`] turns on token introspection (RFC
//! 7662): they are then checked by the authorization server's
//! `introspection_endpoint`, the answers kept briefly (by the token's
//! SHA-256), with the same rules (`active`, `exp`, `nbf`, `iss`, `aud`
//! required) and the same identity; an authorization server that cannot
//! answer makes such requests 503 (retry later). JWTs are still checked
//! locally against the key set.

mod discovery;
mod fetch;
mod introspection;
mod keys;
mod metadata;
mod token;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::AUTHORIZATION;
use http::{HeaderMap, StatusCode};
use jsonwebtoken::{Algorithm, Validation};
use url::Url;

pub use metadata::{METADATA_PATH, MetadataService};

use super::{Access, AccessPolicy, AccessRequest, BearerError, Challenge, Identity, Resource, bearer_challenge};
use introspection::{Credentials, Introspector};
use keys::KeySet;
use rpc_core::future::MaybeReady;
use token::Verdict;

/// A mistake in the OAuth settings, or an authorization server that could
/// not be read at start-up; the message says which and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthError(String);

impl OAuthError {
    fn new(message: impl Into<String>) -> Self {
        OAuthError(message.into())
    }
}

impl std::fmt::Display for OAuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OAuthError {}

/// What an [`OAuthPolicy`] is made from; [`discover`](Self::discover) reads
/// the authorization server and gives the policy.
#[derive(Debug, Clone)]
pub struct OAuthSettings {
    issuer: Url,
    issuer_text: String,
    audience: Url,
    audience_text: String,
    required_scopes: Vec<String>,
    scopes_supported: Vec<String>,
    algorithms: Vec<Algorithm>,
    /// Whether `algorithm` was called (the default list is then replaced).
    algorithms_chosen: bool,
    jwks_uri: Option<Url>,
    leeway: Duration,
    min_refresh: Duration,
    max_age: Duration,
    resource_name: Option<String>,
    protect_docs: bool,
    /// The client credentials of token introspection, when it is on.
    introspection: Option<Credentials>,
    /// The introspection endpoint given instead of the metadata's.
    introspection_endpoint: Option<Url>,
}

/// Whether `scope` is a scope token (RFC 6749 §3.3: visible ASCII but `"` and `\`).
fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope.len() <= 128
        && scope.bytes().all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
}

impl OAuthSettings {
    /// Tokens of the authorization server `issuer` (its identifier exactly as
    /// its metadata gives it: `https://auth.example.com`), for the resource
    /// `audience` (this server's identifier, the `aud` its tokens carry:
    /// `https://api.example.com`, or the MCP endpoint's URL). Both `https`;
    /// `http` is accepted for an issuer on a loopback address only (tests,
    /// local development).
    pub fn new(issuer: &str, audience: &str) -> Result<Self, OAuthError> {
        let issuer_url =
            Url::parse(issuer).map_err(|e| OAuthError::new(format!("the issuer `{issuer}` is not a URL: {e}")))?;
        fetch::check_fetchable("the issuer", &issuer_url)?;
        if issuer_url.query().is_some() || issuer_url.fragment().is_some() {
            return Err(OAuthError::new(format!(
                "the issuer `{issuer}` has a query or fragment (RFC 8414 §2 forbids them)"
            )));
        }
        let audience_url = Url::parse(audience)
            .map_err(|e| OAuthError::new(format!("the audience `{audience}` is not a URL: {e}")))?;
        if !matches!(audience_url.scheme(), "https" | "http") || audience_url.fragment().is_some() {
            return Err(OAuthError::new(format!(
                "the audience `{audience}` must be this server's https URL without a fragment (RFC 8707 §2)"
            )));
        }
        if audience_url.scheme() == "http" && !fetch::is_loopback(&audience_url) {
            tracing::warn!(
                audience,
                "the OAuth audience is plain http on a host that is not loopback: clients will send tokens in clear"
            );
        }
        Ok(OAuthSettings {
            issuer: issuer_url,
            issuer_text: issuer.to_owned(),
            audience: audience_url,
            audience_text: audience.to_owned(),
            required_scopes: Vec::new(),
            scopes_supported: Vec::new(),
            algorithms: vec![Algorithm::RS256],
            algorithms_chosen: false,
            jwks_uri: None,
            leeway: Duration::from_secs(30),
            min_refresh: Duration::from_secs(60),
            max_age: Duration::from_secs(3600),
            resource_name: None,
            protect_docs: false,
            introspection: None,
            introspection_endpoint: None,
        })
    }

    /// Every API request needs a token granting `scope` (else 403
    /// `insufficient_scope`); the scope is also listed as supported.
    pub fn require_scope(mut self, scope: &str) -> Result<Self, OAuthError> {
        self = self.supported_scope(scope)?;
        if !self.required_scopes.iter().any(|s| s == scope) {
            self.required_scopes.push(scope.to_owned());
        }
        Ok(self)
    }

    /// Lists `scope` in the metadata's `scopes_supported` (scopes clients
    /// may ask for; methods check them through `ctx.identity()`).
    pub fn supported_scope(mut self, scope: &str) -> Result<Self, OAuthError> {
        if !is_scope_token(scope) {
            return Err(OAuthError::new(format!(
                "`{}` is not a scope: 1 to 128 visible ASCII characters without spaces, `\"` or `\\`",
                scope.escape_debug()
            )));
        }
        if !self.scopes_supported.iter().any(|s| s == scope) {
            self.scopes_supported.push(scope.to_owned());
        }
        Ok(self)
    }

    /// Accepts tokens signed with the algorithm `name` (RS256, PS256, ES256,
    /// EdDSA, ...). The first call replaces the default (RS256 alone);
    /// shared-secret algorithms (HS*) and `none` are refused.
    pub fn algorithm(mut self, name: &str) -> Result<Self, OAuthError> {
        let algorithm = token::parse_algorithm(name)?;
        if !self.algorithms_chosen {
            self.algorithms.clear();
            self.algorithms_chosen = true;
        }
        if !self.algorithms.contains(&algorithm) {
            self.algorithms.push(algorithm);
        }
        Ok(self)
    }

    /// Reads the issuer's keys at `url` instead of the `jwks_uri` of its
    /// metadata (no metadata is read then).
    pub fn jwks_uri(mut self, url: &str) -> Result<Self, OAuthError> {
        let url =
            Url::parse(url).map_err(|e| OAuthError::new(format!("the key set address `{url}` is not a URL: {e}")))?;
        fetch::check_fetchable("the key set address", &url)?;
        self.jwks_uri = Some(url);
        Ok(self)
    }

    /// Accepts opaque access tokens too, checked by the authorization
    /// server's token introspection endpoint (RFC 7662; the metadata's
    /// `introspection_endpoint`, or [`introspection_endpoint`](Self::introspection_endpoint)),
    /// where this resource server authenticates as the client `client_id`
    /// with `client_secret` (HTTP Basic, `client_secret_basic`). JWTs are
    /// still checked with the key set; only tokens that are not JWTs are
    /// sent. The authorization server must return `aud` naming this
    /// resource (RFC 8707): answers without it are refused.
    pub fn introspection(mut self, client_id: &str, client_secret: &str) -> Self {
        self.introspection = Some(Credentials::new(client_id, client_secret));
        self
    }

    /// Sends opaque tokens to `url` instead of the metadata's
    /// `introspection_endpoint` (required when [`jwks_uri`](Self::jwks_uri)
    /// is given, as no metadata is read then); `https`, or `http` on a
    /// loopback address. Introspection itself is turned on by
    /// [`introspection`](Self::introspection).
    pub fn introspection_endpoint(mut self, url: &str) -> Result<Self, OAuthError> {
        let url = Url::parse(url)
            .map_err(|e| OAuthError::new(format!("the introspection endpoint `{url}` is not a URL: {e}")))?;
        fetch::check_fetchable("the introspection endpoint", &url)?;
        self.introspection_endpoint = Some(url);
        Ok(self)
    }

    /// How far `exp` and `nbf` may be off, for clocks that differ (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// How often an unknown `kid` may make the key set be fetched again
    /// (default: once a minute), and the age after which it is fetched
    /// again anyway (default: an hour).
    pub fn key_refresh(mut self, min_interval: Duration, max_age: Duration) -> Self {
        self.min_refresh = min_interval;
        self.max_age = max_age.max(min_interval);
        self
    }

    /// The human-readable name of the resource in its metadata.
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// Whether documents (OpenRPC, ...) need a token too (default: no).
    pub fn protect_docs(mut self, on: bool) -> Self {
        self.protect_docs = on;
        self
    }

    /// Reads the authorization server's metadata (unless a key set address
    /// was given) and its key set: the policy, or why not (an unreachable
    /// server, an issuer that names itself otherwise, no usable key, no
    /// introspection endpoint when introspection is on).
    pub async fn discover(self) -> Result<OAuthPolicy, OAuthError> {
        let client = fetch::client()?;
        let (jwks_uri, introspection_endpoint) = discovery::addresses(&self, &client).await?;
        fetch::check_fetchable("the issuer's `jwks_uri`", &jwks_uri)?;
        let keys = KeySet::new(client.clone(), jwks_uri, self.min_refresh, self.max_age);
        keys.refresh().await?;
        let introspector = introspection_endpoint.and_then(|endpoint| Introspector::of(&self, client, endpoint));
        let introspection = introspector.as_ref().map(|i| i.endpoint().as_str()).unwrap_or("off");
        tracing::info!(issuer = %self.issuer_text, audience = %self.audience_text, jwks = %keys.url(), introspection, "OAuth: accepting the issuer's access tokens");
        Ok(OAuthPolicy::new(self, keys, introspector))
    }
}

/// The state the policy's clones share.
pub(super) struct Inner {
    issuer: String,
    audience: String,
    required_scopes: Vec<String>,
    validations: Vec<(Algorithm, Validation)>,
    keys: KeySet,
    /// Checks opaque tokens, when introspection is on.
    introspection: Option<Introspector>,
    protect_docs: bool,
    metadata_url: String,
    metadata: MetadataService,
    /// `Bearer resource_metadata="…"[, scope="…"]`: the challenge without a token.
    challenge: http::HeaderValue,
}

/// Accepts the access tokens of one authorization server
/// ([`OAuthSettings::discover`]); set it with [`Security::oauth`](super::Security::oauth).
#[derive(Clone)]
pub struct OAuthPolicy {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for OAuthPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthPolicy")
            .field("issuer", &self.inner.issuer)
            .field("audience", &self.inner.audience)
            .field("required_scopes", &self.inner.required_scopes)
            .field("introspection_endpoint", &self.introspection_endpoint())
            .finish_non_exhaustive()
    }
}

impl OAuthPolicy {
    fn new(settings: OAuthSettings, keys: KeySet, introspection: Option<Introspector>) -> Self {
        let leeway = settings.leeway.as_secs();
        let validations = settings
            .algorithms
            .iter()
            .map(|a| (*a, token::validation(*a, &settings.issuer_text, &settings.audience_text, leeway)))
            .collect();
        let metadata_url = metadata::url_of(&settings.audience);
        let described = metadata::Described::new(
            settings.audience_text.clone(),
            settings.issuer_text.clone(),
            settings.scopes_supported.clone(),
            settings.resource_name.clone(),
        );
        let metadata = MetadataService {
            described: Arc::new(std::sync::RwLock::new(described)),
            resource_path: settings.audience.path().trim_end_matches('/').to_owned(),
        };
        let required = settings.required_scopes.join(" ");
        let mut params = vec![("resource_metadata", metadata_url.as_str())];
        if !required.is_empty() {
            params.push(("scope", required.as_str()));
        }
        let challenge = bearer_challenge(&params);
        OAuthPolicy {
            inner: Arc::new(Inner {
                issuer: settings.issuer_text,
                audience: settings.audience_text,
                required_scopes: settings.required_scopes,
                validations,
                keys,
                introspection,
                protect_docs: settings.protect_docs,
                metadata_url,
                metadata,
                challenge,
            }),
        }
    }

    /// The issuer whose tokens are accepted.
    pub fn issuer(&self) -> &str {
        &self.inner.issuer
    }

    /// This resource's identifier (the `aud` tokens must name).
    pub fn audience(&self) -> &str {
        &self.inner.audience
    }

    /// The token introspection endpoint opaque tokens are checked at, when
    /// introspection is on ([`OAuthSettings::introspection`]).
    pub fn introspection_endpoint(&self) -> Option<&str> {
        self.inner.introspection.as_ref().map(|i| i.endpoint().as_str())
    }

    /// How many introspection answers are kept now (at most 10,000; 0
    /// without introspection): for monitoring.
    pub fn introspection_cache_size(&self) -> usize {
        self.inner.introspection.as_ref().map_or(0, Introspector::cached)
    }

    /// The address of the protected-resource metadata, as challenges name it.
    pub fn metadata_url(&self) -> &str {
        &self.inner.metadata_url
    }

    /// The protected-resource metadata document (JSON).
    pub fn metadata_document(&self) -> Bytes {
        self.inner.metadata.document()
    }

    /// Serves the metadata: mount it at [`METADATA_PATH`] (the bundled
    /// router's `nest`, axum's `nest_service`).
    pub fn metadata_service(&self) -> MetadataService {
        self.inner.metadata.clone()
    }

    fn refuse(&self, error: Option<BearerError>, message: Cow<'static, str>) -> Access {
        let Some(error) = error else {
            return Access::Challenge(Challenge::new(StatusCode::UNAUTHORIZED, message, self.inner.challenge.clone()));
        };
        let mut params = vec![("error", error.code()), ("error_description", message.as_ref())];
        let required = self.inner.required_scopes.join(" ");
        if error == BearerError::InsufficientScope {
            params.push(("scope", required.as_str()));
        }
        params.push(("resource_metadata", self.inner.metadata_url.as_str()));
        let header = bearer_challenge(&params);
        Access::Challenge(Challenge::new(error.status(), message, header))
    }

    fn verdict(&self, verdict: Verdict) -> Access {
        match verdict {
            Verdict::Valid(identity) => Access::allow_as(identity),
            Verdict::Refused(error, message) => self.refuse(Some(error), message),
            Verdict::UnknownKey => self.refuse(Some(BearerError::InvalidToken), "the token's key is unknown".into()),
            Verdict::NotJwt => self.refuse(Some(BearerError::InvalidToken), token::NOT_JWT.into()),
            // Not the token's fault: no error code, the challenge to retry with.
            Verdict::Unavailable => Access::Challenge(Challenge::new(
                StatusCode::SERVICE_UNAVAILABLE,
                introspection::UNAVAILABLE,
                self.inner.challenge.clone(),
            )),
        }
    }
}

/// The bearer token of a request, or why there is none.
enum Presented<'a> {
    None,
    Token(&'a str),
    Ambiguous,
}

fn presented(headers: &HeaderMap) -> Presented<'_> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return if headers.contains_key(AUTHORIZATION) { Presented::Ambiguous } else { Presented::None };
    };
    let bytes = value.as_bytes();
    if bytes.len() < 7 || !bytes[..7].eq_ignore_ascii_case(b"bearer ") {
        return Presented::None;
    }
    match std::str::from_utf8(&bytes[7..]).map(str::trim) {
        Ok(token) if !token.is_empty() => Presented::Token(token),
        _ => Presented::None,
    }
}

impl AccessPolicy for OAuthPolicy {
    fn check<'a>(&'a self, request: &'a AccessRequest<'a>) -> MaybeReady<'a, Access> {
        if request.resource == Resource::Docs && !self.inner.protect_docs {
            return MaybeReady::ready(Access::allow());
        }
        let token = match presented(request.headers) {
            Presented::Token(token) => token,
            Presented::None => {
                return MaybeReady::ready(self.refuse(
                    None,
                    "Unauthorized: send an OAuth access token as `Authorization: Bearer <token>`".into(),
                ));
            }
            Presented::Ambiguous => {
                return MaybeReady::ready(
                    self.refuse(Some(BearerError::InvalidRequest), "send one Authorization header".into()),
                );
            }
        };
        match token::check(&self.inner, token) {
            Verdict::UnknownKey if self.inner.keys.may_refresh() => MaybeReady::pending(async move {
                // A rotation: fetch the set again, then check once more.
                let _ = self.inner.keys.refresh().await;
                match token::check(&self.inner, token) {
                    Verdict::UnknownKey => self.verdict(token::unknown_key(token)),
                    verdict => self.verdict(verdict),
                }
            }),
            Verdict::UnknownKey => MaybeReady::ready(self.verdict(token::unknown_key(token))),
            Verdict::NotJwt => match &self.inner.introspection {
                Some(introspector) => MaybeReady::pending(async move { self.verdict(introspector.check(token).await) }),
                None => MaybeReady::ready(self.verdict(Verdict::NotJwt)),
            },
            verdict => {
                if self.inner.keys.is_stale() && self.inner.keys.may_refresh() {
                    let policy = self.clone();
                    tokio::spawn(async move {
                        let _ = policy.inner.keys.refresh().await;
                    });
                }
                MaybeReady::ready(self.verdict(verdict))
            }
        }
    }

    fn oauth_resource_metadata(&self) -> Option<&str> {
        Some(&self.inner.metadata_url)
    }

    fn declare_scopes(&self, scopes: &[&str]) {
        self.inner.metadata.declare(scopes);
    }

    fn insufficient_scope(&self, identity: &Identity, needed: &[&str]) -> Option<http::HeaderValue> {
        // What to ask for: what every request needs, what the token has,
        // and what this call needs (a client replaces its token with one
        // of the scopes named here).
        let mut scopes: Vec<&str> = self.inner.required_scopes.iter().map(String::as_str).collect();
        for scope in identity.scopes.iter().map(String::as_str).chain(needed.iter().copied()) {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        let missing: Vec<&str> = needed.iter().copied().filter(|s| !identity.has_scope(s)).collect();
        let description = format!("the token lacks the scope {}", missing.join(" "));
        let scope = scopes.join(" ");
        Some(bearer_challenge(&[
            ("error", BearerError::InsufficientScope.code()),
            ("error_description", &description),
            ("scope", &scope),
            ("resource_metadata", &self.inner.metadata_url),
        ]))
    }
}
