//! Tasks (the extension `io.modelcontextprotocol/tasks`, 2026-07-28): a
//! tool call answered at once with a task, polled to its result; questions
//! answered with `tasks/update`; cancellation that stops the method;
//! clients without the extension; tasks visible to their caller only;
//! hostile updates and a full store; the handshake era (plain calls); and
//! two instances sharing Redis, where one runs the task and the other
//! answers for it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use e2e_tests::TestServer;
use e2e_tests::modern_mcp::Modern;
use e2e_tests::raw_mcp::Reply;
use e2e_tests::redis_server::Redis;
use mcp::tasks::{MemoryTaskStore, TaskStore};
use rpc::{Environment, Security, TokenPolicy};
use serde_json::{Value, json};

/// The labels of the `tasks.slow` calls that finished their work.
static FINISHED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn finished(label: &str) -> bool {
    FINISHED.lock().unwrap().iter().any(|l| l == label)
}

mod fixtures {
    use std::time::Duration;

    use mcp::{AskClient, mcp_tool};
    use rpc::RpcError;

    rpc::api_group!(pub struct Tasks => "tasks", mcp = true);

    /// Task fixtures.
    pub struct Jobs;

    #[rpc::service(alias = "tasks", groups(Tasks))]
    impl Jobs {
        /// Waits `ms` milliseconds, then echoes `label`.
        #[mcp_tool(task = optional)]
        pub async fn slow(&self, ms: u64, #[rpc(default = "")] label: String) -> String {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            super::FINISHED.lock().unwrap().push(label.clone());
            format!("done {label}")
        }

        /// Only as a task.
        #[mcp_tool(task = required)]
        pub async fn only_task(&self) -> String {
            "ran".into()
        }

        /// Asks two questions at once.
        #[mcp_tool(task = optional)]
        pub async fn two_questions(&self, ctx: mcp::Context) -> Result<String, RpcError> {
            let form = serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let (a, b) =
                futures_util::future::join(ctx.elicit("a", "First?", form.clone()), ctx.elicit("b", "Second?", form))
                    .await;
            let name = |r: Result<mcp::Elicitation, RpcError>| -> Result<String, RpcError> {
                Ok(r?.accepted_str("name").unwrap_or("-").to_owned())
            };
            Ok(format!("{} and {}", name(a)?, name(b)?))
        }

        /// Fails inside: the task fails.
        #[mcp_tool(task = optional)]
        pub async fn broken(&self) -> Result<String, RpcError> {
            Err(RpcError::new(rpc::error::code::INTERNAL_ERROR, "broke"))
        }

        /// Asks a name in the request's rounds, then becomes a task.
        #[mcp_tool(task = required, starts_task)]
        pub async fn greet_later(&self, ctx: mcp::Context) -> Result<String, RpcError> {
            let form = serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let name = ctx.elicit("name", "Name?", form).await?.accepted_str("name").unwrap_or("-").to_owned();
            let started = ctx.start_task().await?;
            Ok(format!("hello {name} (task: {started})"))
        }
    }
}

fn endpoint(store: Option<Arc<dyn TaskStore>>, security: Security) -> rpc::server::Router {
    let registry = rpc::Registry::builder().service(fixtures::Jobs).build().expect("registry");
    let executor = rpc::Executor::new(registry, Environment::Dev);
    let mut builder = mcp::McpEndpoint::builder::<fixtures::Tasks>(executor).security(security);
    if let Some(store) = store {
        builder = builder.task_store(store);
    }
    rpc::server::Router::new().nest("/mcp", builder.build())
}

async fn server() -> TestServer {
    TestServer::start(endpoint(None, Security::default())).await
}

/// A client that declares the extension.
fn tasks_client(server: &TestServer) -> Modern {
    let mut client = Modern::new(server.url("/mcp"));
    client.capabilities = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    client
}

async fn get(client: &Modern, id: &str) -> Reply {
    client.call("tasks/get", json!({"taskId": id})).await
}

