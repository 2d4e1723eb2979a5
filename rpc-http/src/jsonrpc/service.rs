//! The JSON-RPC 2.0 HTTP endpoint as a `tower::Service`.
//!
//! Mounted at a prefix (e.g. `/rpc`), it serves `POST` (calls) and `GET`
//! (the OpenRPC document; the HTML page of [`docs`](crate::docs) when
//! `Accept` prefers `text/html`) on `""` (version 1) and `/v{N}`, and the
//! Postman collection at `/postman` and `/v{N}/postman`.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::FutureExt as _;
use futures_util::StreamExt as _;
use futures_util::future::join_all;
use futures_util::stream::FuturesUnordered;
use http::{HeaderMap, HeaderValue, Method as HttpMethod, Request, Response, StatusCode, header};
use http_body::Body;
use serde_json::{Value, json};

use crate::i18n::LanguageHeaders;
use crate::jsonrpc::callback::Callbacks;
use crate::jsonrpc::queue::{Deferred, Queue};
use crate::security::{Identity, Resource, Security, Target};
use crate::server::body::{
    BoxError, ReadError, ResponseBody, json_response, notify_when_sent, read_declared, run_when_sent, status_response,
};
use crate::server::request_headers::RequestHeaders;
use crate::server::route::{PublicUrl, connection_of, inner_path, original_uri, public_url, version_and_document};
use rpc_core::error::{RpcError, code};
use rpc_core::executor::{Call, Execution, Executor, Params, Transport};
use rpc_core::i18n::Translations;
use rpc_core::jsonrpc::chain;
use rpc_core::jsonrpc::envelope::{self, Message};
use rpc_core::jsonrpc::limits::JsonLimits;
use rpc_core::jsonrpc::response::{error_body, join_batch, write_error, write_result};
use rpc_core::jsonrpc::special;
use rpc_core::rate::RateKind;

/// The methods the endpoint answers.
const ALLOW: &str = "GET, HEAD, POST, OPTIONS";
/// The methods a document below the endpoint answers.
const ALLOW_DOCUMENT: &str = "GET, HEAD, OPTIONS";

/// What a path below the endpoint names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Document {
    /// The endpoint itself: calls, the OpenRPC document, the HTML page.
    Endpoint,
    /// The Postman collection.
    Postman,
}

/// The JSON-RPC endpoint. Cheap to clone.
#[derive(Clone, Debug)]
pub struct JsonRpcService {
    pub(super) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) executor: Executor,
    pub(super) scope: Option<String>,
    pub(super) max_body_bytes: usize,
    pub(super) limits: JsonLimits,
    /// Per version, the document in each language (by `Language` index).
    pub(super) docs: BTreeMap<u32, Vec<Value>>,
    pub(super) security: Security,
    pub(super) public_url: Option<PublicUrl>,
    pub(super) translations: Arc<Translations>,
    pub(super) callbacks: Callbacks,
    /// Where asynchronous calls go (none: they run in this process).
    pub(super) queue: Option<Arc<dyn Queue>>,
}

/// The most calls of a batch polled in place (beyond it, a wake-up polling
/// every call still running costs more than a queue of the running ones).
const IN_PLACE: usize = 30;

/// What one message gives: the response bytes (none for a notification),
/// the execution (for after-response work), a call to run later (rare and
/// large: boxed, so an answer stays small to move).
pub(super) type Answer = (Option<Vec<u8>>, Option<Execution>, Option<Box<Deferred>>);

/// Whether `Content-Type` names JSON (`application/json`, `application/*+json`,
/// parameters allowed). A browser can send neither without a CORS preflight.
fn is_json(content_type: Option<&HeaderValue>) -> bool {
    let Some(value) = content_type else { return false };
    // What clients send, recognised by its bytes.
    if value.as_bytes() == b"application/json" {
        return true;
    }
    let Ok(value) = value.to_str() else { return false };
    let media = value.split(';').next().unwrap_or("").trim().as_bytes();
    media.eq_ignore_ascii_case(b"application/json")
        || (media.len() > 17 && media[..12].eq_ignore_ascii_case(b"application/") && media.ends_with(b"+json"))
}

