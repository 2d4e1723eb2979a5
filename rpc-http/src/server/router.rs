//! A minimal prefix router for the bundled server.
//!
//! Like axum's `nest_service`, a service mounted at `/rpc` sees `/rpc/v2` as
//! `/v2`; the original URI stays available as [`OriginalUri`] (the
//! outermost one when the router is itself mounted under a prefix), and
//! the runner's [`Connection`] in the extensions too. A service that
//! declares [`reads_routed_body`](super::request_body::reads_routed_body)
//! (the bundled endpoints, and a router nested in a router) keeps the
//! target the client sent instead, and gets the connection and the length
//! of the mount prefixes in its [`RequestBody`]
//! ([`inner_path`](super::route::inner_path) gives its path below them):
//! no URI to build and no extension map per request.
//! Applications that already use axum can mount the endpoints, or a whole
//! router, there instead.

use std::any::Any;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::future::Either;
use http::{Request, Response, StatusCode, Uri};
use http_body::Body;
use tower::Service;

use super::body::{BoxError, ResponseBody, json_response};
use super::connection::Connection;
use super::ready_call::call_ready;
pub use super::request_body::RequestBody;
use super::request_body::{Routed, is_reader, take_carried};
use super::route::{OriginalUri, below};

type RouteFuture = Pin<Box<dyn Future<Output = Result<Response<ResponseBody>, Infallible>> + Send>>;

/// A mounted service, type-erased: each request clones the service (the
/// endpoints are a few `Arc`s) and calls it when it is ready at once (as
/// the bundled endpoints always are), or runs one boxed future that waits
/// for it to be ready and calls it.
type Route = Arc<dyn Fn(Request<RequestBody>) -> RouteFuture + Send + Sync>;

/// `future` as a [`RouteFuture`]: taken as it is when it already is one
/// (the bundled endpoints' futures are), else boxed.
fn route_future<F>(future: F) -> RouteFuture
where
    F: Future<Output = Result<Response<ResponseBody>, Infallible>> + Send + 'static,
{
    let mut slot = Some(future);
    if let Some(boxed) = (&mut slot as &mut dyn Any).downcast_mut::<Option<RouteFuture>>().and_then(Option::take) {
        return boxed;
    }
    match slot {
        Some(future) => Box::pin(future),
        // Not reached: the slot is empty only when it held a `RouteFuture`,
        // returned above.
        None => Box::pin(std::future::ready(Ok(no_endpoint()))),
    }
}

/// Routes requests to services by path prefix (longest prefix wins).
#[derive(Clone, Default)]
pub struct Router {
    routes: Arc<Vec<Mounted>>,
}

/// A service at its prefix.
#[derive(Clone)]
struct Mounted {
    prefix: String,
    route: Route,
    /// The service reads the connection and the original target from the
    /// body ([`reads_routed_body`](super::request_body::reads_routed_body)).
    reads_body: bool,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.routes.iter().map(|m| &m.prefix)).finish()
    }
}

impl Router {
    /// An empty router (every request gets 404).
    pub fn new() -> Self {
        Self::default()
    }

    /// Mounts `service` at `prefix` (e.g. `"/rpc"`); it sees the rest of the path.
    ///
    /// # Panics
    /// If `prefix` does not start with `/` or ends with `/`: a programming error
    /// caught when the server is assembled.
    pub fn nest<S>(mut self, prefix: &str, service: S) -> Self
    where
        S: Service<Request<RequestBody>, Response = Response<ResponseBody>, Error = Infallible>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Future: Send + 'static,
    {
        assert!(
            prefix.starts_with('/') && !prefix.ends_with('/'),
            "mount prefix `{prefix}` must start and not end with `/`"
        );
        let reads_body = is_reader::<S>();
        let route: Route = Arc::new(move |request| match call_ready(service.clone(), request) {
            Either::Left(called) => route_future(called),
            Either::Right(waiting) => waiting,
        });
        let routes = Arc::make_mut(&mut self.routes);
        routes.push(Mounted { prefix: prefix.to_owned(), route, reads_body });
        routes.sort_by_key(|m| std::cmp::Reverse(m.prefix.len()));
        self
    }

    /// Serves the OAuth protected-resource metadata (RFC 9728) at
    /// `/.well-known/oauth-protected-resource` when `security` accepts
    /// OAuth tokens ([`Security::oauth`](crate::Security::oauth)); else
    /// leaves the router as it is.
    #[cfg(feature = "oauth")]
    pub fn oauth_metadata(self, security: &crate::Security) -> Self {
        match security.oauth_policy() {
            Some(policy) => self.nest(crate::security::oauth::METADATA_PATH, policy.metadata_service()),
            None => self,
        }
    }

