//! `#[rpc::cache]` and `#[rpc::invalidates]`: a hit returns the stored
//! result without running the method and without the execution events, on
//! `/rpc` and MCP `tools/call` alike; the key ignores parameter order and
//! separates versions and callers; `$rpc.ignoreCache` bypasses the read and
//! stores the fresh result; caching applies in the listed environments
//! only; errors are not stored; a related method's entry is invalidated
//! (and warmed up) after the response; relations are checked at startup.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use e2e_tests::raw_mcp::RawMcp;
use e2e_tests::{TestServer, post_json};
use rpc::server::Router;
use rpc::{CallInfo, Environment, Executor, JsonRpcService, Listener, MaybeReady, Registry, RpcError};
use serde_json::value::RawValue;
use serde_json::{Value, json};

mod fixtures {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU32, Ordering};

    rpc::api_group!(pub struct Tools => "tools", mcp = true);

    /// Counts its calls.
    #[derive(Default)]
    pub struct Prices {
        /// Calls of `price` and `fail`.
        pub runs: AtomicU32,
        /// The current prices (all 10 until set).
        pub set: Mutex<Vec<(u32, u32)>>,
    }

    impl Prices {
        fn current(&self, item: u32) -> u32 {
            self.set.lock().unwrap().iter().rev().find(|(i, _)| *i == item).map_or(10, |(_, p)| *p)
        }
    }

    #[rpc::service(groups(Tools))]
    impl Prices {
        /// The price of `item` in `currency`.
        #[rpc::cache(ttl = 60, env(test, prod))]
        pub fn price(&self, item: u32, #[rpc(default = "EUR")] currency: String) -> String {
            self.runs.fetch_add(1, Ordering::SeqCst);
            format!("{} {currency}", self.current(item))
        }

        /// Fails: errors are not cached.
        #[rpc::cache(ttl = 60, env(test, prod))]
        pub fn fail(&self) -> Result<u32, rpc::RpcError> {
            self.runs.fetch_add(1, Ordering::SeqCst);
            Err(rpc::RpcError::new(1, "no"))
        }

        /// Cached in production only (the default).
        #[rpc::cache(ttl = 60)]
        pub fn prod_only(&self) -> u32 {
            self.runs.fetch_add(1, Ordering::SeqCst)
        }

        /// Sets a price; the cached `price` of that item is replaced.
        #[rpc::invalidates("Prices.price", warm_up)]
        pub fn set_price(&self, item: u32, price: u32) -> u32 {
            self.set.lock().unwrap().push((item, price));
            price
        }

        /// Sets a price; the cached `price` of that item is only dropped.
        #[rpc::invalidates("Prices.price")]
        pub fn set_price_cold(&self, item: u32, price: u32) -> u32 {
            self.set.lock().unwrap().push((item, price));
            price
        }
    }
}

/// Counts execution events and after-response events.
#[derive(Default)]
struct Events {
    executed: Mutex<Vec<String>>,
    sent: Mutex<Vec<String>>,
}

impl Listener for Events {
    fn before_execute<'a>(&'a self, call: &'a CallInfo) -> MaybeReady<'a, Result<(), RpcError>> {
        self.executed.lock().unwrap().push(call.method.name().to_owned());
        MaybeReady::ready(Ok(()))
    }
    fn after_response<'a>(&'a self, call: &'a CallInfo, _: &'a RawValue) -> MaybeReady<'a, ()> {
        self.sent.lock().unwrap().push(call.method.name().to_owned());
        MaybeReady::ready(())
    }
}

struct Setup {
    server: TestServer,
    prices: Arc<fixtures::Prices>,
    events: Arc<Events>,
}

async fn setup(env: Environment) -> Setup {
    let prices = Arc::new(fixtures::Prices::default());
    let registry = Registry::builder().service_arc(prices.clone()).build().expect("registry");
    let events = Arc::new(Events::default());
    let executor = Executor::new(registry, env).with_listeners([events.clone() as Arc<dyn Listener>]);
    let app = Router::new()
        .nest("/rpc", JsonRpcService::new(executor.clone()))
        .nest("/mcp", mcp::McpEndpoint::builder::<fixtures::Tools>(executor).build());
    Setup { server: TestServer::start(app).await, prices, events }
}

impl Setup {
    fn runs(&self) -> u32 {
        self.prices.runs.load(Ordering::SeqCst)
    }

