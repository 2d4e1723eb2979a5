//! The body the [`Router`](super::Router) hands the services it mounts,
//! and what it carries beside the bytes: the connection the request came
//! on and the target the client asked for.
//!
//! The runner and the router used to put both into the request's
//! extensions. Each entry there is boxed, in a table that is itself boxed:
//! four allocations and four frees on every request, about a thousand
//! instructions per call. Services that read them from here (the bundled
//! endpoints, through [`connection_of`](super::route::connection_of) and
//! [`original_uri`](super::route::original_uri)) declare it with
//! [`reads_routed_body`]; the router carries the facts in the body for
//! them and in the extensions, as documented, for every other service.

use std::any::{Any, TypeId};
use std::pin::Pin;
use std::sync::RwLock;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;

use super::BoxError;
use super::connection::Connection;

/// The request body type mounted services receive from the router (not
/// `Sync`, so that bodies which are not, as axum's, can be routed).
pub struct RequestBody {
    inner: BodyBytes,
    routed: Option<Routed>,
}

/// The bytes of a [`RequestBody`]: the runner's own body as it is (the
/// common case: no allocation, no virtual call per frame), or any other,
/// boxed.
pub(crate) enum BodyBytes {
    /// The body of a request [`serve`](super::serve) reads.
    #[cfg(feature = "server")]
    Incoming(super::IncomingBody),
    /// Any other body.
    Boxed(UnsyncBoxBody<Bytes, BoxError>),
}

impl Body for BodyBytes {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.get_mut() {
            #[cfg(feature = "server")]
            BodyBytes::Incoming(body) => Pin::new(body).poll_frame(cx),
            BodyBytes::Boxed(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            #[cfg(feature = "server")]
            BodyBytes::Incoming(body) => body.is_end_stream(),
            BodyBytes::Boxed(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            #[cfg(feature = "server")]
            BodyBytes::Incoming(body) => body.size_hint(),
            BodyBytes::Boxed(body) => body.size_hint(),
        }
    }
}

/// What the router knows about a request, for a service that reads it from
/// the body.
#[derive(Debug)]
pub(crate) struct Routed {
    pub connection: Option<Connection>,
    /// How many bytes of the request's path the routers above matched as
    /// mount prefixes: the service's own path is the rest
    /// ([`inner_path`](super::route::inner_path)).
    pub mount: usize,
}

impl RequestBody {
    /// `body` as a request body, carrying nothing else.
    pub fn new<B>(body: B) -> Self
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        RequestBody { inner: BodyBytes::Boxed(body.map_err(Into::into).boxed_unsync()), routed: None }
    }

    pub(crate) fn routed(inner: BodyBytes, routed: Option<Routed>) -> Self {
        RequestBody { inner, routed }
    }

    /// Its bytes' body and what it carries.
    pub(crate) fn into_parts(self) -> (BodyBytes, Option<Routed>) {
        (self.inner, self.routed)
    }

    /// The connection the request came on, when the router carried it here.
    pub fn connection(&self) -> Option<&Connection> {
        self.routed.as_ref()?.connection.as_ref()
    }

    /// How many bytes of the request's path are the mount prefixes the
    /// routers above matched (0 when no router carried it here).
    pub fn mount(&self) -> usize {
        self.routed.as_ref().map_or(0, |r| r.mount)
    }
}

impl Default for RequestBody {
    fn default() -> Self {
        RequestBody::new(http_body_util::Empty::<Bytes>::new())
    }
}

impl std::fmt::Debug for RequestBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestBody").field("routed", &self.routed).finish_non_exhaustive()
    }
}

