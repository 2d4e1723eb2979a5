//! The request context of tool methods, in both eras: progress and log
//! messages over SSE (only what the request asked for), the switch to SSE
//! only when the method reports something, cancellation by closing the
//! stream (2026-07-28) and by `notifications/cancelled` (handshake era), and
//! what the context tells about the client — also over `/rpc`, where the
//! context is no parameter.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use e2e_tests::modern_mcp::{Modern, SseReader, sse_messages};
use e2e_tests::raw_mcp::RawMcp;
use e2e_tests::{TestServer, post_json};
use mcp::McpEndpoint;
use rpc::server::Router;
use rpc::{Environment, Executor, JsonRpcService, Registry};
use serde_json::{Value, json};

mod fixtures {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use mcp::{Context, LogLevel};
    use serde_json::{Value, json};

    rpc::api_group! {
        /// The test tools.
        pub struct Work => "work", mcp = true;
    }

    /// Counts its drops: a cancelled call drops its future, and this with it.
    pub struct OnDrop(pub Arc<AtomicUsize>);

    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Tools that use their context.
    pub struct Tools {
        pub dropped: Arc<AtomicUsize>,
    }

    #[rpc::service(alias = "work", groups(Work))]
    impl Tools {
        /// Counts to `steps`, reporting progress and logging each step.
        ///
        /// # Arguments
        /// * `steps` - How far to count
        pub async fn count(&self, ctx: Context, #[rpc(default = 3)] steps: u32) -> u32 {
            for i in 1..=steps {
                ctx.progress(f64::from(i), Some(f64::from(steps)), Some(&format!("step {i}")));
                ctx.log(LogLevel::Info, format!("step {i}"));
                ctx.debug(json!({"detail": i}));
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            steps
        }

        /// Reports once, then runs until cancelled.
        pub async fn forever(&self, ctx: Context) -> u32 {
            let _flag = OnDrop(self.dropped.clone());
            ctx.progress(1.0, None, Some("started"));
            ctx.warning("started");
            std::future::pending::<()>().await;
            0
        }

        /// Reports nothing.
        pub async fn quiet(&self, ctx: Context) -> u32 {
            tokio::time::sleep(Duration::from_millis(5)).await;
            u32::from(ctx.reports_progress())
        }

        /// What the context knows about the caller.
        pub fn whoami(&self, ctx: Context) -> Value {
            json!({
                "transport": format!("{:?}", ctx.transport()),
                "method": ctx.method(),
                "protocol": ctx.protocol_version(),
                "client": ctx.client_info(),
                "sampling": ctx.client_has("sampling"),
            })
        }
    }
}

struct Setup {
    server: TestServer,
    dropped: Arc<AtomicUsize>,
}

async fn setup() -> Setup {
    let dropped = Arc::new(AtomicUsize::new(0));
    let registry = Registry::builder().service(fixtures::Tools { dropped: dropped.clone() }).build().expect("registry");
    let executor = Executor::new(registry, Environment::Dev);
    let endpoint =
        McpEndpoint::builder::<fixtures::Work>(executor.clone()).keep_alive(Duration::from_millis(200)).build();
    let router = Router::new().nest("/mcp", endpoint).nest("/rpc", JsonRpcService::new(executor));
    Setup { server: TestServer::start(router).await, dropped }
}

async fn wait_until(what: &str, check: impl Fn() -> bool) {
    for _ in 0..500 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting until {what}");
}

fn with_meta(client: &Modern, name: &str, arguments: Value, extra_meta: Value) -> Value {
    let mut body = client.request("tools/call", json!({"name": name, "arguments": arguments}), json!(1));
    if let (Some(meta), Some(extra)) = (body["params"]["_meta"].as_object_mut(), extra_meta.as_object()) {
        meta.extend(extra.clone());
    }
    body
}

#[tokio::test]
async fn stateless_progress_and_logs_stream_before_the_result() {
    let s = setup().await;
    let client = Modern::new(s.server.url("/mcp/v1"));
    let body = with_meta(
        &client,
        "work.count",
        json!({"steps": 3}),
        json!({"progressToken": "tok-1", "io.modelcontextprotocol/logLevel": "info"}),
    );
    let reply = client.exchange(&body, &[]).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.headers["content-type"], "text/event-stream", "{}", reply.text);
    let messages = sse_messages(&reply.text);
    let progress: Vec<&Value> = messages.iter().filter(|m| m["method"] == "notifications/progress").collect();
    assert_eq!(progress.len(), 3, "{messages:#?}");
    for (i, p) in progress.iter().enumerate() {
        assert_eq!(p["params"]["progressToken"], "tok-1");
        assert_eq!(p["params"]["progress"], json!((i + 1) as f64));
        assert_eq!(p["params"]["total"], json!(3.0));
    }
    let logs: Vec<&Value> = messages.iter().filter(|m| m["method"] == "notifications/message").collect();
    assert_eq!(logs.len(), 3, "info messages, no debug ones: {logs:#?}");
    assert_eq!(logs[0]["params"], json!({"level": "info", "logger": "work.count", "data": "step 1"}));
    let last = messages.last().expect("a final message");
    assert_eq!(last["id"], 1);
    assert_eq!(last["result"]["structuredContent"]["result"], 3);
    assert_eq!(last["result"]["resultType"], "complete");
}