    async fn call(&self, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
        post_json(&self.server.url("/rpc"), &body).await.1
    }

    async fn wait_sent(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.events.sent.lock().unwrap().len() < n {
            assert!(Instant::now() < deadline, "waited for {n} after_response events");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

#[tokio::test]
async fn a_hit_skips_the_method_and_the_execution_events() {
    let s = setup(Environment::Test).await;
    for _ in 0..3 {
        assert_eq!(s.call("Prices.price", json!({"item": 1})).await["result"], "10 EUR");
    }
    assert_eq!(s.runs(), 1, "ran once, then served from the cache");
    assert_eq!(s.events.executed.lock().unwrap().len(), 1, "no execution events on a hit");
    s.wait_sent(1).await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(s.events.sent.lock().unwrap().len(), 1, "no after_response for a cached response");

    // The same entry, whatever the order and form of the parameters.
    assert_eq!(s.call("Prices.price", json!({"currency": "EUR", "item": 1})).await["result"], "10 EUR");
    assert_eq!(s.call("Prices.price", json!([1, "EUR"])).await["result"], "10 EUR");
    assert_eq!(s.runs(), 1);
    // Other parameters are other entries.
    assert_eq!(s.call("Prices.price", json!({"item": 1, "currency": "USD"})).await["result"], "10 USD");
    assert_eq!(s.runs(), 2);

    // The same cache serves MCP.
    let mut client = RawMcp::new(s.server.url("/mcp/v1"));
    client.initialize("2025-11-25").await;
    let reply = client.call("Prices.price", json!({"item": 1})).await;
    assert_eq!(reply["result"]["structuredContent"], json!({"result": "10 EUR"}), "{reply}");
    assert_eq!(s.runs(), 2);
}

#[tokio::test]
async fn mcp_hits_answer_the_text_content_the_first_call_wrote() {
    let s = setup(Environment::Test).await;
    let mut client = RawMcp::new(s.server.url("/mcp/v1"));
    client.initialize("2025-11-25").await;
    // A result whose text content needs every kind of escape.
    let currency = "E\"U\\R\n\u{1}\u{7f} é 💶 </script>";
    let call = |id: u32, item: u32| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "Prices.price", "arguments": {"item": item, "currency": currency}}})
    };
    let first = client.post(&call(1, 5)).await;
    assert_eq!(first.status, 200, "{}", first.text);
    let result = &first.json["result"];
    let expected = format!("10 {currency}");
    assert_eq!(result["structuredContent"], json!({"result": expected}), "{}", first.text);
    let text = result["content"][0]["text"].as_str().expect("text content");
    assert_eq!(text, serde_json::to_string(&expected).unwrap(), "the result's JSON as text");
    for id in 2..5 {
        // Hits: the string kept with the entry, written by the first of them.
        let hit = client.post(&call(id, 5)).await;
        assert_eq!(hit.text.replace(&format!("\"id\":{id},"), "\"id\":1,"), first.text, "byte for byte");
    }
    assert_eq!(s.runs(), 1, "ran once, then served from the cache");

    // An entry stored by `/rpc` (no room for the string) serves MCP too.
    assert_eq!(
        s.call("Prices.price", json!({"item": 6, "currency": currency})).await["result"],
        "10 ".to_owned() + currency
    );
    let hit = client.post(&call(6, 6)).await;
    assert_eq!(hit.json["result"]["content"][0]["text"], serde_json::to_string(&expected).unwrap());
    assert_eq!(s.runs(), 2);

    // An invalidated entry is not answered with its old string (the
    // relation keys by the item, in the default currency).
    let euros = |id: u32| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "Prices.price", "arguments": {"item": 9}}})
    };
    for id in 7..9 {
        assert_eq!(client.post(&euros(id)).await.json["result"]["content"][0]["text"], "\"10 EUR\"");
    }
    assert_eq!(s.call("Prices.set_price_cold", json!({"item": 9, "price": 8})).await["result"], 8);
    let deadline = Instant::now() + Duration::from_secs(5);
    while client.post(&euros(9)).await.json["result"]["content"][0]["text"] != "\"8 EUR\"" {
        assert!(Instant::now() < deadline, "invalidated after the response");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let again = client.post(&euros(10)).await;
    assert_eq!(again.json["result"]["content"][0]["text"], "\"8 EUR\"", "the new entry's string");
    assert_eq!(s.runs(), 4);
}

