//! The cache from code (`Executor::cache`, `ctx.cache()`): warming an
//! entry, deleting one caller's or every caller's entry for a request,
//! every entry of a method (one version or all), and what a writer's
//! `#[rpc::invalidates]` would make stale; the same in process and in a
//! real Redis (`RPC_TEST_REDIS_URL`, else a private `redis-server`, else
//! skipped with a notice, a failure under `RPC_REQUIRE_REDIS=1`).

use std::sync::Arc;
use std::time::Duration;

use e2e_tests::redis_server::Redis;
use rpc::store::redis::RedisStore;
use rpc::store::{CacheStore, MemoryCache, StoreError, Stores};
use rpc::{Call, Environment, Executor, Identity, MaybeReady, Params, Registry};
use serde_json::{Value, json};

mod fixtures {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use serde_json::json;

    /// Counts how often each method ran; every result carries its run number.
    #[derive(Default)]
    pub struct Shelf {
        runs: Mutex<BTreeMap<&'static str, u32>>,
    }

    impl Shelf {
        fn ran(&self, method: &'static str) -> u32 {
            let mut runs = self.runs.lock().unwrap();
            let n = runs.entry(method).or_default();
            *n += 1;
            *n
        }

        /// How often `method` ran.
        pub fn runs(&self, method: &str) -> u32 {
            self.runs.lock().unwrap().get(method).copied().unwrap_or(0)
        }
    }

    #[rpc::service]
    impl Shelf {
        /// An item (some relation invalidates it: entries carry generations).
        #[rpc::cache(ttl = 60, env(test, prod))]
        pub fn get(&self, id: u32, #[rpc(default = "EUR")] currency: String) -> String {
            format!("{id} {currency} #{}", self.ran("get"))
        }

        /// A page of items (no relation names it).
        #[rpc::cache(ttl = 60, env(test, prod))]
        pub fn get_all(&self, page: u32) -> String {
            format!("page {page} #{}", self.ran("getAll"))
        }

        /// A search: long texts make hashed keys.
        #[rpc::cache(ttl = 60, env(test, prod))]
        pub fn find(&self, text: String) -> u32 {
            let _ = text;
            self.ran("find")
        }

        /// Not cached.
        pub fn now(&self) -> u32 {
            self.ran("now")
        }

        /// Changes an item: its `get` entries go stale after the response.
        #[rpc::invalidates("Shelf.get")]
        pub fn put(&self, id: u32, price: u32) -> u32 {
            let _ = id;
            price
        }

        /// Deletes every caller's entry of `get_all` for `page` from inside a method.
        pub async fn forget_page(&self, ctx: rpc::Context, page: u32) -> Result<bool, rpc::RpcError> {
            let Some(cache) = ctx.cache() else { return Ok(false) };
            cache.delete_request_for_everyone("Shelf.get_all", 1, json!({ "page": page })).await?;
            Ok(true)
        }
    }

    /// Version 2: inherits the version 1 methods.
    pub struct ShelfV2;

    #[rpc::service(alias = "Shelf", version = 2)]
    impl ShelfV2 {
        /// Counts nothing.
        pub fn size(&self) -> u32 {
            0
        }
    }
}

use fixtures::Shelf;

struct Setup {
    executor: Executor,
    shelf: Arc<Shelf>,
}

fn setup(stores: Option<Stores>) -> Setup {
    let shelf = Arc::new(Shelf::default());
    let registry = Registry::builder().service_arc(shelf.clone()).service(fixtures::ShelfV2).build().expect("registry");
    let executor = Executor::new(registry, Environment::Test);
    let executor = match stores {
        Some(stores) => executor.with_stores(stores),
        None => executor,
    };
    Setup { executor, shelf }
}

fn alice() -> Arc<Identity> {
    Arc::new(Identity::new("alice"))
}

fn bob() -> Arc<Identity> {
    Arc::new(Identity::new("bob"))
}

impl Setup {
    async fn call_as(&self, version: u32, method: &str, params: Value, who: Option<Arc<Identity>>) -> Value {
        let Value::Object(params) = params else { panic!("named parameters") };
        let call = Call::new(method, version, Params::Named(params)).identity(who);
        let execution = self.executor.execute(call).await;
        let json = execution.result.unwrap_or_else(|e| panic!("{method}: {}", e.message()));
        serde_json::from_str(json.get()).unwrap()
    }

    async fn call(&self, method: &str, params: Value) -> Value {
        self.call_as(1, method, params, None).await
    }

