//! HTTP plumbing: one keep-alive HTTP/1.1 connection per worker (hyper's
//! client connection over a `TcpStream`), requests with a deadline, and the
//! raw-socket helpers the hostile clients need (reading a status line).
//!
//! Nothing here trusts the server: every failure (refused, closed, reset,
//! timed out, garbage) becomes an [`Outcome`] the caller counts.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::client::conn::http1;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout_at};

/// The largest response body read; a longer one is an error (a misbehaving
/// server must not make the tool buffer without bound).
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// Why a request got no HTTP response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The TCP connection could not be opened.
    Connect,
    /// The server closed (or reset) the connection before answering.
    Closed,
    /// No answer before the deadline.
    Timeout,
    /// Something else went wrong (message kept for the sample).
    Error(String),
}

impl Outcome {
    /// The key this outcome is counted under.
    pub fn key(&self) -> String {
        match self {
            Outcome::Connect => "connect_error".into(),
            Outcome::Closed => "closed".into(),
            Outcome::Timeout => "timeout".into(),
            Outcome::Error(_) => "error".into(),
        }
    }
}

/// A response: status, headers, whole body.
#[derive(Debug)]
pub struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// One HTTP/1.1 keep-alive connection to the server.
pub struct Conn {
    sender: http1::SendRequest<Full<Bytes>>,
}

/// The fixed parts of every request: the server's address, its `Host`, and
/// the optional bearer token.
#[derive(Debug, Clone)]
pub struct Target {
    pub addr: SocketAddr,
    pub host: HeaderValue,
    pub bearer: Option<HeaderValue>,
}

impl Target {
    /// `addr`, with `Authorization: Bearer <token>` on requests that ask for it.
    pub fn new(addr: SocketAddr, token: Option<&str>) -> Result<Target, String> {
        let host = HeaderValue::from_str(&addr.to_string()).map_err(|e| e.to_string())?;
        let bearer = match token {
            Some(t) => Some(HeaderValue::from_str(&format!("Bearer {t}")).map_err(|_| "token: not a header value")?),
            None => None,
        };
        Ok(Target { addr, host, bearer })
    }
}

impl Conn {
    /// Opens a connection (TCP_NODELAY), giving up at `deadline`.
    pub async fn open(addr: SocketAddr, deadline: Instant) -> Result<Conn, Outcome> {
        let stream = connect(addr, deadline).await?;
        let (sender, connection) = match timeout_at(deadline, http1::handshake(TokioIo::new(stream))).await {
            Ok(Ok(pair)) => pair,
            Ok(Err(e)) => return Err(Outcome::Error(e.to_string())),
            Err(_) => return Err(Outcome::Timeout),
        };
        // Drives the connection; ends when the sender is dropped or the peer closes.
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(Conn { sender })
    }

    /// Whether the connection can no longer be used.
    pub fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    /// POSTs `body` to `path` with `headers` (plus `Host` and `Content-Type`),
    /// reads the whole response, all before `deadline`.
    pub async fn post(
        &mut self,
        target: &Target,
        path: &str,
        headers: &[(HeaderName, HeaderValue)],
        body: Bytes,
        deadline: Instant,
    ) -> Result<Response, Outcome> {
        let mut builder = Request::builder()
            .method(Method::POST)
            .uri(path)
            .header(hyper::header::HOST, target.host.clone())
            .header(hyper::header::CONTENT_TYPE, "application/json");
        for (name, value) in headers {
            builder = builder.header(name, value);
        }
        let request = builder.body(Full::new(body)).map_err(|e| Outcome::Error(e.to_string()))?;
        let exchange = async {
            self.sender.ready().await.map_err(|e| hyper_outcome(&e))?;
            let response = self.sender.send_request(request).await.map_err(|e| hyper_outcome(&e))?;
            let (parts, body) = response.into_parts();
            let body = Limited::new(body, MAX_RESPONSE_BYTES).collect().await.map_err(|e| {
                match e.downcast::<hyper::Error>() {
                    Ok(e) => hyper_outcome(&e),
                    Err(e) => Outcome::Error(e.to_string()),
                }
            })?;
            let body = body.to_bytes();
            Ok(Response { status: parts.status, headers: parts.headers, body })
        };
        match timeout_at(deadline, exchange).await {
            Ok(result) => result,
            Err(_) => Err(Outcome::Timeout),
        }
    }
}

