//! The special parameter `$rpc` on `/rpc`: `callback` (acknowledged at once,
//! run after the response, its response POSTed to an allowed URL with the
//! tracing headers), `timeout`, bad options; and over MCP, `$rpc` is an
//! unknown argument like any other.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router as Axum;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post as route_post;
use e2e_tests::TestServer;
use e2e_tests::raw_mcp::RawMcp;
use rpc::jsonrpc::Callbacks;
use rpc::server::Router;
use rpc::{Environment, Executor, JsonRpcService, Registry};
use serde_json::{Value, json};

mod fixtures {
    rpc::api_group!(pub struct Tools => "tools", mcp = true);

    /// Slow and failing methods.
    pub struct Work;

    #[rpc::service(groups(Tools))]
    impl Work {
        /// Sleeps `ms` milliseconds, then answers `done`.
        pub async fn slow(&self, ms: u64) -> String {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            "done".into()
        }

        /// Always fails.
        pub fn fail(&self) -> Result<u32, rpc::RpcError> {
            Err(rpc::RpcError::new(7, "it failed"))
        }
    }
}

/// What a callback endpoint received.
#[derive(Debug, Clone)]
struct Delivery {
    headers: HeaderMap,
    body: Value,
}

type Deliveries = Arc<Mutex<Vec<Delivery>>>;

/// A callback receiver: `/hooks/*` records and answers 200; `/broken` answers 500.
async fn receiver() -> (TestServer, Deliveries) {
    let seen = Deliveries::default();
    let record = seen.clone();
    let app = Axum::new()
        .route(
            "/hooks/{name}",
            route_post(move |headers: HeaderMap, body: String| {
                let record = record.clone();
                async move {
                    let body = serde_json::from_str(&body).unwrap_or(Value::Null);
                    record.lock().unwrap().push(Delivery { headers, body });
                    StatusCode::OK
                }
            }),
        )
        .route("/broken", route_post(|| async { StatusCode::INTERNAL_SERVER_ERROR }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = rx.await;
            })
            .await;
    });
    (TestServer::external(format!("http://{addr}"), addr, tx), seen)
}

async fn server(callbacks: Callbacks) -> TestServer {
    let registry = Registry::builder().service(fixtures::Work).service(catalog::Pinger).build().unwrap();
    let executor = Executor::new(registry, Environment::Dev);
    let rpc = JsonRpcService::builder(executor.clone()).callbacks(callbacks).build();
    let mcp = mcp::McpEndpoint::builder::<fixtures::Tools>(executor).build();
    TestServer::start(Router::new().nest("/rpc", rpc).nest("/mcp", mcp)).await
}

async fn post(url: &str, body: Value, headers: &[(&str, &str)]) -> Value {
    let mut request = reqwest::Client::new().post(url).json(&body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap().json().await.unwrap()
}

async fn wait_for(seen: &Deliveries, n: usize) -> Vec<Delivery> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let got = seen.lock().unwrap().clone();
        if got.len() >= n {
            return got;
        }
        assert!(Instant::now() < deadline, "waited for {n} deliveries, have {got:#?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn callbacks_are_off_by_default() {
    let server = server(Callbacks::default()).await;
    let (hooks, seen) = receiver().await;
    let url = format!("{}/hooks/a", hooks.base);
    let reply = post(
        &server.url("/rpc"),
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"$rpc": {"callback": url}}}),
        &[],
    )
    .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert!(reply["error"]["message"].as_str().unwrap().contains("not enabled"), "{reply}");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(seen.lock().unwrap().is_empty(), "nothing was posted");
}

#[tokio::test]
async fn a_callback_gets_the_response_after_the_acknowledgement() {
    let (hooks, seen) = receiver().await;
    let server = server(Callbacks::allow([format!("{}/hooks", hooks.base)]).unwrap()).await;
    let callback = format!("{}/hooks/one", hooks.base);
    let started = Instant::now();
    let ack = post(
        &server.url("/rpc"),
        json!({"jsonrpc": "2.0", "id": "req-1", "method": "Work.slow", "params": {"ms": 300, "$rpc": {"callback": callback}}}),
        &[
            ("x-request-id", "rid-42"),
            ("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
            ("tracestate", "vendor=1"),
            ("baggage", "user=alice"),
            ("authorization", "Bearer not-for-the-hook"),
            ("cookie", "session=secret"),
        ],
    )
    .await;
    assert!(started.elapsed() < Duration::from_millis(250), "acknowledged before the method finished");
    assert_eq!(ack, json!({"jsonrpc": "2.0", "id": "req-1", "result": {"async": true, "callback": callback}}));
    let delivered = wait_for(&seen, 1).await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    let delivery = &delivered[0];
    assert_eq!(delivery.body, json!({"jsonrpc": "2.0", "id": "req-1", "result": "done"}));
    for (name, value) in [
        ("x-request-id", "rid-42"),
        ("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        ("tracestate", "vendor=1"),
        ("baggage", "user=alice"),
        ("content-type", "application/json"),
    ] {
        assert_eq!(delivery.headers.get(name).and_then(|v| v.to_str().ok()), Some(value), "{name}");
    }
    assert!(delivery.headers.get("authorization").is_none(), "credentials are not forwarded");
    assert!(delivery.headers.get("cookie").is_none());
}

#[tokio::test]
async fn errors_and_batches_reach_their_callbacks() {
    let (hooks, seen) = receiver().await;
    let server = server(Callbacks::allow([format!("{}/hooks", hooks.base)]).unwrap()).await;
    let cb = |n: &str| format!("{}/hooks/{n}", hooks.base);
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "Work.fail", "params": {"$rpc": {"callback": cb("fail")}}},
        {"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"who": "b", "$rpc": {"callback": cb("ping")}}},
        {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"who": "sync"}},
    ]);
    let replies = post(&server.url("/rpc"), batch, &[]).await;
    let replies = replies.as_array().unwrap();
    assert_eq!(replies.len(), 3);
    assert_eq!(replies[2]["result"], "pong sync");
    assert_eq!(replies[0]["result"]["async"], true);
    let mut bodies: Vec<Value> = wait_for(&seen, 2).await.into_iter().map(|d| d.body).collect();
    bodies.sort_by_key(|b| b["id"].as_i64());
    assert_eq!(bodies[0]["error"]["code"], 7, "{:?}", bodies[0]);
    assert_eq!(bodies[1]["result"], "pong b");
}