#[tokio::test]
async fn stateless_requests_get_only_what_they_asked_for() {
    let s = setup().await;
    let client = Modern::new(s.server.url("/mcp/v1"));
    let plain = client.tool("work.count", json!({"steps": 2})).await;
    assert_eq!(plain.headers["content-type"], "application/json", "nothing asked, nothing streamed: {}", plain.text);
    assert_eq!(plain.json["result"]["structuredContent"]["result"], 2);

    let progress_only =
        client.exchange(&with_meta(&client, "work.count", json!({"steps": 2}), json!({"progressToken": 9})), &[]).await;
    let messages = sse_messages(&progress_only.text);
    assert!(messages.iter().all(|m| m["method"] != "notifications/message"), "no log level, no logs: {messages:#?}");
    assert_eq!(messages[0]["params"]["progressToken"], 9, "a numeric token stays a number");

    let warnings = json!({"io.modelcontextprotocol/logLevel": "warning"});
    let quiet_logs = client.exchange(&with_meta(&client, "work.count", json!({"steps": 2}), warnings), &[]).await;
    assert_eq!(
        quiet_logs.headers["content-type"], "application/json",
        "info logs are below warning: {}",
        quiet_logs.text
    );

    let bad_level = client
        .exchange(
            &with_meta(&client, "work.count", json!({}), json!({"io.modelcontextprotocol/logLevel": "loud"})),
            &[],
        )
        .await;
    assert_eq!((bad_level.status, bad_level.json["error"]["code"].clone()), (400, json!(-32602)), "{}", bad_level.text);

    let json_only = client
        .exchange(
            &with_meta(&client, "work.count", json!({"steps": 2}), json!({"progressToken": "t"})),
            &[("accept", "application/json")],
        )
        .await;
    assert_eq!(json_only.headers["content-type"], "application/json", "a client that takes no SSE gets JSON");
    assert_eq!(json_only.json["result"]["structuredContent"]["result"], 2);
}

#[tokio::test]
async fn a_method_that_reports_nothing_gets_a_json_response() {
    let s = setup().await;
    let client = Modern::new(s.server.url("/mcp/v1"));
    let reply = client.exchange(&with_meta(&client, "work.quiet", json!({}), json!({"progressToken": "t"})), &[]).await;
    assert_eq!(reply.headers["content-type"], "application/json", "{}", reply.text);
    assert_eq!(reply.json["result"]["structuredContent"]["result"], 1, "the context knew a token was there");
}

#[tokio::test]
async fn closing_the_stream_cancels_the_call() {
    let s = setup().await;
    let client = Modern::new(s.server.url("/mcp/v1"));
    let body = with_meta(&client, "work.forever", json!({}), json!({"progressToken": "t"}));
    let mut stream = SseReader::new(client.send(&body, &[]).await);
    let first = stream.next(Duration::from_secs(5)).await.expect("the first progress report");
    assert_eq!(first["params"]["message"], "started");
    assert_eq!(s.dropped.load(Ordering::SeqCst), 0, "still running");
    // Keep-alive comments hold the quiet stream open.
    assert_eq!(stream.next_within(Duration::from_millis(500)).await, None);
    assert!(stream.comments > 0, "keep-alives on a quiet stream");
    drop(stream);
    wait_until("the method's future is dropped", || s.dropped.load(Ordering::SeqCst) == 1).await;
}