#[tokio::test]
async fn ignore_cache_runs_the_method_and_stores_the_fresh_result() {
    let s = setup(Environment::Test).await;
    assert_eq!(s.call("Prices.price", json!({"item": 2})).await["result"], "10 EUR");
    s.prices.set.lock().unwrap().push((2, 99)); // changed behind the cache's back
    assert_eq!(s.call("Prices.price", json!({"item": 2})).await["result"], "10 EUR", "stale, from the cache");
    let fresh = s.call("Prices.price", json!({"item": 2, "$rpc": {"ignoreCache": true}})).await;
    assert_eq!(fresh["result"], "99 EUR");
    assert_eq!(s.call("Prices.price", json!({"item": 2})).await["result"], "99 EUR", "the fresh result was stored");
    assert_eq!(s.runs(), 2);
}

#[tokio::test]
async fn errors_are_not_cached_and_environments_decide() {
    let s = setup(Environment::Test).await;
    for _ in 0..2 {
        assert_eq!(s.call("Prices.fail", json!({})).await["error"]["code"], 1);
    }
    assert_eq!(s.runs(), 2, "errors are not cached");
    s.call("Prices.prod_only", json!({})).await;
    s.call("Prices.prod_only", json!({})).await;
    assert_eq!(s.runs(), 4, "not cached outside production by default");

    let prod = setup(Environment::Prod).await;
    prod.call("Prices.prod_only", json!({})).await;
    prod.call("Prices.prod_only", json!({})).await;
    assert_eq!(prod.runs(), 1, "cached in production");
    let dev = setup(Environment::Dev).await;
    dev.call("Prices.price", json!({"item": 1})).await;
    dev.call("Prices.price", json!({"item": 1})).await;
    assert_eq!(dev.runs(), 2, "`env(test, prod)` does not cache in dev");
}

#[tokio::test]
async fn a_related_call_invalidates_and_warms_up_after_its_response() {
    let s = setup(Environment::Test).await;
    assert_eq!(s.call("Prices.price", json!({"item": 3})).await["result"], "10 EUR");
    assert_eq!(s.call("Prices.price", json!({"item": 4})).await["result"], "10 EUR");
    assert_eq!(s.runs(), 2);

    assert_eq!(s.call("Prices.set_price", json!({"item": 3, "price": 42})).await["result"], 42);
    // After the response: item 3's entry is dropped and computed again (one run).
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.runs() < 3 {
        assert!(Instant::now() < deadline, "the warm-up ran");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(s.call("Prices.price", json!({"item": 3})).await["result"], "42 EUR", "the warmed entry");
    assert_eq!(s.call("Prices.price", json!({"item": 4})).await["result"], "10 EUR", "other items untouched");
    assert_eq!(s.runs(), 3, "both served from the cache");

    // Without warm-up, the entry is only dropped: the next call computes it.
    assert_eq!(s.call("Prices.set_price_cold", json!({"item": 4, "price": 7})).await["result"], 7);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let now = s.call("Prices.price", json!({"item": 4})).await["result"].clone();
        if now == "7 EUR" {
            break;
        }
        assert!(Instant::now() < deadline, "invalidated after the response");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn several_tool_calls_in_one_mcp_batch_each_get_after_response() {
    let s = setup(Environment::Test).await;
    let mut client = RawMcp::new(s.server.url("/mcp/v1"));
    client.initialize("2025-03-26").await;
    let call = |id: u32, item: u32| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "Prices.price", "arguments": {"item": item}}});
    let batch = json!([call(1, 10), call(2, 11), call(3, 10), {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "Prices.fail", "arguments": {}}}]);
    let reply = client.post(&batch).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json.as_array().map(Vec::len), Some(4), "{}", reply.text);
    // Items 10 and 11 ran (the second 10 may be a hit or not: calls of a batch run together).
    s.wait_sent(2).await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    let sent = s.events.sent.lock().unwrap().clone();
    let executed = s.events.executed.lock().unwrap().iter().filter(|m| *m == "Prices.price").count();
    assert_eq!(
        sent.len(),
        executed,
        "one after_response per executed call with a result, none for the error: {sent:?}"
    );
    assert!(sent.iter().all(|m| m == "Prices.price"), "{sent:?}");
}

