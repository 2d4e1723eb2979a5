//! Claims on jobs: before a worker runs (or posts) a job, it takes a
//! short-lived lock keyed by the job's deduplication id in the executor's
//! lock store, so that two copies of one message delivered to two workers
//! at the same time (a duplicate publish) do not both run and post. The
//! claim lives [`CLAIM_TTL`] and is renewed every [`RENEW_EVERY`] while the
//! job runs, so a worker that dies frees it within the TTL; the worker that
//! does not get the claim requeues its copy, which then finds the job
//! delivered (and is acknowledged without a POST) or the claim free.

use std::sync::Arc;
use std::time::Duration;

use rpc_core::store::LockStore;

/// How long a claim lives without renewal (a dead worker's claim is free
/// after this).
pub const CLAIM_TTL: Duration = Duration::from_secs(6);
/// How often a held claim is renewed.
pub const RENEW_EVERY: Duration = Duration::from_secs(2);

/// What trying to claim a job gave.
pub(crate) enum Claimed {
    /// This worker holds it (released when dropped or [`Claim::release`]d).
    Mine(Claim),
    /// Another worker holds it.
    Theirs,
    /// The lock store failed: the job runs unclaimed (as without claims).
    Unknown(String),
}

/// A held claim, renewed in the background until released or dropped.
pub(crate) struct Claim {
    locks: Arc<dyn LockStore>,
    key: String,
    owner: String,
    renewal: tokio::task::JoinHandle<()>,
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.renewal.abort();
    }
}

impl Claim {
    /// Releases the claim (the job was delivered, or given back).
    pub(crate) async fn release(self) {
        self.renewal.abort();
        if let Err(e) = self.locks.release(&self.key, &self.owner).await {
            tracing::warn!(error = %e, "cannot release a job's claim (it expires by itself)");
        }
    }
}

/// Tries to claim the job `dedup` in `locks`.
pub(crate) async fn claim(locks: &Arc<dyn LockStore>, dedup: &str) -> Claimed {
    let key = format!("rpc:amqp:claim:{dedup}");
    let owner = match crate::jsonrpc::queue::dedup_id() {
        Ok(token) => token,
        Err(e) => return Claimed::Unknown(e.message().to_owned()),
    };
    match locks.acquire(&key, &owner, CLAIM_TTL).await {
        Ok(true) => {}
        Ok(false) => return Claimed::Theirs,
        Err(e) => return Claimed::Unknown(e.to_string()),
    }
    let renewal = tokio::spawn(renew(Arc::clone(locks), key.clone(), owner.clone()));
    Claimed::Mine(Claim { locks: Arc::clone(locks), key, owner, renewal })
}

/// Keeps the claim alive: extended to [`CLAIM_TTL`] every [`RENEW_EVERY`]
/// (atomically: only while this worker still holds it).
async fn renew(locks: Arc<dyn LockStore>, key: String, owner: String) {
    loop {
        tokio::time::sleep(RENEW_EVERY).await;
        match locks.extend(&key, &owner, CLAIM_TTL).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(key = %key, "a job's claim expired while it ran (the store did not answer in time)");
                return;
            }
            Err(e) => tracing::warn!(error = %e, "cannot renew a job's claim"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpc_core::clock::ManualClock;
    use rpc_core::store::MemoryLocks;

    #[tokio::test(start_paused = true)]
    async fn one_claim_at_a_time_renewed_while_held_free_when_released_or_expired() {
        let clock = Arc::new(ManualClock::new());
        let locks: Arc<dyn LockStore> = Arc::new(MemoryLocks::with_clock(clock.clone()));
        let Claimed::Mine(first) = claim(&locks, "j1").await else { panic!("the first claim") };
        assert!(matches!(claim(&locks, "j1").await, Claimed::Theirs));
        assert!(matches!(claim(&locks, "j2").await, Claimed::Mine(_)));
        // Renewed past its TTL while held (the locks' clock and the timers move together).
        for _ in 0..20 {
            clock.advance(Duration::from_secs(1));
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        assert!(matches!(claim(&locks, "j1").await, Claimed::Theirs));
        first.release().await;
        let Claimed::Mine(second) = claim(&locks, "j1").await else { panic!("free once released") };
        // Dropped without release (a worker that died): free after the TTL.
        drop(second);
        assert!(matches!(claim(&locks, "j1").await, Claimed::Theirs));
        clock.advance(CLAIM_TTL + Duration::from_millis(10));
        assert!(matches!(claim(&locks, "j1").await, Claimed::Mine(_)));
    }
}