#[tokio::test]
async fn handshake_progress_and_logs_follow_set_level() {
    let s = setup().await;
    let mut client = RawMcp::new(s.server.url("/mcp/v1"));
    let init = client.initialize("2025-11-25").await;
    assert_eq!(init.json["result"]["capabilities"]["logging"], json!({}), "{}", init.text);
    let call = |id: u32, meta: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "work.count", "arguments": {"steps": 2}, "_meta": meta}});
    let before = client.post(&call(1, json!({"progressToken": "p1"}))).await;
    let messages = sse_messages(&before.text);
    assert_eq!(messages.iter().filter(|m| m["method"] == "notifications/progress").count(), 2, "{}", before.text);
    assert!(messages.iter().all(|m| m["method"] != "notifications/message"), "no logs before logging/setLevel");

    let bad = client
        .post(&json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "chatty"}}))
        .await;
    assert_eq!(bad.json["error"]["code"], -32602, "{}", bad.text);
    let set = client
        .post(&json!({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "debug"}}))
        .await;
    assert_eq!(set.json, json!({"jsonrpc": "2.0", "id": 3, "result": {}}));

    let after = client.post(&call(4, json!({}))).await;
    assert_eq!(after.headers["content-type"], "text/event-stream");
    let messages = sse_messages(&after.text);
    let levels: Vec<&str> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .filter_map(|m| m["params"]["level"].as_str())
        .collect();
    assert_eq!(levels, ["info", "debug", "info", "debug"], "debug and up, with setLevel alone: {}", after.text);
    assert!(messages.iter().all(|m| m["method"] != "notifications/progress"), "no token, no progress");
    assert_eq!(messages.last().expect("result")["result"]["structuredContent"]["result"], 2);
    assert!(messages.last().expect("result")["result"].get("resultType").is_none(), "a 2025-11-25 result");
}

#[tokio::test]
async fn handshake_notifications_cancelled_stops_the_call() {
    let s = setup().await;
    let mut client = RawMcp::new(s.server.url("/mcp/v1"));
    client.initialize("2025-11-25").await;
    let mut stranger = RawMcp::new(s.server.url("/mcp/v1"));
    stranger.initialize("2025-11-25").await;
    let running = {
        let client = client.clone();
        tokio::spawn(async move {
            let body =
                json!({"jsonrpc": "2.0", "id": "long-1", "method": "tools/call", "params": {"name": "work.forever"}});
            client.send(reqwest::Method::POST, Some(body.to_string()), &[("accept", "application/json")]).await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "long-1", "reason": "test"}});
    assert_eq!(stranger.post(&cancel).await.status, 202);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(s.dropped.load(Ordering::SeqCst), 0, "another session cannot cancel it");
    assert_eq!(client.post(&cancel).await.status, 202);
    let reply = tokio::time::timeout(Duration::from_secs(5), running).await.expect("answered").expect("task");
    assert_eq!(reply.json["id"], "long-1", "{}", reply.text);
    assert_eq!(reply.json["error"]["code"], -32800, "{}", reply.text);
    wait_until("the future is dropped", || s.dropped.load(Ordering::SeqCst) == 1).await;
}

