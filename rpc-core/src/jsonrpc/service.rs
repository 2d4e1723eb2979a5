//! The JSON-RPC 2.0 HTTP endpoint as a `tower::Service`.
//!
//! Mounted at a prefix (e.g. `/rpc`), it serves `POST` (calls) and `GET`
//! (the OpenRPC document) on `""` (version 1) and `/v{N}`.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::future::join_all;
use http::{HeaderValue, Method as HttpMethod, Request, Response, StatusCode, header};
use http_body::Body;
use serde_json::Value;

use crate::error::RpcError;
use crate::executor::{Call, Execution, Executor, Transport};
use crate::group::ApiGroup;
use crate::jsonrpc::envelope::{self, Message};
use crate::jsonrpc::response::{error_body, join_batch, write_error, write_result};
use crate::openrpc::{self, ApiInfo};
use crate::server::body::{
    BoxError, ReadError, ResponseBody, json_response, notify_when_sent, read_limited, status_response,
};
use crate::server::route::{public_url, version_from_path};

/// Default request body limit: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Default maximum number of messages in a batch.
pub const DEFAULT_MAX_BATCH: usize = 100;

/// Configures a [`JsonRpcService`].
#[derive(Debug)]
pub struct JsonRpcBuilder {
    executor: Executor,
    scope: Option<String>,
    max_body_bytes: usize,
    max_batch: usize,
    info: ApiInfo,
}

impl JsonRpcBuilder {
    /// Serves only the methods of API group `G`.
    pub fn group<G: ApiGroup>(self) -> Self {
        self.group_named(G::NAME)
    }

    /// Serves only the methods of the group named `group` (for groups that
    /// come from configuration; prefer [`group`](Self::group)).
    pub fn group_named(mut self, group: impl Into<String>) -> Self {
        self.scope = Some(group.into());
        self
    }

    /// Request body limit in bytes (default 4 MiB); larger bodies get 413.
    pub fn max_body_bytes(mut self, limit: usize) -> Self {
        self.max_body_bytes = limit;
        self
    }

    /// Maximum messages per batch (default 100).
    pub fn max_batch(mut self, limit: usize) -> Self {
        self.max_batch = limit;
        self
    }

    /// The `info` block of the OpenRPC documents.
    pub fn info(mut self, info: ApiInfo) -> Self {
        self.info = info;
        self
    }

    /// Builds the service; the OpenRPC documents are built here, once.
    pub fn build(self) -> JsonRpcService {
        let registry = self.executor.registry();
        let docs = registry
            .versions()
            .filter_map(|v| openrpc::document(registry, v, self.scope.as_deref(), &self.info, "").map(|d| (v, d)))
            .collect();
        JsonRpcService {
            inner: Arc::new(Inner {
                executor: self.executor,
                scope: self.scope,
                max_body_bytes: self.max_body_bytes,
                max_batch: self.max_batch,
                docs,
            }),
        }
    }
}

/// The JSON-RPC endpoint. Cheap to clone.
#[derive(Clone, Debug)]
pub struct JsonRpcService {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    executor: Executor,
    scope: Option<String>,
    max_body_bytes: usize,
    max_batch: usize,
    docs: BTreeMap<u32, Value>,
}

impl JsonRpcService {
    /// Starts configuring an endpoint over `executor`.
    pub fn builder(executor: Executor) -> JsonRpcBuilder {
        JsonRpcBuilder {
            executor,
            scope: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_batch: DEFAULT_MAX_BATCH,
            info: ApiInfo::default(),
        }
    }

    /// An endpoint with the default settings.
    pub fn new(executor: Executor) -> Self {
        Self::builder(executor).build()
    }

