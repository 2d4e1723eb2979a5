//! Raw HTTP/1.x over TCP, for requests no well-behaved client sends:
//! duplicate `Host` or `Origin` headers, absolute-form targets, HTTP/1.0
//! without `Host`, chunked bodies that never end.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A response as read off the wire.
#[derive(Debug)]
pub struct RawResponse {
    /// The status code.
    pub status: u16,
    /// Header names (lowercase) and values, in order.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked when the response was chunked).
    pub body: Vec<u8>,
}

impl RawResponse {
    /// The first value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// Sends `head` (the request line and headers, each line ending in CRLF,
/// without the blank line) and `body`; adds `Connection: close` and the
/// blank line; reads the response until the server closes (at most 10 s).
pub async fn exchange(addr: SocketAddr, head: &str, body: &[u8]) -> RawResponse {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let mut request = head.to_owned();
    request.push_str("Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("write the head");
    // The server may answer and close before it read the whole body.
    let _ = stream.write_all(body).await;
    read_response(&mut stream).await
}

/// Reads one response from `stream` until the server closes it (at most 10 s).
pub async fn read_response(stream: &mut TcpStream) -> RawResponse {
    let mut raw = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = [0u8; 16 * 1024];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => raw.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server neither answered nor closed within 10 s");
    parse(&raw)
}

/// Parses a whole response.
pub fn parse(raw: &[u8]) -> RawResponse {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or_else(|| {
        panic!("no complete response head in {:?}", String::from_utf8_lossy(&raw[..raw.len().min(200)]))
    });
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status = status_line.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status code");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers.iter().any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked")) {
        body = dechunk(&body);
    }
    RawResponse { status, headers, body }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = data.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&data[..end]).trim(), 16).unwrap_or(0);
        if size == 0 || data.len() < end + 2 + size {
            break;
        }
        out.extend_from_slice(&data[end + 2..end + 2 + size]);
        data = &data[(end + 4 + size).min(data.len())..];
    }
    out
}
