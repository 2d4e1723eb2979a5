//! Extension points deciding who may use an endpoint: [`AccessPolicy`]
//! (per request: allow, with an optional [`Identity`], or refuse with 401
//! or 403) and [`AvailabilityChecker`] (whether a group and version is
//! served at all: 404 when not).

use std::borrow::Cow;
use std::net::SocketAddr;

use http::{HeaderMap, Method, Uri};

use rpc_core::future::MaybeReady;
pub use rpc_core::identity::Identity;

/// What is being asked for: an API call, or a document about the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Resource {
    /// A JSON-RPC call or an MCP message.
    Api,
    /// A document: OpenRPC (and later `server.json`, client manifests).
    Docs,
}

/// The request an [`AccessPolicy`] decides on.
#[derive(Debug)]
#[non_exhaustive]
pub struct AccessRequest<'a> {
    /// The HTTP method.
    pub method: &'a Method,
    /// The request target as the client sent it (before any mount prefix was stripped).
    pub uri: &'a Uri,
    /// The request headers.
    pub headers: &'a HeaderMap,
    /// The API group the endpoint serves (`None`: every method).
    pub group: Option<&'a str>,
    /// The API version asked for.
    pub version: u32,
    /// API or documents.
    pub resource: Resource,
    /// The client's address, when the server knows it.
    pub peer: Option<SocketAddr>,
}

/// An [`AccessPolicy`]'s decision.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Access {
    /// Let the request through, as `identity` when known.
    Allow(Option<Identity>),
    /// 401: no credentials were sent. The message must not help guessing.
    Unauthorized(Cow<'static, str>),
    /// 403: the credentials are not good for this request.
    Forbidden(Cow<'static, str>),
    /// Refused with a status and a `WWW-Authenticate` challenge telling the
    /// client how to authenticate (an OAuth bearer challenge).
    Challenge(super::Challenge),
}

impl Access {
    /// Allowed, anonymously.
    pub fn allow() -> Self {
        Access::Allow(None)
    }

    /// Allowed as `identity`.
    pub fn allow_as(identity: Identity) -> Self {
        Access::Allow(Some(identity))
    }
}

/// Decides per request whether it may proceed (per group, per tenant,
/// per key, ...). The built-in [`TokenPolicy`](super::TokenPolicy) checks
/// static tokens; a database-backed policy returns
/// [`MaybeReady::pending`].
///
/// CORS preflights (`OPTIONS`) never reach the policy.
pub trait AccessPolicy: Send + Sync + 'static {
    /// The decision for `request`.
    fn check<'a>(&'a self, request: &'a AccessRequest<'a>) -> MaybeReady<'a, Access>;

    /// The header a client must send its credential in to call the API,
    /// when the policy asks for one (`Ufo-RPC-Token`, `Authorization`):
    /// documents that tell clients how to connect (the MCP Registry's
    /// `server.json`, client manifests) name it, with a placeholder value.
    /// `None` (the default): the API needs no header.
    fn credential_header(&self) -> Option<&str> {
        None
    }

    /// The address of the OAuth protected-resource metadata (RFC 9728),
    /// when the policy takes OAuth access tokens: documents telling clients
    /// how to connect name it instead of a header (clients that speak MCP
    /// authorization find the authorization server from there).
    fn oauth_resource_metadata(&self) -> Option<&str> {
        None
    }

    /// The `WWW-Authenticate` challenge of the 403 answering a call by
    /// `identity` of a method needing scopes `needed` that its credential
    /// lacks (`scopes(...)`), naming the scopes to ask for (RFC 6750 §3.1;
    /// MCP's step-up authorization). `None` (the default): the 403 has no
    /// challenge.
    fn insufficient_scope(&self, identity: &Identity, needed: &[&str]) -> Option<http::HeaderValue> {
        let _ = (identity, needed);
        None
    }

    /// Whether the identities the policy gives may be limited to scopes
    /// ([`Identity::with_scopes`]): then what a caller sees of a list with
    /// scoped items depends on who asks, and the list is `private` to
    /// caches. The default, `true`, is always right; a policy whose
    /// identities never carry scopes (static tokens) says `false`, and
    /// its lists stay `public`.
    fn limits_scopes(&self) -> bool {
        true
    }

    /// Told by each endpoint behind the policy, when it is built, the
    /// scopes its methods need (`scopes(...)`): an OAuth policy lists them
    /// in its metadata's `scopes_supported`. The default ignores them.
    fn declare_scopes(&self, scopes: &[&str]) {
        let _ = scopes;
    }
}

/// Decides whether a group and version is served at all; `false` makes
/// every request to it a 404, as if it did not exist (a feature flag, a
/// tenant's plan, maintenance).
pub trait AvailabilityChecker: Send + Sync + 'static {
    /// Whether `group` (`None`: the ungrouped endpoint) at `version` is served now.
    fn is_available(&self, group: Option<&str>, version: u32) -> bool;
}

impl<F> AvailabilityChecker for F
where
    F: Fn(Option<&str>, u32) -> bool + Send + Sync + 'static,
{
    fn is_available(&self, group: Option<&str>, version: u32) -> bool {
        self(group, version)
    }
}
