//! Cross-origin and DNS-rebinding protection on every endpoint, `/rpc`
//! included: the effective authority (`Host`, an absolute-form target,
//! HTTP/2 `:authority`) and `Origin` must name allowed hosts; duplicate or
//! missing `Host`, duplicate `Origin`, and `text/plain` bodies to `/rpc`
//! are refused, with fixed messages that never echo the offending value;
//! public URLs never come from `X-Forwarded-*`.

use bytes::Bytes;
use e2e_tests::TestServer;
use e2e_tests::raw_http::{RawResponse, exchange};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rpc::server::PublicUrl;
use rpc::{Environment, HostPolicy, Security};
use serde_json::{Value, json};

const REINDEX: &str = r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.reindex"}"#;
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

async fn catalog() -> TestServer {
    TestServer::catalog(Environment::Prod).await
}

/// A POST of `body` to `target` with the given header lines (each ending in CRLF).
async fn post(server: &TestServer, target: &str, headers: &str, body: &str) -> RawResponse {
    let head = format!(
        "POST {target} HTTP/1.1\r\n{headers}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    exchange(server.addr, &head, body.as_bytes()).await
}

/// How many times `Catalog.reindex` ran before (its next result minus one).
async fn reindexed_before(server: &TestServer) -> u64 {
    let host = format!("Host: {}\r\n", server.addr);
    let reply = post(server, "/rpc", &host, REINDEX).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.json()["result"].as_u64().expect("a count") - 1
}

fn assert_forbidden(reply: &RawResponse, what: &str) {
    assert_eq!(reply.status, 403, "{what}: {}", reply.text());
    let text = reply.text();
    assert!(!text.contains("evil"), "{what}: the offending value is not echoed: {text}");
    assert!(text.len() < 200, "{what}: a short fixed message: {text}");
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused_on_both_endpoints() {
    let server = catalog().await;
    let local = format!("Host: {}\r\n", server.addr);
    for (target, body) in [("/rpc", REINDEX), ("/mcp/v1", INITIALIZE)] {
        let cases = [
            ("Host: evil.example\r\n".to_owned(), "foreign Host"),
            ("Host: evil.example:80\r\n".to_owned(), "foreign Host with a port"),
            (format!("{local}Origin: http://evil.example\r\n"), "foreign Origin"),
            (format!("{local}Origin: null\r\n"), "opaque Origin"),
            (format!("{local}Origin: http://localhost@evil.example\r\n"), "Origin with user info"),
            (format!("{local}Host: evil.example\r\n"), "two Host headers"),
            (format!("Host: evil.example\r\n{local}"), "two Host headers, the good one last"),
            (format!("{local}Origin: http://localhost\r\nOrigin: http://evil.example\r\n"), "two Origin headers"),
            (format!("{local}Origin: http://localhost\r\nOrigin: http://localhost\r\n"), "two equal Origin headers"),
        ];
        for (headers, what) in cases {
            let reply = post(&server, target, &headers, body).await;
            assert_forbidden(&reply, &format!("{target}, {what}"));
        }
        // Absolute-form targets carry the authority that counts.
        let absolute = format!("http://evil.example{target}");
        assert_forbidden(&post(&server, &absolute, "Host: evil.example\r\n", body).await, "absolute-form target");
        assert_forbidden(&post(&server, &absolute, &local, body).await, "absolute target and Host disagree");
        let good_absolute = format!("http://{}{target}", server.addr);
        let reply = post(&server, &good_absolute, &local, body).await;
        assert_eq!(reply.status, 200, "{target}: a local absolute-form target: {}", reply.text());
        // HTTP/1.0 without any Host.
        let head =
            format!("POST {target} HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: {}\r\n", body.len());
        assert_forbidden(&exchange(server.addr, &head, body.as_bytes()).await, "no Host at all");
        // The loopback names with an allowed Origin pass.
        let ok = post(&server, target, "Host: localhost\r\nOrigin: http://127.0.0.1:5173\r\n", body).await;
        assert_eq!(ok.status, 200, "{target}: {}", ok.text());
    }
    // On /rpc, exactly the two allowed requests (absolute local target, loopback Host) ran it.
    assert_eq!(reindexed_before(&server).await, 2, "no refused request ran the admin method");
}

/// One HTTP/2 (prior knowledge) POST with `:authority` from `uri`.
async fn h2_post(server: &TestServer, uri: &str, body: &str) -> (u16, String) {
    let stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream)).await.expect("h2 handshake");
    tokio::spawn(connection);
    let request = http::Request::post(uri)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap();
    let response = sender.send_request(request).await.expect("h2 response");
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.expect("h2 body").to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

#[tokio::test]
async fn http2_authority_is_checked() {
    let server = catalog().await;
    for (path, body) in [("/rpc", REINDEX), ("/mcp/v1", INITIALIZE)] {
        let (status, text) = h2_post(&server, &format!("http://evil.example{path}"), body).await;
        assert_eq!(status, 403, "{path} over h2 with :authority evil.example: {text}");
        assert!(!text.contains("evil"), "{text}");
        let (status, text) = h2_post(&server, &format!("http://localhost:{}{path}", server.addr.port()), body).await;
        assert_eq!(status, 200, "{path} over h2 with a local :authority: {text}");
    }
    // The reindex above ran once, over h2 with a local authority.
    assert_eq!(reindexed_before(&server).await, 1);
}

#[tokio::test]
async fn rpc_takes_only_json_bodies() {
    let server = catalog().await;
    let local = format!("Host: {}\r\n", server.addr);
    for content_type in
        [Some("text/plain"), Some("application/x-www-form-urlencoded"), Some("multipart/form-data; boundary=x"), None]
    {
        let type_line = content_type.map(|t| format!("Content-Type: {t}\r\n")).unwrap_or_default();
        let head = format!("POST /rpc HTTP/1.1\r\n{local}{type_line}Content-Length: {}\r\n", REINDEX.len());
        let reply = exchange(server.addr, &head, REINDEX.as_bytes()).await;
        assert_eq!(reply.status, 415, "{content_type:?}: {}", reply.text());
        assert_eq!(reply.json()["error"]["code"], -32600);
    }
    // What a browser page would send without a preflight, from a foreign origin: 403 first.
    let head = format!(
        "POST /rpc HTTP/1.1\r\n{local}Origin: http://evil.example\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n",
        REINDEX.len()
    );
    assert_forbidden(&exchange(server.addr, &head, REINDEX.as_bytes()).await, "text/plain from evil.example");
    let reply = post(&server, "/rpc", &local, REINDEX).await;
    assert_eq!(reply.json()["result"], 1, "none of the refused bodies ran: {}", reply.text());
    let json_rpc = format!(
        "POST /rpc HTTP/1.1\r\n{local}Content-Type: application/json-rpc+json; charset=utf-8\r\nContent-Length: {}\r\n",
        REINDEX.len()
    );
    assert_eq!(exchange(server.addr, &json_rpc, REINDEX.as_bytes()).await.status, 200, "+json media types are JSON");
}

#[tokio::test]
async fn nothing_is_reflected() {
    let server = catalog().await;
    let local = format!("Host: {}\r\n", server.addr);
    // An unknown path, in the response and as a 404.
    let head = format!("GET /%3Cscript%3Eevil%3C/script%3E HTTP/1.1\r\n{local}");
    let reply = exchange(server.addr, &head, b"").await;
    assert_eq!(reply.status, 404);
    assert!(!reply.text().contains("evil") && !reply.text().contains("script"), "{}", reply.text());
    // OpenRPC's server URL: from the checked Host, never from X-Forwarded-*.
    let head = format!(
        "GET /rpc HTTP/1.1\r\n{local}X-Forwarded-Proto: javascript\r\nX-Forwarded-Host: evil.example\r\nForwarded: host=evil.example;proto=javascript\r\n"
    );
    let reply = exchange(server.addr, &head, b"").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["servers"][0]["url"], format!("http://{}/rpc", server.addr));
    // A configured public URL wins, even when any host name is accepted.
    let security = Security::new().hosts(HostPolicy::any());
    let public_url = Some(PublicUrl::parse("https://api.example.com/").unwrap());
    let app = catalog::app_configured(Environment::Prod, catalog::Setup { security, public_url, ..Default::default() })
        .unwrap();
    let public = TestServer::start(app).await;
    let head = "GET /rpc/v2 HTTP/1.1\r\nHost: other.example\r\nX-Forwarded-Proto: javascript\r\n";
    let reply = exchange(public.addr, head, b"").await;
    assert_eq!(reply.json()["servers"][0]["url"], "https://api.example.com/rpc/v2");
    // With any host accepted and no public URL: the Host, validated, with http.
    let open =
        TestServer::start(catalog::app_with(Environment::Prod, Security::new().hosts(HostPolicy::any())).unwrap())
            .await;
    let reply =
        exchange(open.addr, "GET /rpc HTTP/1.1\r\nHost: api.example:8443\r\nX-Forwarded-Proto: javascript\r\n", b"")
            .await;
    assert_eq!(reply.json()["servers"][0]["url"], "http://api.example:8443/rpc");
}

