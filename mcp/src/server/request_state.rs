//! `requestState` of 2026-07-28 input-required rounds: what a call needs
//! to go on when the client comes back with its answers — the answers of
//! earlier rounds — sealed so that the client can carry it but not change
//! it or reuse it elsewhere.
//!
//! The state is `base64url(payload) "." base64url(tag)`, where the tag is
//! HMAC-SHA-256 under the server's key of the payload, and the payload
//! holds the method (`tools/call`, `prompts/get`, ...), the name of the tool
//! or prompt, a SHA-256 digest of its arguments, the expiry time and the
//! answers. Opening it checks the tag (in constant time), the expiry, and
//! that the request is the same call: a state presented with another tool
//! or other arguments is refused.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::Mac;
use rpc::RpcError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

pub use crate::state_key::StateKey;

/// The longest `requestState` accepted, in bytes.
pub const MAX_STATE_BYTES: usize = 64 * 1024;

/// What a state is bound to: a digest of the request's method, the tool
/// or prompt (or resource URI) and its arguments.
pub(crate) fn binding(method: &str, name: &str, arguments: &Map<String, Value>) -> String {
    let mut hasher = Sha256::new();
    for part in [method, name] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.update(serde_json::to_vec(arguments).unwrap_or_default());
    URL_SAFE_NO_PAD.encode(hasher.finalize())
}

#[derive(Serialize, Deserialize)]
struct Payload {
    /// The binding's digest.
    b: String,
    /// Expiry, seconds since the epoch.
    e: u64,
    /// The answers so far.
    a: Map<String, Value>,
}

/// Seconds since the epoch, the clock states are sealed and opened with.
pub(crate) fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

fn refused(why: &str) -> RpcError {
    RpcError::invalid_params(format!("invalid requestState: {why}"))
}

/// Seals `answers` for the call `binding`, valid for `ttl` from `now`.
pub(crate) fn seal(key: &StateKey, binding: &str, answers: &Map<String, Value>, ttl: Duration, now: u64) -> String {
    let payload = Payload { b: binding.to_owned(), e: now.saturating_add(ttl.as_secs()), a: answers.clone() };
    let payload = serde_json::to_vec(&payload).unwrap_or_default();
    let tag = key.tag(&payload).finalize().into_bytes();
    format!("{}.{}", URL_SAFE_NO_PAD.encode(&payload), URL_SAFE_NO_PAD.encode(tag))
}

/// The answers `state` carries, if it is intact, unexpired and sealed for
/// `binding` (at time `now`); else `-32602` saying which check failed.
pub(crate) fn open(key: &StateKey, binding: &str, state: &str, now: u64) -> Result<Map<String, Value>, RpcError> {
    if state.len() > MAX_STATE_BYTES {
        return Err(refused("too long"));
    }
    let (payload, tag) = state.split_once('.').ok_or_else(|| refused("malformed"))?;
    let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| refused("malformed"))?;
    let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| refused("malformed"))?;
    key.tag(&payload).verify_slice(&tag).map_err(|_| refused("it was not issued by this server, or was altered"))?;
    let payload: Payload = serde_json::from_slice(&payload).map_err(|_| refused("malformed"))?;
    if payload.e < now {
        return Err(refused("expired; call again without it"));
    }
    if payload.b != binding {
        return Err(refused("it was issued for another request (tool, prompt or arguments)"));
    }
    Ok(payload.a)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn binding(name: &str, arguments: &Map<String, Value>) -> String {
        super::binding("tools/call", name, arguments)
    }

    #[test]
    fn round_trips_and_refuses_what_was_changed() {
        let key = StateKey::random();
        let args = Map::from_iter([("id".to_owned(), json!(7))]);
        let answers = Map::from_iter([("confirm".to_owned(), json!({"action": "accept"}))]);
        let t = 1_000_000;
        let state = seal(&key, &binding("delete", &args), &answers, Duration::from_secs(60), t);
        assert_eq!(open(&key, &binding("delete", &args), &state, t + 60).unwrap(), answers);

        let tampered = format!("{state}-TAMPERED");
        assert!(open(&key, &binding("delete", &args), &tampered, t).is_err());
        let mut flipped = state.clone().into_bytes();
        flipped[3] ^= 1;
        assert!(open(&key, &binding("delete", &args), std::str::from_utf8(&flipped).unwrap(), t).is_err());
        assert!(open(&StateKey::random(), &binding("delete", &args), &state, t).is_err(), "another key");
        let other = Map::from_iter([("id".to_owned(), json!(8))]);
        let error = open(&key, &binding("delete", &other), &state, t).unwrap_err();
        assert!(error.message().contains("another request"), "{error:?}");
        assert!(open(&key, &binding("rename", &args), &state, t).is_err(), "another tool");
        let expired = open(&key, &binding("delete", &args), &state, t + 61).unwrap_err();
        assert!(expired.message().contains("expired"), "{expired:?}");
        assert!(open(&key, &binding("delete", &args), &"x".repeat(MAX_STATE_BYTES + 1), t).is_err());
        assert!(open(&key, &binding("delete", &args), "no-dot", t).is_err());
    }

    #[test]
    fn keys_from_the_same_secret_agree() {
        let args = Map::new();
        let state = seal(&StateKey::from_secret(b"s"), &binding("t", &args), &Map::new(), Duration::from_secs(60), 5);
        assert!(open(&StateKey::from_secret(b"s"), &binding("t", &args), &state, 5).is_ok());
        assert!(open(&StateKey::from_secret(b"t"), &binding("t", &args), &state, 5).is_err());
    }
}
