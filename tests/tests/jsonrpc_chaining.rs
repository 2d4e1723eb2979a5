//! Batch chaining on `/rpc`: a call whose params hold `"@FROM:<id>(<field>)"`
//! runs after the call with that id and gets the field of its result (the
//! whole result for `()`), at the top of the params or nested; a failed
//! parent, a missing field, an unknown id, a reference to itself, a cycle,
//! a parent slower than the child's `$rpc.timeout` and a malformed
//! reference each give the child an error naming the reference; answers
//! come in the order of the batch; hostile batches are answered quickly.

use std::time::{Duration, Instant};

use e2e_tests::TestServer;
use rpc::jsonrpc::{Callbacks, JsonLimits};
use rpc::server::Router;
use rpc::{Environment, Executor, JsonRpcService, Registry};
use serde_json::{Value, json};

use crate::jsonrpc_common::{assert_envelope, post_ok};

mod fixtures {
    use serde_json::{Value, json};

    /// Methods to chain.
    pub struct Chain;

    #[rpc::service]
    impl Chain {
        /// A user: `{"id", "name", "address": {"city"}, "tags"}`.
        pub fn user(&self, id: u64) -> Value {
            json!({"id": id, "name": format!("user-{id}"), "address": {"city": "Paris", "zip": "75001"}, "tags": ["a", "b"]})
        }

        /// `a + b`.
        pub fn add(&self, a: i64, b: i64) -> i64 {
            a + b
        }

        /// Its argument, as it came.
        pub fn echo(&self, value: Value) -> Value {
            value
        }

        /// Sleeps `ms` milliseconds, then answers `{"done": true}`.
        pub async fn slow(&self, ms: u64) -> Value {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            json!({"done": true})
        }

        /// Always fails.
        pub fn fail(&self) -> Result<u32, rpc::RpcError> {
            Err(rpc::RpcError::new(7, "it failed"))
        }

        /// A string of `bytes` bytes.
        pub fn big(&self, bytes: usize) -> String {
            "x".repeat(bytes)
        }
    }
}

async fn server(env: Environment, max_batch: usize) -> TestServer {
    let registry = Registry::builder().service(fixtures::Chain).build().unwrap();
    let executor = Executor::new(registry, env);
    let limits = JsonLimits::default().max_batch(max_batch);
    // Callbacks go nowhere: only their acknowledgement is looked at.
    let callbacks = Callbacks::allow(["http://127.0.0.1:9/hooks"]).unwrap();
    let rpc = JsonRpcService::builder(executor).json_limits(limits).callbacks(callbacks).build();
    TestServer::start(Router::new().nest("/rpc", rpc)).await
}

/// A request for method `Chain.<method>`.
fn call(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": format!("Chain.{method}"), "params": params})
}

/// Posts a batch and returns its answers, checked: one per request, in the
/// order of the requests (notifications left out), each with its id.
async fn batch(server: &TestServer, calls: &[Value]) -> Vec<Value> {
    let answers = post_ok(&server.url("/rpc"), &Value::Array(calls.to_vec())).await;
    let answers = answers.as_array().unwrap_or_else(|| panic!("an array: {answers}")).clone();
    let ids: Vec<&Value> = calls.iter().filter_map(|c| c.get("id")).collect();
    assert_eq!(answers.iter().map(|a| &a["id"]).collect::<Vec<_>>(), ids, "in request order: {answers:?}");
    answers.iter().for_each(assert_envelope);
    answers
}

