//! What the server knows about the connection a request came on:
//! [`serve`](super::serve) hands a [`Connection`] with every request, in
//! its extensions for the application's own services.

use std::net::SocketAddr;
use std::sync::Arc;

#[cfg(feature = "server")]
use super::activity::Activity;
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
/// either. The requests of a connection share it, so carrying it costs a
/// reference count per request (two for the application's own services:
/// the request body carries it too, and tells it when it is read).
#[derive(Debug, Clone)]
pub struct Connection(Arc<Shared>);

struct Shared {
    peer: SocketAddr,
    draining: Draining,
    /// The runner's bookkeeping of the connection, told when a request's
    /// body has been read to its end.
    #[cfg(feature = "server")]
    activity: Option<Arc<Activity>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("peer", &self.peer).field("draining", &self.draining).finish()
    }
}

impl Connection {
    /// A connection from `peer` on a server whose shutdown `draining` tells.
    pub fn new(peer: SocketAddr, draining: Draining) -> Self {
        Connection(Arc::new(Shared {
            peer,
            draining,
            #[cfg(feature = "server")]
            activity: None,
        }))
    }

    /// A connection the runner accepted, whose `activity` hears when a
    /// request's body has been read to its end.
    #[cfg(feature = "server")]
    pub(crate) fn served(peer: SocketAddr, draining: Draining, activity: Arc<Activity>) -> Self {
        Connection(Arc::new(Shared { peer, draining, activity: Some(activity) }))
    }

    /// The request's body was read to its end (the runner then lets the
    /// connection carry another request without asking the client to close).
    pub(crate) fn body_read(&self) {
        #[cfg(feature = "server")]
        if let Some(activity) = &self.0.activity {
            activity.body_read();
        }
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