#[tokio::test]
async fn only_allowed_callback_urls() {
    let (hooks, seen) = receiver().await;
    let server = server(Callbacks::allow([format!("{}/hooks", hooks.base)]).unwrap()).await;
    for bad in [
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        format!("{}/other", hooks.base),
        format!("{}/hooksx", hooks.base),
        format!("http://user:pw@{}/hooks/a", hooks.addr),
        "file:///etc/passwd".to_owned(),
        "gopher://127.0.0.1/".to_owned(),
    ] {
        let reply = post(
            &server.url("/rpc"),
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"$rpc": {"callback": bad}}}),
            &[],
        )
        .await;
        assert_eq!(reply["error"]["code"], -32602, "{bad}: {reply}");
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_failing_callback_endpoint_is_logged_and_the_server_goes_on() {
    let (hooks, _seen) = receiver().await;
    let server =
        server(Callbacks::allow([format!("{}/broken", hooks.base), "http://127.0.0.1:1/".into()]).unwrap()).await;
    for target in [format!("{}/broken", hooks.base), "http://127.0.0.1:1/refused".into()] {
        let reply = post(
            &server.url("/rpc"),
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"$rpc": {"callback": target}}}),
            &[],
        )
        .await;
        assert_eq!(reply["result"]["async"], true, "{reply}");
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let reply = post(&server.url("/rpc"), json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}), &[]).await;
    assert_eq!(reply["result"], "pong x");
}

#[tokio::test]
async fn pending_asynchronous_calls_are_bounded() {
    let (hooks, seen) = receiver().await;
    let server = server(Callbacks::allow([format!("{}/hooks", hooks.base)]).unwrap().max_pending(1)).await;
    let call = |ms: u64| {
        json!({"jsonrpc": "2.0", "id": ms, "method": "Work.slow",
               "params": {"ms": ms, "$rpc": {"callback": format!("{}/hooks/b", hooks.base)}}})
    };
    assert_eq!(post(&server.url("/rpc"), call(400), &[]).await["result"]["async"], true);
    let busy = post(&server.url("/rpc"), call(1), &[]).await;
    assert_eq!(busy["error"]["code"], -32000, "{busy}");
    wait_for(&seen, 1).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(post(&server.url("/rpc"), call(2), &[]).await["result"]["async"], true, "the slot is free again");
}

#[tokio::test]
async fn a_timeout_abandons_a_slow_call() {
    let server = server(Callbacks::default()).await;
    let started = Instant::now();
    let reply = post(
        &server.url("/rpc"),
        json!({"jsonrpc": "2.0", "id": 1, "method": "Work.slow", "params": {"ms": 5000, "$rpc": {"timeout": 0.2}}}),
        &[],
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert_eq!(reply["error"]["code"], -32000, "{reply}");
    assert!(reply["error"]["message"].as_str().unwrap().contains("within 0.2 s"), "{reply}");
    let fast = post(
        &server.url("/rpc"),
        json!({"jsonrpc": "2.0", "id": 2, "method": "Work.slow", "params": {"ms": 1, "$rpc": {"timeout": 5}}}),
        &[],
    )
    .await;
    assert_eq!(fast["result"], "done");
}

#[tokio::test]
async fn bad_options_are_invalid_params() {
    let server = server(Callbacks::default()).await;
    for (options, says) in [
        (json!("fast"), "object"),
        (json!({"timeout": 1000}), "at most 120"),
        (json!({"ignorecache": true}), "unknown field"),
        (json!({"ignoreCache": 1}), "invalid type"),
    ] {
        let reply = post(
            &server.url("/rpc"),
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"$rpc": options}}),
            &[],
        )
        .await;
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        assert!(reply["error"]["message"].as_str().unwrap().contains(says), "{says}: {reply}");
    }
}

#[tokio::test]
async fn over_mcp_rpc_options_are_unknown_arguments() {
    let (hooks, seen) = receiver().await;
    let server = server(Callbacks::allow([format!("{}/hooks", hooks.base)]).unwrap()).await;
    let mut client = RawMcp::new(server.url("/mcp/v1"));
    client.initialize("2025-11-25").await;
    let options = json!({"callback": format!("{}/hooks/mcp", hooks.base), "timeout": 1, "ignoreCache": true});
    let reply = client.call("Work.slow", json!({"ms": 1, "$rpc": options})).await;
    let refused =
        reply.get("error").map(|e| e["code"] == -32602).unwrap_or(false) || reply["result"]["isError"] == true;
    assert!(refused, "{reply}");
    assert!(reply.to_string().contains("$rpc"), "the refusal names the argument: {reply}");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(seen.lock().unwrap().is_empty(), "no webhook through MCP");
}