mod bad {
    rpc::api_group!(pub struct G => "g");

    /// Relations to methods that do not exist, or are not cached.
    pub struct Broken;

    #[rpc::service(groups(G))]
    impl Broken {
        /// Cached.
        #[rpc::cache(ttl = 5)]
        pub fn get(&self) -> u32 {
            1
        }

        /// Misspells its relation.
        #[rpc::invalidates("Broken.gett")]
        pub fn put(&self) -> u32 {
            1
        }

        /// Names a method without a cache.
        #[rpc::invalidates("Broken.put")]
        pub fn post(&self) -> u32 {
            1
        }
    }
}

#[test]
fn relations_are_checked_at_startup() {
    let error = Registry::builder().service(bad::Broken).build().expect_err("refused");
    let problems = error.problems().join("\n");
    assert!(
        problems.contains("`Broken.put`")
            && problems
                .contains("invalidates `Broken.gett`, which is not a method of version 1 (did you mean `Broken.get`?)"),
        "{problems}"
    );
    assert!(problems.contains("invalidates `Broken.put`, which has no `#[rpc::cache]`"), "{problems}");
}

#[tokio::test]
async fn identified_callers_do_not_share_entries() {
    use rpc::security::{Access, AccessPolicy, AccessRequest};
    use rpc::{Identity, Security};

    /// The caller is whoever `x-user` names.
    struct ByHeader;
    impl AccessPolicy for ByHeader {
        fn check<'a>(&'a self, request: &'a AccessRequest<'a>) -> MaybeReady<'a, Access> {
            let user = request.headers.get("x-user").and_then(|v| v.to_str().ok()).unwrap_or("anonymous");
            MaybeReady::ready(Access::allow_as(Identity::new(user)))
        }
    }
    let prices = Arc::new(fixtures::Prices::default());
    let registry = Registry::builder().service_arc(prices.clone()).build().expect("registry");
    let executor = Executor::new(registry, Environment::Test);
    let rpc = JsonRpcService::builder(executor).security(Security::new().access(ByHeader)).build();
    let server = TestServer::start(Router::new().nest("/rpc", rpc)).await;
    let call = async |user: &str| {
        reqwest::Client::new()
            .post(server.url("/rpc"))
            .header("x-user", user)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "Prices.price", "params": {"item": 1}}))
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
    };
    call("alice").await;
    call("alice").await;
    assert_eq!(prices.runs.load(Ordering::SeqCst), 1);
    call("bob").await;
    assert_eq!(prices.runs.load(Ordering::SeqCst), 2, "bob does not get alice's entry");
}

