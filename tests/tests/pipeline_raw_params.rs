//! Parameters handed to the executor as raw text (`Call::named_raw`, what
//! `/rpc` does for named parameters without `$rpc`): a repeated cached call
//! finds its slot by the text without reading it again, and answers exactly
//! as a call read in full would. Validation still refuses what it refused
//! (a text is remembered only once it passed), callers and versions stay
//! apart, invalidations and `ignoreCache` work, a listener that watches
//! requests gets the parameters read, and the table stays bounded. MCP's
//! `tools/call` hands its `arguments` the same way, in both eras.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use e2e_tests::raw_mcp::RawMcp;
use e2e_tests::{TestServer, post_json};
use rpc::server::Router;
use rpc::{
    Call, CallInfo, Environment, Executor, Identity, JsonRpcService, Listener, MaybeReady, Params, Registry,
    RequestEvent, RpcError, Stage,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};

mod fixtures {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU32, Ordering};

    rpc::api_group!(pub struct Tools => "tools", mcp = true);

    /// Counts its calls.
    #[derive(Default)]
    pub struct Quotes {
        /// Calls of `quote`.
        pub runs: AtomicU32,
        /// Prices set (all 10 until set).
        pub set: Mutex<Vec<(u32, u32)>>,
    }

    #[rpc::service(groups(Tools))]
    impl Quotes {
        /// The price of `item` in `currency`, for the caller.
        #[rpc::cache(ttl = 60, env(test, prod))]
        pub fn quote(&self, ctx: rpc::Context, item: u32, #[rpc(default = "EUR")] currency: String) -> String {
            self.runs.fetch_add(1, Ordering::SeqCst);
            let price = self.set.lock().unwrap().iter().rev().find(|(i, _)| *i == item).map_or(10, |(_, p)| *p);
            let who = ctx.identity().map_or("anyone", |i| i.subject.as_str());
            format!("{price} {currency} for {who}")
        }

        /// Sets a price; the cached quotes of that item are dropped.
        #[rpc::invalidates("Quotes.quote")]
        pub fn set_price(&self, item: u32, price: u32) -> u32 {
            self.set.lock().unwrap().push((item, price));
            price
        }
    }
}

/// Counts executions; leaves requests alone (so raw parameters stay unread).
#[derive(Default)]
struct Quiet {
    executed: AtomicU32,
}

impl Listener for Quiet {
    fn watches_requests(&self) -> bool {
        false
    }
    fn before_execute<'a>(&'a self, _: &'a CallInfo) -> MaybeReady<'a, Result<(), RpcError>> {
        self.executed.fetch_add(1, Ordering::SeqCst);
        MaybeReady::ready(Ok(()))
    }
}

fn new_executor(listener: Arc<dyn Listener>) -> (Executor, Arc<fixtures::Quotes>) {
    let quotes = Arc::new(fixtures::Quotes::default());
    let registry = Registry::builder().service_arc(quotes.clone()).build().expect("registry");
    (Executor::new(registry, Environment::Test).with_listeners([listener]), quotes)
}

fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_owned()).expect("valid JSON")
}

async fn quote(executor: &Executor, text: &str, caller: Option<&str>) -> (Result<String, (i32, String)>, Stage) {
    let params = raw(text);
    let call = Call::new("Quotes.quote", 1, Params::None)
        .named_raw(&params)
        .identity(caller.map(|subject| Arc::new(Identity::new(subject))));
    let execution = executor.execute(call).await;
    let result = match execution.result {
        Ok(json) => Ok(serde_json::from_str::<String>(json.get()).expect("a string result")),
        Err(e) => Err((e.code(), e.to_string())),
    };
    (result, execution.stage)
}