impl From<UnsyncBoxBody<Bytes, BoxError>> for RequestBody {
    fn from(inner: UnsyncBoxBody<Bytes, BoxError>) -> Self {
        RequestBody { inner: BodyBytes::Boxed(inner), routed: None }
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The service types that read the connection and the original target
/// from a [`RequestBody`] (or the runner's body) rather than from the
/// extensions.
static READERS: RwLock<Vec<TypeId>> = RwLock::new(Vec::new());

/// Declares that services of type `S` read the connection, the original
/// target and their own path through
/// [`connection_of`](super::route::connection_of),
/// [`original_uri`](super::route::original_uri) and
/// [`inner_path`](super::route::inner_path), which look in the body first:
/// the router and the runner then leave the first two out of the
/// extensions for `S`, and the router does not rewrite the request's target
/// for `S` (its path stays the one the client sent; `inner_path` gives the
/// part below the mount prefix). The bundled endpoints declare it when they
/// are built; a service that reads the extensions or the target itself
/// must not.
pub fn reads_routed_body<S: 'static>() {
    let id = TypeId::of::<S>();
    let mut readers = READERS.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !readers.contains(&id) {
        readers.push(id);
    }
}

/// Whether `S` declared [`reads_routed_body`] (the router itself does, by nature).
pub(crate) fn is_reader<S: 'static>() -> bool {
    let id = TypeId::of::<S>();
    id == TypeId::of::<super::Router>()
        || READERS.read().unwrap_or_else(std::sync::PoisonError::into_inner).contains(&id)
}