/// Polls until the task leaves `working`/`input_required` or `wanted` is reached.
async fn wait_for(client: &Modern, id: &str, wanted: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let reply = get(client, id).await;
        let status = reply.json["result"]["status"].as_str().unwrap_or_default().to_owned();
        if status == wanted || ["completed", "failed", "cancelled"].contains(&status.as_str()) {
            return reply.json["result"].clone();
        }
        assert!(Instant::now() < deadline, "task {id} stayed {status}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn is_iso8601(value: &Value) -> bool {
    let text = value.as_str().unwrap_or_default();
    text.len() >= 20 && text.as_bytes()[4] == b'-' && text.as_bytes()[10] == b'T' && text.ends_with('Z')
}

#[tokio::test]
async fn a_task_runs_in_the_background_and_is_polled_to_its_result() {
    let server = server().await;
    let client = tasks_client(&server);
    let discover = client.call("server/discover", json!({})).await;
    assert_eq!(discover.json["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"], json!({}));

    let created = client.tool("tasks.slow", json!({"ms": 300, "label": "x"})).await;
    assert_eq!(created.status, 200);
    let task = &created.json["result"];
    assert_eq!(task["resultType"], "task", "{task}");
    assert_eq!(task["status"], "working");
    assert!(is_iso8601(&task["createdAt"]) && is_iso8601(&task["lastUpdatedAt"]), "{task}");
    assert_eq!(task["ttlMs"], 3_600_000);
    assert!(task["pollIntervalMs"].as_u64().is_some_and(|ms| ms > 0));
    for absent in ["result", "error", "inputRequests", "requestState", "task", "content"] {
        assert!(task.get(absent).is_none(), "{absent} in {task}");
    }
    let id = task["taskId"].as_str().expect("a task id").to_owned();
    assert!(id.len() >= 20, "ids are not guessable: {id}");

    // Readable at once, working, without a result.
    let now = get(&client, &id).await;
    assert_eq!(now.json["result"]["resultType"], "complete");
    assert_eq!(now.json["result"]["status"], "working", "{}", now.json);
    assert!(now.json["result"].get("result").is_none());

    let done = wait_for(&client, &id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"]["result"], "done x", "{done}");
    assert_eq!(done["result"]["isError"], false);

    // Cancelling an ended task is an empty ack and changes nothing.
    let ack = client.call("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack.json["result"]["resultType"], "complete", "{}", ack.json);
    assert!(ack.json["result"].get("status").is_none() && ack.json["result"].get("taskId").is_none());
    assert_eq!(get(&client, &id).await.json["result"]["status"], "completed");

    // Unknown tasks, removed methods.
    let unknown = get(&client, "no-such-task").await;
    assert_eq!((unknown.status, unknown.json["error"]["code"].clone()), (400, json!(-32602)), "{}", unknown.json);
    for removed in ["tasks/result", "tasks/list"] {
        let reply = client.call(removed, json!({"taskId": id})).await;
        assert_eq!(reply.json["error"]["code"], -32601, "{removed}: {}", reply.json);
    }
}

#[tokio::test]
async fn a_protocol_error_fails_the_task_a_tool_error_completes_it() {
    let server = server().await;
    let client = tasks_client(&server);
    let created = client.tool("tasks.broken", json!({})).await;
    let id = created.json["result"]["taskId"].as_str().expect("a task").to_owned();
    let ended = wait_for(&client, &id, "failed").await;
    assert_eq!(ended["status"], "failed", "{ended}");
    assert_eq!(ended["error"]["code"], -32603, "{ended}");
    assert!(ended.get("result").is_none());
    // Invalid arguments: the task fails with -32602 (the method never ran).
    let created = client.tool("tasks.slow", json!({"ms": "soon"})).await;
    let id = created.json["result"]["taskId"].as_str().expect("a task").to_owned();
    let ended = wait_for(&client, &id, "failed").await;
    assert_eq!(ended["error"]["code"], -32602, "{ended}");
}

#[tokio::test]
async fn clients_without_the_extension_get_plain_calls_or_32021() {
    let server = server().await;
    let plain = Modern::new(server.url("/mcp"));
    let reply = plain.tool("tasks.slow", json!({"ms": 0, "label": "p"})).await;
    assert_eq!(reply.json["result"]["resultType"], "complete", "{}", reply.json);
    assert_eq!(reply.json["result"]["structuredContent"]["result"], "done p");

    let reply = plain.tool("tasks.only_task", json!({})).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json["error"]["code"], -32021, "{}", reply.json);
    assert_eq!(
        reply.json["error"]["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let reply = plain.call(method, json!({"taskId": "x", "inputResponses": {}})).await;
        assert_eq!(reply.json["error"]["code"], -32021, "{method}: {}", reply.json);
    }
    // The legacy `task` parameter promotes nothing.
    let reply =
        plain.call("tools/call", json!({"name": "tasks.slow", "arguments": {"ms": 0}, "task": {"ttl": 1000}})).await;
    assert_eq!(reply.json["result"]["resultType"], "complete", "{}", reply.json);
    // The routing header must name the task.
    let client = tasks_client(&server);
    let body = client.request("tasks/get", json!({"taskId": "abc"}), json!(3));
    let reply = client.exchange(&body, &[("mcp-name", "other")]).await;
    assert_eq!(reply.json["error"]["code"], -32020, "{}", reply.json);
}

#[tokio::test]
async fn questions_are_answered_with_tasks_update_one_at_a_time() {
    let server = server().await;
    let client = tasks_client(&server);
    let created = client.tool("tasks.two_questions", json!({})).await;
    let id = created.json["result"]["taskId"].as_str().expect("a task").to_owned();
    let deadline = Instant::now() + Duration::from_secs(10);
    let asking = loop {
        let task = get(&client, &id).await.json["result"].clone();
        if task["inputRequests"].as_object().is_some_and(|r| r.len() == 2) {
            break task;
        }
        assert!(Instant::now() < deadline, "{task}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(asking["status"], "input_required");
    assert_eq!(asking["inputRequests"]["a"]["method"], "elicitation/create", "{asking}");
    assert_eq!(asking["inputRequests"]["b"]["params"]["message"], "Second?");

    // One answer, plus one to a key never asked: ignored.
    let ack = client
        .call(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {
                "a": {"action": "accept", "content": {"name": "Ann"}},
                "zzz": {"action": "accept", "content": {}}}}),
        )
        .await;
    assert_eq!(ack.json["result"]["resultType"], "complete", "{}", ack.json);
    assert!(ack.json["result"].get("status").is_none());
    let after = get(&client, &id).await.json["result"].clone();
    assert_eq!(after["status"], "input_required");
    assert_eq!(
        after["inputRequests"].as_object().map(|r| r.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["b".into()])
    );

    client
        .call(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"b": {"action": "accept", "content": {"name": "Bob"}}}}),
        )
        .await;
    let done = wait_for(&client, &id, "completed").await;
    assert_eq!(done["result"]["structuredContent"]["result"], "Ann and Bob", "{done}");
    // Answering again after the end changes nothing.
    let late = client.call("tasks/update", json!({"taskId": id, "inputResponses": {"b": {"action": "decline"}}})).await;
    assert_eq!(late.json["result"]["resultType"], "complete");
    assert_eq!(get(&client, &id).await.json["result"]["result"]["structuredContent"]["result"], "Ann and Bob");
}

