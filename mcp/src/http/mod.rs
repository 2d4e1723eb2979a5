//! Streamable HTTP: the [`McpEndpoint`], a `tower::Service` serving one
//! endpoint per API version (`/v1`, `/v2`, ... under the mount point) in
//! both protocol eras, on top of the transport-free [`McpServer`].
//!
//! What is HTTP's and not the server's: `Host`/`Origin` checks (403),
//! routing by version (404), the security guard (CORS, tokens), the docs
//! page for browsers, `server.json` and client manifests, the body (415,
//! 413, 408, its parsing), the session and protocol-version headers, the
//! 2026-07-28 mirrored headers (`headers::Mirrored`), `DELETE` of a
//! session, and mapping the server's [`Reply`] to a status, JSON or SSE.

#[cfg(feature = "docs")]
mod docs_page;
pub(crate) mod documents;
pub mod headers;
pub mod negotiate;
pub(crate) mod response;
mod sse;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::FutureExt as _;
use http::{HeaderMap, HeaderValue, Method as HttpMethod, Request, StatusCode, header};
use http_body::Body;
use rpc::Security;
use rpc::i18n::{JsonHeaders, LanguageHeaders};
use rpc::jsonrpc::envelope;
use rpc::security::{Resource, Target};
use rpc::server::Connection;
use rpc::server::body::{BoxError, ReadError, json_response, read_declared, status_response};
use rpc::server::route::{connection_of, inner_path_from, original_uri_of, version_from_path};
use serde_json::json;

use crate::call::ProtocolError;
use crate::server::{Caller, Incoming, McpServer, ReadParams, Reply, Status};
use headers::{McpHeaders, Mirrored};
use negotiate::{accepted_found, is_json_content};
use response::{HttpResponse, to_http, to_http_with};

/// The MCP endpoint of one API group over Streamable HTTP, a
/// `tower::Service`. Mount it at a prefix such as `/mcp`; it serves `/v1`,
/// `/v2`, ... (and `""` as version 1). Cheap to clone.
#[derive(Clone)]
pub struct McpEndpoint {
    pub(crate) server: McpServer,
    /// What the HTTP edge adds to the server: one reference count per clone.
    pub(crate) edge: Arc<Edge>,
}

/// The endpoint's HTTP side.
pub(crate) struct Edge {
    /// Tokens, allowed hosts, CORS.
    pub security: Security,
    /// The headers of a JSON answer in each language, built once.
    pub json_headers: JsonHeaders,
}

impl std::fmt::Debug for McpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpEndpoint").field("group", &self.server.group()).finish_non_exhaustive()
    }
}

fn invalid(message: impl Into<std::borrow::Cow<'static, str>>) -> ProtocolError {
    ProtocolError::new(rpc::error::code::INVALID_REQUEST, message)
}

/// The methods an endpoint serving `eras` takes (`Allow`).
fn allowed(eras: crate::config::Eras) -> &'static str {
    if eras.handshake() { "POST, GET, DELETE, OPTIONS" } else { "POST, OPTIONS" }
}

fn method_not_allowed(allow: &'static str) -> HttpResponse {
    let mut response = status_response(StatusCode::METHOD_NOT_ALLOWED);
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}

/// A JSON-RPC error response.
fn error(status: StatusCode, error: &ProtocolError) -> HttpResponse {
    let mut out = Vec::with_capacity(128);
    crate::server::write_error_body(&mut out, None, error);
    json_response(status, out)
}

/// Where [`McpEndpoint::entry`] sends a request.
enum Entry {
    /// Answered: refused.
    Refused(HttpResponse),
    /// A document at this API version.
    Document(u32, documents::Document),
    /// Served at this API version; as the endpoint's page for a browser (`true`).
    Served { version: u32, page: bool },
}

impl McpEndpoint {
    /// The transport-free server behind the endpoint (for stdio, or a
    /// transport of your own).
    pub fn server(&self) -> McpServer {
        self.server.clone()
    }

    /// The API group served.
    pub fn group(&self) -> &str {
        self.server.group()
    }

    /// Tokens, allowed hosts and CORS of the endpoint (with what the
    /// settings added).
    pub fn security(&self) -> &Security {
        &self.edge.security
    }