    fn runs(&self, method: &str) -> u32 {
        self.shelf.runs(method)
    }
}

/// Waits for the relations a call runs after its response.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(50)).await;
}

async fn warm_then_hit(s: &Setup) {
    let cache = s.executor.cache();
    cache.warm("Shelf.get", 1, json!({"id": 1}), None).await.unwrap();
    assert_eq!(s.runs("get"), 1, "warming runs the method");
    assert_eq!(s.call("Shelf.get", json!({"id": 1, "currency": "EUR"})).await, "1 EUR #1", "a hit, defaults applied");
    assert_eq!(s.runs("get"), 1);
    // Warming again replaces the entry (the read is bypassed).
    cache.warm("Shelf.get", 1, json!([1]), None).await.unwrap();
    assert_eq!(s.call("Shelf.get", json!({"id": 1})).await, "1 EUR #2");
    // For one caller only.
    cache.warm("Shelf.get_all", 1, json!({"page": 1}), Some(alice())).await.unwrap();
    assert_eq!(s.call_as(1, "Shelf.get_all", json!({"page": 1}), Some(alice())).await, "page 1 #1");
    assert_eq!(s.call("Shelf.get_all", json!({"page": 1})).await, "page 1 #2", "an anonymous caller has no entry");
}

async fn delete_one_caller_or_everyone(s: &Setup) {
    let cache = s.executor.cache();
    for who in [None, Some(alice()), Some(bob())] {
        s.call_as(1, "Shelf.get_all", json!({"page": 7}), who).await;
    }
    assert_eq!(s.runs("getAll"), 3);
    cache.delete_request("Shelf.get_all", 1, json!({"page": 7}), Some(&alice())).await.unwrap();
    assert_eq!(s.call_as(1, "Shelf.get_all", json!({"page": 7}), Some(alice())).await, "page 7 #4", "alice's went");
    assert_eq!(s.call_as(1, "Shelf.get_all", json!({"page": 7}), Some(bob())).await, "page 7 #3", "bob's stays");
    assert_eq!(s.call("Shelf.get_all", json!({"page": 7})).await, "page 7 #1", "the anonymous one stays");
    cache.delete_request("Shelf.get_all", 1, json!({"page": 7}), None).await.unwrap();
    assert_eq!(s.call("Shelf.get_all", json!({"page": 7})).await, "page 7 #5");

    // Everyone's: by prefix (no generations) and by generation.
    s.call("Shelf.get_all", json!({"page": 8})).await;
    let before = s.runs("getAll");
    cache.delete_request_for_everyone("Shelf.get_all", 1, json!({"page": 7})).await.unwrap();
    for who in [None, Some(alice()), Some(bob())] {
        s.call_as(1, "Shelf.get_all", json!({"page": 7}), who).await;
    }
    assert_eq!(s.runs("getAll"), before + 3, "every caller's entry went");
    s.call("Shelf.get_all", json!({"page": 8})).await;
    assert_eq!(s.runs("getAll"), before + 3, "page 8 stays");

    for who in [None, Some(alice())] {
        s.call_as(1, "Shelf.get", json!({"id": 5}), who).await;
    }
    let before = s.runs("get");
    cache.delete_request_for_everyone("Shelf.get", 1, json!({"id": 5, "currency": "EUR"})).await.unwrap();
    for who in [None, Some(alice()), None] {
        s.call_as(1, "Shelf.get", json!({"id": 5}), who).await;
    }
    assert_eq!(s.runs("get"), before + 2, "both went, the new result is cached again");

    // Long parameters and a long subject make hashed keys: the same holds.
    let long = "x".repeat(100_000);
    let stranger = Arc::new(Identity::new("s".repeat(300)));
    s.call_as(1, "Shelf.find", json!({"text": long}), Some(stranger.clone())).await;
    s.call_as(1, "Shelf.find", json!({"text": long}), None).await;
    assert_eq!(s.runs("find"), 2);
    cache.delete_request("Shelf.find", 1, json!({"text": long}), Some(&stranger)).await.unwrap();
    assert_eq!(s.call_as(1, "Shelf.find", json!({"text": long}), Some(stranger.clone())).await, 3);
    assert_eq!(s.call("Shelf.find", json!({"text": long})).await, 2, "the anonymous entry stays");
    cache.delete_request_for_everyone("Shelf.find", 1, json!({"text": long})).await.unwrap();
    assert_eq!(s.call_as(1, "Shelf.find", json!({"text": long}), Some(stranger)).await, 4);
    assert_eq!(s.call("Shelf.find", json!({"text": long})).await, 5);
}