#[tokio::test]
async fn cancel_stops_the_method() {
    let server = server().await;
    let client = tasks_client(&server);
    let created = client.tool("tasks.slow", json!({"ms": 600, "label": "cancelled-here"})).await;
    let id = created.json["result"]["taskId"].as_str().expect("a task").to_owned();
    let ack = client.call("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack.json["result"]["resultType"], "complete", "{}", ack.json);
    let task = get(&client, &id).await.json["result"].clone();
    assert_eq!(task["status"], "cancelled", "{task}");
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(!finished("cancelled-here"), "the method was stopped");
    assert_eq!(get(&client, &id).await.json["result"]["status"], "cancelled");
    assert!(get(&client, &id).await.json["result"].get("result").is_none());
}

#[tokio::test]
async fn a_method_that_starts_its_task_after_a_round() {
    let server = server().await;
    let client = tasks_client(&server);
    let first = client.tool("tasks.greet_later", json!({})).await;
    let round = &first.json["result"];
    assert_eq!(round["resultType"], "input_required", "{round}");
    assert!(round.get("taskId").is_none());
    let state = round["requestState"].as_str().expect("a state").to_owned();
    let second = client
        .call(
            "tools/call",
            json!({"name": "tasks.greet_later", "arguments": {}, "requestState": state,
                   "inputResponses": {"name": {"action": "accept", "content": {"name": "Alice"}}}}),
        )
        .await;
    let task = &second.json["result"];
    assert_eq!(task["resultType"], "task", "{task}");
    assert!(task.get("requestState").is_none() && task.get("inputRequests").is_none());
    let id = task["taskId"].as_str().expect("a task").to_owned();
    let done = wait_for(&client, &id, "completed").await;
    assert_eq!(done["result"]["structuredContent"]["result"], "hello Alice (task: true)", "{done}");
}

#[tokio::test]
async fn tasks_are_seen_by_their_caller_only() {
    let tokens =
        TokenPolicy::new().named_token("alice", "alice-secret").unwrap().named_token("bob", "bob-secret").unwrap();
    let server = TestServer::start(endpoint(None, Security::new().tokens(tokens))).await;
    let client = tasks_client(&server);
    let alice = [("authorization", "Bearer alice-secret")];
    let bob = [("authorization", "Bearer bob-secret")];
    let body = client.request("tools/call", json!({"name": "tasks.two_questions", "arguments": {}}), json!(1));
    let created = client.exchange(&body, &alice).await;
    let id = created.json["result"]["taskId"].as_str().expect("a task").to_owned();
    for (method, params) in [
        ("tasks/get", json!({"taskId": id})),
        (
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"a": {"action": "accept", "content": {"name": "x"}}}}),
        ),
        ("tasks/cancel", json!({"taskId": id})),
    ] {
        let reply = client.exchange(&client.request(method, params, json!(2)), &bob).await;
        assert_eq!(reply.json["error"]["code"], -32602, "{method} by another caller: {}", reply.json);
    }
    let mine = client.exchange(&client.request("tasks/get", json!({"taskId": id}), json!(3)), &alice).await;
    assert_ne!(mine.json["result"]["status"], "cancelled", "{}", mine.json);
    assert!(mine.json["result"]["status"].is_string(), "{}", mine.json);
}