#[tokio::test]
async fn extra_hosts_and_any_host() {
    let security = Security::new().hosts(HostPolicy::localhost().allow("api.example"));
    let server = TestServer::start(catalog::app_with(Environment::Prod, security).unwrap()).await;
    let ok = post(&server, "/rpc", "Host: API.example:443\r\nOrigin: https://api.example\r\n", REINDEX).await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_forbidden(&post(&server, "/rpc", "Host: evil.example\r\n", REINDEX).await, "not in the list");
    let any =
        TestServer::start(catalog::app_with(Environment::Prod, Security::new().hosts(HostPolicy::any())).unwrap())
            .await;
    let ok = post(&any, "/mcp/v1", "Host: whatever.example\r\nOrigin: https://whatever.example\r\n", INITIALIZE).await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    // The structural checks hold for every policy.
    let two = post(&any, "/mcp/v1", "Host: a.example\r\nHost: b.example\r\n", INITIALIZE).await;
    assert_eq!(two.status, 403, "{}", two.text());
    let value: Value = two.json();
    assert_eq!(value["error"]["code"], json!(-32600), "MCP refusals are JSON-RPC errors: {value}");
}

/// A `Host` whose port is not a port (0, or above 65535) is refused: it
/// would otherwise end up in `server.json`, the manifests and the docs page.
#[tokio::test]
async fn host_ports_out_of_range_are_refused() {
    let server = catalog().await;
    for host in ["localhost:99999", "localhost:65536", "localhost:0", "127.0.0.1:000080000"] {
        let headers = format!("Host: {host}\r\n");
        for (target, body) in [("/rpc", REINDEX), ("/mcp/v1", INITIALIZE)] {
            assert_forbidden(&post(&server, target, &headers, body).await, &format!("{target}, Host {host}"));
        }
        let head = format!("GET /mcp/v1/server.json HTTP/1.1\r\nHost: {host}\r\n");
        let reply = exchange(server.addr, &head, b"").await;
        assert_eq!(reply.status, 403, "server.json for Host {host}: {}", reply.text());
    }
    let reply = post(&server, "/rpc", "Host: localhost:65535\r\n", REINDEX).await;
    assert_eq!(reply.status, 200, "the largest port is a port: {}", reply.text());
}