/// Which HTTP client the valid calls use (`--client`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClientKind {
    /// hyper's HTTP/1.1 client connection.
    Hyper,
    /// [`crate::lean`]: less than half of hyper's user-space work per call.
    Lean,
}

/// A keep-alive connection of either client.
pub enum Client {
    Hyper(Conn),
    Lean(crate::lean::LeanConn),
}

impl Client {
    /// Opens a connection of `kind`, giving up at `deadline`.
    pub async fn open(kind: ClientKind, addr: SocketAddr, deadline: Instant) -> Result<Client, Outcome> {
        Ok(match kind {
            ClientKind::Hyper => Client::Hyper(Conn::open(addr, deadline).await?),
            ClientKind::Lean => Client::Lean(crate::lean::LeanConn::open(addr, deadline).await?),
        })
    }

    /// Whether the connection can no longer be used.
    pub fn is_closed(&mut self) -> bool {
        match self {
            Client::Hyper(c) => c.is_closed(),
            Client::Lean(c) => c.is_closed(),
        }
    }

    /// See [`Conn::post`].
    pub async fn post(
        &mut self,
        target: &Target,
        path: &str,
        headers: &[(HeaderName, HeaderValue)],
        body: Bytes,
        deadline: Instant,
    ) -> Result<Response, Outcome> {
        match self {
            Client::Hyper(c) => c.post(target, path, headers, body, deadline).await,
            Client::Lean(c) => c.post(target, path, headers, body, deadline).await,
        }
    }
}

/// Closed or reset connections are [`Outcome::Closed`]; the rest keep their message.
/// A TCP connection to `addr` with TCP_NODELAY, opened before `deadline`.
pub async fn connect(addr: SocketAddr, deadline: Instant) -> Result<TcpStream, Outcome> {
    let stream = match timeout_at(deadline, TcpStream::connect(addr)).await {
        Ok(Ok(s)) => s,
        Ok(Err(_)) => return Err(Outcome::Connect),
        Err(_) => return Err(Outcome::Timeout),
    };
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

fn hyper_outcome(e: &hyper::Error) -> Outcome {
    if e.is_closed() || e.is_incomplete_message() || e.is_canceled() {
        return Outcome::Closed;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            if matches!(io.kind(), ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof) {
                return Outcome::Closed;
            }
        }
        source = s.source();
    }
    Outcome::Error(e.to_string())
}

/// What a raw-socket client saw from the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawAnswer {
    /// A final response's status code (interim `1xx` responses are skipped).
    Status(u16),
    /// The server closed (or reset) the connection without a response.
    Closed,
    /// Bytes that are not an HTTP response.
    Garbage(String),
}

/// Reads from `stream` until a final response's head arrives or the
/// connection ends. Never returns while the connection is open and silent:
/// the caller bounds it with a timeout.
pub async fn read_status<R: AsyncReadExt + Unpin>(stream: &mut R) -> RawAnswer {
    let mut buf: Vec<u8> = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return RawAnswer::Closed,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        // Consume every complete head; return at the first final one.
        while let Some(end) = find(&buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            buf.drain(..end + 4);
            let mut words = head.split_whitespace();
            let (Some(version), Some(code)) = (words.next(), words.next()) else {
                return RawAnswer::Garbage(head.chars().take(80).collect());
            };
            match code.parse::<u16>() {
                Ok(code) if version.starts_with("HTTP/") && (100..200).contains(&code) => continue,
                Ok(code) if version.starts_with("HTTP/") => return RawAnswer::Status(code),
                _ => return RawAnswer::Garbage(head.chars().take(80).collect()),
            }
        }
        if buf.len() > 64 * 1024 {
            return RawAnswer::Garbage("response head over 64 KiB".into());
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `Instant::now() + d`, but never past `cap`.
pub fn until(d: Duration, cap: Instant) -> Instant {
    (Instant::now() + d).min(cap)
}