    fn route(&self, path: &str) -> Option<&Mounted> {
        self.routes.iter().find(|mounted| {
            path.strip_prefix(mounted.prefix.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }
}

/// The 404 of a path no service is mounted at: a fixed message (the path is
/// the client's: it is never echoed into the response or the log).
fn no_endpoint() -> Response<ResponseBody> {
    json_response(StatusCode::NOT_FOUND, r#"{"error":"no endpoint at this path"}"#)
}

impl<B> Service<Request<B>> for Router
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let (mut parts, body) = request.into_parts();
        // What a router above or the runner carried in the body: under a
        // router above that left the target as it was, this router's path
        // is the part below that router's prefix.
        let (body, carried) = take_carried(body);
        let Some(mounted) = self.route(below(parts.uri.path(), carried.mount)) else {
            return Box::pin(std::future::ready(Ok(no_endpoint())));
        };
        let mount = carried.mount + mounted.prefix.len();
        if mounted.reads_body {
            // The target stays as it is: the service finds its path below
            // `mount` (`route::inner_path`), with no URI to build.
            let routed = Routed { mount, ..carried };
            return (mounted.route)(Request::from_parts(parts, RequestBody::routed(body, Some(routed))));
        }
        let rest = below(parts.uri.path(), mount);
        let query = parts.uri.query();
        // Exactly its length: a full buffer becomes the URI's `Bytes` without
        // another allocation.
        let mut path_and_query = String::with_capacity(rest.len() + query.map_or(0, |q| q.len() + 1));
        path_and_query.push_str(rest);
        if let Some(q) = query {
            path_and_query.push('?');
            path_and_query.push_str(q);
        }
        // `TryFrom<String>` takes the buffer over instead of copying it; the
        // original is moved out, not cloned.
        let inner = Uri::try_from(path_and_query).unwrap_or_else(|_| Uri::from_static("/"));
        let original = std::mem::replace(&mut parts.uri, inner);
        // The outermost target: under another router that rewrote it (this
        // crate's or axum's `nest_service`), the path the client asked for
        // keeps every prefix.
        let outermost = super::route::mounted_uri(&parts.extensions).cloned().unwrap_or(original);
        // As documented for any other service: both in the extensions.
        parts.extensions.insert(OriginalUri(outermost));
        if let Some(connection) = carried.connection
            && parts.extensions.get::<Connection>().is_none()
        {
            parts.extensions.insert(connection);
        }
        (mounted.route)(Request::from_parts(parts, RequestBody::routed(body, None)))
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::{BodyExt, Full};
    use tower::ServiceExt;

    use super::*;

    #[test]
    fn unmounted_paths_get_a_json_404() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        for path in ["/it's", "/a\"b", "/%00\\", "/caf%C3%A9"] {
            let request = Request::builder().uri(path).body(Full::new(Bytes::new())).unwrap();
            let response = runtime.block_on(Router::new().oneshot(request)).unwrap();
            assert_eq!(response.status(), StatusCode::NOT_FOUND);
            let body = runtime.block_on(response.into_body().collect()).unwrap().to_bytes();
            let json: serde_json::Value = serde_json::from_slice(&body).expect("a JSON body");
            assert_eq!(json["error"], "no endpoint at this path", "{path}");
        }
    }

    #[test]
    fn a_boxed_route_future_is_taken_as_it_is_and_any_other_is_boxed() {
        let boxed: RouteFuture = Box::pin(std::future::ready(Ok(no_endpoint())));
        let address = std::ptr::from_ref(&*boxed).cast::<()>();
        let taken = route_future(boxed);
        assert_eq!(std::ptr::from_ref(&*taken).cast::<()>(), address, "the same allocation, not boxed again");
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let other = route_future(async { Ok(json_response(StatusCode::OK, "{}")) });
        assert_eq!(runtime.block_on(other).unwrap().status(), StatusCode::OK);
    }

    /// Ready only on its second `poll_ready`, which it asks to be woken for.
    #[derive(Clone, Default)]
    struct Slow {
        polled: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl Service<Request<RequestBody>> for Slow {
        type Response = Response<ResponseBody>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Response<ResponseBody>, Infallible>>;

        fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            if self.polled.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: Request<RequestBody>) -> Self::Future {
            std::future::ready(Ok(json_response(StatusCode::OK, format!("{{\"path\":\"{}\"}}", request.uri().path()))))
        }
    }

    #[test]
    fn a_service_not_ready_at_once_is_waited_for() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let slow = Slow::default();
        let router = Router::new().nest("/slow", slow.clone());
        let request = Request::builder().uri("/slow/v2").body(Full::new(Bytes::new())).unwrap();
        let response = runtime.block_on(router.oneshot(request)).unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let body = runtime.block_on(response.into_body().collect()).unwrap().to_bytes();
        assert_eq!(&body[..], br#"{"path":"/v2"}"#);
        assert_eq!(slow.polled.load(std::sync::atomic::Ordering::SeqCst), 2, "polled again after Pending");
    }

    #[test]
    fn a_mounted_service_sees_the_rest_of_the_path_with_the_query_and_the_original_uri() {
        let echo = tower::service_fn(|request: Request<RequestBody>| async move {
            let original = request.extensions().get::<OriginalUri>().map(|o| o.0.to_string()).unwrap_or_default();
            Ok::<_, Infallible>(json_response(
                StatusCode::OK,
                serde_json::json!({"uri": request.uri().to_string(), "original": original}).to_string(),
            ))
        });
        let router = Router::new().nest("/api", echo);
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        for (asked, inner) in [("/api/v2?x=1&y", "/v2?x=1&y"), ("/api", "/"), ("/api?a=b", "/?a=b"), ("/api/", "/")] {
            let request = Request::builder().uri(asked).body(Full::new(Bytes::new())).unwrap();
            let response = runtime.block_on(router.clone().oneshot(request)).unwrap();
            let body = runtime.block_on(response.into_body().collect()).unwrap().to_bytes();
            let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(json["uri"], inner, "{asked}");
            assert_eq!(json["original"], asked, "{asked}");
        }
    }
}
