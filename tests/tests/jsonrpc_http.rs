//! HTTP-level behaviour of the JSON-RPC endpoint: the 4 MiB body limit
//! (declared and streamed), 405 with `Allow` for other HTTP methods, 404 for
//! unknown paths, and the response headers.

use crate::jsonrpc_common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use e2e_tests::TestServer;
use jsonrpc_common::{expect_error, post_raw};
use rpc::Environment;
use serde_json::{Value, json};

const LIMIT: usize = 4 * 1024 * 1024;

async fn catalog() -> TestServer {
    TestServer::catalog(Environment::Dev).await
}

async fn send(server: &TestServer, method: &str, path: &str) -> reqwest::Response {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a valid HTTP method");
    reqwest::Client::new()
        .request(method, server.url(path))
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","method":"ping","id":1}"#)
        .send()
        .await
        .expect("request sent")
}

/// A request body of exactly `len` bytes: a valid ping padded with spaces.
fn padded_ping(len: usize) -> Vec<u8> {
    let mut body = br#"{"jsonrpc":"2.0","method":"ping","id":1}"#.to_vec();
    assert!(len >= body.len());
    body.resize(len, b' ');
    body
}

/// Sends `POST /rpc` with a chunked body of `total` bytes over a plain TCP
/// connection (so no `Content-Length` is declared) and returns the raw response.
fn post_chunked(addr: SocketAddr, total: usize) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect to the test server");
    stream.set_read_timeout(Some(Duration::from_secs(10))).expect("set read timeout");
    let head = "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    stream.write_all(head.as_bytes()).expect("write the request head");
    let chunk = vec![b' '; 64 * 1024];
    let mut sent = 0;
    // The server may answer and stop reading as soon as the limit is passed;
    // a failing write then just means it did.
    let _ = (|| -> std::io::Result<()> {
        while sent < total {
            let n = chunk.len().min(total - sent);
            stream.write_all(format!("{n:x}\r\n").as_bytes())?;
            stream.write_all(&chunk[..n])?;
            stream.write_all(b"\r\n")?;
            sent += n;
        }
        stream.write_all(b"0\r\n\r\n")
    })();
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    String::from_utf8_lossy(&response).into_owned()
}

#[tokio::test]
async fn body_over_4_mib_is_413() {
    let server = catalog().await;
    let (status, _headers, text) = post_raw(&server.url("/rpc"), padded_ping(LIMIT + 1)).await;
    assert_eq!(status, 413, "{text}");
    let body: Value = serde_json::from_str(&text).expect("a JSON-RPC error body");
    expect_error(&body, -32600);
    assert_eq!(body["id"], Value::Null);
}

#[tokio::test]
async fn body_of_exactly_4_mib_is_accepted() {
    let server = catalog().await;
    let (status, _headers, text) = post_raw(&server.url("/rpc"), padded_ping(LIMIT)).await;
    assert_eq!(status, 200);
    let body: Value = serde_json::from_str(&text).expect("a JSON body");
    assert_eq!(body["result"], json!("pong x"));
}

#[tokio::test]
async fn streamed_body_over_4_mib_is_413() {
    let server = catalog().await;
    let addr = server.addr;
    let response =
        tokio::task::spawn_blocking(move || post_chunked(addr, LIMIT + 64 * 1024)).await.expect("the client thread");
    assert!(response.starts_with("HTTP/1.1 413"), "{}", &response[..response.len().min(300)]);
    assert!(response.contains("-32600"), "{response}");
}

#[tokio::test]
async fn other_http_methods_are_405_with_allow() {
    let server = catalog().await;
    for (method, path, status) in
        [("PUT", "/rpc", 405), ("DELETE", "/rpc", 405), ("PATCH", "/rpc/v2", 405), ("OPTIONS", "/rpc/v1", 204)]
    {
        let response = send(&server, method, path).await;
        assert_eq!(response.status().as_u16(), status, "{method} {path}");
        let allow = response.headers().get("allow").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let allow = allow.unwrap_or_else(|| panic!("{method} {path}: an Allow header"));
        let mut allowed: Vec<&str> = allow.split(',').map(str::trim).collect();
        allowed.sort_unstable();
        assert_eq!(allowed, ["GET", "HEAD", "OPTIONS", "POST"], "{method} {path}");
    }
}

#[tokio::test]
async fn unknown_paths_are_404() {
    let server = catalog().await;
    for (method, path) in [("GET", "/nope"), ("POST", "/nope"), ("POST", "/"), ("POST", "/rpcx"), ("GET", "/rpc2")] {
        let response = send(&server, method, path).await;
        assert_eq!(response.status().as_u16(), 404, "{method} {path}");
    }
}

#[tokio::test]
async fn json_responses_say_so() {
    let server = catalog().await;
    for (method, path) in [("POST", "/rpc"), ("GET", "/rpc"), ("POST", "/rpc/v9")] {
        let response = send(&server, method, path).await;
        let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok());
        assert_eq!(content_type, Some("application/json"), "{method} {path}");
    }
}

#[tokio::test]
async fn notification_response_has_no_body() {
    let server = catalog().await;
    let response = reqwest::Client::new()
        .post(server.url("/rpc"))
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","method":"ping"}"#)
        .send()
        .await
        .expect("request sent");
    assert_eq!(response.status().as_u16(), 204);
    assert!(response.headers().get("content-length").is_none_or(|v| v == "0"));
    assert_eq!(response.bytes().await.expect("body read").len(), 0);
}

/// A browser page may POST a body without a preflight only when it has no
/// JSON content type: such bodies are refused, so a page of another origin
/// cannot make the server run a method.
#[tokio::test]
async fn requests_without_a_json_content_type_are_refused() {
    let server = catalog().await;
    for content_type in [None, Some("text/plain"), Some("application/x-www-form-urlencoded")] {
        let mut request = reqwest::Client::new().post(server.url("/rpc"));
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        let response = request.body(r#"{"jsonrpc":"2.0","method":"ping","id":1}"#).send().await.expect("request sent");
        assert_eq!(response.status().as_u16(), 415, "{content_type:?}");
        let body: Value = response.json().await.expect("a JSON body");
        assert_eq!(body["error"]["code"], json!(-32600), "{content_type:?}");
    }
}