/// The endpoints find `Host` and `Origin` in one pass over the headers:
/// a repeated one is still seen (and refused) wherever it stands among the
/// others, on both endpoints, and a request that is otherwise the same
/// passes.
#[tokio::test]
async fn a_repeated_host_or_origin_is_refused_wherever_it_stands() {
    let server = catalog().await;
    let origin = "Origin: http://localhost:5173\r\n";
    for (target, body) in [("/rpc", REINDEX), ("/mcp/v1", INITIALIZE)] {
        let ok = post(&server, target, &format!("Host: localhost\r\n{origin}"), body).await;
        assert_eq!(ok.status, 200, "{target}: {}", ok.text());
        for (what, headers) in [
            ("two Host headers", "Host: localhost\r\nHost: localhost\r\n".to_owned()),
            (
                "two Host headers apart",
                "Host: localhost\r\nX-Trace: 1\r\nAccept-Language: de\r\nHost: localhost\r\n".to_owned(),
            ),
            ("two Origin headers", format!("Host: localhost\r\n{origin}{origin}")),
            ("two Origin headers apart", format!("{origin}Host: localhost\r\nX-Trace: 1\r\n{origin}")),
        ] {
            let reply = post(&server, target, &headers, body).await;
            assert_forbidden(&reply, &format!("{target}, {what}"));
            assert!(reply.text().contains("more than one"), "{target}, {what}: {}", reply.text());
        }
    }
}