/// What a call's body is said to be, read from the request's headers
/// before they are lent to the call.
#[derive(Clone, Copy)]
struct BodyFacts {
    /// Whether `Content-Type` names JSON ([`is_json`]).
    json: bool,
    /// The length `Content-Length` declares.
    declared: Option<u64>,
}

impl BodyFacts {
    fn of(headers: &RequestHeaders<'_>) -> Self {
        BodyFacts { json: is_json(headers.content_type.first), declared: headers.declared_length() }
    }
}

impl JsonRpcService {
    /// An endpoint with the default settings.
    pub fn new(executor: Executor) -> Self {
        Self::builder(executor).build()
    }

    /// The OpenRPC document of `version` in `language`, as built when the
    /// service was (requests get a copy with their `servers` URL).
    pub fn openrpc_document(&self, version: u32, language: rpc_core::i18n::Language) -> Option<&Value> {
        self.inner.docs.get(&version)?.get(language.index())
    }

    /// The translations the documents' texts come from (and their languages).
    pub fn translations(&self) -> &Translations {
        &self.inner.translations
    }

    /// Handles one HTTP request: the `Host`/`Origin` check (403), the
    /// version (404, also for a version the availability checker switched
    /// off), CORS, the access policy (401/403: API calls and documents
    /// separately), then the call or the OpenRPC document.
    pub async fn handle<B>(&self, request: Request<B>) -> Response<ResponseBody>
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        self.clone().respond(request).await
    }

    /// [`handle`](Self::handle), owning the service: the service's boxed
    /// future is this one, built in place, not another that holds it.
    async fn respond<B>(self, request: Request<B>) -> Response<ResponseBody>
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let this = &self;
        let inner = &this.inner;
        let env = inner.executor.environment();
        // Every header read below found in one pass (no lookup by name).
        let scanned = RequestHeaders::scan(request.headers());
        if let Err(why) = inner.security.check_scanned_hosts(original_uri(&request), &scanned) {
            tracing::debug!(%why, "refused by DNS-rebinding protection");
            let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code::INVALID_REQUEST, "message": why.message()}});
            return json_response(StatusCode::FORBIDDEN, body.to_string());
        }
        let scope = inner.scope.as_deref();
        let available = |v: &u32| inner.docs.contains_key(v) && inner.security.is_available(scope, *v);
        let known =
            || inner.docs.keys().filter(|v| available(v)).map(|v| format!("v{v}")).collect::<Vec<_>>().join(", ");
        let Some((version, document)) = version_and_document(inner_path(&request)).filter(|(v, _)| available(v)) else {
            let error = RpcError::invalid_request(format!("no API version at this path (available: {})", known()));
            return json_response(StatusCode::NOT_FOUND, error_body(None, &error, env));
        };
        let document = match document {
            "" => Document::Endpoint,
            "postman" if cfg!(feature = "docs") => Document::Postman,
            _ => {
                let error = RpcError::invalid_request(format!(
                    "no API version or document at this path (available: {}; below each version: postman)",
                    known()
                ));
                return json_response(StatusCode::NOT_FOUND, error_body(None, &error, env));
            }
        };
        let (resource, allow) = match (document, request.method()) {
            (Document::Endpoint, &HttpMethod::GET | &HttpMethod::HEAD) => (Resource::Docs, ALLOW),
            (Document::Endpoint, _) => (Resource::Api, ALLOW),
            (Document::Postman, _) => (Resource::Docs, ALLOW_DOCUMENT),
        };
        let target = Target::new(scope, version, resource, allow);
        let call = matches!((document, request.method()), (Document::Endpoint, &HttpMethod::POST));
        if inner.security.is_open_to(request.method()) {
            // No CORS, no preflight, no access policy: the guard would hand
            // the request on as it is, so it is not built (nor its future).
            // Written out rather than through the guard's handler closure:
            // that async block holds the request once more (measured: +120
            // instructions per call here, +500 per MCP call).
            if !call {
                return this.document(version, document, &request, allow);
            }
            let facts = BodyFacts::of(&scanned);
            let (parts, body) = request.into_parts();
            return this.post(version, &parts, body, None, facts).await;
        }
        // Boxed: the common path's future does not hold the guard's.
        rpc_core::future::in_box(|| {
            inner.security.guard(request, target, |request, identity| async move {
                if !call {
                    return this.document(version, document, &request, allow);
                }
                let facts = BodyFacts::of(&RequestHeaders::scan(request.headers()));
                let (parts, body) = request.into_parts();
                this.post(version, &parts, body, identity, facts).await
            })
        })
        .await
    }

    /// What a request other than a call gets: the OpenRPC document, its
    /// page for a browser, the Postman collection, or 405.
    fn document<B: 'static>(
        &self,
        version: u32,
        document: Document,
        request: &Request<B>,
        allow: &'static str,
    ) -> Response<ResponseBody> {
        match (document, request.method()) {
            #[cfg(feature = "docs")]
            (Document::Endpoint, &HttpMethod::GET | &HttpMethod::HEAD)
                if crate::docs::prefers_html(request.headers()) =>
            {
                self.page(version, request)
            }
            (Document::Endpoint, &HttpMethod::GET | &HttpMethod::HEAD) => self.openrpc(version, request),
            #[cfg(feature = "docs")]
            (Document::Postman, &HttpMethod::GET | &HttpMethod::HEAD) => self.postman(version, request),
            _ => {
                let mut response = status_response(StatusCode::METHOD_NOT_ALLOWED);
                response.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
                response
            }
        }
    }

    /// The versions this endpoint serves now (the availability checker asked).
    #[cfg(feature = "docs")]
    pub(super) fn available_versions(&self) -> Vec<u32> {
        let inner = &self.inner;
        let scope = inner.scope.as_deref();
        inner.docs.keys().copied().filter(|v| inner.security.is_available(scope, *v)).collect()
    }

    fn openrpc<B>(&self, version: u32, request: &Request<B>) -> Response<ResponseBody> {
        let inner = &self.inner;
        let translations = &inner.translations;
        let language = translations.negotiate(request.headers());
        let Some(doc) = inner.docs.get(&version).and_then(|docs| docs.get(language.index())) else {
            return status_response(StatusCode::NOT_FOUND);
        };
        // `?info`: the header only (see `document`).
        let info_only = super::document::asks_info(request.uri().query());
        let doc = super::document::served(doc, &public_url(request, inner.public_url.as_ref()), info_only);
        let mut response = json_response(StatusCode::OK, serde_json::to_vec(&doc).unwrap_or_default());
        // The same URL serves the HTML page to browsers.
        response.headers_mut().append(header::VARY, HeaderValue::from_static("accept"));
        translations.mark_response(response.headers_mut(), language);
        response
    }

    async fn post<B>(
        &self,
        version: u32,
        parts: &http::request::Parts,
        body: B,
        identity: Option<Arc<Identity>>,
        facts: BodyFacts,
    ) -> Response<ResponseBody>
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let inner = &self.inner;
        let env = inner.executor.environment();
        let peer = connection_of(&parts.extensions, &body).map(|c| c.peer().ip());
        if !facts.json {
            let error = RpcError::invalid_request("Content-Type must be application/json");
            return json_response(StatusCode::UNSUPPORTED_MEDIA_TYPE, error_body(None, &error, env));
        }
        let bytes = match read_declared(facts.declared, body, inner.max_body_bytes).await {
            Ok(bytes) => bytes,
            Err(ReadError::TooLarge { limit }) => {
                let error = RpcError::invalid_request(format!("request body exceeds {limit} bytes"));
                return json_response(StatusCode::PAYLOAD_TOO_LARGE, error_body(None, &error, env));
            }
            Err(ReadError::Io(e)) => {
                let error = RpcError::invalid_request(format!("could not read the request body: {e}"));
                return json_response(StatusCode::BAD_REQUEST, error_body(None, &error, env));
            }
            Err(ReadError::TimedOut) => {
                let error = RpcError::invalid_request("the request body did not arrive in time");
                return json_response(StatusCode::REQUEST_TIMEOUT, error_body(None, &error, env));
            }
        };
        let parsed = match envelope::parse_body_with(&bytes, false, &inner.limits) {
            Ok(parsed) => parsed,
            Err(error) => return json_response(StatusCode::OK, error_body(None, &error, env)),
        };
        let headers = &parts.headers;
        let mut deferred = Vec::new();
        let mut retry_after = None;
        let (out, executions) = match parsed {
            envelope::Body::Single(message) => {
                let (out, execution, later) = self.one(version, message, &identity, peer, headers).await;
                deferred.extend(later.map(|job| *job));
                retry_after = out.as_ref().and_then(|_| execution.as_ref().and_then(Execution::retry_after));
                // Kept only for after-response work: no list to allocate and free otherwise.
                (out, execution.into_iter().filter(Execution::wants_response_sent).collect::<Vec<_>>())
            }
            envelope::Body::Batch(items) if items.is_empty() => {
                let error = RpcError::invalid_request("empty batch");
                (Some(error_body(None, &error, env)), Vec::new())
            }
            envelope::Body::Batch(items) => {
                // Outlined: a single call's path keeps a small stack frame.
                let answers = rpc_core::future::outlined(self.batch(version, items, &identity, peer, headers)).await;
                let mut parts = Vec::with_capacity(answers.len());
                // Every call has finished: each slot holds its answer.
                for (out, execution, later) in answers.into_iter().flatten() {
                    deferred.extend(later.map(|job| *job));
                    parts.push((out, execution));
                }
                join_batch(parts)
            }
        };
        let mut response = match (out, retry_after) {
            // A single call over its client's rate: 429, with when to retry.
            (Some(bytes), Some(seconds)) => {
                let mut response = json_response(StatusCode::TOO_MANY_REQUESTS, bytes);
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
                response
            }
            (Some(bytes), None) => json_response(StatusCode::OK, bytes),
            (None, _) => status_response(StatusCode::NO_CONTENT),
        };
        notify_when_sent(&mut response, &inner.executor, executions);
        if !deferred.is_empty() {
            let this = self.clone();
            run_when_sent(&mut response, move || this.run_deferred(deferred));
        }
        response
    }

    /// The answers of a batch's messages, in order. The calls run together.
    /// Up to [`IN_PLACE`] of them are polled where they lie (`join_all`: one
    /// allocation for all; a wake-up polls each call still running). Of a
    /// larger batch, each call is started in turn, and those that do not
    /// finish on their first poll (most do: a cache hit, a method that does
    /// not wait) run on in a queue that polls only the woken ones. A batch
    /// whose calls take values from each other (`@FROM`, found by one byte
    /// search) runs in their order instead ([`batch`](super::batch)).
    async fn batch(
        &self,
        version: u32,
        items: Vec<Result<Message<'_>, envelope::Invalid<'_>>>,
        identity: &Option<Arc<Identity>>,
        peer: Option<IpAddr>,
        headers: &HeaderMap,
    ) -> Vec<Option<Answer>> {
        if chain::mentions(&items) {
            let plan = chain::Plan::new(&items);
            if plan.chains() {
                return self.chained(plan, version, items, identity, peer, headers).await;
            }
        }
        if items.len() <= IN_PLACE {
            let calls = items
                .into_iter()
                .map(|message| async move { Some(self.one(version, message, identity, peer, headers).await) });
            return join_all(calls).await;
        }
        let mut answers: Vec<Option<Answer>> = Vec::with_capacity(items.len());
        let mut running = FuturesUnordered::new();
        // One box for the calls that finish at their first poll (most do):
        // each next call is written into it; a call still running keeps it.
        let mut spare = None;
        for (index, message) in items.into_iter().enumerate() {
            let future = self.one(version, message, identity, peer, headers);
            let mut call = match spare.take() {
                Some(mut boxed) => {
                    Pin::set(&mut boxed, future);
                    boxed
                }
                None => Box::pin(future),
            };
            match std::future::poll_fn(|cx| Poll::Ready(call.as_mut().poll(cx))).await {
                Poll::Ready(answer) => {
                    answers.push(Some(answer));
                    spare = Some(call);
                }
                Poll::Pending => {
                    answers.push(None);
                    running.push(async move { (index, call.await) });
                }
            }
        }
        while let Some((index, answer)) = running.next().await {
            answers[index] = Some(answer);
        }
        answers
    }

    /// Handles one message: the response bytes (none for a notification)
    /// and the execution, if the method was found.
    pub(super) async fn one(
        &self,
        version: u32,
        message: Result<Message<'_>, envelope::Invalid<'_>>,
        identity: &Option<Arc<Identity>>,
        peer: Option<IpAddr>,
        headers: &HeaderMap,
    ) -> Answer {
        let executor = &self.inner.executor;
        let env = executor.environment();
        let request = match message {
            Ok(Message::Request(request)) => request,
            Ok(Message::Response { .. }) => unreachable!("responses are not accepted here"),
            Err(invalid) => {
                executor.report_refusal("", version, Transport::JsonRpc, identity.as_deref(), &invalid.error).await;
                return (Some(error_body(invalid.id, &invalid.error, env)), None, None);
            }
        };
        let refused = async |error: RpcError| {
            executor.report_refusal(&request.method, version, Transport::JsonRpc, identity.as_deref(), &error).await;
            (request.id.map(|id| error_body(Some(id), &error, env)), None, None)
        };
        let input_bytes = request.params.map_or(0, |p| p.get().len());
        // Named parameters without call options go to the executor unread
        // (a repeated cached call is answered without reading them).
        let unread = request.params.filter(|p| p.get().starts_with('{') && !special::may_hold(p.get()));
        let mut params = match unread {
            Some(_) => Params::None,
            None => match rpc_core::executor::cpu_bound(input_bytes, || request.params()) {
                Ok(params) => params,
                Err(error) => return refused(error).await,
            },
        };
        let special = match special::split(&mut params) {
            Ok(special) => special.unwrap_or_default(),
            Err(error) => return refused(error).await,
        };
        if let Some(callback) = &special.callback {
            // Counted now, so the client hears of its rate at once; the
            // call itself is not counted again when it runs.
            if let Some(wait) = executor.throttle(RateKind::Calls, identity.as_deref(), peer).await {
                return refused(RpcError::rate_limited("calls", wait)).await;
            }
            return match self.acknowledge(version, &request, params, &special, callback, identity, headers).await {
                Ok(acknowledged) => acknowledged,
                Err(error) => refused(error).await,
            };
        }
        // Set in place: a builder call moves the whole call (hundreds of
        // bytes) in and out, and these were six memory copies per call.
        let mut call = Call::new(&request.method, version, params);
        call.transport = Transport::JsonRpc;
        call.identity = identity.clone();
        (call.metered, call.peer) = (true, peer);
        call.input_bytes = input_bytes;
        call.ignore_cache = special.ignore_cache;
        call.timeout = special.timeout;
        call.scope = self.inner.scope.as_deref();
        // Unread named parameters (`params` is then `Params::None`).
        call.raw_named = unread;
        let execution = self.inner.executor.execute(call).await;
        let Some(id) = request.id else {
            return (None, Some(execution), None);
        };
        // Sized by `write_result` (exactly: the body becomes `Bytes` as it is).
        let mut out = Vec::new();
        match &execution.result {
            Ok(result) => write_result(&mut out, id, result.get().as_bytes()),
            Err(error) => write_error(&mut out, Some(id), error, env),
        }
        (Some(out), Some(execution), None)
    }
}

impl<B> tower::Service<Request<B>> for JsonRpcService
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let this = self.clone();
        // `map(Ok)`, not an `async` block that would hold the future and copy it in.
        rpc_core::future::in_box(move || this.respond(request).map(Ok))
    }
}
