//! The stores behind the pipeline, in-process and in a real Redis: one set
//! of checks for both (cache, locks), plus the Redis session store, the
//! sharing of keys between connections, and a Redis that goes away.

use std::sync::Arc;
use std::time::Duration;

use e2e_tests::redis_server::Redis;
use mcp::protocol::ProtocolVersion;
use mcp::session::{RedisSessionStore, Session, SessionStore};
use rpc::store::redis::RedisStore;
use rpc::store::{CacheStore, LockStore, MemoryCache, MemoryLocks};

async fn cache_contract(cache: &dyn CacheStore, prefix: &str) {
    let key = format!("{prefix}rpc:cache:m:v1:abc");
    assert_eq!(cache.get(&key).await.unwrap(), None);
    cache.put(&key, r#"{"a":1}"#, Duration::from_secs(60)).await.unwrap();
    assert_eq!(cache.get(&key).await.unwrap().as_deref(), Some(r#"{"a":1}"#));
    cache.put(&key, "2", Duration::from_secs(60)).await.unwrap();
    assert_eq!(cache.get(&key).await.unwrap().as_deref(), Some("2"), "put replaces");
    cache.remove(&key).await.unwrap();
    assert_eq!(cache.get(&key).await.unwrap(), None);
    cache.remove(&key).await.unwrap();
    let big = "x".repeat(1 << 20);
    cache.put(&key, &big, Duration::from_secs(60)).await.unwrap();
    assert_eq!(cache.get(&key).await.unwrap().map(|v| v.len()), Some(1 << 20));
}

async fn lock_contract(locks: &dyn LockStore, prefix: &str) {
    let key = format!("{prefix}rpc:lock:m");
    let ttl = Duration::from_secs(30);
    assert!(locks.acquire(&key, "a", ttl).await.unwrap());
    assert!(!locks.acquire(&key, "b", ttl).await.unwrap(), "held by a");
    assert!(!locks.acquire(&key, "a", ttl).await.unwrap(), "not re-entrant");
    assert!(!locks.release(&key, "b").await.unwrap(), "only the owner releases");
    assert!(locks.release(&key, "a").await.unwrap());
    assert!(!locks.release(&key, "a").await.unwrap(), "released once");
    assert!(locks.acquire(&key, "b", ttl).await.unwrap());
    assert!(locks.extend(&key, "b", ttl).await.unwrap(), "the owner extends its lock");
    assert!(!locks.extend(&key, "a", ttl).await.unwrap(), "nobody else does");
    assert!(!locks.acquire(&key, "a", ttl).await.unwrap(), "still b's after a's attempt");
    assert!(locks.release(&key, "b").await.unwrap());
    assert!(!locks.extend(&key, "b", ttl).await.unwrap(), "a released lock is not extended");
    assert!(locks.acquire(&key, "a", ttl).await.unwrap(), "free again");
    assert!(locks.release(&key, "a").await.unwrap());
}

#[tokio::test]
async fn in_process_stores_keep_the_contract() {
    cache_contract(&MemoryCache::new(64 << 20), "").await;
    lock_contract(&MemoryLocks::new(), "").await;
}

#[tokio::test]
async fn redis_stores_keep_the_contract() {
    let Some(redis) = Redis::start() else { return };
    let store = RedisStore::connect(&redis.url).await.expect("connect").with_prefix(redis.prefix.clone());
    cache_contract(&store, "").await;
    lock_contract(&store, "").await;
}

#[tokio::test]
async fn redis_entries_and_locks_expire_and_are_shared_between_connections() {
    let Some(redis) = Redis::start() else { return };
    let one = RedisStore::connect(&redis.url).await.expect("connect").with_prefix(redis.prefix.clone());
    let two = RedisStore::connect(&redis.url).await.expect("connect").with_prefix(redis.prefix.clone());
    let other_app = RedisStore::connect(&redis.url).await.expect("connect").with_prefix("other:");

    CacheStore::put(&one, "k", "v", Duration::from_millis(300)).await.unwrap();
    assert_eq!(CacheStore::get(&two, "k").await.unwrap().as_deref(), Some("v"), "another connection sees it");
    assert_eq!(CacheStore::get(&other_app, "k").await.unwrap(), None, "prefixes separate applications");
    assert!(one.acquire("l", "owner-1", Duration::from_millis(300)).await.unwrap());
    assert!(!two.acquire("l", "owner-2", Duration::from_secs(5)).await.unwrap(), "the lock is shared");

    // An extension moves the expiry on Redis's clock; a lapsed lock is not extended.
    assert!(one.acquire("x", "owner-1", Duration::from_millis(200)).await.unwrap());
    assert!(one.extend("x", "owner-1", Duration::from_secs(5)).await.unwrap());

    // Redis expires them on its own clock.
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert!(!two.acquire("x", "owner-2", Duration::from_secs(5)).await.unwrap(), "extended past its first ttl");
    assert!(!two.extend("l", "owner-1", Duration::from_secs(5)).await.unwrap(), "an expired lock is not extended");
    assert_eq!(CacheStore::get(&two, "k").await.unwrap(), None, "expired after its ttl");
    assert!(two.acquire("l", "owner-2", Duration::from_secs(5)).await.unwrap(), "an abandoned lock expires");
    assert!(!one.release("l", "owner-1").await.unwrap(), "the old owner cannot release the new owner's lock");
    assert!(two.release("l", "owner-2").await.unwrap());
}

#[tokio::test]
async fn redis_sessions_are_shared_slide_and_end() {
    let Some(redis) = Redis::start() else { return };
    let connect =
        || async { RedisStore::connect(&redis.url).await.expect("connect").with_prefix(redis.prefix.clone()) };
    let first = RedisSessionStore::new(connect().await);
    let second = RedisSessionStore::new(connect().await);
    let ttl = Duration::from_millis(400);

    let session = Session::new("0123456789abcdef", "mcp/v1", ProtocolVersion::LATEST).with_owner(Some("alice".into()));
    first.create(session.clone(), ttl).await.unwrap();
    assert!(first.create(session.clone(), ttl).await.is_err(), "an id is created once");
    let found = second.get("0123456789abcdef", ttl).await.unwrap().expect("found through another instance");
    assert_eq!(*found, session);

    let mut updated = (*found).clone();
    updated.log_level = Some(rpc::LogLevel::Debug);
    assert!(second.update(updated.clone()).await.unwrap());
    assert_eq!(first.get("0123456789abcdef", ttl).await.unwrap().as_deref(), Some(&updated));

    // Each read extends the session's life.
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(first.get("0123456789abcdef", ttl).await.unwrap().is_some(), "kept alive by use");
    }
    tokio::time::sleep(Duration::from_millis(550)).await;
    assert!(first.get("0123456789abcdef", ttl).await.unwrap().is_none(), "expired without use");
    assert!(!first.update(updated).await.unwrap(), "an expired session is not re-created by an update");

    let again = Session::new("fedcba9876543210", "mcp/v1", ProtocolVersion::LATEST);
    first.create(again, ttl).await.unwrap();
    assert!(second.remove("fedcba9876543210").await.unwrap());
    assert!(!first.remove("fedcba9876543210").await.unwrap());
    assert!(first.get("fedcba9876543210", ttl).await.unwrap().is_none());
}

#[tokio::test]
async fn a_redis_that_goes_away_gives_errors_not_hangs() {
    let Some(mut redis) = Redis::start() else { return };
    let store = Arc::new(
        RedisStore::connect_with(&redis.url, Duration::from_millis(500), Duration::from_millis(500))
            .await
            .expect("connect")
            .with_prefix(redis.prefix.clone()),
    );
    CacheStore::put(&*store, "k", "v", Duration::from_secs(60)).await.unwrap();
    if !redis.stop() {
        return; // an external Redis is not ours to stop
    }
    let started = std::time::Instant::now();
    let got = tokio::time::timeout(Duration::from_secs(10), CacheStore::get(&*store, "k")).await;
    assert!(matches!(got, Ok(Err(_))), "an error, not a value or a hang: {got:?}");
    let lock = tokio::time::timeout(Duration::from_secs(10), store.acquire("l", "o", Duration::from_secs(1))).await;
    assert!(matches!(lock, Ok(Err(_))), "{lock:?}");
    assert!(started.elapsed() < Duration::from_secs(8), "bounded by the timeouts: {:?}", started.elapsed());
    assert!(
        RedisStore::connect_with("redis://127.0.0.1:1/", Duration::from_millis(300), Duration::from_millis(300))
            .await
            .is_err()
    );
}

/// A Redis that stops answering (SIGSTOP, as under a stall): the first
/// command waits one response timeout, the commands after it fail at once
/// (the circuit breaker) until Redis answers again; a lock whose `SET NX`
/// timed out and was applied when Redis resumed is released, rather than
/// held for its whole TTL.
#[tokio::test]
async fn a_stalled_redis_costs_one_timeout_then_nothing_and_holds_no_late_lock() {
    let Some(redis) = Redis::start_private() else { return };
    let timeout = Duration::from_millis(500);
    let store = RedisStore::connect_with(&redis.url, timeout, timeout).await.expect("connect").with_prefix("stall:");
    CacheStore::put(&store, "k", "v", Duration::from_secs(60)).await.unwrap();
    assert!(!store.is_unavailable());

    redis.pause();
    let started = std::time::Instant::now();
    let late = store.acquire("rpc:lock:late", "first-owner", Duration::from_secs(30)).await;
    assert!(late.is_err(), "no answer: {late:?}");
    let first = started.elapsed();
    assert!(first >= timeout && first < timeout * 3, "one response timeout: {first:?}");
    assert!(store.is_unavailable(), "the breaker opened");
    for _ in 0..20 {
        let started = std::time::Instant::now();
        assert!(CacheStore::get(&store, "k").await.is_err());
        assert!(store.acquire("rpc:lock:other", "o", Duration::from_secs(1)).await.is_err(), "locks fail closed");
        assert!(started.elapsed() < Duration::from_millis(50), "no wait while it is open: {:?}", started.elapsed());
    }

    redis.resume();
    let resumed = std::time::Instant::now();
    while store.is_unavailable() {
        assert!(resumed.elapsed() < Duration::from_secs(5), "the probe finds Redis back");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(CacheStore::get(&store, "k").await.unwrap().as_deref(), Some("v"));
    // The late `SET NX` reached Redis when it resumed; it is released by its owner token.
    loop {
        if store.acquire("rpc:lock:late", "second-owner", Duration::from_secs(30)).await.unwrap() {
            break;
        }
        assert!(resumed.elapsed() < Duration::from_secs(3), "the late lock is held past its release");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(store.release("rpc:lock:late", "second-owner").await.unwrap(), "the new owner's lock is its own");
}

/// An invalidated method's entries carry a generation stamp read in the same
/// round trip (`MGET`): the stores' `get_with_generation` agrees with
/// `get` in both.
#[tokio::test]
async fn entries_and_their_generation_are_read_together() {
    async fn check(cache: &dyn CacheStore) {
        assert_eq!(cache.get_with_generation("e", "g").await.unwrap(), (None, None));
        cache.put("e", "g:1:[]", Duration::from_secs(60)).await.unwrap();
        assert_eq!(cache.get_with_generation("e", "g").await.unwrap(), (Some("g:1:[]".to_owned()), None));
        cache.put("g", "2", Duration::from_secs(60)).await.unwrap();
        assert_eq!(
            cache.get_with_generation("e", "g").await.unwrap(),
            (Some("g:1:[]".to_owned()), Some("2".to_owned()))
        );
    }
    check(&MemoryCache::new(1 << 20)).await;
    let Some(redis) = Redis::start() else { return };
    let store = RedisStore::connect(&redis.url).await.expect("connect").with_prefix(redis.prefix.clone());
    check(&store).await;
}

#[tokio::test]
async fn redis_rate_counters_are_shared_between_instances_and_drain() {
    use rpc::rate::{Rate, RateDecision};
    use rpc::store::RateStore;
    let Some(redis) = Redis::start() else { return };
    let one = RedisStore::connect(&redis.url).await.expect("connect").with_prefix(redis.prefix.clone());
    let two = RedisStore::connect(&redis.url).await.expect("connect").with_prefix(redis.prefix.clone());
    // 4 per second: a burst of 4, then one every 250 ms, whichever instance counts.
    let rate = Rate::per_second(4).unwrap();
    for i in 0..4 {
        let store: &dyn RateStore = if i % 2 == 0 { &one } else { &two };
        assert_eq!(store.hit("rpc:rate:call:id:alice", rate).await.unwrap(), RateDecision::Allowed, "{i}");
    }
    let RateDecision::Limited { retry_after } = two.hit("rpc:rate:call:id:alice", rate).await.unwrap() else {
        panic!("the fifth call within the second is over the rate, on either instance")
    };
    assert!(retry_after > Duration::from_millis(150) && retry_after <= Duration::from_millis(250), "{retry_after:?}");
    assert_eq!(one.hit("rpc:rate:call:id:bob", rate).await.unwrap(), RateDecision::Allowed, "per client");
    tokio::time::sleep(retry_after + Duration::from_millis(20)).await;
    assert_eq!(one.hit("rpc:rate:call:id:alice", rate).await.unwrap(), RateDecision::Allowed, "drained by one");
    // The key expires once the client is back to the present: nothing is left behind.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(CacheStore::get(&one, "rpc:rate:call:id:alice").await.unwrap(), None);
}
