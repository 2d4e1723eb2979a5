//! What the server knows about the connection a request came on:
//! [`serve`](super::serve) hands a [`Connection`] with every request, in
//! its extensions for the application's own services.

use std::net::SocketAddr;
use std::sync::Arc;

use super::draining::Draining;

/// The connection a request came on: the client's address, as the server
/// that accepted the connection saw it, and the signal that the server is
/// shutting down. [`serve`](super::serve) puts one into the extensions of
/// every request that reaches a service of the application's own, directly
/// or through the [`Router`](super::Router) (read it with
/// `request.extensions().get::<Connection>()`); the bundled endpoints,
/// which declare [`reads_routed_body`](super::request_body::reads_routed_body),
/// find it in the request body instead, without an extension map per
/// request. [`connection_of`](super::route::connection_of) reads it from
/// either. The requests of a connection share it, so carrying it costs one
/// reference count per request.
#[derive(Debug, Clone)]
pub struct Connection(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    peer: SocketAddr,
    draining: Draining,
}

impl Connection {
    /// A connection from `peer` on a server whose shutdown `draining` tells.
    pub fn new(peer: SocketAddr, draining: Draining) -> Self {
        Connection(Arc::new(Shared { peer, draining }))
    }

    /// The client's address.
    pub fn peer(&self) -> SocketAddr {
        self.0.peer
    }

    /// Set when the server starts shutting down (long-lived streams end then).
    pub fn draining(&self) -> &Draining {
        &self.0.draining
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_peer_and_the_shutdown_signal() {
        let (tx, draining) = Draining::channel();
        let peer: SocketAddr = "192.0.2.7:4711".parse().unwrap();
        let connection = Connection::new(peer, draining);
        let copy = connection.clone();
        assert_eq!(copy.peer(), peer);
        assert!(!copy.draining().started());
        tx.send_replace(true);
        assert!(connection.draining().started() && copy.draining().started());
    }
}