#[tokio::test]
async fn the_context_tells_who_is_calling() {
    let s = setup().await;
    let mut modern = Modern::new(s.server.url("/mcp/v1"));
    modern.capabilities = json!({"sampling": {}});
    let text = |result: &Value| -> Value {
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("a text block: {result}")))
            .expect("JSON text")
    };
    let reply = modern.tool("work.whoami", json!({})).await;
    assert_eq!(
        text(&reply.json["result"]),
        json!({
            "transport": "Mcp",
            "method": "work.whoami",
            "protocol": "2026-07-28",
            "client": {"name": "e2e-modern", "version": "1.0.0"},
            "sampling": true
        })
    );

    let mut legacy = RawMcp::new(s.server.url("/mcp/v1"));
    legacy.initialize("2025-06-18").await;
    let reply = legacy.call("work.whoami", json!({})).await;
    let who = &text(&reply["result"]);
    assert_eq!(
        (who["protocol"].clone(), who["client"]["name"].clone(), who["sampling"].clone()),
        (json!("2025-06-18"), json!("e2e-tests"), json!(false))
    );

    // Over /rpc the context is no parameter: named and positional calls skip it.
    let (_, reply) = post_json(&s.server.url("/rpc"), r#"{"jsonrpc":"2.0","id":1,"method":"work.whoami"}"#).await;
    assert_eq!(reply["result"]["transport"], "JsonRpc", "{reply}");
    assert_eq!(reply["result"]["protocol"], Value::Null);
    let (_, reply) =
        post_json(&s.server.url("/rpc"), r#"{"jsonrpc":"2.0","id":2,"method":"work.count","params":[2]}"#).await;
    assert_eq!(reply["result"], 2, "the one positional parameter is `steps`: {reply}");
    let (_, reply) =
        post_json(&s.server.url("/rpc"), r#"{"jsonrpc":"2.0","id":3,"method":"work.count","params":{"ctx":1}}"#).await;
    assert_eq!(reply["error"]["data"]["extra"]["ctx"], json!(["unknown parameter"]), "{reply}");

    let list = modern.call("tools/list", json!({})).await;
    let count =
        list.json["result"]["tools"].as_array().and_then(|t| t.iter().find(|t| t["name"] == "work.count")).cloned();
    let schema = &count.expect("listed")["inputSchema"];
    assert_eq!(
        schema["properties"].as_object().map(|p| p.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["steps".to_owned()])
    );
    let (_, doc) = e2e_tests::get_json(&s.server.url("/rpc")).await;
    let method = doc["methods"].as_array().and_then(|m| m.iter().find(|m| m["name"] == "work.count")).cloned();
    assert_eq!(method.expect("in OpenRPC")["params"].as_array().map(Vec::len), Some(1), "OpenRPC lists `steps` only");
}

/// `_meta.progressToken` is repeated in every progress notification: its
/// size is bounded, in both eras, with an error that names the limit (a
/// 3 MB token gave a 12 MB response before).
#[tokio::test]
async fn progress_tokens_are_bounded_in_both_eras() {
    let s = setup().await;
    let huge = "x".repeat(3 * 1024 * 1024);
    let client = Modern::new(s.server.url("/mcp/v1"));
    let body = with_meta(&client, "work.count", json!({"steps": 3}), json!({"progressToken": huge}));
    let reply = client.exchange(&body, &[]).await;
    assert_eq!(reply.json["error"]["code"], -32602, "{}", &reply.text[..reply.text.len().min(300)]);
    assert!(reply.json["error"]["message"].as_str().unwrap().contains("at most 256"), "{}", reply.json);
    assert!(reply.text.len() < 1024, "the refusal does not echo the token: {} bytes", reply.text.len());
    // A token at the limit is served, and repeated as it was sent.
    let longest = "y".repeat(254);
    let body = with_meta(&client, "work.count", json!({"steps": 2}), json!({"progressToken": longest}));
    let messages = sse_messages(&client.exchange(&body, &[]).await.text);
    assert_eq!(messages[0]["params"]["progressToken"], json!(longest), "{messages:#?}");

    let mut raw = RawMcp::new(s.server.url("/mcp/v1"));
    raw.initialize("2025-11-25").await;
    for (token, why) in [(json!(huge), "at most 256"), (json!({"an": "object"}), "a string or a number")] {
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "work.count", "arguments": {"steps": 2}, "_meta": {"progressToken": token}}});
        let reply = raw.post(&call).await;
        assert_eq!(reply.json["error"]["code"], -32602, "{}", &reply.text[..reply.text.len().min(300)]);
        assert!(reply.json["error"]["message"].as_str().unwrap().contains(why), "{}", reply.json);
        assert!(reply.text.len() < 1024, "{} bytes", reply.text.len());
    }
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "work.count", "arguments": {"steps": 2}, "_meta": {"progressToken": 7}}});
    let messages = sse_messages(&raw.post(&call).await.text);
    assert_eq!(messages[0]["params"]["progressToken"], 7, "{messages:#?}");
}

