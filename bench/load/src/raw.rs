//! Raw-socket clients, for what a well-behaved HTTP client cannot do:
//! oversized bodies (a 5 MiB body announced with `Content-Length`, a chunked
//! body growing past the server's limit) and slow clients (headers dribbled
//! byte by byte, a body that stops short of its `Content-Length`, an idle
//! connection). Each one reads the server's answer while it writes, and
//! gives up at its own deadline.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout_at};

use crate::client::{RawAnswer, Target, read_status};
use crate::stats::Stats;

/// Bytes written per write call.
const CHUNK: usize = 64 * 1024;

/// `Host` and, with a token, `Authorization` header lines.
fn common_headers(target: &Target) -> String {
    let mut h = format!("Host: {}\r\n", target.addr);
    if let Some(b) = &target.bearer {
        h.push_str(&format!("Authorization: {}\r\n", String::from_utf8_lossy(b.as_bytes())));
    }
    h
}

/// The key an answer is counted under.
fn answer_key(answer: &RawAnswer) -> String {
    match answer {
        RawAnswer::Status(code) => code.to_string(),
        RawAnswer::Closed => "closed".into(),
        RawAnswer::Garbage(_) => "garbage".into(),
    }
}

/// POSTs a `size`-byte body to `/rpc` (with `Content-Length`, or chunked and
/// going on to `size + 1 MiB`), stopping as soon as the server answers.
/// Returns the outcome key (`413`, `closed`, `timeout`, ...) and the bytes sent.
pub async fn oversized(target: &Target, chunked: bool, size: usize, deadline: Instant) -> (String, u64) {
    let mut stream = match timeout_at(deadline, TcpStream::connect(target.addr)).await {
        Ok(Ok(s)) => s,
        Ok(Err(_)) => return ("connect_error".into(), 0),
        Err(_) => return ("timeout".into(), 0),
    };
    let framing =
        if chunked { "Transfer-Encoding: chunked\r\n".to_string() } else { format!("Content-Length: {size}\r\n") };
    let head =
        format!("POST /rpc HTTP/1.1\r\n{}Content-Type: application/json\r\n{framing}\r\n", common_headers(target));
    let total = if chunked { size + 1024 * 1024 } else { size };
    let sent = AtomicU64::new(0);
    let (mut rd, mut wr) = stream.split();
    let write = async {
        wr.write_all(head.as_bytes()).await?;
        // A JSON-looking start, then filler.
        let data = vec![b' '; CHUNK];
        let mut written = 0usize;
        while written < total {
            let n = CHUNK.min(total - written);
            if chunked {
                wr.write_all(format!("{n:x}\r\n").as_bytes()).await?;
                wr.write_all(&data[..n]).await?;
                wr.write_all(b"\r\n").await?;
            } else {
                wr.write_all(&data[..n]).await?;
            }
            written += n;
            sent.store(written as u64, Ordering::Relaxed);
        }
        if chunked {
            wr.write_all(b"0\r\n\r\n").await?;
        }
        wr.flush().await
    };
    let read = read_status(&mut rd);
    tokio::pin!(read);
    let exchange = async {
        tokio::select! {
            answer = &mut read => answer,
            // Written all, or the server stopped reading (reset): its answer may still come.
            _ = write => read.await,
        }
    };
    let key = match timeout_at(deadline, exchange).await {
        Ok(answer) => answer_key(&answer),
        Err(_) => "timeout".into(),
    };
    (key, sent.load(Ordering::Relaxed))
}

/// The kinds of slow client.
#[derive(Debug, Clone, Copy)]
pub enum Slow {
    /// Sends a request head one byte at a time and never finishes it.
    Slowloris,
    /// Announces a 1000-byte body, sends 10 bytes, then nothing.
    ShortBody,
    /// Connects and sends nothing.
    Idle,
}

impl Slow {
    fn class(self) -> &'static str {
        match self {
            Slow::Slowloris => "slow.slowloris",
            Slow::ShortBody => "slow.short_body",
            Slow::Idle => "slow.idle",
        }
    }
}

