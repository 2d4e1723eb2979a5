//! Calls in progress, so a client's `notifications/cancelled` can stop
//! one: the call's future is dropped, and the request is answered with a
//! cancellation error (a JSON exchange over HTTP), or not at all (its stream
//! ends without a response; stdio writes nothing). Keys are per scope (a
//! handshake-era session, a stdio conversation), so a client can only
//! cancel its own requests. The one registry of the server, for every
//! transport.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures_util::future::{AbortHandle, AbortRegistration};

type Key = (String, String);

/// The registry.
#[derive(Debug, Default, Clone)]
pub(crate) struct InFlight {
    calls: Arc<Mutex<HashMap<Key, AbortHandle>>>,
}

/// Keeps a call registered while it runs; removes it when dropped.
#[derive(Debug)]
pub(crate) struct Registered {
    calls: Arc<Mutex<HashMap<Key, AbortHandle>>>,
    key: Key,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.key);
    }
}

impl InFlight {
    /// Registers request `id` (raw JSON) of `scope`; the call runs under
    /// the returned registration while the guard lives.
    pub fn register(&self, session: &str, id: &str) -> (AbortRegistration, Registered) {
        let (handle, registration) = AbortHandle::new_pair();
        let key = (session.to_owned(), id.trim().to_owned());
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).insert(key.clone(), handle);
        (registration, Registered { calls: Arc::clone(&self.calls), key })
    }

    /// Cancels request `id` of `scope`; whether it was running.
    pub fn cancel(&self, session: &str, id: &str) -> bool {
        let key = (session.to_owned(), id.trim().to_owned());
        match self.calls.lock().unwrap_or_else(|e| e.into_inner()).remove(&key) {
            Some(handle) => {
                handle.abort();
                true
            }
            None => false,
        }
    }

    /// Number of registered calls.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use futures_util::future::Abortable;

    use super::*;

    #[tokio::test]
    async fn cancels_only_the_sessions_own_request() {
        let inflight = InFlight::default();
        let (registration, guard) = inflight.register("s1", "7");
        assert!(!inflight.cancel("s2", "7"), "another session cannot cancel it");
        assert!(inflight.cancel("s1", " 7 "));
        let outcome = Abortable::new(std::future::pending::<()>(), registration).await;
        assert!(outcome.is_err(), "the call stopped");
        drop(guard);
        assert_eq!(inflight.len(), 0);
        let (_registration, guard) = inflight.register("s1", "\"a\"");
        drop(guard);
        assert_eq!(inflight.len(), 0, "a finished call leaves nothing behind");
    }
}
