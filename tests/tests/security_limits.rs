//! Bounded input on both endpoints: body size (413, also for chunked
//! bodies growing past the limit), JSON nesting depth, number of values,
//! batch length (checked before the batch is parsed), and error bodies
//! that leak no internals in production.

use std::time::{Duration, Instant};

use e2e_tests::TestServer;
use e2e_tests::raw_http::{exchange, read_response};
use mcp::McpEndpoint;
use rpc::jsonrpc::JsonLimits;
use rpc::server::Router;
use rpc::{Environment, Executor, JsonRpcService};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

const MIB: usize = 1024 * 1024;

fn head(server: &TestServer, path: &str, length: Option<usize>) -> String {
    let length = match length {
        Some(n) => format!("Content-Length: {n}\r\n"),
        None => "Transfer-Encoding: chunked\r\n".to_owned(),
    };
    format!(
        "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{length}",
        server.addr
    )
}

/// A JSON-RPC request whose params carry `filler` bytes of string data.
fn padded(method: &str, filler: usize) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"query":"{}"}}}}"#, "x".repeat(filler))
}

#[tokio::test]
async fn bodies_over_the_limit_get_413() {
    let server = TestServer::catalog(Environment::Prod).await;
    for path in ["/rpc", "/mcp/v1"] {
        // Announced: refused from the Content-Length, without reading the body.
        let body = padded("Catalog.search", 5 * MIB);
        let started = Instant::now();
        let reply = exchange(server.addr, &head(&server, path, Some(body.len())), body.as_bytes()).await;
        assert_eq!(reply.status, 413, "{path}: {}", reply.text());
        assert!(reply.text().contains("4194304"), "{path}: the limit is named: {}", reply.text());
        assert!(started.elapsed() < Duration::from_secs(5), "{path}: answered promptly");

        // Chunked: refused once the body grows past the limit, the rest never read.
        let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        let request = format!("{}Connection: close\r\n\r\n", head(&server, path, None));
        stream.write_all(request.as_bytes()).await.unwrap();
        let chunk = format!("{:x}\r\n{}\r\n", 64 * 1024, "7".repeat(64 * 1024));
        let mut sent = 0;
        while sent < 16 * MIB {
            if stream.write_all(chunk.as_bytes()).await.is_err() {
                break;
            }
            sent += 64 * 1024;
        }
        let reply = read_response(&mut stream).await;
        assert_eq!(reply.status, 413, "{path}: chunked body past the limit: {}", reply.text());
        assert!(sent < 16 * MIB, "{path}: the server stopped reading (sent {sent} bytes before it closed)");
    }
}

#[tokio::test]
async fn the_body_limit_is_configurable_per_endpoint() {
    let executor = Executor::new(catalog::registry().unwrap(), Environment::Prod);
    let rpc = JsonRpcService::builder(executor.clone()).max_body_bytes(1024).build();
    let mcp = McpEndpoint::builder::<catalog::Mcp>(executor).max_body_bytes(2048).build();
    let server = TestServer::start(Router::new().nest("/rpc", rpc).nest("/mcp", mcp)).await;
    let small = padded("Catalog.search", 1100);
    let reply = exchange(server.addr, &head(&server, "/rpc", Some(small.len())), small.as_bytes()).await;
    assert_eq!(reply.status, 413, "{}", reply.text());
    assert!(reply.text().contains("1024"), "{}", reply.text());
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x".repeat(1500), "version": "1"}}})
    .to_string();
    let reply = exchange(server.addr, &head(&server, "/mcp/v1", Some(init.len())), init.as_bytes()).await;
    assert_eq!(reply.status, 200, "1.5 KiB fits the MCP endpoint's 2 KiB: {}", reply.text());
}

async fn post(server: &TestServer, path: &str, body: &str) -> (u16, Value, Duration) {
    let started = Instant::now();
    let reply = exchange(server.addr, &head(server, path, Some(body.len())), body.as_bytes()).await;
    (reply.status, reply.json(), started.elapsed())
}