/// Runs one slow client until the server answers or closes the connection,
/// or until `until` (then it closes it itself: outcome `held`). Its latency
/// is the time until the server acted.
pub async fn slow(target: &Target, kind: Slow, until: Instant, dribble: Duration) -> Stats {
    let mut stats = Stats::default();
    let s = stats.class(kind.class());
    s.sent += 1;
    let start = Instant::now();
    let mut stream = match timeout_at(until, TcpStream::connect(target.addr)).await {
        Ok(Ok(s)) => s,
        Ok(Err(_)) => {
            s.outcome("connect_error");
            return stats;
        }
        Err(_) => {
            s.outcome("timeout");
            return stats;
        }
    };
    let (mut rd, mut wr) = stream.split();
    let sent = AtomicU64::new(0);
    let write = async {
        match kind {
            Slow::Slowloris => {
                let mut head =
                    format!("POST /rpc HTTP/1.1\r\n{}Content-Type: application/json\r\n", common_headers(target));
                let mut i = 0usize;
                loop {
                    // Never-ending headers: X-Slow-0: a, X-Slow-1: a, ...
                    if i == head.len() {
                        head.push_str(&format!("X-Slow-{i}: a\r\n"));
                    }
                    wr.write_all(&head.as_bytes()[i..i + 1]).await?;
                    sent.fetch_add(1, Ordering::Relaxed);
                    i += 1;
                    tokio::time::sleep(dribble).await;
                }
            }
            Slow::ShortBody => {
                let req = format!(
                    "POST /rpc HTTP/1.1\r\n{}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\"",
                    common_headers(target)
                );
                wr.write_all(req.as_bytes()).await?;
                sent.store(req.len() as u64, Ordering::Relaxed);
                std::future::pending::<std::io::Result<()>>().await
            }
            Slow::Idle => std::future::pending::<std::io::Result<()>>().await,
        }
    };
    let read = read_status(&mut rd);
    tokio::pin!(read);
    let exchange = async {
        tokio::select! {
            answer = &mut read => answer,
            // Writing failed: the server closed the connection.
            _ = write => RawAnswer::Closed,
        }
    };
    let key = match timeout_at(until, exchange).await {
        Ok(answer) => {
            s.latencies_us.push(start.elapsed().as_micros().min(u32::MAX as u128) as u32);
            match answer {
                RawAnswer::Closed => "closed_by_server".to_string(),
                RawAnswer::Garbage(g) => {
                    s.unexpected += 1;
                    s.sample(|| g.clone());
                    "garbage".into()
                }
                RawAnswer::Status(code) => code.to_string(),
            }
        }
        Err(_) => "held".into(),
    };
    s.bytes_sent += sent.load(Ordering::Relaxed);
    s.outcome(key);
    stats
}

/// Requests a non-reading client pipelines on its connection: with 3 KiB
/// per response, some 15 MiB, more than loopback's socket buffers hold.
pub const NON_READER_REQUESTS: usize = 5000;

/// A client that asks and never reads: on one connection it pipelines an
/// MCP `tools/call` whose `_meta.progressToken` is 1 MiB (repeated in every
/// progress notification, were it accepted) and [`NON_READER_REQUESTS`]
/// searches of 100 products each (some 15 MiB of responses, far more than
/// the socket buffers hold), then reads nothing until `until`. The server must
/// stop writing to it and close it (its write timeout), releasing what the
/// responses held. Afterwards the client drains what the socket buffers
/// kept: outcome `closed_by_server` when the connection ended before every
/// response came, `served_all` when the server went on writing.
pub async fn non_reader(target: &Target, until: Instant) -> Stats {
    use tokio::io::AsyncReadExt;
    let mut stats = Stats::default();
    let s = stats.class("slow.non_reader");
    s.sent += 1;
    let stream = match timeout_at(until, TcpStream::connect(target.addr)).await {
        Ok(Ok(s)) => s,
        Ok(Err(_)) => {
            s.outcome("connect_error");
            return stats;
        }
        Err(_) => {
            s.outcome("timeout");
            return stats;
        }
    };
    let request = |path: &str, extra: &str, body: &str| {
        format!(
            "POST {path} HTTP/1.1\r\n{}Content-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{body}",
            common_headers(target),
            body.len()
        )
    };
    let token = "t".repeat(1024 * 1024);
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"Catalog.stats","arguments":{{}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"progressToken":"{token}"}}}}}}"#
    );
    let mut pipelined = request(
        crate::valid::MCP_PATH,
        "Accept: application/json, text/event-stream\r\nMcp-Method: tools/call\r\nMcp-Name: Catalog.stats\r\nMCP-Protocol-Version: 2026-07-28\r\n",
        &call,
    );
    let search = r#"{"jsonrpc":"2.0","id":2,"method":"Catalog.search","params":{"query":"n","limit":100}}"#;
    for _ in 0..NON_READER_REQUESTS {
        pipelined.push_str(&request("/rpc", "", search));
    }
    // Written in the background: the server stops reading once its own writes stall.
    let (mut rd, mut wr) = stream.into_split();
    let bytes = pipelined.len() as u64;
    let writer = tokio::spawn(async move {
        let _ = timeout_at(until, wr.write_all(pipelined.as_bytes())).await;
        // Keep the write half (and the connection) until `until`.
        tokio::time::sleep_until(until).await;
        drop(wr);
    });
    tokio::time::sleep_until(until).await;
    s.bytes_sent += bytes;
    let drained = Instant::now();
    let mut received = Vec::new();
    let mut chunk = vec![0u8; 256 * 1024];
    let ended = timeout_at(drained + Duration::from_secs(20), async {
        loop {
            match rd.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&chunk[..n]),
            }
            let heads = received.windows(9).filter(|w| w == b"HTTP/1.1 ").count();
            if heads > NON_READER_REQUESTS {
                return;
            }
        }
    })
    .await;
    writer.abort();
    let heads = received.windows(9).filter(|w| w == b"HTTP/1.1 ").count();
    let key = match ended {
        Ok(()) if heads > NON_READER_REQUESTS => "served_all",
        Ok(()) => "closed_by_server",
        Err(_) => "drain_timeout",
    };
    s.outcome(key);
    stats
}