    /// The translations the endpoint's texts come from (and its languages).
    pub fn translations(&self) -> &rpc::Translations {
        self.server.translations()
    }

    /// The serialised `tools/list` result of API `version` (see [`McpServer::tools_list`]).
    pub fn tools_list(
        &self,
        version: u32,
        identity: Option<&rpc::Identity>,
        language: rpc::i18n::Language,
        protocol: crate::ProtocolVersion,
        cursor: Option<&str>,
    ) -> Option<Bytes> {
        self.server.tools_list(version, identity, language, protocol, cursor)
    }

    /// Ends the open `subscriptions/listen` streams gracefully (call it when
    /// shutting down a server that is not `rpc::server::serve`, which does
    /// it by itself).
    pub fn close_streams(&self) {
        self.server.close_streams();
    }

    /// Handles one HTTP request.
    pub async fn handle<B>(&self, request: Request<B>) -> HttpResponse
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let (parts, body) = request.into_parts();
        self.clone().respond(parts, body).await
    }

    /// [`handle`](Self::handle), owning the endpoint: the service's boxed
    /// future is this one, built in place, not another that holds it. It
    /// takes the request split, so that the future holds its parts once
    /// (not the request and its parts): under 1 KB, a size the allocator
    /// serves from its per-thread cache.
    #[allow(clippy::manual_async_fn, reason = "an async fn's future would hold its arguments twice")]
    fn respond<B>(self, parts: http::request::Parts, body: B) -> impl Future<Output = HttpResponse> + Send
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        // An `async` block, not an `async fn`: an `async fn` copies its
        // arguments into locals, and its future holds them twice.
        async move {
            let this = &self;
            // Every header read below found in one pass (no lookup by name).
            let found = McpHeaders::scan(&parts.headers);
            let (version, page) = match this.entry(&parts, &body, &found) {
                Entry::Refused(response) => return response,
                Entry::Document(version, document) => {
                    // Boxed, as every path is: the endpoint's own future stays small.
                    let request = Request::from_parts(parts, body);
                    return rpc::future::in_box(|| documents::serve(this, version, document, request)).await;
                }
                Entry::Served { version, page } => (version, page),
            };
            let group = Some(this.server.inner.group.as_str());
            let allow = allowed(this.server.inner.config.eras);
            let target = Target::new(group, version, if page { Resource::Docs } else { Resource::Api }, allow);
            if this.edge.security.is_open_to(&parts.method) {
                // No CORS, no preflight, no access policy: the guard would hand
                // the request on as it is, so it is not built (nor its future).
                // Written out rather than through the guard's handler closure:
                // that async block holds the request once more (+500
                // instructions per call, measured).
                if page {
                    return this.page(version, &Request::from_parts(parts, body));
                }
                return this.serve(version, &parts, body, None, &found).await;
            }
            // Boxed: the common path's future does not hold the guard's.
            let request = Request::from_parts(parts, body);
            rpc::future::in_box(|| {
                this.edge.security.guard(request, target, |request, identity| async move {
                    if page {
                        return this.page(version, &request);
                    }
                    let (parts, body) = request.into_parts();
                    let found = McpHeaders::scan(&parts.headers);
                    this.serve(version, &parts, body, identity, &found).await
                })
            })
            .await
        }
    }

    /// Where a request goes, found without waiting: refused (host, broken
    /// tools, no such version), one of the documents, or served at its
    /// version (as the endpoint's page for a browser, `page`). A function of
    /// its own, not inlined: the refusals' values are not laid out in the
    /// stack frame of every request.
    #[inline(never)]
    fn entry<B: 'static>(&self, parts: &http::request::Parts, body: &B, found: &McpHeaders<'_>) -> Entry {
        let inner = &*self.server.inner;
        let env = inner.executor.environment();
        if let Err(why) =
            self.edge.security.check_scanned_hosts(original_uri_of(&parts.uri, &parts.extensions), &found.common)
        {
            tracing::debug!(%why, "refused by DNS-rebinding protection");
            return Entry::Refused(error(StatusCode::FORBIDDEN, &invalid(why.message())));
        }
        if let Some(why) = inner.tools.broken() {
            let message = if env.is_debug() { why.to_owned() } else { "the MCP endpoint is misconfigured".to_owned() };
            let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": rpc::error::code::INTERNAL_ERROR, "message": message}});
            return Entry::Refused(json_response(StatusCode::INTERNAL_SERVER_ERROR, body.to_string()));
        }
        // The path below the mount point (the router left the target as it was).
        let path = inner_path_from(&parts.uri, body);
        if let Some((version, document)) = documents::document_path(path) {
            return Entry::Document(version, document);
        }
        let group = Some(inner.group.as_str());
        let served = version_from_path(path)
            .filter(|v| self.edge.security.is_available(group, *v))
            .filter(|v| inner.tools.version(*v).is_some());
        let Some(version) = served else {
            let error_ = invalid(format!("group `{}` has no MCP endpoint at this path", inner.group));
            return Entry::Refused(error(StatusCode::NOT_FOUND, &error_));
        };
        // A browser asking for the endpoint gets its page, a document. HEAD
        // is GET without the body (hyper leaves it out), with the same rules.
        #[cfg(feature = "docs")]
        let page = matches!(parts.method, HttpMethod::GET | HttpMethod::HEAD) && docs_page::wants_page(&parts.headers);
        #[cfg(not(feature = "docs"))]
        let page = false;
        Entry::Served { version, page }
    }

    /// The endpoint's page for a browser (feature `docs`).
    #[cfg_attr(not(feature = "docs"), allow(unused_variables))]
    fn page<B: 'static>(&self, version: u32, request: &Request<B>) -> HttpResponse {
        #[cfg(feature = "docs")]
        {
            let translations = &self.server.inner.translations;
            let language = translations.negotiate(request.headers());
            let mut response = docs_page::response(self, version, request, language);
            translations.mark_response(response.headers_mut(), language);
            response
        }
        // Never asked for without the feature (`page` is then false); a 404
        // all the same rather than a panic.
        #[cfg(not(feature = "docs"))]
        status_response(StatusCode::NOT_FOUND)
    }

    /// A request the guard let through (or that needed none), by method.
    async fn serve<B>(
        &self,
        version: u32,
        parts: &http::request::Parts,
        body: B,
        identity: Option<Arc<rpc::Identity>>,
        found: &McpHeaders<'_>,
    ) -> HttpResponse
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let inner = &*self.server.inner;
        let eras = inner.config.eras;
        let translations = &inner.translations;
        let language = translations.negotiate_found(found.common.accept_language);
        // Shared (a reference count): the body that may carry it is read below.
        let connection = connection_of(&parts.extensions, &body).cloned();
        // Formatted only when a per-client limit needs it.
        let client = connection.as_ref().map(|c| c.peer().ip());
        let caller = Caller { identity, language, client };
        let connection = connection.as_ref();
        let mut response = match parts.method {
            // It marks its answers itself (most of them with headers built once).
            // Not boxed again: this future is boxed already (`call`), and
            // POST is the common request. A second allocation of the POST
            // future's size (beyond the allocator's per-thread cache) cost
            // more than a larger box for the other methods.
            HttpMethod::POST => {
                return rpc::future::outlined(self.post(version, parts, body, caller, connection, found)).await;
            }
            HttpMethod::DELETE if eras.handshake() => rpc::future::in_box(|| self.delete(version, found, caller)).await,
            HttpMethod::GET if eras.handshake() && self.server.sends_on_its_own() => {
                rpc::future::in_box(|| self.session_stream(version, &parts.headers, found, caller, connection)).await
            }
            HttpMethod::GET | HttpMethod::DELETE if !eras.handshake() => method_not_allowed("POST, OPTIONS"),
            HttpMethod::GET => method_not_allowed("POST, DELETE, OPTIONS"),
            _ => method_not_allowed(allowed(eras)),
        };
        translations.mark_response(response.headers_mut(), language);
        response
    }

    async fn post<B>(
        &self,
        version: u32,
        parts: &http::request::Parts,
        body: B,
        caller: Caller,
        connection: Option<&Connection>,
        found: &McpHeaders<'_>,
    ) -> HttpResponse
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let language = caller.language;
        let translations = &self.server.inner.translations;
        // The answers built here carry their language as every other does.
        let refuse = |status, error_: &ProtocolError| {
            let mut response = error(status, error_);
            translations.mark_response(response.headers_mut(), language);
            response
        };
        if !is_json_content(found.common.content_type.first) {
            return refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, &invalid("Content-Type must be application/json"));
        }
        let declared = found.common.declared_length();
        let bytes = match read_declared(declared, body, self.server.max_message_bytes()).await {
            Ok(bytes) => bytes,
            Err(ReadError::TooLarge { limit }) => {
                return refuse(StatusCode::PAYLOAD_TOO_LARGE, &invalid(format!("request body exceeds {limit} bytes")));
            }
            Err(ReadError::Io(e)) => return refuse(StatusCode::BAD_REQUEST, &invalid(format!("unreadable body: {e}"))),
            Err(ReadError::TimedOut) => {
                return refuse(StatusCode::REQUEST_TIMEOUT, &invalid("request body not received in time"));
            }
        };
        let body = match self.server.parse(&bytes) {
            Ok(body) => body,
            Err(e) => {
                let env = self.server.inner.executor.environment();
                return refuse(StatusCode::BAD_REQUEST, &ProtocolError::from_rpc(&e, env));
            }
        };
        let accepts = accepted_found(found.common.accept, &parts.headers);
        let mirror = Mirrored { headers: &parts.headers, found };
        // Kept for a scope refusal's challenge: only an identity limited to
        // scopes can be refused for them (no clone on every other request).
        let identity = caller.identity.as_ref().filter(|identity| identity.scoped).cloned();
        let incoming = Incoming {
            body,
            version,
            caller,
            session: found.session.text(),
            protocol: found.protocol.text(),
            remembered: false,
            accepts,
            mirror: Some(&mirror),
            cancel_scope: None,
            closing: connection.map(|c| c.draining().receiver()),
        };
        let reply = self.server.handle(&incoming).await;
        let edge = &*self.edge;
        let challenge = |needed: &[&str]| {
            identity.as_deref().and_then(|identity| edge.security.insufficient_scope(identity, needed))
        };
        let json_headers = Some(edge.json_headers.get(language));
        let (mut response, marked) = to_http_with(&self.server, reply, accepts, challenge, json_headers);
        if !marked {
            translations.mark_response(response.headers_mut(), language);
        }
        response
    }

    /// `GET` of a session: its own stream of notifications.
    async fn session_stream(
        &self,
        version: u32,
        headers: &HeaderMap,
        found: &McpHeaders<'_>,
        caller: Caller,
        connection: Option<&Connection>,
    ) -> HttpResponse {
        let mut incoming = Incoming::new(envelope::Body::<'_, ReadParams<'_>>::Batch(Vec::new()), version, caller);
        incoming.session = found.session.text();
        incoming.protocol = found.protocol.text();
        incoming.accepts = accepted_found(found.common.accept, headers);
        incoming.closing = connection.map(|c| c.draining().receiver());
        let accepts = incoming.accepts;
        let reply = self.server.open_session_stream(incoming).await;
        to_http(&self.server, reply, accepts, |_| None)
    }

    /// `DELETE`: ends the session.
    async fn delete(&self, version: u32, found: &McpHeaders<'_>, caller: Caller) -> HttpResponse {
        let mut incoming = Incoming::new(envelope::Body::<'_, ReadParams<'_>>::Batch(Vec::new()), version, caller);
        incoming.session = found.session.text();
        incoming.protocol = found.protocol.text();
        match self.server.end_session(incoming).await {
            Reply::Accepted => status_response(StatusCode::OK),
            Reply::Message(message) if message.status != Status::Ok => {
                json_response(response::status_code(message.status), message.body)
            }
            other => to_http(&self.server, other, crate::server::Accepts::BOTH, |_| None),
        }
    }
}

impl<B> tower::Service<Request<B>> for McpEndpoint
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = HttpResponse;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let this = self.clone();
        let (parts, body) = request.into_parts();
        // `map(Ok)`, not an `async` block that would hold the future and copy it in.
        rpc::future::in_box(move || this.respond(parts, body).map(Ok))
    }
}
