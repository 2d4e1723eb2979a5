//! Bare hyper 1.x baseline for the MCP `tools/call` benchmark.
//!
//! What a minimal hand-written server must do for the benchmarked call and
//! nothing more: accept HTTP/1.1 (TCP_NODELAY), read the whole POST body,
//! parse it with serde_json into the shape of
//! `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":7}}}`,
//! and answer the same bytes the catalog answers (a `tools/call` result with
//! text content and `structuredContent`). No sessions, no routing, no header
//! checks, no schema validation: the floor our framework is measured against.
//!
//! The same call as a 2026-07-28 client sends it (`params._meta` carrying the
//! protocol version, the mirrored headers) gets the bytes the catalog answers
//! at that revision: the same result plus `resultType` and the server's
//! identity in `_meta`, so the stateless row is compared with a floor that
//! reads and writes as many bytes.
//!
//! At `/rpc`, a JSON-RPC call of `Catalog.get` itself (`{"jsonrpc":"2.0","id":1,
//! "method":"Catalog.get","params":{"id":7}}`, as the catalog's `/rpc`
//! takes it) gets the bytes the catalog's `/rpc` answers: the floor of the
//! `/rpc` rows.
//!
//! `PORT` (default 8110) picks the port; it listens on 127.0.0.1 only.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode, header};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::value::RawValue;

mod wire;

use wire::{Arguments, Call};

#[derive(Deserialize)]
struct RpcCall<'a> {
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    method: &'a str,
    params: Arguments,
}

/// What the catalog adds to a 2026-07-28 result.
const STATELESS_TAIL: &str = r#","resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"catalog","title":"Product catalog","version":"0.1.0","description":"Search and browse an example product catalog.","websiteUrl":"https://example.com/catalog"}}"#;

fn reply(status: StatusCode, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    response
}

async fn handle(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    if request.method() != hyper::Method::POST {
        return Ok(reply(StatusCode::METHOD_NOT_ALLOWED, Vec::new()));
    }
    let rpc = request.uri().path() == "/rpc";
    let body = match request.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return Ok(reply(StatusCode::BAD_REQUEST, Vec::new())),
    };
    if rpc {
        let call = match serde_json::from_slice::<RpcCall<'_>>(&body) {
            Ok(call) if call.method == "Catalog.get" => call,
            _ => return Ok(reply(StatusCode::BAD_REQUEST, Vec::new())),
        };
        // Byte for byte what the catalog's /rpc answers for Catalog.get {"id": id}.
        let id = call.params.id;
        let out = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"id":{id},"name":"n{id}"}}}}"#, call.id.get());
        return Ok(reply(StatusCode::OK, out.into_bytes()));
    }
    let call = match serde_json::from_slice::<Call<'_>>(&body) {
        Ok(call) if call.method == "tools/call" && call.params.name == "Catalog.get" => call,
        _ => return Ok(reply(StatusCode::BAD_REQUEST, Vec::new())),
    };
    let id = call.params.arguments.id;
    // Byte for byte what the catalog answers for Catalog.get {"id": id}.
    let tail = if call.params.meta.is_some() { STATELESS_TAIL } else { "" };
    let out = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"{{\"id\":{id},\"name\":\"n{id}\"}}"}}],"structuredContent":{{"result":{{"id":{id},"name":"n{id}"}}}},"isError":false{tail}}}}}"#,
        call.id.get()
    );
    Ok(reply(StatusCode::OK, out.into_bytes()))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8110);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("baseline listening on http://127.0.0.1:{port}/");
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service_fn(handle)).await;
        });
    }
}
