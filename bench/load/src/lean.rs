//! A lean HTTP/1.1 keep-alive client for the valid calls (`--client lean`;
//! hyper's is the default): one task, one reused buffer each way, one
//! `write` and (usually) one `read` system call per call, responses parsed
//! with `httparse` (hyper's own parser), `Content-Length` and chunked bodies.
//!
//! Why: with hyper's client the tool does 27k user-space instructions per
//! valid call (callgrind), about half of the catalog's, plus the same kernel
//! work per request as the server; on a quiet machine a one-CPU tool then
//! runs at three quarters or more of its CPU when the one-CPU server is
//! saturated. This client does the same exchange in 12k instructions, for
//! when the tool's CPU share gets near its limit. Hostile requests always
//! use hyper or raw sockets.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use hyper::StatusCode;
use hyper::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout_at};

use crate::client::{MAX_RESPONSE_BYTES, Outcome, Response, Target, connect};

/// A connection idle for longer than this is probed for a close by the
/// server before it is used (a keep-alive race would otherwise look like a
/// failed call).
const PROBE_AFTER: Duration = Duration::from_millis(50);

/// One keep-alive connection.
pub struct LeanConn {
    stream: TcpStream,
    out: Vec<u8>,
    buf: Vec<u8>,
    closed: bool,
    last_used: Instant,
}

/// The response headers a valid call looks at (others are skipped).
const KEPT: [HeaderName; 2] = [CONTENT_TYPE, HeaderName::from_static("mcp-session-id")];

impl LeanConn {
    /// Opens a connection (TCP_NODELAY), giving up at `deadline`.
    pub async fn open(addr: SocketAddr, deadline: Instant) -> Result<LeanConn, Outcome> {
        let stream = connect(addr, deadline).await?;
        Ok(LeanConn {
            stream,
            out: Vec::with_capacity(2048),
            buf: Vec::with_capacity(16 * 1024),
            closed: false,
            last_used: Instant::now(),
        })
    }

    /// Whether the connection can no longer be used (probing it when it was idle).
    pub fn is_closed(&mut self) -> bool {
        if !self.closed && self.last_used.elapsed() > PROBE_AFTER {
            let mut probe = [0u8; 1];
            // Ok(0): closed by the server; Ok(n): bytes nobody asked for; WouldBlock: open and quiet.
            match self.stream.try_read(&mut probe) {
                Ok(_) => self.closed = true,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => self.closed = true,
            }
        }
        self.closed
    }

    /// POSTs `body` to `path` with `headers` (plus `Host`, `Content-Type`
    /// and `Content-Length`), reads the whole response, all before `deadline`.
    pub async fn post(
        &mut self,
        target: &Target,
        path: &str,
        headers: &[(HeaderName, HeaderValue)],
        body: Bytes,
        deadline: Instant,
    ) -> Result<Response, Outcome> {
        self.out.clear();
        self.out.extend_from_slice(b"POST ");
        self.out.extend_from_slice(path.as_bytes());
        self.out.extend_from_slice(b" HTTP/1.1\r\nhost: ");
        self.out.extend_from_slice(target.host.as_bytes());
        self.out.extend_from_slice(b"\r\ncontent-type: application/json\r\n");
        for (name, value) in headers {
            self.out.extend_from_slice(name.as_str().as_bytes());
            self.out.extend_from_slice(b": ");
            self.out.extend_from_slice(value.as_bytes());
            self.out.extend_from_slice(b"\r\n");
        }
        self.out.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
        self.out.extend_from_slice(&body);
        let result = match timeout_at(deadline, self.exchange()).await {
            Ok(r) => r,
            Err(_) => Err(Outcome::Timeout),
        };
        self.last_used = Instant::now();
        if result.is_err() {
            self.closed = true;
        }
        result
    }

    async fn exchange(&mut self) -> Result<Response, Outcome> {
        if let Err(e) = self.stream.write_all(&self.out).await {
            return Err(io_outcome(&e));
        }
        self.buf.clear();
        loop {
            // Parse what has arrived; read more when it is not a whole response yet.
            if let Some((response, used)) = self.parse()? {
                self.buf.drain(..used);
                return Ok(response);
            }
            if self.buf.len() > MAX_RESPONSE_BYTES {
                return Err(Outcome::Error(format!("response over {MAX_RESPONSE_BYTES} bytes")));
            }
            self.buf.reserve(16 * 1024);
            match self.stream.read_buf(&mut self.buf).await {
                Ok(0) => return Err(Outcome::Closed),
                Ok(_) => {}
                Err(e) => return Err(io_outcome(&e)),
            }
        }
    }