/// The message of an error answer with `code`.
fn error(answer: &Value, code: i64) -> &str {
    assert_eq!(answer["error"]["code"], code, "{answer}");
    answer["error"]["message"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_chain_passes_fields_and_whole_results_along() {
    let server = server(Environment::Dev, 100).await;
    let answers = batch(
        &server,
        &[
            // Listed before their parents: they still run after them.
            call(json!(3), "add", json!({"a": "@FROM:2()", "b": "@FROM:1(id)"})),
            call(json!(2), "add", json!({"a": "@FROM:1(id)", "b": 10})),
            call(json!(1), "user", json!({"id": 5})),
            call(json!("whole"), "echo", json!({"value": "@FROM:1()"})),
            call(
                json!("nested"),
                "echo",
                json!({"value": {"city": "@FROM:1(address.city)", "list": ["@FROM:1(tags.1)", 1]}}),
            ),
            call(json!("positional"), "add", json!(["@FROM:2()", "@FROM:3()"])),
        ],
    )
    .await;
    assert_eq!(answers[0]["result"], 20, "a → b → c: (5 + 10) + 5");
    assert_eq!(answers[1]["result"], 15);
    assert_eq!(answers[2]["result"]["name"], "user-5");
    assert_eq!(answers[3]["result"], answers[2]["result"], "the whole result");
    assert_eq!(answers[4]["result"], json!({"city": "Paris", "list": ["b", 1]}), "nested references, dotted paths");
    assert_eq!(answers[5]["result"], 35, "positional params");
}

#[tokio::test]
async fn ids_are_numbers_or_strings_as_written() {
    let server = server(Environment::Dev, 100).await;
    let answers = batch(
        &server,
        &[
            call(json!("u-1"), "user", json!({"id": 1})),
            call(json!(10), "add", json!({"a": "@FROM:u-1(id)", "b": 1})),
            call(json!(11), "add", json!({"a": "@FROM:10()", "b": 1})),
        ],
    )
    .await;
    assert_eq!((answers[1]["result"].clone(), answers[2]["result"].clone()), (json!(2), json!(3)));
}

#[tokio::test]
async fn unsatisfied_references_are_refused_naming_them() {
    let server = server(Environment::Prod, 100).await;
    let answers = batch(
        &server,
        &[
            call(json!(1), "fail", json!({})),
            call(json!(2), "echo", json!({"value": "@FROM:1(id)"})),
            call(json!(3), "user", json!({"id": 3})),
            call(json!(4), "echo", json!({"value": "@FROM:3(address.street)"})),
            call(json!(5), "echo", json!({"value": "@FROM:7(id)"})),
            call(json!(6), "echo", json!({"value": "@FROM:6(id)"})),
            call(json!(7.5), "echo", json!({"value": "@FROM:8()"})),
            call(json!(8), "echo", json!({"value": "@FROM:7.5()"})),
            call(json!(9), "echo", json!({"value": "@FROM:8()"})),
            call(json!(10), "echo", json!({"value": "@FROM 3(id)"})),
            call(json!(11), "echo", json!({"value": "@FROM:2()"})),
            json!({"jsonrpc": "1.0", "id": 12, "method": "Chain.user", "params": {"id": 1}}),
            call(json!(13), "echo", json!({"value": "@FROM:12(id)"})),
        ],
    )
    .await;
    let refusal = |id: Value, message: &str| json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": message, "data": {"exception": "rpc::BatchChain"}}});
    assert_eq!(answers[1], refusal(json!(2), "`@FROM:1(id)`: request 1 failed"));
    assert_eq!(
        answers[3],
        refusal(json!(4), "`@FROM:3(address.street)`: the result of request 3 has no field `address.street`")
    );
    assert_eq!(answers[4], refusal(json!(5), "`@FROM:7(id)`: no request with id 7 in this batch"));
    assert_eq!(answers[5], refusal(json!(6), "`@FROM:6(id)`: request 6 depends on itself"));
    assert_eq!(answers[6], refusal(json!(7.5), "`@FROM:8()`: cycle 7.5 → 8 → 7.5"));
    assert_eq!(answers[7], refusal(json!(8), "`@FROM:7.5()`: cycle 8 → 7.5 → 8"));
    assert_eq!(answers[8], refusal(json!(9), "`@FROM:8()`: request 8 failed"), "downstream of a cycle");
    assert_eq!(
        answers[9],
        json!({"jsonrpc": "2.0", "id": 10, "error": {"code": -32602, "message":
            "Invalid `@FROM` reference `@FROM 3(id)`: `@FROM` is followed by `:` and the id; write `@FROM:<id>(<field>)`, \
             e.g. `@FROM:1(user.id)`, or `@FROM:1()` for the whole result (text that starts with `@FROM` is written `\\u0040FROM`)",
            "data": {"exception": "rpc::BatchChain"}}})
    );
    assert_eq!(answers[10], refusal(json!(11), "`@FROM:2()`: request 2 failed"), "a refused parent failed");
    assert_eq!(answers[12], refusal(json!(13), "`@FROM:12(id)`: request 12 failed"), "an invalid request failed");
    assert_eq!(answers[0]["error"]["code"], 7);
    assert_eq!(answers[2]["result"]["id"], 3);
}

#[tokio::test]
async fn an_escaped_at_sign_is_text() {
    let server = server(Environment::Dev, 100).await;
    let body = r#"[{"jsonrpc":"2.0","id":1,"method":"Chain.user","params":{"id":1}},
        {"jsonrpc":"2.0","id":2,"method":"Chain.echo","params":{"value":"\u0040FROM:1(id)"}}]"#;
    let (status, answers) = e2e_tests::post_json(&server.url("/rpc"), body).await;
    assert_eq!(status, 200);
    assert_eq!(answers[1]["result"], "@FROM:1(id)");
    // A single call never chains.
    let single = call(json!(1), "echo", json!({"value": "@FROM:1(id)"}));
    assert_eq!(post_ok(&server.url("/rpc"), &single).await["result"], "@FROM:1(id)");
}

#[tokio::test]
async fn substituted_params_are_validated_like_any() {
    let server = server(Environment::Dev, 100).await;
    let answers = batch(
        &server,
        &[call(json!(1), "user", json!({"id": 1})), call(json!(2), "add", json!({"a": "@FROM:1(name)", "b": 1}))],
    )
    .await;
    let message = error(&answers[1], -32602);
    assert!(message.contains("Invalid params for Chain.add") && message.contains('a'), "{message}");
}

#[tokio::test]
async fn notifications_and_asynchronous_calls_cannot_be_parents() {
    let server = server(Environment::Dev, 100).await;
    let answers = batch(
        &server,
        &[
            json!({"jsonrpc": "2.0", "method": "Chain.user", "params": {"id": 1}}),
            call(json!(2), "echo", json!({"value": "@FROM:1(id)"})),
            // A notification may be a child: it runs, unanswered.
            json!({"jsonrpc": "2.0", "method": "Chain.echo", "params": {"value": "@FROM:3()"}}),
            call(json!(3), "user", json!({"id": 3})),
            call(json!(4), "user", json!({"id": 4, "$rpc": {"callback": "http://127.0.0.1:9/hooks/a"}})),
            call(json!(5), "echo", json!({"value": "@FROM:4(id)"})),
        ],
    )
    .await;
    assert_eq!(error(&answers[0], -32602), "`@FROM:1(id)`: no request with id 1 in this batch");
    assert_eq!(answers[2]["result"]["async"], true);
    assert_eq!(
        error(&answers[3], -32602),
        "`@FROM:4(id)`: request 4 runs asynchronously (`$rpc.callback`): its result is not in this batch"
    );
    assert_eq!(answers.len(), 4);
}

#[tokio::test]
async fn a_parent_slower_than_the_childs_timeout() {
    let server = server(Environment::Prod, 100).await;
    let started = Instant::now();
    let answers = batch(
        &server,
        &[
            call(json!(1), "slow", json!({"ms": 700})),
            call(json!(2), "echo", json!({"value": "@FROM:1(done)", "$rpc": {"timeout": 0.2}})),
            call(json!(3), "echo", json!({"value": "@FROM:1(done)", "$rpc": {"timeout": 5}})),
            call(json!(4), "echo", json!({"value": "@FROM:2()"})),
        ],
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert_eq!(
        answers[1],
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32000, "message":
            "`@FROM:1(done)`: request 1 did not finish within 0.2 s (the `$rpc.timeout` of this request, by default 120 s)",
            "data": {"exception": "rpc::Timeout"}}})
    );
    assert_eq!(answers[0]["result"], json!({"done": true}));
    assert_eq!(answers[2]["result"], true, "a longer wait sees the result");
    assert_eq!(error(&answers[3], -32602), "`@FROM:2()`: request 2 failed");
}