#[tokio::test]
async fn hostile_updates_are_refused_and_the_store_is_bounded() {
    let store = Arc::new(MemoryTaskStore::new(4, 1 << 20));
    let server = TestServer::start(endpoint(Some(store.clone()), Security::default())).await;
    let client = tasks_client(&server);
    let created = client.tool("tasks.two_questions", json!({})).await;
    let id = created.json["result"]["taskId"].as_str().expect("a task").to_owned();
    let many: serde_json::Map<String, Value> =
        (0..1000).map(|i| (format!("k{i}"), json!({"action": "decline"}))).collect();
    for (params, why) in [
        (json!({"taskId": id, "inputResponses": [1]}), "inputResponses not an object"),
        (json!({"taskId": id, "inputResponses": {"a": 5}}), "a response that is not an object"),
        (json!({"taskId": id, "inputResponses": many}), "too many responses"),
        (json!({"taskId": 7, "inputResponses": {}}), "a task id that is not a string"),
    ] {
        let body = client.request("tasks/update", params, json!(1));
        let reply = client.exchange(&body, &[("mcp-name", "")]).await;
        let code = reply.json["error"]["code"].as_i64();
        assert!(matches!(code, Some(-32602 | -32020)), "{why}: {}", reply.json);
    }
    let long = "x".repeat(8 * 1024);
    let reply = get(&client, &long).await;
    assert_eq!(reply.json["error"]["code"], -32602, "{}", reply.json);
    assert!(reply.text.len() < 2048, "the id is not echoed whole");

    // The store holds 4 tasks: the fifth is refused with a reason, at once.
    for _ in 0..3 {
        let reply = client.tool("tasks.slow", json!({"ms": 2000})).await;
        assert_eq!(reply.json["result"]["resultType"], "task", "{}", reply.json);
    }
    let started = Instant::now();
    let full = client.tool("tasks.slow", json!({"ms": 2000})).await;
    assert_eq!(full.json["error"]["code"], -32603, "{}", full.json);
    assert!(full.json["error"]["message"].as_str().is_some_and(|m| m.contains("full")), "{}", full.json);
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(store.len(), 4);
}

#[tokio::test]
async fn the_handshake_era_runs_task_tools_as_calls() {
    let server = server().await;
    let mut client = e2e_tests::raw_mcp::RawMcp::new(server.url("/mcp"));
    client.initialize("2025-11-25").await;
    for (tool, arguments) in [("tasks.slow", json!({"ms": 0})), ("tasks.only_task", json!({}))] {
        let result = client.call(tool, arguments).await;
        assert_eq!(result["result"]["isError"], false, "{tool}: {result}");
        assert!(result["result"].get("taskId").is_none());
    }
}