    /// A complete final response at the start of `buf`, and the bytes it
    /// used; `None` when more bytes are needed.
    fn parse(&mut self) -> Result<Option<(Response, usize)>, Outcome> {
        let mut start = 0;
        loop {
            let mut slots = [httparse::EMPTY_HEADER; 32];
            let mut head = httparse::Response::new(&mut slots);
            let head_len = match head.parse(&self.buf[start..]) {
                Ok(httparse::Status::Complete(n)) => start + n,
                Ok(httparse::Status::Partial) => return Ok(None),
                Err(e) => return Err(Outcome::Error(format!("bad response head: {e}"))),
            };
            let code = head.code.unwrap_or(0);
            if (100..200).contains(&code) {
                start = head_len; // interim response: the final one follows
                continue;
            }
            let status = StatusCode::from_u16(code).map_err(|e| Outcome::Error(e.to_string()))?;
            let (mut length, mut chunked, mut close) = (None, false, false);
            let mut headers = HeaderMap::new();
            for h in head.headers.iter() {
                if h.name.eq_ignore_ascii_case("content-length") {
                    let v = std::str::from_utf8(h.value).ok().and_then(|v| v.trim().parse::<usize>().ok());
                    length = Some(v.ok_or_else(|| Outcome::Error("bad content-length".into()))?);
                } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                    chunked = h.value.eq_ignore_ascii_case(b"chunked");
                } else if h.name.eq_ignore_ascii_case("connection") {
                    close = h.value.eq_ignore_ascii_case(b"close");
                } else if let Some(name) = KEPT.iter().find(|k| h.name.eq_ignore_ascii_case(k.as_str()))
                    && let Ok(v) = HeaderValue::from_bytes(h.value)
                {
                    headers.insert(name.clone(), v);
                }
            }
            self.closed |= close;
            let no_body = status == StatusCode::NO_CONTENT || status == StatusCode::NOT_MODIFIED;
            let (body, used) = if no_body {
                (Bytes::new(), head_len)
            } else if chunked {
                match dechunk(&self.buf[head_len..])? {
                    Some((body, n)) => (Bytes::from(body), head_len + n),
                    None => return Ok(None),
                }
            } else if let Some(n) = length {
                if self.buf.len() < head_len + n {
                    return Ok(None);
                }
                (Bytes::copy_from_slice(&self.buf[head_len..head_len + n]), head_len + n)
            } else {
                // Delimited by the close: the caller reads until EOF, then reports it closed.
                return Err(Outcome::Error("response without length or chunked framing".into()));
            };
            return Ok(Some((Response { status, headers, body }, used)));
        }
    }
}

/// Decodes a complete chunked body at the start of `data`: the body and the
/// bytes used, or `None` when more bytes are needed.
fn dechunk(data: &[u8]) -> Result<Option<(Vec<u8>, usize)>, Outcome> {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let Some(eol) = data[at..].windows(2).position(|w| w == b"\r\n") else { return Ok(None) };
        let line = std::str::from_utf8(&data[at..at + eol]).map_err(|_| Outcome::Error("bad chunk size".into()))?;
        let size = usize::from_str_radix(line.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| Outcome::Error("bad chunk size".into()))?;
        at += eol + 2;
        if size == 0 {
            // Trailers (none expected), then the final empty line.
            loop {
                let Some(eol) = data[at..].windows(2).position(|w| w == b"\r\n") else { return Ok(None) };
                at += eol + 2;
                if eol == 0 {
                    return Ok(Some((body, at)));
                }
            }
        }
        if data.len() < at + size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&data[at..at + size]);
        at += size + 2;
    }
}

fn io_outcome(e: &std::io::Error) -> Outcome {
    use std::io::ErrorKind::*;
    match e.kind() {
        ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof => Outcome::Closed,
        _ => Outcome::Error(e.to_string()),
    }
}
