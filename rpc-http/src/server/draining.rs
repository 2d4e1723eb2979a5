//! The signal that the server is shutting down, for responses that would
//! otherwise stay open (long-lived streams): [`serve`](super::serve) puts a
//! [`Draining`] into every request's extensions and sets it when the
//! shutdown signal arrives, before it waits for open connections.

use tokio::sync::watch;

/// Set when the server that received the request starts shutting down.
#[derive(Debug, Clone)]
pub struct Draining(watch::Receiver<bool>);

impl Draining {
    /// A signal and the sender that sets it.
    pub fn channel() -> (watch::Sender<bool>, Draining) {
        let (tx, rx) = watch::channel(false);
        (tx, Draining(rx))
    }

    /// Whether shutdown has started.
    pub fn started(&self) -> bool {
        *self.0.borrow()
    }

    /// The receiver that sees the signal (clone it to `wait_for(|set| *set)`).
    pub fn receiver(&self) -> &watch::Receiver<bool> {
        &self.0
    }
}
