use std::time::Instant as WallClock;

use rpc::clock::ManualClock;

use super::*;
use crate::protocol::ProtocolVersion;
use crate::session::new_session_id;

const TTL: Duration = Duration::from_secs(60);

fn session(id: &str) -> Session {
    Session::new(id, "mcp/v1", ProtocolVersion::V2025_11_25)
}

fn random() -> Session {
    session(&new_session_id().unwrap())
}

async fn alive(store: &InMemorySessionStore, id: &str) -> bool {
    store.get(id, TTL).await.unwrap().is_some()
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
async fn a_full_store_evicts_the_least_recently_used() {
    let store = InMemorySessionStore::new(3);
    for id in ["a", "b", "c"] {
        store.create(session(id), TTL).await.unwrap();
    }
    assert!(alive(&store, "a").await, "a is now the most recently used");
    store.create(session("d"), TTL).await.unwrap();
    assert!(!alive(&store, "b").await, "b was idle longest: evicted");
    for id in ["a", "c", "d"] {
        assert!(alive(&store, id).await, "{id} stays");
    }
    assert_eq!((store.len(), store.evicted()), (3, 1));

    let single = InMemorySessionStore::new(1);
    single.create(session("a"), TTL).await.unwrap();
    single.create(session("b"), TTL).await.unwrap();
    assert!(!alive(&single, "a").await && alive(&single, "b").await, "never refused");
    assert!(single.remove("b").await.unwrap());
    assert!(!single.remove("b").await.unwrap());
}

#[tokio::test]
async fn update_replaces_a_live_session_only() {
    let clock = Arc::new(ManualClock::new());
    let store = InMemorySessionStore::with_clock(10, clock.clone());
    store.create(session("a"), TTL).await.unwrap();
    let mut changed = session("a");
    changed.log_level = Some(rpc::LogLevel::Warning);
    assert!(store.update(changed.clone()).await.unwrap());
    assert_eq!(store.get("a", TTL).await.unwrap().unwrap().log_level, Some(rpc::LogLevel::Warning));
    assert!(!store.update(session("gone")).await.unwrap());
    clock.advance(TTL);
    assert!(!store.update(changed).await.unwrap(), "expired: not brought back");
    assert!(store.is_empty());
}

/// 200,000 `initialize` into a store of 100,000: it stays at its cap, a
/// session in use survives, and a new client still gets a session.
#[tokio::test]
async fn a_flood_leaves_the_store_at_its_cap_and_usable() {
    let store = InMemorySessionStore::new(100_000);
    assert!(store.shared.shards.len() > 1, "a large store is sharded");
    store.create(session("kept"), TTL).await.unwrap();
    store.create(session("idle"), TTL).await.unwrap();
    for i in 0..200_000 {
        store.create(random(), TTL).await.unwrap();
        if i % 1_000 == 0 {
            assert!(alive(&store, "kept").await, "a session in use stays, after {i} more");
        }
    }
    assert_eq!(store.len(), 100_000, "at its cap");
    assert!(store.evicted() >= 100_000, "{} evicted", store.evicted());
    assert!(!alive(&store, "idle").await, "an idle session made room");
    assert!(alive(&store, "kept").await);
    store.create(session("newcomer"), TTL).await.unwrap();
    assert!(alive(&store, "newcomer").await, "a new client still gets a session");
    assert_eq!(store.len(), 100_000);
}

#[tokio::test]
async fn purge_removes_exactly_the_expired() {
    let clock = Arc::new(ManualClock::new());
    let store = InMemorySessionStore::with_clock(100, clock.clone());
    for i in 0..50 {
        store.create(session(&format!("old{i}")), TTL).await.unwrap();
    }
    clock.advance(Duration::from_secs(30));
    for i in 0..10 {
        assert!(alive(&store, &format!("old{i}")).await);
    }
    for i in 0..20 {
        store.create(session(&format!("new{i}")), TTL).await.unwrap();
    }
    assert_eq!(store.purge_expired(), 0, "nothing expired yet");
    clock.advance(Duration::from_secs(31));
    assert_eq!(store.purge_expired(), 40, "the 40 unused since creation, 61 s ago");
    assert_eq!(store.len(), 30);
    assert!(alive(&store, "old0").await && alive(&store, "new19").await);
    assert!(!alive(&store, "old10").await);
}

#[tokio::test]
async fn create_drops_expired_sessions_on_its_way() {
    let clock = Arc::new(ManualClock::new());
    let store = InMemorySessionStore::with_clock(100, clock.clone());
    for i in 0..10 {
        store.create(session(&format!("s{i}")), TTL).await.unwrap();
    }
    clock.advance(TTL);
    store.create(session("fresh"), TTL).await.unwrap();
    assert_eq!(store.len(), 11 - PURGE_ON_CREATE, "a create removes a few expired sessions");
    assert_eq!(store.evicted(), 0, "expired sessions are not counted as evicted");
}

/// The background purger runs on tokio's clock (paused here: no real
/// sleeping) and stops once the store is dropped.
#[tokio::test(start_paused = true)]
async fn the_purger_runs_on_a_timer_and_stops_with_the_store() {
    let metrics = tokio::runtime::Handle::current().metrics();
    let tasks_before = metrics.num_alive_tasks();
    let clock = Arc::new(ManualClock::new());
    let store = InMemorySessionStore::with_clock(1_000, clock.clone()).purge_interval(Duration::from_secs(10));
    for i in 0..600 {
        store.create(session(&format!("s{i}")), TTL).await.unwrap();
    }
    assert_eq!(metrics.num_alive_tasks(), tasks_before + 1, "the purger started with the first session");
    clock.advance(TTL);
    assert_eq!(store.len(), 600, "expired but not yet purged");
    tokio::time::sleep(Duration::from_secs(15)).await;
    assert_eq!(store.len(), 0, "purged by the timer, in batches of {}", InMemorySessionStore::PURGE_BATCH);

    drop(store);
    tokio::time::sleep(Duration::from_secs(15)).await;
    assert_eq!(metrics.num_alive_tasks(), tasks_before, "the purger ended with the store");
}

/// Time of `rounds` × (create in a full store, get a hot session, get a
/// missing one); the best of three runs.
async fn per_operation_time(store: &InMemorySessionStore, rounds: usize) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let start = WallClock::now();
        for _ in 0..rounds {
            store.create(random(), TTL).await.unwrap();
            assert!(alive(store, "hot").await);
            assert!(!alive(store, "0123456789abcdef0123456789abcdef").await);
        }
        best = best.min(start.elapsed());
    }
    best
}

async fn full_store(capacity: usize) -> InMemorySessionStore {
    let store = InMemorySessionStore::new(capacity);
    store.create(session("hot"), TTL).await.unwrap();
    // Sessions spread over the shards at random: fill until every shard is full.
    while store.len() < capacity {
        for _ in 0..100 {
            store.create(random(), TTL).await.unwrap();
        }
        assert!(alive(&store, "hot").await, "kept in use while filling");
    }
    store
}

#[tokio::test]
async fn cost_per_operation_does_not_grow_with_the_store() {
    let small = full_store(1_000).await;
    let large = full_store(100_000).await;
    let (t_small, t_large) = (per_operation_time(&small, 10_000).await, per_operation_time(&large, 10_000).await);
    assert_eq!((small.len(), large.len()), (1_000, 100_000), "both stayed full");
    // A scan per operation would make the large store 100 times slower;
    // hash lookups only pay for colder caches.
    eprintln!("10,000 rounds: {t_small:?} at 1,000 sessions, {t_large:?} at 100,000");
    assert!(t_large < t_small * 8, "1,000 sessions: {t_small:?}; 100,000 sessions: {t_large:?}");
}