#[tokio::test]
async fn independent_calls_still_run_together() {
    let server = server(Environment::Dev, 100).await;
    let started = Instant::now();
    let answers = batch(
        &server,
        &[
            call(json!(1), "slow", json!({"ms": 300})),
            call(json!(2), "slow", json!({"ms": 300})),
            call(json!(3), "echo", json!({"value": ["@FROM:1(done)", "@FROM:2(done)"]})),
            call(json!(4), "slow", json!({"ms": 300})),
        ],
    )
    .await;
    assert_eq!(answers[2]["result"], json!([true, true]));
    assert!(started.elapsed() < Duration::from_millis(900), "{:?}", started.elapsed());
}

#[tokio::test]
async fn hostile_batches_are_answered_quickly() {
    let server = server(Environment::Prod, 1000).await;
    // 1,000 calls, each taking the previous one's result.
    let mut calls = vec![call(json!(0), "add", json!({"a": 0, "b": 1}))];
    calls.extend((1..1000).map(|i| call(json!(i), "add", json!({"a": format!("@FROM:{}()", i - 1), "b": 1}))));
    let started = Instant::now();
    let answers = batch(&server, &calls).await;
    assert_eq!(answers[999]["result"], 1000);
    assert!(started.elapsed() < Duration::from_secs(5), "a chain of 1,000: {:?}", started.elapsed());
    // The same chain whose first call fails: every other call is refused.
    calls[0] = call(json!(0), "fail", json!({}));
    let answers = batch(&server, &calls).await;
    assert_eq!(error(&answers[999], -32602), "`@FROM:998()`: request 998 failed");
    // A cycle of 500.
    let cycle: Vec<Value> =
        (0..500).map(|i| call(json!(i), "echo", json!({"value": format!("@FROM:{}()", (i + 1) % 500)}))).collect();
    let started = Instant::now();
    let answers = batch(&server, &cycle).await;
    assert!(started.elapsed() < Duration::from_secs(5), "a cycle of 500: {:?}", started.elapsed());
    assert_eq!(error(&answers[0], -32602), "`@FROM:1()`: cycle 0 → 1 → 2 → … → 498 → 499 → 0 (500 requests)");
    // A reference of 1 MB.
    let long = format!("@FROM:0({})", "a".repeat(1 << 20));
    let answers =
        batch(&server, &[call(json!(0), "user", json!({"id": 1})), call(json!(1), "echo", json!({"value": long}))])
            .await;
    assert!(error(&answers[1], -32602).contains("a reference is at most 1024 bytes"));
    // 999 children of a 1 MB result: within the bytes a batch may substitute.
    let mut fan = vec![call(json!(0), "big", json!({"bytes": 1 << 20}))];
    fan.extend((1..1000).map(|i| call(json!(i), "echo", json!({"value": "@FROM:0()"}))));
    let started = Instant::now();
    let answers = batch(&server, &fan).await;
    assert!(started.elapsed() < Duration::from_secs(10), "a fan-out of 999: {:?}", started.elapsed());
    let served = answers.iter().filter(|a| a.get("result").is_some()).count();
    assert_eq!(served, 1 + 15, "16 MiB substituted at most: {}", error(&answers[999], -32602));
    assert_eq!(
        error(&answers[999], -32602),
        "`@FROM:0()`: the values substituted into this batch exceed 16777216 bytes"
    );
    // Many children of a small result all succeed.
    let mut wide = vec![call(json!(0), "user", json!({"id": 1}))];
    wide.extend((1..1000).map(|i| call(json!(i), "add", json!({"a": "@FROM:0(id)", "b": i}))));
    let started = Instant::now();
    let answers = batch(&server, &wide).await;
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert_eq!(answers[999]["result"], 1000);
}