async fn delete_a_method(s: &Setup) {
    let cache = s.executor.cache();
    for version in [1, 2] {
        for id in 0..5 {
            s.call_as(version, "Shelf.get", json!({"id": id}), None).await;
            s.call_as(version, "Shelf.get", json!({"id": id}), Some(alice())).await;
        }
    }
    s.call("Shelf.get_all", json!({"page": 1})).await;
    let (gets, pages) = (s.runs("get"), s.runs("getAll"));
    assert_eq!(cache.delete_method("Shelf.get", Some(2)).await.unwrap(), 10, "version 2's entries");
    s.call_as(1, "Shelf.get", json!({"id": 3}), None).await;
    assert_eq!(s.runs("get"), gets, "version 1 stays");
    s.call_as(2, "Shelf.get", json!({"id": 3}), Some(alice())).await;
    assert_eq!(s.runs("get"), gets + 1);
    assert_eq!(cache.delete_method("Shelf.get", None).await.unwrap(), 11, "every version");
    s.call_as(1, "Shelf.get", json!({"id": 3}), Some(alice())).await;
    assert_eq!(s.runs("get"), gets + 2);
    s.call("Shelf.get_all", json!({"page": 1})).await;
    assert_eq!(s.runs("getAll"), pages, "`Shelf.get` does not reach `Shelf.get_all`");
}

async fn delete_a_relation(s: &Setup) {
    let cache = s.executor.cache();
    for who in [None, Some(alice())] {
        s.call_as(1, "Shelf.get", json!({"id": 9}), who.clone()).await;
        s.call_as(1, "Shelf.get", json!({"id": 10}), who).await;
    }
    let before = s.runs("get");
    assert_eq!(cache.delete_relation("Shelf.put", 1, json!({"id": 9, "price": 3})).await.unwrap(), 1);
    for who in [None, Some(alice())] {
        s.call_as(1, "Shelf.get", json!({"id": 9}), who.clone()).await;
        s.call_as(1, "Shelf.get", json!({"id": 10}), who).await;
    }
    assert_eq!(s.runs("get"), before + 2, "id 9 for both callers, not id 10");
    // The writer's own parameters are checked.
    let e = cache.delete_relation("Shelf.put", 1, json!({"id": 9})).await.unwrap_err();
    assert_eq!(e.code(), -32602, "{}", e.message());
}

async fn from_inside_a_method(s: &Setup) {
    s.call_as(1, "Shelf.get_all", json!({"page": 4}), Some(bob())).await;
    let before = s.runs("getAll");
    assert_eq!(s.call("Shelf.forget_page", json!({"page": 4})).await, true, "the context has the cache");
    s.call_as(1, "Shelf.get_all", json!({"page": 4}), Some(bob())).await;
    assert_eq!(s.runs("getAll"), before + 1);
}

async fn errors(s: &Setup) {
    let cache = s.executor.cache();
    let e = cache.warm("Shelf.now", 1, json!({}), None).await.unwrap_err();
    assert!(e.message().contains("`Shelf.now` (v1) is not cached"), "{}", e.message());
    assert_eq!(s.runs("now"), 0);
    let e = cache.delete_request("Shelf.nope", 1, json!({}), None).await.unwrap_err();
    assert_eq!(e.code(), -32601, "{}", e.message());
    let e = cache.delete_method("Shelf.get", Some(3)).await.unwrap_err();
    assert_eq!(e.code(), -32601, "no version 3: {}", e.message());
    for hostile in ["Shelf.*", "Shelf.get*", "Shelf.[g]et", "*", "\\"] {
        let e = cache.delete_method(hostile, None).await.unwrap_err();
        assert_eq!(e.code(), -32601, "{hostile}: {}", e.message());
    }
    let e = cache.delete_method(&"m".repeat(100_000), None).await.unwrap_err();
    assert!(e.message().len() < 1000, "a long name is not echoed in full");
    let e = cache.warm("Shelf.get", 1, json!({"id": "seven"}), None).await.unwrap_err();
    assert_eq!(e.code(), -32602, "validated as a call: {}", e.message());
    let e = cache.delete_request("Shelf.get", 1, json!(7), None).await.unwrap_err();
    assert_eq!(e.code(), -32602, "{}", e.message());
    let e = cache.delete_relation("Shelf.get", 1, json!({"id": 1})).await.unwrap_err();
    assert!(e.message().contains("declares no #[rpc::invalidates]"), "{}", e.message());
}

