//! Streamable HTTP: one endpoint per API version (`/v1`, `/v2`, ... under
//! the mount point) serving both protocol eras.
//!
//! A POST whose `_meta` names a protocol version (or whose
//! `MCP-Protocol-Version` header names one outside the handshake era) is a
//! 2026-07-28 request, served statelessly ([`stateless`](super::stateless));
//! `initialize`, requests of a session, GET and DELETE belong to the
//! handshake era ([`handshake`](super::handshake)). An endpoint configured
//! for one era only ([`Eras`](crate::Eras)) routes everything there.
//!
//! Before either: `Host`/`Origin` outside the allowed names get 403; a group
//! whose method names are not valid tool names gets 500 on every request;
//! a path without a version of the group gets 404. `server.json` and the
//! client manifests below a version are [`documents`](crate::documents).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Method as HttpMethod, Request, StatusCode, header};
use http_body::Body;
use rpc::i18n::LanguageHeaders;
use rpc::jsonrpc::envelope::{self, Message};
use rpc::security::{Resource, Target};
use rpc::server::body::{BoxError, ReadError, json_response, read_limited, status_response};
use rpc::server::route::{original_uri, version_from_path};
use serde_json::json;

use super::negotiate::is_json_body;
use super::reply::{self, HttpResponse, stateless_status};
use super::{Caller, handshake, stateless};
use crate::call::ProtocolError;
use crate::endpoint::McpEndpoint;

fn invalid(message: impl Into<std::borrow::Cow<'static, str>>) -> ProtocolError {
    ProtocolError::new(rpc::error::code::INVALID_REQUEST, message)
}

fn method_not_allowed(allow: &'static str) -> HttpResponse {
    let mut response = status_response(StatusCode::METHOD_NOT_ALLOWED);
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}

impl McpEndpoint {
    /// Handles one HTTP request.
    pub async fn handle<B>(&self, request: Request<B>) -> HttpResponse
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let inner = &*self.inner;
        let env = inner.executor.environment();
        if let Err(why) = inner.security.check_hosts(original_uri(&request), request.headers()) {
            tracing::debug!(%why, "refused by DNS-rebinding protection");
            return reply::error(StatusCode::FORBIDDEN, None, &invalid(why.message()));
        }
        if let Some(why) = inner.tools.broken() {
            let message = if env.is_debug() { why.to_owned() } else { "the MCP endpoint is misconfigured".to_owned() };
            let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": rpc::error::code::INTERNAL_ERROR, "message": message}});
            return json_response(StatusCode::INTERNAL_SERVER_ERROR, body.to_string());
        }
        if let Some((version, document)) = crate::documents::document_path(request.uri().path()) {
            return crate::documents::serve(inner, version, document, request).await;
        }
        let group = Some(inner.group.as_str());
        let served = version_from_path(request.uri().path())
            .filter(|v| inner.security.is_available(group, *v))
            .and_then(|v| inner.tools.version(v).map(|t| (v, t)));
        let Some((version, tools)) = served else {
            let error = invalid(format!("group `{}` has no MCP endpoint at this path", inner.group));
            return reply::error(StatusCode::NOT_FOUND, None, &error);
        };
        let eras = inner.config.eras;
        let allow = if eras.handshake() { "POST, GET, DELETE, OPTIONS" } else { "POST, OPTIONS" };
        // A browser asking for the endpoint gets its page, a document.
        // HEAD is GET without the body (hyper leaves it out), with the same rules.
        let page = matches!(*request.method(), HttpMethod::GET | HttpMethod::HEAD)
            && crate::docs_page::wants_page(request.headers());
        let target = Target::new(group, version, if page { Resource::Docs } else { Resource::Api }, allow);
        inner
            .security
            .guard(request, target, |request, identity| async move {
                let translations = &inner.translations;
                let language = translations.negotiate(request.headers());
                let caller = Caller { identity, language };
                let mut response = match *request.method() {
                    HttpMethod::GET | HttpMethod::HEAD if page => {
                        crate::docs_page::response(self, version, &request, language)
                    }
                    HttpMethod::POST => self.post(version, tools, request, caller).await,
                    HttpMethod::DELETE if eras.handshake() => {
                        handshake::delete(inner, tools.endpoint(), request.headers(), &caller).await
                    }
                    HttpMethod::GET | HttpMethod::DELETE if !eras.handshake() => method_not_allowed("POST, OPTIONS"),
                    HttpMethod::GET => method_not_allowed("POST, DELETE, OPTIONS"),
                    _ => method_not_allowed(allow),
                };
                translations.mark_response(response.headers_mut(), language);
                response
            })
            .await
    }

    async fn post<B>(
        &self,
        version: u32,
        tools: &crate::tools::ToolSet,
        request: Request<B>,
        caller: Caller,
    ) -> HttpResponse
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let inner = &*self.inner;
        let env = inner.executor.environment();
        let (parts, body) = request.into_parts();
        if !is_json_body(&parts.headers) {
            return reply::error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                None,
                &invalid("Content-Type must be application/json"),
            );
        }
        let bytes = match read_limited(&parts.headers, body, inner.config.max_body_bytes).await {
            Ok(bytes) => bytes,
            Err(ReadError::TooLarge { limit }) => {
                return reply::error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    None,
                    &invalid(format!("request body exceeds {limit} bytes")),
                );
            }
            Err(ReadError::Io(e)) => {
                return reply::error(StatusCode::BAD_REQUEST, None, &invalid(format!("unreadable body: {e}")));
            }
            Err(ReadError::TimedOut) => {
                return reply::error(StatusCode::REQUEST_TIMEOUT, None, &invalid("request body not received in time"));
            }
        };
        let parsed = match envelope::parse_body_with(&bytes, true, &inner.config.json_limits) {
            Ok(parsed) => parsed,
            Err(error) => return reply::error(StatusCode::BAD_REQUEST, None, &ProtocolError::from_rpc(&error, env)),
        };
        let eras = inner.config.eras;
        match parsed {
            envelope::Body::Single(Err(invalid)) => {
                reply::error(StatusCode::BAD_REQUEST, invalid.id, &ProtocolError::from_rpc(&invalid.error, env))
            }
            envelope::Body::Single(Ok(Message::Request(req)))
                if eras.stateless() && (!eras.handshake() || stateless::is_stateless_request(&req, &parts.headers)) =>
            {
                stateless::handle(self, tools, version, &parts.headers, &parts.extensions, req, caller).await
            }
            envelope::Body::Single(Ok(message)) if eras.handshake() => {
                handshake::single(self, tools, version, &parts.headers, message, caller).await
            }
            envelope::Body::Batch(items) if eras.handshake() => {
                handshake::batch(self, tools, version, &parts.headers, items, caller).await
            }
            envelope::Body::Single(Ok(Message::Response { id })) => {
                let error = invalid("this endpoint takes requests and notifications, not responses");
                reply::error(stateless_status(error.code), Some(id), &error)
            }
            _ => {
                let error = invalid("the body must be a single JSON-RPC request or notification, not a batch");
                reply::error(StatusCode::BAD_REQUEST, None, &error)
            }
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
        Box::pin(async move { Ok(this.handle(request).await) })
    }
}