    /// Handles one HTTP request.
    pub async fn handle<B>(&self, request: Request<B>) -> Response<ResponseBody>
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let inner = &self.inner;
        let env = inner.executor.environment();
        let Some(version) = version_from_path(request.uri().path()).filter(|v| inner.docs.contains_key(v)) else {
            let known: Vec<String> = inner.docs.keys().map(|v| format!("v{v}")).collect();
            let error = RpcError::invalid_request(format!(
                "no API version at `{}` (available: {})",
                request.uri().path(),
                known.join(", ")
            ));
            return json_response(StatusCode::NOT_FOUND, error_body(None, &error, env));
        };
        match *request.method() {
            HttpMethod::POST => self.post(version, request).await,
            HttpMethod::GET | HttpMethod::HEAD => self.openrpc(version, &request),
            _ => {
                let mut response = status_response(StatusCode::METHOD_NOT_ALLOWED);
                response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD, POST"));
                response
            }
        }
    }

    fn openrpc<B>(&self, version: u32, request: &Request<B>) -> Response<ResponseBody> {
        let mut doc = self.inner.docs[&version].clone();
        doc["servers"][0]["url"] = Value::String(public_url(request));
        json_response(StatusCode::OK, serde_json::to_vec(&doc).unwrap_or_default())
    }

    async fn post<B>(&self, version: u32, request: Request<B>) -> Response<ResponseBody>
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let inner = &self.inner;
        let env = inner.executor.environment();
        let (parts, body) = request.into_parts();
        let bytes = match read_limited(&parts.headers, body, inner.max_body_bytes).await {
            Ok(bytes) => bytes,
            Err(ReadError::TooLarge { limit }) => {
                let error = RpcError::invalid_request(format!("request body exceeds {limit} bytes"));
                return json_response(StatusCode::PAYLOAD_TOO_LARGE, error_body(None, &error, env));
            }
            Err(ReadError::Io(e)) => {
                let error = RpcError::invalid_request(format!("could not read the request body: {e}"));
                return json_response(StatusCode::BAD_REQUEST, error_body(None, &error, env));
            }
        };
        let parsed = match envelope::parse_body(&bytes, false) {
            Ok(parsed) => parsed,
            Err(error) => return json_response(StatusCode::OK, error_body(None, &error, env)),
        };
        let (out, executions) = match parsed {
            envelope::Body::Single(message) => {
                let (out, execution) = self.one(version, message).await;
                (out, execution.into_iter().collect::<Vec<_>>())
            }
            envelope::Body::Batch(items) if items.is_empty() => {
                let error = RpcError::invalid_request("empty batch");
                (Some(error_body(None, &error, env)), Vec::new())
            }
            envelope::Body::Batch(items) if items.len() > inner.max_batch => {
                let error = RpcError::invalid_request(format!(
                    "batch of {} messages exceeds the limit of {}",
                    items.len(),
                    inner.max_batch
                ));
                (Some(error_body(None, &error, env)), Vec::new())
            }
            envelope::Body::Batch(items) => join_batch(
                join_all(items.into_iter().map(|raw| self.one(version, envelope::parse_message(raw, false)))).await,
            ),
        };
        let mut response = match out {
            Some(bytes) => json_response(StatusCode::OK, bytes),
            None => status_response(StatusCode::NO_CONTENT),
        };
        notify_when_sent(&mut response, &inner.executor, executions);
        response
    }

    /// Handles one message: the response bytes (none for a notification)
    /// and the execution, if the method was found.
    async fn one(
        &self,
        version: u32,
        message: Result<Message<'_>, envelope::Invalid<'_>>,
    ) -> (Option<Vec<u8>>, Option<Execution>) {
        let env = self.inner.executor.environment();
        let request = match message {
            Ok(Message::Request(request)) => request,
            Ok(Message::Response { .. }) => unreachable!("responses are not accepted here"),
            Err(invalid) => return (Some(error_body(invalid.id, &invalid.error, env)), None),
        };
        let params = match request.params() {
            Ok(params) => params,
            Err(error) => return (request.id.map(|id| error_body(Some(id), &error, env)), None),
        };
        let mut call = Call::new(&request.method, version, params)
            .transport(Transport::JsonRpc)
            .input_bytes(request.params.map_or(0, |p| p.get().len()));
        if let Some(scope) = self.inner.scope.as_deref() {
            call = call.scope(scope);
        }
        let execution = self.inner.executor.execute(call).await;
        let Some(id) = request.id else {
            return (None, Some(execution));
        };
        let mut out = Vec::with_capacity(128);
        match &execution.result {
            Ok(result) => write_result(&mut out, id, result.get().as_bytes()),
            Err(error) => write_error(&mut out, Some(id), error, env),
        }
        (Some(out), Some(execution))
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
        Box::pin(async move { Ok(this.handle(request).await) })
    }
}