/// Cached results are kept per caller (one identity never gets another's
/// results), but a related call's invalidation reaches every caller's
/// entry: after a price is set by one token, the other token's next call
/// gets the new price, not its cached old one (whichever store holds the
/// cache: the in-process one here, Redis in `examples/catalog/tests`).
#[tokio::test]
async fn an_invalidation_reaches_every_callers_entry() {
    let prices = Arc::new(fixtures::Prices::default());
    let registry = Registry::builder().service_arc(prices.clone()).build().expect("registry");
    let executor = Executor::new(registry, Environment::Test);
    let tokens = rpc::TokenPolicy::new().token("token-of-alice").unwrap().named_token("bob", "token-of-bob").unwrap();
    let rpc = JsonRpcService::builder(executor).security(rpc::Security::new().tokens(tokens)).build();
    let server = TestServer::start(Router::new().nest("/rpc", rpc)).await;
    let call = async |token: &str, method: &str, params: Value| -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let response = reqwest::Client::new()
            .post(server.url("/rpc"))
            .header("authorization", format!("Bearer {token}"))
            .json(&body)
            .send()
            .await
            .expect("sent");
        response.json::<Value>().await.expect("JSON")["result"].clone()
    };
    let runs = || prices.runs.load(Ordering::SeqCst);
    for token in ["token-of-alice", "token-of-bob", "token-of-alice", "token-of-bob"] {
        assert_eq!(call(token, "Prices.price", json!({"item": 5})).await, "10 EUR");
    }
    assert_eq!(runs(), 2, "one entry per caller");

    // Alice sets the price (no warm-up): Bob's cached entry goes stale too.
    assert_eq!(call("token-of-alice", "Prices.set_price_cold", json!({"item": 5, "price": 77})).await, 77);
    let deadline = Instant::now() + Duration::from_secs(5);
    while call("token-of-bob", "Prices.price", json!({"item": 5})).await != "77 EUR" {
        assert!(Instant::now() < deadline, "Bob's entry was invalidated by Alice's change");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(call("token-of-alice", "Prices.price", json!({"item": 5})).await, "77 EUR");
    let after = runs();
    assert_eq!(call("token-of-bob", "Prices.price", json!({"item": 5})).await, "77 EUR");
    assert_eq!(runs(), after, "and the new results are cached again");

    // With warm-up: Bob (the writer) gets his entry computed again, Alice's goes stale.
    assert_eq!(call("token-of-bob", "Prices.set_price", json!({"item": 5, "price": 88})).await, 88);
    let deadline = Instant::now() + Duration::from_secs(5);
    while call("token-of-alice", "Prices.price", json!({"item": 5})).await != "88 EUR" {
        assert!(Instant::now() < deadline, "Alice's entry was invalidated by Bob's change");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A call of `method` with `params` as the executor's callers make it; as
/// MCP's `tools/call` does (`as_string`), it writes the result as a JSON
/// string too.
fn direct_call(method: &str, params: Value, as_string: bool) -> rpc::Call<'_> {
    let Value::Object(params) = params else { panic!("named parameters") };
    let mut call = rpc::Call::new(method, 1, rpc::Params::Named(params));
    call.result_as_string = as_string;
    call
}

/// Once a method's results have been read as JSON strings (MCP's text
/// content), every entry stored for it keeps room for that string, also
/// when a warm-up after an invalidation (or a `/rpc` call) stores it: the
/// next hit over MCP copies the string instead of escaping the result
/// again. A method no caller reads so keeps no room.
#[tokio::test]
async fn a_warmed_up_entry_keeps_room_for_the_string_its_readers_write() {
    let prices = Arc::new(fixtures::Prices::default());
    let registry = Registry::builder().service_arc(prices.clone()).build().expect("registry");
    let executor =
        Executor::new(registry, Environment::Test).with_cache_store(Arc::new(rpc::store::MemoryCache::new(1 << 20)));
    let runs = || prices.runs.load(Ordering::SeqCst);

    // Read over `/rpc` only: its hits carry no string.
    let plain = json!({"item": 1});
    assert!(executor.execute(direct_call("Prices.price", plain.clone(), false)).await.result.is_ok());
    let hit = executor.execute(direct_call("Prices.price", plain, false)).await.result.expect("a hit");
    assert!(hit.is_shared() && hit.json_string().is_none(), "no room kept for a string nobody writes");

    // Read as a string (item 2): the hit copies the string kept with it.
    let item = json!({"item": 2});
    assert!(executor.execute(direct_call("Prices.price", item.clone(), true)).await.result.is_ok());
    let hit = executor.execute(direct_call("Prices.price", item.clone(), true)).await.result.expect("a hit");
    assert_eq!(hit.json_string(), Some(r#""\"10 EUR\"""#));
    assert_eq!(runs(), 2);

    // A price set over `/rpc`: after its response, the entry is warmed up
    // by a call that does not write strings itself.
    let set = executor.execute(direct_call("Prices.set_price", json!({"item": 2, "price": 42}), false)).await;
    assert!(set.result.is_ok());
    executor.response_sent(vec![set]);
    let deadline = Instant::now() + Duration::from_secs(5);
    while runs() < 3 {
        assert!(Instant::now() < deadline, "the warm-up ran");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let hit = executor.execute(direct_call("Prices.price", item, true)).await.result.expect("a hit");
    assert_eq!(runs(), 3, "served from the warmed entry");
    assert_eq!(hit.get(), r#""42 EUR""#);
    assert_eq!(hit.json_string(), Some(r#""\"42 EUR\"""#), "the warmed entry kept room for its string");

    // And a `/rpc` call now stores its entry (item 3) with that room too.
    let other = json!({"item": 3});
    assert!(executor.execute(direct_call("Prices.price", other.clone(), false)).await.result.is_ok());
    let hit = executor.execute(direct_call("Prices.price", other, true)).await.result.expect("a hit");
    assert_eq!(runs(), 4);
    assert_eq!(hit.json_string(), Some(r#""\"10 EUR\"""#));
}