#[tokio::test]
async fn json_nesting_values_and_batches_are_bounded() {
    let server = TestServer::catalog(Environment::Prod).await;
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"Catalog.search","params":{{"query":"x","limit":{}1{}}}}}"#,
        "[".repeat(100),
        "]".repeat(100)
    );
    let many = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"Catalog.search","params":{{"query":"x","extra":[{}0]}}}}"#,
        "0,".repeat(150_000)
    );
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":1}}"#;
    let batch = format!("[{}]", vec![call; 101].join(","));
    let huge_batch = format!("[{}]", vec![call; 40_000].join(","));
    for (path, status) in [("/rpc", 200), ("/mcp/v1", 400)] {
        for (body, expected) in [
            (&deep, "nested deeper than 64 levels"),
            (&many, "more than 100000 values"),
            (&batch, "at most 100 messages"),
            (&huge_batch, "at most 100 messages"),
        ] {
            let (got, json, took) = post(&server, path, body).await;
            assert_eq!(got, status, "{path}: {json}");
            assert_eq!(json["error"]["code"], -32600, "{path}: {json}");
            let message = json["error"]["message"].as_str().unwrap_or("");
            assert!(message.contains(expected), "{path}: `{message}` should say {expected}");
            assert_eq!(message.matches("Invalid Request").count(), 1, "{path}: said once: `{message}`");
            assert!(json.to_string().len() < 400, "{path}: a short error: {json}");
            assert!(took < Duration::from_secs(2), "{path}: refused in {took:?}");
        }
    }
    // At the limits, requests pass.
    let batch = format!("[{}]", vec![call; 100].join(","));
    let (status, json, _) = post(&server, "/rpc", &batch).await;
    assert_eq!((status, json.as_array().map(Vec::len)), (200, Some(100)));
    let nested = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"Catalog.search","params":{{"query":"x","x":{}1{}}}}}"#,
        "[".repeat(60),
        "]".repeat(60)
    );
    let (_, json, _) = post(&server, "/rpc", &nested).await;
    assert_eq!(json["error"]["code"], -32602, "60 levels parse; the unknown parameter is what fails: {json}");
}

#[tokio::test]
async fn json_limits_are_configurable() {
    let executor = Executor::new(catalog::registry().unwrap(), Environment::Prod);
    let limits = JsonLimits::default().max_depth(4).max_values(50).max_batch(3);
    let rpc = JsonRpcService::builder(executor).json_limits(limits).build();
    let server = TestServer::start(Router::new().nest("/rpc", rpc)).await;
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":1}}"#;
    let (_, json, _) = post(&server, "/rpc", &format!("[{call},{call},{call},{call}]")).await;
    assert!(json["error"]["message"].as_str().unwrap().contains("at most 3 messages"), "{json}");
    let (_, json, _) = post(&server, "/rpc", &format!("[{call},{call},{call}]")).await;
    assert_eq!(json.as_array().map(Vec::len), Some(3));
    let deep = r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":[[[1]]]}}"#;
    let (_, json, _) = post(&server, "/rpc", deep).await;
    assert!(json["error"]["message"].as_str().unwrap().contains("deeper than 4"), "{json}");
}

/// Keys of an error's `data` in production: the error type and what the
/// error chose to expose, nothing else.
fn assert_no_internals(body: &Value, what: &str) {
    let errors: Vec<&Value> = match body {
        Value::Array(items) => items.iter().map(|i| &i["error"]).collect(),
        other => vec![&other["error"]],
    };
    for error in errors {
        if let Some(data) = error.get("data").and_then(Value::as_object) {
            for key in data.keys() {
                assert!(["exception", "extra"].contains(&key.as_str()), "{what}: `{key}` in production: {error}");
            }
        }
    }
    let text = body.to_string();
    for leak in [".rs:", "src/", "panicked", "backtrace", "/home/", "/root/", "rpc_core::", "serde_json::"] {
        assert!(!text.contains(leak), "{what}: `{leak}` leaked: {text}");
    }
}

#[tokio::test]
async fn production_error_bodies_leak_no_internals() {
    let server = TestServer::catalog(Environment::Prod).await;
    let bodies = [
        ("parse error", r#"{"jsonrpc":"2.0","id":1,"method":"#.to_owned()),
        ("not an object", "42".to_owned()),
        ("bad jsonrpc", r#"{"jsonrpc":"1.0","id":1,"method":"Catalog.get"}"#.to_owned()),
        ("unknown method", r#"{"jsonrpc":"2.0","id":1,"method":"Nope.nope"}"#.to_owned()),
        ("wrong type", r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":"seven"}}"#.to_owned()),
        ("application error", r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":999999}}"#.to_owned()),
        ("bad params shape", r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":"x"}"#.to_owned()),
        (
            "too deep",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{}{}}}"#,
                "[".repeat(80),
                "]".repeat(80)
            ),
        ),
        ("batch", r#"[1,{"jsonrpc":"2.0","id":2,"method":"Catalog.get","params":{"id":-1}}]"#.to_owned()),
    ];
    for path in ["/rpc", "/mcp/v1"] {
        for (what, body) in &bodies {
            let (_, json, _) = post(&server, path, body).await;
            assert_no_internals(&json, &format!("{path}, {what}"));
        }
    }
}

#[tokio::test]
async fn errors_never_echo_large_input() {
    let server = TestServer::catalog(Environment::Prod).await;
    let big = "m".repeat(MIB);
    let unknown = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{big}"}}"#);
    let wrong_shape = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{{"id":"{big}"}}}}"#);
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{big}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    );
    for (path, body) in [("/rpc", &unknown), ("/rpc", &wrong_shape), ("/mcp/v1", &unknown), ("/mcp/v1", &init)] {
        let (_, json, _) = post(&server, path, body).await;
        let size = json.to_string().len();
        assert!(
            size < 4096,
            "{path}: {size} bytes answered a request of {} bytes: {}",
            body.len(),
            &json.to_string()[..200]
        );
    }
}