/// A handshake-era `tools/call` reads `name`, `arguments` and `_meta` alike
/// whether the envelope's pass read its params (`method` first, as clients
/// write it) or they are read afterwards (`params` first).
#[tokio::test]
async fn handshake_call_params_read_alike_in_either_member_order() {
    let s = setup().await;
    let mut raw = RawMcp::new(s.server.url("/mcp/v1"));
    raw.initialize("2025-11-25").await;
    let post = |body: String| raw.send(reqwest::Method::POST, Some(body), &[]);
    for (params, code, said) in [
        (r#"{"name":"work.count","arguments":{"steps":2},"_meta":5}"#, Some(-32602), "`_meta` must be an object"),
        (r#"{"name":"work.count","arguments":[1],"_meta":{}}"#, Some(-32602), "`arguments` must be an object"),
        (r#"{"name":7,"arguments":{"steps":2}}"#, Some(-32602), "requires params with a `name`"),
        (r#"{"name":"work.count","arguments":{"steps":2},"_meta":{"progressToken":"t"}}"#, None, "t"),
    ] {
        let method_first = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#);
        let params_first = format!(r#"{{"jsonrpc":"2.0","id":1,"params":{params},"method":"tools/call"}}"#);
        let (a, b) = (post(method_first).await, post(params_first).await);
        for reply in [&a, &b] {
            match code {
                Some(code) => {
                    assert_eq!(reply.json["error"]["code"], code, "{params}: {}", reply.text);
                    let message = reply.json["error"]["message"].as_str().unwrap_or_default();
                    assert!(message.contains(said), "{params}: {}", reply.text);
                }
                None => {
                    let messages = sse_messages(&reply.text);
                    assert_eq!(messages[0]["params"]["progressToken"], said, "{params}: {}", reply.text);
                    assert_eq!(messages.last().expect("result")["result"]["structuredContent"]["result"], 2);
                }
            }
        }
        assert_eq!(a.json, b.json, "{params}: the same answer in either order");
    }
}

/// The same for a 2026-07-28 `tools/call`: its checks read the params the
/// envelope's pass read (`method` first) as they read those read afterwards.
#[tokio::test]
async fn stateless_call_params_read_alike_in_either_member_order() {
    let s = setup().await;
    let client = Modern::new(s.server.url("/mcp/v1"));
    let good = with_meta(&client, "work.count", json!({"steps": 2}), json!({"progressToken": "t"}));
    let mut no_capabilities = good.clone();
    no_capabilities["params"]["_meta"]
        .as_object_mut()
        .expect("meta")
        .remove("io.modelcontextprotocol/clientCapabilities");
    let mut meta_not_an_object = good.clone();
    meta_not_an_object["params"]["_meta"] = json!([1]);
    let mut name_not_a_string = good.clone();
    name_not_a_string["params"]["name"] = json!(7);
    for (body, said) in [
        (good, None),
        (no_capabilities, Some("lacks the required")),
        (meta_not_an_object, Some("must be an object carrying")),
        (name_not_a_string, Some("`name` must be a string")),
    ] {
        let mut params_first = serde_json::Map::new();
        for member in ["jsonrpc", "id", "params", "method"] {
            params_first.insert(member.to_owned(), body[member].clone());
        }
        let params_first = Value::Object(params_first);
        assert!(params_first.to_string().find("\"params\"") < params_first.to_string().find("\"method\""));
        // The name header mirrors a string name only; the mismatch is not what is tested here.
        let headers: &[(&str, &str)] = if said == Some("`name` must be a string") { &[("mcp-name", "")] } else { &[] };
        let (a, b) = (client.exchange(&body, headers).await, client.exchange(&params_first, headers).await);
        for reply in [&a, &b] {
            match said {
                Some(said) => {
                    assert_eq!(reply.json["error"]["code"], -32602, "{body}: {}", reply.text);
                    let message = reply.json["error"]["message"].as_str().unwrap_or_default();
                    assert!(message.contains(said), "{body}: {}", reply.text);
                }
                None => {
                    let messages = sse_messages(&reply.text);
                    assert_eq!(messages[0]["params"]["progressToken"], "t", "{}", reply.text);
                    assert_eq!(messages.last().expect("result")["result"]["structuredContent"]["result"], 2);
                }
            }
        }
        assert_eq!(a.json, b.json, "{body}: the same answer in either order");
    }
}