#[tokio::test]
async fn a_repeated_text_is_served_from_its_remembered_slot() {
    let quiet = Arc::new(Quiet::default());
    let (executor, quotes) = new_executor(quiet.clone());
    assert_eq!(quote(&executor, r#"{"item":1}"#, None).await, (Ok("10 EUR for anyone".into()), Stage::Method));
    assert_eq!(executor.remembered_raw_slots(), 1);
    for _ in 0..3 {
        assert_eq!(quote(&executor, r#"{"item":1}"#, None).await, (Ok("10 EUR for anyone".into()), Stage::Cache));
    }
    // Another spelling of the same parameters: read, keyed the same, a hit.
    let spelled = r#"{ "currency" : "EUR", "item" : 1 }"#;
    assert_eq!(quote(&executor, spelled, None).await, (Ok("10 EUR for anyone".into()), Stage::Cache));
    assert_eq!(quotes.runs.load(Ordering::SeqCst), 1);
    assert_eq!(quiet.executed.load(Ordering::SeqCst), 1, "no execution events on a hit");
    // Other parameters are another entry.
    assert_eq!(quote(&executor, r#"{"item":1,"currency":"USD"}"#, None).await.0, Ok("10 USD for anyone".into()));
    assert_eq!(quotes.runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn validation_still_refuses_what_it_refused() {
    let (executor, quotes) = new_executor(Arc::new(Quiet::default()));
    assert!(quote(&executor, r#"{"item":1}"#, None).await.0.is_ok());
    // An unknown member beside a cached text's members, a wrong type, a
    // number no parser reads, a missing parameter: refused every time.
    for text in [r#"{"item":1,"extra":true}"#, r#"{"item":"1"}"#, r#"{"item":1e400}"#, "{}", r#"{"item":-1}"#] {
        for _ in 0..2 {
            let (result, stage) = quote(&executor, text, None).await;
            let (code, message) = result.expect_err(text);
            assert_eq!(code, -32602, "{text}: {message}");
            assert_eq!(stage, Stage::Validation, "{text}");
        }
    }
    assert_eq!(quotes.runs.load(Ordering::SeqCst), 1);
    assert_eq!(executor.remembered_raw_slots(), 1, "only texts that passed are remembered");
}

#[tokio::test]
async fn callers_and_versions_stay_apart() {
    let (executor, quotes) = new_executor(Arc::new(Quiet::default()));
    let text = r#"{"item":2}"#;
    assert_eq!(quote(&executor, text, Some("alice")).await.0, Ok("10 EUR for alice".into()));
    assert_eq!(quote(&executor, text, Some("bob")).await.0, Ok("10 EUR for bob".into()));
    assert_eq!(quote(&executor, text, None).await.0, Ok("10 EUR for anyone".into()));
    for (caller, answer) in [(Some("alice"), "alice"), (Some("bob"), "bob"), (None, "anyone")] {
        let (result, stage) = quote(&executor, text, caller).await;
        assert_eq!((result, stage), (Ok(format!("10 EUR for {answer}")), Stage::Cache));
    }
    assert_eq!(quotes.runs.load(Ordering::SeqCst), 3);
    let params = raw(text);
    let other_version = executor.execute(Call::new("Quotes.quote", 2, Params::None).named_raw(&params)).await;
    assert_eq!(other_version.stage, Stage::Lookup, "version 2 has no such method: not served from version 1's slot");
}

#[tokio::test]
async fn ignore_cache_runs_the_method_and_a_watching_listener_sees_the_parameters() {
    let (executor, quotes) = new_executor(Arc::new(Quiet::default()));
    let params = raw(r#"{"item":3}"#);
    assert!(executor.execute(Call::new("Quotes.quote", 1, Params::None).named_raw(&params)).await.result.is_ok());
    let fresh =
        executor.execute(Call::new("Quotes.quote", 1, Params::None).named_raw(&params).ignore_cache(true)).await;
    assert_eq!(fresh.stage, Stage::Method);
    assert_eq!(quotes.runs.load(Ordering::SeqCst), 2);

    /// Rewrites every quote to item 4: it must see the parameters read.
    struct Rewrite;
    impl Listener for Rewrite {
        fn on_request<'a>(&'a self, request: &'a mut RequestEvent) -> MaybeReady<'a, Result<(), RpcError>> {
            let Params::Named(map) = &mut request.params else {
                return MaybeReady::ready(Err(RpcError::internal("parameters not read for on_request")));
            };
            map.insert("item".into(), json!(4));
            MaybeReady::ready(Ok(()))
        }
    }
    let (watched, quotes) = new_executor(Arc::new(Rewrite));
    quotes.set.lock().unwrap().push((4, 40));
    for _ in 0..2 {
        assert_eq!(quote(&watched, r#"{"item":3}"#, None).await.0, Ok("40 EUR for anyone".into()));
    }
    assert_eq!(quotes.runs.load(Ordering::SeqCst), 1, "the rewritten call is cached as usual");
    assert_eq!(watched.remembered_raw_slots(), 0, "read parameters are not remembered by text");
}

#[tokio::test]
async fn the_table_is_bounded() {
    let (executor, _) = new_executor(Arc::new(Quiet::default()));
    for item in 0..5_000 {
        assert!(quote(&executor, &format!(r#"{{"item":{item}}}"#), None).await.0.is_ok());
        assert!(executor.remembered_raw_slots() <= 2048);
    }
    // A long text is read every time and never remembered.
    let before = executor.remembered_raw_slots();
    let long = format!(r#"{{"item":5,"currency":"{}"}}"#, "X".repeat(600));
    for _ in 0..2 {
        assert!(quote(&executor, &long, None).await.0.is_ok());
    }
    assert_eq!(executor.remembered_raw_slots(), before);
}

/// Over `/rpc`: named parameters go unread; `$rpc` (however spelled) still
/// gives call options; a writer's invalidation reaches remembered slots.
#[tokio::test]
async fn over_rpc_options_and_invalidations_still_apply() {
    let quiet = Arc::new(Quiet::default());
    let (executor, quotes) = new_executor(quiet.clone());
    let app = Router::new().nest("/rpc", JsonRpcService::new(executor.clone()));
    let server = TestServer::start(app).await;
    let call = |params: Value| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "Quotes.quote", "params": params}).to_string();
        let url = server.url("/rpc");
        async move { post_json(&url, &body).await.1 }
    };
    let set = |price: u32| {
        let body =
            json!({"jsonrpc": "2.0", "id": 2, "method": "Quotes.set_price", "params": {"item": 9, "price": price}});
        let url = server.url("/rpc");
        async move { post_json(&url, &body.to_string()).await.1 }
    };
    assert_eq!(call(json!({"item": 9})).await["result"], "10 EUR for anyone");
    assert_eq!(call(json!({"item": 9})).await["result"], "10 EUR for anyone");
    assert_eq!(quotes.runs.load(Ordering::SeqCst), 1);
    assert!(executor.remembered_raw_slots() >= 1);

    // `$rpc.ignoreCache`, plainly and with `$` escaped: options, not parameters.
    let escaped: Value = serde_json::from_str(r#"{"item": 9, "\u0024rpc": {"ignoreCache": true}}"#).unwrap();
    assert_eq!(call(json!({"item": 9, "$rpc": {"ignoreCache": true}})).await["result"], "10 EUR for anyone");
    let body =
        r#"{"jsonrpc":"2.0","id":1,"method":"Quotes.quote","params":{"item":9,"\u0024rpc":{"ignoreCache":true}}}"#;
    assert_eq!(post_json(&server.url("/rpc"), body).await.1["result"], "10 EUR for anyone", "{escaped}");
    assert_eq!(quotes.runs.load(Ordering::SeqCst), 3);

    // The writer drops the entry after its response: the same text runs again.
    assert_eq!(set(20).await["result"], 20);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if call(json!({"item": 9})).await["result"] == "20 EUR for anyone" {
            break;
        }
        assert!(Instant::now() < deadline, "the invalidation never reached the remembered slot");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(call(json!({"item": 9})).await["result"], "20 EUR for anyone");
}

/// MCP `tools/call` hands its `arguments` unread: a repeated call is a hit,
/// and what validation refused it still refuses, in both eras.
#[tokio::test]
async fn mcp_tool_calls_keep_their_arguments_unread_until_needed() {
    let (executor, quotes) = new_executor(Arc::new(Quiet::default()));
    let app = Router::new().nest("/mcp", mcp::McpEndpoint::builder::<fixtures::Tools>(executor.clone()).build());
    let server = TestServer::start(app).await;
    let mut client = RawMcp::new(server.url("/mcp/v1"));
    client.initialize("2025-11-25").await;
    for _ in 0..3 {
        let reply = client.call("Quotes.quote", json!({"item": 5})).await;
        assert_eq!(reply["result"]["structuredContent"], json!({"result": "10 EUR for anyone"}), "{reply}");
    }
    assert_eq!(quotes.runs.load(Ordering::SeqCst), 1);
    assert_eq!(executor.remembered_raw_slots(), 1);
    // Refused every time, a cached text beside them or not.
    for arguments in [json!({"item": 5, "extra": 1}), json!({"item": "5"}), json!({})] {
        for _ in 0..2 {
            let reply = client.call("Quotes.quote", arguments.clone()).await;
            let refused = reply["error"]["code"] == -32602 || reply["result"]["isError"] == true;
            assert!(refused, "{arguments}: {reply}");
        }
    }
    let out_of_range =
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"Quotes.quote","arguments":{"item":1e400}}}"#;
    let reply = client.send(reqwest::Method::POST, Some(out_of_range.to_owned()), &[]).await;
    assert!(reply.text.contains("Invalid params"), "a number no parser reads: {}", reply.text);
    for arguments in ["5", "[1]", "\"x\""] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"Quotes.quote","arguments":{arguments}}}}}"#
        );
        let reply = client.send(reqwest::Method::POST, Some(body), &[]).await;
        assert!(reply.text.contains("`arguments` must be an object"), "{arguments}: {}", reply.text);
    }
    assert_eq!(quotes.runs.load(Ordering::SeqCst), 1);

    // 2026-07-28: the same, without a session.
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    let modern = RawMcp::new(server.url("/mcp/v1"));
    let headers = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "Quotes.quote")];
    for _ in 0..2 {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "Quotes.quote", "arguments": {"item": 6}, "_meta": meta}});
        let reply = modern.send(reqwest::Method::POST, Some(body.to_string()), &headers).await;
        assert!(reply.text.contains("10 EUR for anyone"), "{}", reply.text);
    }
    assert_eq!(quotes.runs.load(Ordering::SeqCst), 2);
}
