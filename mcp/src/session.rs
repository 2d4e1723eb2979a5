//! Protocol sessions of the handshake era (`Mcp-Session-Id`).
//!
//! Sessions live behind [`SessionStore`] so that several instances behind a
//! load balancer can share them; [`InMemorySessionStore`] is the in-process
//! default (sliding TTL, bounded size).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use rpc::clock::{Clock, SystemClock};
use serde::{Deserialize, Serialize};

use crate::protocol::ProtocolVersion;

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
    /// `clientInfo` from `initialize`.
    pub client_info: Option<serde_json::Value>,
    /// The names of the capabilities the client declared (`sampling`, ...).
    #[serde(default)]
    pub client_capabilities: Vec<String>,
    /// The level set with `logging/setLevel`; no log messages before that.
    #[serde(default)]
    pub log_level: Option<rpc::LogLevel>,
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
            view: ViewCache::default(),
        }
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
    /// call of the session at its negotiated revision.
    pub fn client_view(&self, protocol: ProtocolVersion) -> rpc::ClientView {
        let build = || {
            rpc::ClientView::new(
                Some(protocol.as_str().into()),
                Some(self.capabilities_json()),
                self.client_info.clone(),
            )
        };
        if protocol == self.version() { self.view.0.get_or_init(build).clone() } else { build() }
    }

    /// The session with the client's `clientInfo`.
    pub fn with_client_info(mut self, client_info: Option<serde_json::Value>) -> Self {
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
    /// The store holds as many sessions as it may.
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
/// store, without allocating) or a boxed future (a network store).
pub enum StoreFuture<'a, T> {
    /// Already done.
    Ready(Option<T>),
    /// Still to do.
    Pending(BoxFuture<'a, T>),
}

impl<T> StoreFuture<'_, T> {
    /// A completed operation.
    pub fn ready(value: T) -> Self {
        StoreFuture::Ready(Some(value))
    }
}

impl<T: Unpin> Future for StoreFuture<'_, T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        match self.get_mut() {
            StoreFuture::Ready(value) => Poll::Ready(value.take().expect("StoreFuture polled after completion")),
            StoreFuture::Pending(future) => future.as_mut().poll(cx),
        }
    }
}

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

/// The in-process session store.
pub struct InMemorySessionStore {
    sessions: Mutex<HashMap<String, (Arc<Session>, Instant)>>,
    max_sessions: usize,
    clock: Arc<dyn Clock>,
}

impl fmt::Debug for InMemorySessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemorySessionStore")
            .field("sessions", &self.len())
            .field("max_sessions", &self.max_sessions)
            .finish_non_exhaustive()
    }
}

impl Default for InMemorySessionStore {
    fn default() -> Self {
        Self::new(100_000)
    }
}

impl InMemorySessionStore {
    /// A store holding at most `max_sessions` live sessions.
    pub fn new(max_sessions: usize) -> Self {
        Self::with_clock(max_sessions, Arc::new(SystemClock))
    }

    /// A store that reads the time from `clock` (tests move a
    /// [`ManualClock`](rpc::clock::ManualClock) instead of sleeping).
    pub fn with_clock(max_sessions: usize, clock: Arc<dyn Clock>) -> Self {
        InMemorySessionStore { sessions: Mutex::new(HashMap::new()), max_sessions, clock }
    }

    /// Number of stored sessions (expired ones included until purged).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Arc<Session>, Instant)>> {
        // A panic while holding the lock cannot leave the map inconsistent
        // (every operation is a single insert/remove), so recover from poisoning.
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl SessionStore for InMemorySessionStore {
    fn create(&self, session: Session, ttl: Duration) -> StoreFuture<'_, Result<(), SessionError>> {
        let result = {
            let mut map = self.lock();
            let now = self.clock.now();
            if map.len() >= self.max_sessions {
                map.retain(|_, (_, expires)| *expires > now);
            }
            if map.len() >= self.max_sessions {
                Err(SessionError::Full)
            } else {
                map.insert(session.id.clone(), (Arc::new(session), now + ttl));
                Ok(())
            }
        };
        StoreFuture::ready(result)
    }

    fn get<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, Result<Option<Arc<Session>>, SessionError>> {
        let result = {
            let mut map = self.lock();
            let now = self.clock.now();
            match map.get_mut(id) {
                Some((session, expires)) if *expires > now => {
                    *expires = now + ttl;
                    Some(session.clone())
                }
                Some(_) => {
                    map.remove(id);
                    None
                }
                None => None,
            }
        };
        StoreFuture::ready(Ok(result))
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<bool, SessionError>> {
        StoreFuture::ready(Ok(self.lock().remove(id).is_some()))
    }

    fn update(&self, session: Session) -> StoreFuture<'_, Result<bool, SessionError>> {
        let result = match self.lock().get_mut(&session.id) {
            Some((stored, _)) => {
                *stored = Arc::new(session);
                true
            }
            None => false,
        };
        StoreFuture::ready(Ok(result))
    }
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

    use rpc::clock::ManualClock;

    fn session(id: &str) -> Session {
        Session::new(id, "mcp/v1", ProtocolVersion::V2025_11_25)
    }

    #[tokio::test]
    async fn expires_and_slides() {
        let clock = Arc::new(ManualClock::new());
        let store = InMemorySessionStore::with_clock(10, clock.clone());
        let ttl = Duration::from_secs(40);
        store.create(session("a"), ttl).await.unwrap();
        clock.advance(Duration::from_secs(25));
        assert!(store.get("a", ttl).await.unwrap().is_some(), "a hit extends the session");
        clock.advance(Duration::from_secs(25));
        assert!(store.get("a", ttl).await.unwrap().is_some(), "50 s after creation, 25 s after the last use");
        clock.advance(Duration::from_secs(39));
        assert!(store.get("a", ttl).await.unwrap().is_some(), "39 s idle is within the ttl");
        clock.advance(Duration::from_secs(40));
        assert!(store.get("a", ttl).await.unwrap().is_none(), "idle for the whole ttl");
        assert!(store.is_empty(), "an expired session is dropped when found");
    }

    #[tokio::test]
    async fn bounded() {
        let store = InMemorySessionStore::new(1);
        let ttl = Duration::from_secs(60);
        store.create(session("a"), ttl).await.unwrap();
        assert_eq!(store.create(session("b"), ttl).await, Err(SessionError::Full));
        assert!(store.remove("a").await.unwrap());
        assert!(!store.remove("a").await.unwrap());
        store.create(session("b"), ttl).await.unwrap();
    }

    #[tokio::test]
    async fn update_replaces_a_live_session_only() {
        let store = InMemorySessionStore::new(10);
        let ttl = Duration::from_secs(60);
        store.create(session("a"), ttl).await.unwrap();
        let mut changed = session("a");
        changed.log_level = Some(rpc::LogLevel::Warning);
        assert!(store.update(changed).await.unwrap());
        assert_eq!(store.get("a", ttl).await.unwrap().unwrap().log_level, Some(rpc::LogLevel::Warning));
        assert!(!store.update(session("gone")).await.unwrap());
    }

    #[test]
    fn ids_are_random_hex() {
        let a = new_session_id().unwrap();
        let b = new_session_id().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