/// `body` as the bytes of a [`RequestBody`] (its own when it is one) and
/// what it carried: from a router above, the length of the prefixes it
/// matched, and the connection (from that router, or from the runner).
pub(crate) fn take_carried<B>(body: B) -> (BodyBytes, Routed)
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let nothing = |connection| Routed { connection, mount: 0 };
    let mut slot = Some(body);
    if let Some(body) = (&mut slot as &mut dyn Any).downcast_mut::<Option<RequestBody>>().and_then(Option::take) {
        return match body.into_parts() {
            (inner, Some(routed)) => (inner, routed),
            (inner, None) => (inner, nothing(None)),
        };
    }
    #[cfg(feature = "server")]
    if let Some(body) = (&mut slot as &mut dyn Any).downcast_mut::<Option<super::IncomingBody>>().and_then(Option::take)
    {
        // Shared, not taken: the body keeps it to say when it has been read.
        let connection = body.connection().cloned();
        return (BodyBytes::Incoming(body), nothing(connection));
    }
    // The slot is empty only when it held a body taken above.
    let inner = slot
        .map_or_else(|| RequestBody::default().inner, |body| BodyBytes::Boxed(body.map_err(Into::into).boxed_unsync()));
    (inner, nothing(None))
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::net::SocketAddr;

    use http::{Request, Response, StatusCode};
    use http_body_util::Full;
    use tower::ServiceExt;

    use super::*;
    use crate::server::body::{ResponseBody, json_response};
    use crate::server::route::{connection_of, inner_path, original_uri};
    use crate::server::{Draining, OriginalUri, Router};

    /// What a service found: where the router put the connection and the target.
    fn report<B: 'static>(request: &Request<B>) -> Response<ResponseBody> {
        let found = serde_json::json!({
            "path": inner_path(request),
            "target": request.uri().path(),
            "original": original_uri(request).to_string(),
            "peer": connection_of(request.extensions(), request.body()).map(|c| c.peer().to_string()),
            "extension_uri": request.extensions().get::<OriginalUri>().map(|o| o.0.to_string()),
            "extension_peer": request.extensions().get::<Connection>().map(|c| c.peer().to_string()),
        });
        json_response(StatusCode::OK, found.to_string())
    }

    /// A service that reads the body's facts (it declares so).
    #[derive(Clone)]
    struct Reader;

    impl tower::Service<Request<RequestBody>> for Reader {
        type Response = Response<ResponseBody>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Response<ResponseBody>, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: Request<RequestBody>) -> Self::Future {
            std::future::ready(Ok(report(&request)))
        }
    }

    fn asked(router: &Router, body: RequestBody, uri: &str) -> serde_json::Value {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let request = Request::builder().uri(uri).body(body).unwrap();
        let response = runtime.block_on(router.clone().oneshot(request)).unwrap();
        let bytes = runtime.block_on(http_body_util::BodyExt::collect(response.into_body())).unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }

    /// A body as a router above mounted at `/outer` would hand it on,
    /// carrying the connection.
    fn from_above(peer: SocketAddr) -> RequestBody {
        let (_tx, draining) = Draining::channel();
        let routed = Routed { connection: Some(Connection::new(peer, draining)), mount: "/outer".len() };
        RequestBody::routed(RequestBody::default().into_parts().0, Some(routed))
    }

    #[test]
    fn a_declared_reader_gets_both_in_the_body_and_nothing_in_the_extensions() {
        reads_routed_body::<Reader>();
        let router = Router::new().nest("/api", Reader);
        let peer: SocketAddr = "10.0.0.7:4000".parse().unwrap();
        let found = asked(&router, from_above(peer), "/outer/api/v2");
        assert_eq!(found["path"], "/v2", "the path below both prefixes");
        assert_eq!(found["target"], "/outer/api/v2", "the target is left as the client sent it");
        assert_eq!(found["original"], "/outer/api/v2", "the outermost target");
        assert_eq!(found["peer"], "10.0.0.7:4000");
        assert_eq!(found["extension_uri"], serde_json::Value::Null);
        assert_eq!(found["extension_peer"], serde_json::Value::Null);
    }

    #[test]
    fn any_other_service_finds_both_in_the_extensions_as_documented() {
        let other =
            tower::service_fn(|request: Request<RequestBody>| async move { Ok::<_, Infallible>(report(&request)) });
        let router = Router::new().nest("/api", other);
        let peer: SocketAddr = "10.0.0.8:4000".parse().unwrap();
        let found = asked(&router, from_above(peer), "/outer/api/v2");
        assert_eq!(found["path"], "/v2");
        assert_eq!(found["target"], "/v2", "rewritten, as documented");
        assert_eq!(found["extension_uri"], "/outer/api/v2");
        assert_eq!(found["extension_peer"], "10.0.0.8:4000");
        assert_eq!(found["original"], "/outer/api/v2");
        assert_eq!(found["peer"], "10.0.0.8:4000");
        // Nothing carried: the request's own target, and no connection.
        let plain = asked(&router, RequestBody::new(Full::new(Bytes::new())), "/api/x?y");
        assert_eq!(plain["extension_uri"], "/api/x?y");
        assert_eq!(plain["peer"], serde_json::Value::Null);
    }

    #[test]
    fn routers_nested_in_routers_hand_on_the_outermost_target_and_the_connection() {
        reads_routed_body::<Reader>();
        let other =
            tower::service_fn(|request: Request<RequestBody>| async move { Ok::<_, Infallible>(report(&request)) });
        let inner = Router::new().nest("/reader", Reader).nest("/other", other);
        let outer = Router::new().nest("/api", inner);
        let peer: SocketAddr = "10.0.0.9:4000".parse().unwrap();
        let (_tx, draining) = Draining::channel();
        let with_connection = || {
            let routed = Routed { connection: Some(Connection::new(peer, draining.clone())), mount: 0 };
            RequestBody::routed(RequestBody::default().into_parts().0, Some(routed))
        };
        let reader = asked(&outer, with_connection(), "/api/reader/v1?q=1");
        assert_eq!((reader["path"].as_str(), reader["original"].as_str()), (Some("/v1"), Some("/api/reader/v1?q=1")));
        assert_eq!(reader["target"], "/api/reader/v1");
        assert_eq!(reader["peer"], "10.0.0.9:4000");
        let whole = asked(&outer, with_connection(), "/api/reader");
        assert_eq!(whole["path"], "/", "nothing below the prefixes is `/`");
        let other = asked(&outer, with_connection(), "/api/other/v1?q=1");
        assert_eq!((other["path"].as_str(), other["target"].as_str()), (Some("/v1"), Some("/v1")));
        assert_eq!(other["extension_uri"], "/api/other/v1?q=1");
        assert_eq!(other["extension_peer"], "10.0.0.9:4000");
    }
}
