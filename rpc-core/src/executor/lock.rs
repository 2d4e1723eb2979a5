//! A held method lock (`#[rpc::lock]`), released when the call ends: also
//! when the method failed or panicked, and when the call's future is
//! dropped (the client went away), through a release task.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::logged::logged;
use crate::store::LockStore;

/// A lock taken for one call.
pub(crate) struct LockGuard {
    store: Arc<dyn LockStore>,
    key: String,
    owner: String,
    held: bool,
}

/// A random number drawn once per process, so owner tokens of different
/// instances sharing one lock store never collide.
fn process_nonce() -> u64 {
    static NONCE: OnceLock<u64> = OnceLock::new();
    *NONCE.get_or_init(|| {
        let mut bytes = [0u8; 8];
        if getrandom::fill(&mut bytes).is_err() {
            // No OS randomness: the clock and the process id still separate instances.
            let nanos =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
            return nanos ^ u64::from(std::process::id()).rotate_left(32);
        }
        u64::from_le_bytes(bytes)
    })
}

/// A token no other acquisition (in this process or another) uses.
pub(crate) fn owner_token() -> String {
    static SEQUENCE: AtomicU64 = AtomicU64::new(1);
    format!("{:016x}-{:x}", process_nonce(), SEQUENCE.fetch_add(1, Ordering::Relaxed))
}

impl LockGuard {
    pub(crate) fn new(store: Arc<dyn LockStore>, key: String, owner: String) -> Self {
        LockGuard { store, key, owner, held: true }
    }

    /// Releases the lock now.
    pub(crate) async fn release(mut self) {
        self.held = false;
        release(&*self.store, &self.key, &self.owner).await;
    }
}

async fn release(store: &dyn LockStore, key: &str, owner: &str) {
    match store.release(key, owner).await {
        Ok(true) => {}
        Ok(false) => {
            tracing::warn!(key = %logged(key), "a method lock expired before its call ended (raise the lock's ttl)")
        }
        Err(e) => {
            tracing::error!(key = %logged(key), error = %e, "could not release a method lock; it expires after its ttl")
        }
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if !self.held {
            return;
        }
        let (store, key, owner) = (self.store.clone(), std::mem::take(&mut self.key), std::mem::take(&mut self.owner));
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move { release(&*store, &key, &owner).await });
            }
            Err(_) => {
                tracing::warn!(key = %logged(&key), "a method lock was dropped outside a runtime; it expires after its ttl")
            }
        }
    }
}