#[tokio::test]
async fn one_instance_runs_the_task_another_answers_for_it() {
    let Some(redis) = Redis::start() else { return };
    let store = |redis: &Redis| {
        let url = redis.url.clone();
        let prefix = redis.prefix.clone();
        async move {
            let connection = rpc::store::redis::RedisStore::connect(&url).await.expect("redis").with_prefix(prefix);
            Arc::new(mcp::tasks::RedisTaskStore::new(connection)) as Arc<dyn TaskStore>
        }
    };
    let one = TestServer::start(endpoint(Some(store(&redis).await), Security::default())).await;
    let two = TestServer::start(endpoint(Some(store(&redis).await), Security::default())).await;
    let (on_one, on_two) = (tasks_client(&one), tasks_client(&two));

    // Started on one; asked, answered and finished as seen from two.
    let created = on_one.tool("tasks.two_questions", json!({})).await;
    let id = created.json["result"]["taskId"].as_str().expect("a task").to_owned();
    assert_eq!(get(&on_two, &id).await.json["result"]["taskId"], id.as_str(), "readable at once elsewhere");
    let deadline = Instant::now() + Duration::from_secs(10);
    while get(&on_two, &id).await.json["result"]["inputRequests"].as_object().is_none_or(|r| r.len() < 2) {
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let answers = json!({"a": {"action": "accept", "content": {"name": "Ann"}}, "b": {"action": "accept", "content": {"name": "Bo"}}});
    on_two.call("tasks/update", json!({"taskId": id, "inputResponses": answers})).await;
    let done = wait_for(&on_two, &id, "completed").await;
    assert_eq!(done["result"]["structuredContent"]["result"], "Ann and Bo", "{done}");

    // Cancelled from two while one runs it: one stops it.
    let created = on_one.tool("tasks.slow", json!({"ms": 1500, "label": "cross"})).await;
    let id = created.json["result"]["taskId"].as_str().expect("a task").to_owned();
    on_two.call("tasks/cancel", json!({"taskId": id})).await;
    tokio::time::sleep(Duration::from_millis(1800)).await;
    let task = get(&on_one, &id).await.json["result"].clone();
    assert_eq!(task["status"], "cancelled", "{task}");
    assert!(task.get("result").is_none(), "{task}");
    assert!(!finished("cross"), "the instance that ran it stopped the method");

    // A task outlives an instance that did not run it.
    let created = on_one.tool("tasks.slow", json!({"ms": 0, "label": "kept"})).await;
    let id = created.json["result"]["taskId"].as_str().expect("a task").to_owned();
    drop(two);
    let three = TestServer::start(endpoint(Some(store(&redis).await), Security::default())).await;
    let done = wait_for(&tasks_client(&three), &id, "completed").await;
    assert_eq!(done["result"]["structuredContent"]["result"], "done kept", "{done}");
}

#[tokio::test]
async fn a_task_that_ends_while_redis_stalls_records_its_end_when_redis_is_back() {
    let Some(redis) = Redis::start_private() else { return };
    let timeout = Duration::from_millis(300);
    let connection = rpc::store::redis::RedisStore::connect_with(&redis.url, timeout, timeout)
        .await
        .expect("redis")
        .with_prefix("stall:");
    let store = Arc::new(mcp::tasks::RedisTaskStore::new(connection)) as Arc<dyn TaskStore>;
    let server = TestServer::start(endpoint(Some(store), Security::default())).await;
    let client = tasks_client(&server);
    let created = client.tool("tasks.slow", json!({"ms": 200, "label": "through-a-stall"})).await;
    let id = created.json["result"]["taskId"].as_str().expect("a task").to_owned();

    redis.pause();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert!(finished("through-a-stall"), "the method ended while Redis stalled");
    let refused = get(&client, &id).await;
    assert_eq!(refused.json["error"]["code"], -32603, "fails closed, at once: {}", refused.json);
    assert!(refused.json["error"]["message"].as_str().is_some_and(|m| m.contains("task store")));

    redis.resume();
    let done = wait_for(&client, &id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"]["result"], "done through-a-stall");
}
