//! The issuer's signing keys (its JWKS), kept in memory: fetched at start,
//! fetched again when a token names a key id not in the set (a rotation),
//! at most once per `min_refresh` however many such tokens arrive (so a
//! flood of made-up key ids costs the issuer one request a minute), and
//! when the set is older than `max_age`. A failed fetch keeps the keys
//! known so far.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use tokio::time::Instant;
use url::Url;

use super::OAuthError;
use super::fetch::{Fetched, get_json};

/// The most keys a set may have; more are ignored.
const MAX_KEYS: usize = 64;

/// One signing key of the issuer.
pub(super) struct Key {
    pub(super) decoding: DecodingKey,
    /// The algorithm the key is for, when the set says (`alg`).
    pub(super) algorithm: Option<Algorithm>,
}

#[derive(Default)]
struct Keys {
    by_id: HashMap<String, Arc<Key>>,
    /// Keys without a `kid` (usable only when a token names none and the
    /// set has exactly one key of the token's family).
    unnamed: Vec<Arc<Key>>,
    fetched_at: Option<Instant>,
    attempted_at: Option<Instant>,
}

/// The key set of one issuer.
pub(super) struct KeySet {
    client: reqwest::Client,
    url: Url,
    keys: RwLock<Keys>,
    refreshing: tokio::sync::Mutex<()>,
    min_refresh: Duration,
    max_age: Duration,
}

/// What looking a token's key up found.
pub(super) enum Lookup {
    Found(Arc<Key>),
    /// No key with that id (or, without an id, not exactly one candidate).
    Unknown,
}

impl KeySet {
    pub(super) fn new(client: reqwest::Client, url: Url, min_refresh: Duration, max_age: Duration) -> Self {
        KeySet {
            client,
            url,
            keys: RwLock::new(Keys::default()),
            refreshing: tokio::sync::Mutex::new(()),
            min_refresh,
            max_age,
        }
    }

    /// The key set's address.
    pub(super) fn url(&self) -> &Url {
        &self.url
    }

    /// The key a token with `kid` and `algorithm` is to be checked with.
    pub(super) fn find(&self, kid: Option<&str>, algorithm: Algorithm) -> Lookup {
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
        let found = match kid {
            Some(kid) => keys.by_id.get(kid).cloned(),
            None => {
                let family = algorithm.family();
                let mut fitting = keys
                    .by_id
                    .values()
                    .chain(&keys.unnamed)
                    .filter(|k| k.decoding.family() == family && k.algorithm.is_none_or(|a| a == algorithm));
                match (fitting.next(), fitting.next()) {
                    (Some(only), None) => Some(only.clone()),
                    _ => None,
                }
            }
        };
        found.map_or(Lookup::Unknown, Lookup::Found)
    }

    /// Whether a fetch may run now: none ran for `min_refresh`.
    pub(super) fn may_refresh(&self) -> bool {
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
        keys.attempted_at.is_none_or(|at| at.elapsed() >= self.min_refresh)
    }

    /// Whether the set is older than `max_age` (or was never fetched).
    pub(super) fn is_stale(&self) -> bool {
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
        keys.fetched_at.is_none_or(|at| at.elapsed() >= self.max_age)
    }

    /// Fetches the set, unless another fetch ran within `min_refresh`
    /// (callers waiting for a running fetch use its result). Errors are
    /// logged and returned; the keys known before stay.
    pub(super) async fn refresh(&self) -> Result<(), OAuthError> {
        let _running = self.refreshing.lock().await;
        if !self.may_refresh() {
            return Ok(());
        }
        let started = Instant::now();
        let fetched = self.fetch().await;
        let mut keys = self.keys.write().unwrap_or_else(|e| e.into_inner());
        keys.attempted_at = Some(started);
        match fetched {
            Ok(new) => {
                tracing::debug!(url = %self.url, keys = new.by_id.len() + new.unnamed.len(), "OAuth signing keys fetched");
                *keys = Keys { fetched_at: Some(started), attempted_at: Some(started), ..new };
                Ok(())
            }
            Err(e) => {
                tracing::warn!("{e}; the keys known so far stay in use");
                Err(e)
            }
        }
    }

    async fn fetch(&self) -> Result<Keys, OAuthError> {
        let document = match get_json::<serde_json::Value>(&self.client, "the issuer's key set", &self.url).await? {
            Fetched::Found(document) => document,
            Fetched::NotFound => {
                return Err(OAuthError::new(format!("cannot read the issuer's key set at {}: HTTP 404", self.url)));
            }
        };
        let Some(entries) = document.get("keys").and_then(|k| k.as_array()) else {
            return Err(OAuthError::new(format!("the issuer's key set at {} has no `keys` array", self.url)));
        };
        let mut keys = Keys::default();
        for entry in entries.iter().take(MAX_KEYS) {
            match key_of(entry) {
                Ok((kid, key)) => match kid {
                    Some(kid) => {
                        keys.by_id.entry(kid).or_insert(key);
                    }
                    None => keys.unnamed.push(key),
                },
                Err(why) => tracing::debug!(url = %self.url, "a key of the set is skipped: {why}"),
            }
        }
        if entries.len() > MAX_KEYS {
            tracing::warn!(url = %self.url, "the issuer's key set has {} keys: the first {MAX_KEYS} are used", entries.len());
        }
        if keys.by_id.is_empty() && keys.unnamed.is_empty() {
            return Err(OAuthError::new(format!("the issuer's key set at {} has no usable signing key", self.url)));
        }
        Ok(keys)
    }
}

/// A JWK of the set as a verification key: signing keys only (`use` absent
/// or `sig`), public keys of an asymmetric algorithm (a symmetric key in a
/// public set would let anyone sign).
fn key_of(entry: &serde_json::Value) -> Result<(Option<String>, Arc<Key>), String> {
    let jwk: Jwk = serde_json::from_value(entry.clone()).map_err(|e| format!("not a JWK: {e}"))?;
    if jwk.common.public_key_use.as_ref().is_some_and(|u| *u != PublicKeyUse::Signature) {
        return Err("not a signing key (`use`)".into());
    }
    let algorithm = match &jwk.common.key_algorithm {
        None => None,
        Some(named) => {
            let name = serde_json::to_value(named).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
            Some(Algorithm::from_str(&name).map_err(|_| format!("`alg` {name} is not a signature algorithm"))?)
        }
    };
    let decoding = DecodingKey::from_jwk(&jwk).map_err(|e| format!("unusable key: {e}"))?;
    if decoding.family() == jsonwebtoken::AlgorithmFamily::Hmac {
        return Err("a symmetric key".into());
    }
    Ok((jwk.common.key_id.clone(), Arc::new(Key { decoding, algorithm })))
}