/// Every check, each on a fresh cache that `stores` gives.
async fn everything(stores: impl Fn() -> Option<Stores>) {
    warm_then_hit(&setup(stores())).await;
    delete_one_caller_or_everyone(&setup(stores())).await;
    delete_a_method(&setup(stores())).await;
    delete_a_relation(&setup(stores())).await;
    from_inside_a_method(&setup(stores())).await;
    errors(&setup(stores())).await;
    settle().await;
}

#[tokio::test]
async fn in_process() {
    everything(|| None).await;
}

#[tokio::test]
async fn a_context_built_by_hand_has_no_cache() {
    let ctx = rpc::Context::traced(rpc::Transport::JsonRpc, "Shelf.forget_page");
    assert!(ctx.cache().is_none());
    assert!(!Shelf::default().forget_page(ctx, 1).await.unwrap());
}

/// A third-party store written before `remove_prefix` existed.
struct Minimal(MemoryCache);

impl CacheStore for Minimal {
    fn get<'a>(&'a self, key: &'a str) -> MaybeReady<'a, Result<Option<String>, StoreError>> {
        self.0.get(key)
    }
    fn put<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> MaybeReady<'a, Result<(), StoreError>> {
        self.0.put(key, value, ttl)
    }
    fn remove<'a>(&'a self, key: &'a str) -> MaybeReady<'a, Result<(), StoreError>> {
        self.0.remove(key)
    }
}

#[tokio::test]
async fn a_store_without_prefix_deletion_says_so() {
    let s = setup(Some(Stores { cache: Arc::new(Minimal(MemoryCache::new(1 << 20))), ..Stores::default() }));
    s.call("Shelf.get_all", json!({"page": 1})).await;
    let e = s.executor.cache().delete_method("Shelf.get_all", None).await.unwrap_err();
    assert!(e.message().contains("this cache store cannot delete by prefix"), "{}", e.message());
    // Deleting one caller's entry needs no prefix.
    s.executor.cache().delete_request("Shelf.get_all", 1, json!({"page": 1}), None).await.unwrap();
    s.call("Shelf.get_all", json!({"page": 1})).await;
    assert_eq!(s.runs("getAll"), 2);
}

#[tokio::test]
async fn in_redis() {
    let Some(redis) = Redis::start() else { return };
    let store = RedisStore::connect(&redis.url).await.expect("connect");
    // A prefix of its own for each check: a fresh cache, as in process.
    let next = std::sync::atomic::AtomicU32::new(0);
    everything(|| {
        let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(store.clone().with_prefix(format!("{}{n}:", redis.prefix)).stores())
    })
    .await;
    for n in 0..next.into_inner() {
        let scratch = store.clone().with_prefix(format!("{}{n}:", redis.prefix));
        scratch.remove_prefix("rpc:").await.unwrap();
    }
}

#[tokio::test]
async fn redis_prefix_deletion_is_exact_and_batched() {
    let Some(redis) = Redis::start() else { return };
    let store = RedisStore::connect(&redis.url).await.expect("connect").with_prefix(redis.prefix.clone());
    let other_app = RedisStore::connect(&redis.url).await.expect("connect").with_prefix(format!("{}x", redis.prefix));
    let ttl = Duration::from_secs(60);
    for i in 0..3000 {
        CacheStore::put(&store, &format!("rpc:cache:M.get:v1:j:{{\"i\":{i}}}"), "1", ttl).await.unwrap();
    }
    for key in ["rpc:cache:M.getAll:v1:j:{}", "rpc:cache:M.g*:v1:j:{}", "rpc:cache:M.get:v10:j:{}"] {
        CacheStore::put(&store, key, "1", ttl).await.unwrap();
    }
    CacheStore::put(&other_app, "rpc:cache:M.get:v1:j:{}", "1", ttl).await.unwrap();
    assert_eq!(store.remove_prefix("rpc:cache:M.get:v1:").await.unwrap(), 3000, "more than one SCAN batch");
    assert_eq!(store.remove_prefix("rpc:cache:M.get:v1:").await.unwrap(), 0);
    assert_eq!(store.remove_prefix("rpc:cache:M.g*").await.unwrap(), 1, "a `*` is itself");
    assert_eq!(store.remove_prefix("rpc:cache:M.get").await.unwrap(), 2, "getAll and v10");
    assert_eq!(CacheStore::get(&other_app, "rpc:cache:M.get:v1:j:{}").await.unwrap().as_deref(), Some("1"));
    other_app.remove_prefix("rpc:cache:").await.unwrap();
}
