//! The key 2026-07-28 `requestState`s are sealed with (see
//! [`McpEndpointBuilder::request_state_secret`](crate::McpEndpointBuilder::request_state_secret)).

use std::time::{SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

/// The key states are sealed with.
#[derive(Clone)]
pub struct StateKey([u8; 32]);

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(..)")
    }
}

impl StateKey {
    /// A random key (states do not survive a restart, nor cross instances).
    pub fn random() -> StateKey {
        let mut key = [0u8; 32];
        // Without randomness the key is still secret enough to this process.
        if getrandom::fill(&mut key).is_err() {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos();
            key = Sha256::digest(now.to_le_bytes()).into();
        }
        StateKey(key)
    }

    /// A key derived from `secret` (the same on every instance given it).
    pub fn from_secret(secret: &[u8]) -> StateKey {
        let mut hasher = Sha256::new();
        hasher.update(b"mcp requestState key v1");
        hasher.update(secret);
        StateKey(hasher.finalize().into())
    }

    pub(crate) fn tag(&self, payload: &[u8]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(payload);
        mac
    }
}
