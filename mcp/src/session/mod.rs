//! Protocol sessions of the handshake era (`Mcp-Session-Id`).
//!
//! Sessions live behind [`SessionStore`] so that several instances behind a
//! load balancer can share them; [`InMemorySessionStore`] is the in-process
//! default (sliding TTL, bounded size, least recently used evicted first);
//! with the `redis` feature, `RedisSessionStore` shares them through Redis.
//!
//! A session keeps little of what the client sent: the negotiated version,
//! the names of the capabilities a tool can require, and the `name`,
//! `title` and `version` of its `clientInfo`, each cut to
//! [`ClientInfo::MAX_FIELD_BYTES`]; so a session costs a few hundred bytes
//! whatever the client sends.

mod capabilities;
mod client_info;
mod memory;
#[cfg(feature = "redis")]
mod redis;

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::protocol::ProtocolVersion;

pub(crate) use capabilities::KnownCapabilities;
pub use client_info::ClientInfo;
pub use memory::InMemorySessionStore;
#[cfg(feature = "redis")]
pub use redis::RedisSessionStore;

/// One session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Session {
    /// The id sent as `Mcp-Session-Id`: 128 random bits, hex.
    pub id: String,
    /// The endpoint the session belongs to (`group/vN`); other endpoints do not accept it.
    pub endpoint: String,
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// What is kept of `clientInfo` from `initialize` (`None`: the client
    /// sent none, or not an object).
    #[serde(default)]
    pub client_info: Option<ClientInfo>,
    /// The names of the capabilities the client declared (`sampling`, ...).
    #[serde(default)]
    pub client_capabilities: Vec<String>,
    /// The level set with `logging/setLevel`; no log messages before that.
    #[serde(default)]
    pub log_level: Option<rpc::LogLevel>,
    /// Who opened the session (the subject of the caller's
    /// [`Identity`](rpc::security::Identity), when the endpoint's access
    /// policy gives one): requests of any other caller do not find it.
    #[serde(default)]
    pub owner: Option<String>,
    /// The resources the session subscribed to (`resources/subscribe`), as
    /// digests of their URIs; at most 32.
    #[serde(default)]
    pub subscriptions: Vec<String>,
    /// What a call's context sees of the client, built on first use.
    #[serde(skip)]
    view: ViewCache,
}

/// A session's [`rpc::ClientView`] at its negotiated revision, built once;
/// not part of the session's identity (equality, serialisation).
#[derive(Clone, Default)]
struct ViewCache(OnceLock<rpc::ClientView>);

impl PartialEq for ViewCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl fmt::Debug for ViewCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ViewCache")
    }
}

impl Session {
    /// A session `id` of `endpoint` at `protocol_version`, without client info.
    pub fn new(id: impl Into<String>, endpoint: impl Into<String>, protocol_version: ProtocolVersion) -> Self {
        Session {
            id: id.into(),
            endpoint: endpoint.into(),
            protocol_version: protocol_version.as_str().to_owned(),
            client_info: None,
            client_capabilities: Vec::new(),
            log_level: None,
            owner: None,
            subscriptions: Vec::new(),
            view: ViewCache::default(),
        }
    }

    /// The session owned by the caller named `owner` (an identity's subject).
    pub fn with_owner(mut self, owner: Option<String>) -> Self {
        self.owner = owner;
        self
    }

    /// Whether a request of the caller named `subject` may use the session.
    pub fn belongs_to(&self, subject: Option<&str>) -> bool {
        self.owner.as_deref() == subject
    }

    /// The session with the names of the client's declared capabilities.
    pub fn with_client_capabilities(mut self, names: Vec<String>) -> Self {
        self.client_capabilities = names;
        self.view = ViewCache::default();
        self
    }

    /// The capabilities as an object (`{"sampling": {}}`), for a request's context.
    pub fn capabilities_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.client_capabilities
                .iter()
                .map(|n| (n.clone(), serde_json::Value::Object(Default::default())))
                .collect(),
        )
    }

    /// What a call served at `protocol` sees of the client: shared by every
    /// call of the session at its negotiated revision. Its `clientInfo` is
    /// the kept fields ([`ClientInfo::to_json`]).
    pub fn client_view(&self, protocol: ProtocolVersion) -> rpc::ClientView {
        let build = || {
            rpc::ClientView::new(
                Some(protocol.as_str().into()),
                Some(self.capabilities_json()),
                self.client_info.as_ref().map(ClientInfo::to_json),
            )
        };
        if protocol == self.version() { self.view.0.get_or_init(build).clone() } else { build() }
    }

    /// The session with what is kept of the client's `clientInfo`.
    pub fn with_client_info(mut self, client_info: Option<ClientInfo>) -> Self {
        self.client_info = client_info;
        self.view = ViewCache::default();
        self
    }

    /// The negotiated version, parsed.
    pub fn version(&self) -> ProtocolVersion {
        ProtocolVersion::parse(&self.protocol_version).unwrap_or(ProtocolVersion::LATEST)
    }
}

/// A session store failed (e.g. a network store is unreachable).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionError {
    /// The store holds as many sessions as it may and will not make room
    /// ([`InMemorySessionStore`] never answers this: it evicts the least
    /// recently used session instead).
    Full,
    /// Any other failure.
    Unavailable(String),
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Full => f.write_str("too many open sessions"),
            SessionError::Unavailable(why) => write!(f, "session store unavailable: {why}"),
        }
    }
}

impl std::error::Error for SessionError {}

/// What a store's operations return: a value ready at once (an in-process
/// store, without allocating) or a boxed future (a network store): the
/// framework's one [`MaybeReady`](rpc::MaybeReady) for extension points.
pub type StoreFuture<'a, T> = rpc::MaybeReady<'a, T>;

/// Where sessions live.
pub trait SessionStore: Send + Sync + 'static {
    /// Stores a new session that expires after `ttl` without use.
    fn create(&self, session: Session, ttl: Duration) -> StoreFuture<'_, Result<(), SessionError>>;
    /// The session with this id, if it exists and has not expired; a hit
    /// extends its life by `ttl`.
    fn get<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, Result<Option<Arc<Session>>, SessionError>>;
    /// Ends a session; `false` if there was none.
    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<bool, SessionError>>;
    /// Replaces a stored session (same id) with `session`, e.g. after
    /// `logging/setLevel`; `false` if it no longer exists.
    fn update(&self, session: Session) -> StoreFuture<'_, Result<bool, SessionError>>;
}

/// A new session id: 128 bits from the operating system's CSPRNG, as hex.
pub fn new_session_id() -> Result<String, SessionError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| SessionError::Unavailable(format!("no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_random_hex() {
        let a = new_session_id().unwrap();
        let b = new_session_id().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn the_view_shows_the_kept_client_info() {
        let info = ClientInfo::parse(r#"{"name": "cli", "version": "2", "extra": [1, 2, 3]}"#);
        let session = Session::new("a", "mcp/v1", ProtocolVersion::V2025_11_25)
            .with_client_info(info)
            .with_client_capabilities(vec!["sampling".into()]);
        let view = session.client_view(ProtocolVersion::V2025_11_25);
        assert_eq!(view.info(), Some(&serde_json::json!({"name": "cli", "version": "2"})));
        assert_eq!(view.capabilities(), Some(&serde_json::json!({"sampling": {}})));
        let stored = serde_json::to_string(&session).unwrap();
        let back: Session = serde_json::from_str(&stored).unwrap();
        assert_eq!(back, session, "a session survives a network store: {stored}");
    }
}
