//! Connection-level limits of the bundled server (`rpc::server::serve_with`),
//! black-box: the real server on an ephemeral port, short limits, raw TCP
//! for what clients normally never do, and hyper's HTTP/2 client.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use e2e_tests::TestServer;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty, StreamBody};
use hyper::body::Frame;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rpc::Environment;
use rpc::server::{RequestBody, ResponseBody, Router, ServerLimits};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::RwLock;
use tokio::time::{Instant, sleep, timeout, timeout_at};

/// The flood test counts the process's file descriptors: it runs alone.
static EXCLUSIVE: RwLock<()> = RwLock::const_new(());

/// Chunks of `/stream`, one every [`CHUNK_GAP`].
const CHUNKS: u32 = 8;
const CHUNK_GAP: Duration = Duration::from_millis(350);
/// Chunks of 64 KiB in `/big`.
const BIG_CHUNKS: usize = 1024;
/// How long `/sleep` takes.
const SLEEP: Duration = Duration::from_millis(1000);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The catalog (`/rpc`, `/mcp`) plus `/ok`, `/sleep` (answers after
/// [`SLEEP`]) and `/stream` (a body of [`CHUNKS`] chunks streamed slowly).
fn app() -> Router {
    let ok = tower::service_fn(|_: Request<RequestBody>| async {
        Ok::<_, Infallible>(Response::new(rpc::server::body::full("ok")))
    });
    let slow = tower::service_fn(|_: Request<RequestBody>| async {
        sleep(SLEEP).await;
        Ok::<_, Infallible>(Response::new(rpc::server::body::full("slept")))
    });
    let stream = tower::service_fn(|_: Request<RequestBody>| async {
        let chunks = futures_util::stream::unfold(0u32, |i| async move {
            if i == CHUNKS {
                return None;
            }
            sleep(CHUNK_GAP).await;
            Some((Ok::<_, Infallible>(Frame::data(Bytes::from(format!("chunk {i}\n")))), i + 1))
        });
        Ok::<_, Infallible>(Response::new(StreamBody::new(chunks).boxed_unsync() as ResponseBody))
    });
    // 64 MiB from one static chunk: far more than the socket buffers hold.
    let big = tower::service_fn(|_: Request<RequestBody>| async {
        static CHUNK: [u8; 64 * 1024] = [b'x'; 64 * 1024];
        let chunks = futures_util::stream::iter(
            (0..BIG_CHUNKS).map(|_| Ok::<_, Infallible>(Frame::data(Bytes::from_static(&CHUNK)))),
        );
        Ok::<_, Infallible>(Response::new(StreamBody::new(chunks).boxed_unsync() as ResponseBody))
    });
    // A service of the application's own: it finds the connection and the
    // target the client asked for in the extensions, as documented.
    let whoami = tower::service_fn(|request: Request<RequestBody>| async move {
        let peer = request.extensions().get::<rpc::server::Connection>().map(|c| c.peer().to_string());
        let original = request.extensions().get::<rpc::server::OriginalUri>().map(|o| o.0.to_string());
        let found = serde_json::json!({"peer": peer, "original": original, "path": request.uri().path()});
        Ok::<_, Infallible>(Response::new(rpc::server::body::full(found.to_string())))
    });
    catalog::app(Environment::Test)
        .expect("catalog registry builds")
        .nest("/whoami", whoami)
        .nest("/big", big)
        .nest("/ok", ok)
        .nest("/sleep", slow)
        .nest("/stream", stream)
}

async fn server(limits: ServerLimits) -> TestServer {
    TestServer::start_with(app(), limits).await
}

async fn connect(addr: SocketAddr) -> TcpStream {
    TcpStream::connect(addr).await.expect("connect to the test server")
}

/// Reads until the server closes the connection (EOF or reset), at most
/// until `since + max`; the time from `since` to the close, `None` if the
/// connection is still open.
async fn closed_after(stream: &mut TcpStream, since: Instant, max: Duration) -> Option<Duration> {
    let mut buf = [0u8; 4096];
    loop {
        match timeout_at(since + max, stream.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some(since.elapsed()),
            Ok(Ok(_)) => {}
        }
    }
}

/// Reads one HTTP/1.1 response (head and `Content-Length` body) within 5 s:
/// the head in lower case, and the body.
async fn read_response(stream: &mut TcpStream) -> (String, String) {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(5);
    let head_end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0)) => panic!("connection closed before a full response head: {:?}", String::from_utf8_lossy(&data)),
            Ok(Ok(n)) => data.extend_from_slice(&buf[..n]),
            Ok(Err(e)) => panic!("read failed ({e}) after {:?}", String::from_utf8_lossy(&data)),
            Err(_) => panic!("no response within 5 s; got {:?}", String::from_utf8_lossy(&data)),
        }
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().expect("numeric content-length"));
    while data.len() < head_end + length {
        match timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => data.extend_from_slice(&buf[..n]),
            other => panic!("response body cut short ({other:?})"),
        }
    }
    (head, String::from_utf8_lossy(&data[head_end..head_end + length]).into_owned())
}

fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
}

/// The number of file descriptors this process (tests and servers) has open.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd").count()
}

/// User and system CPU time of this process so far (`/proc/self/stat`, in
/// USER_HZ = 100 ticks per second).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the command name (which may hold spaces) start at field 3.
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let fields: Vec<u64> = rest.split(' ').skip(11).take(2).map(|f| f.parse().expect("tick count")).collect();
    Duration::from_millis((fields[0] + fields[1]) * 10)
}

/// GETs `/ok` with a fresh connection until it is answered 200, for at most
/// `max`; how long that took.
async fn served_within(server: &TestServer, max: Duration) -> Option<Duration> {
    let start = Instant::now();
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().expect("client");
    while start.elapsed() < max {
        if let Ok(Ok(response)) = timeout(ms(1000), client.get(server.url("/ok")).send()).await
            && response.status() == StatusCode::OK
        {
            return Some(start.elapsed());
        }
        sleep(ms(50)).await;
    }
    None
}

/// The bundled endpoints read the connection from the request body (no
/// extension map per request); a service of the application's own, mounted
/// beside them, still finds it and the original target in the extensions.
#[tokio::test]
async fn an_applications_own_service_finds_the_connection_and_the_target_in_the_extensions() {
    let _shared = EXCLUSIVE.read().await;
    let server = server(ServerLimits::default()).await;
    let mut stream = connect(server.addr).await;
    let local = stream.local_addr().unwrap();
    stream.write_all(get("/whoami/v2?x=1").as_bytes()).await.unwrap();
    let (head, body) = read_response(&mut stream).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    let found: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(found["peer"], local.to_string());
    assert_eq!(found["original"], "/whoami/v2?x=1");
    assert_eq!(found["path"], "/v2");
    // The endpoint beside it is served on the same connection.
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":7}}"#;
    let post = format!(
        "POST /rpc HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{call}",
        call.len()
    );
    stream.write_all(post.as_bytes()).await.unwrap();
    let (head, body) = read_response(&mut stream).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(body.contains(r#""result""#), "{body}");
}

/// An answer given before the request's body was read to its end says
/// `Connection: close`: hyper drains what has arrived and closes the
/// connection unless that was all of it, so a client that sent its next
/// request on it would find it closed without an answer (the Python SDK's
/// OAuth client did, after a `401`, once in a CI run). Answers that read the
/// body keep the connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_that_leave_the_body_unread_ask_the_client_to_close() {
    let _shared = EXCLUSIVE.read().await;
    let server = server(ServerLimits::default()).await;
    let post = |path: &str, length: usize, body: &str| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n{body}"
        )
    };
    // The body announced and not sent yet, or sent whole: `/ok` never reads it.
    for sent in ["", "0123456789"] {
        let mut stream = connect(server.addr).await;
        stream.write_all(post("/ok", 10, sent).as_bytes()).await.unwrap();
        let (head, body) = read_response(&mut stream).await;
        assert!(head.starts_with("http/1.1 200") && body == "ok", "{head}{body}");
        assert!(head.contains("connection: close"), "body {sent:?} unread: {head}");
        assert!(closed_after(&mut stream, Instant::now(), ms(2000)).await.is_some(), "closed as it said");
    }
    // A declared length over `/rpc`'s limit is refused unread.
    let mut stream = connect(server.addr).await;
    stream.write_all(post("/rpc", 100_000_000, "{").as_bytes()).await.unwrap();
    let (head, _) = read_response(&mut stream).await;
    assert!(head.starts_with("http/1.1 413") && head.contains("connection: close"), "{head}");

    // Calls whose bodies are read share one connection, with or without
    // a body (a GET of the endpoint's page in between).
    let mut stream = connect(server.addr).await;
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":7}}"#;
    for round in 0..3 {
        stream.write_all(post("/rpc", call.len(), call).as_bytes()).await.unwrap();
        let (head, body) = read_response(&mut stream).await;
        assert!(head.starts_with("http/1.1 200") && body.contains(r#""result""#), "round {round}: {head}{body}");
        assert!(!head.contains("connection: close"), "round {round}: {head}");
        stream.write_all(get("/ok").as_bytes()).await.unwrap();
        let (head, _) = read_response(&mut stream).await;
        assert!(head.starts_with("http/1.1 200") && !head.contains("connection: close"), "{head}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_request_head_is_cut_at_the_header_read_timeout() {
    let _shared = EXCLUSIVE.read().await;
    let server = server(ServerLimits::default().header_read_timeout(ms(400)).idle_timeout(ms(5000))).await;
    let mut stream = connect(server.addr).await;
    let start = Instant::now();
    stream.write_all(b"POST /rpc HTTP/1.1\r\n").await.expect("request line sent");
    // Slowloris: one more header line every 50 ms, never the end of the head.
    let (mut reader, mut writer) = stream.into_split();
    let trickle = tokio::spawn(async move {
        for i in 0.. {
            sleep(ms(50)).await;
            if writer.write_all(format!("x-h{i}: v\r\n").as_bytes()).await.is_err() {
                break;
            }
        }
    });
    let mut buf = [0u8; 1024];
    let closed = timeout(ms(3000), reader.read(&mut buf)).await;
    let elapsed = start.elapsed();
    trickle.abort();
    assert!(matches!(closed, Ok(Ok(0) | Err(_))), "the server must close the connection, got {closed:?}");
    assert!(elapsed >= ms(350), "closed after {elapsed:?}, before the 400 ms header-read timeout");
    assert!(elapsed < ms(1500), "closed only after {elapsed:?}: a late head is cut at once, without a grace period");
}

/// When the server closes a connection that sends `first` and then nothing,
/// under a 400 ms header-read timeout (`None`: still open after 3 s).
async fn closed_after_sending(first: &[u8]) -> Option<Duration> {
    let server = server(ServerLimits::default().header_read_timeout(ms(400)).idle_timeout(ms(5000))).await;
    let mut stream = connect(server.addr).await;
    let since = Instant::now();
    stream.write_all(first).await.expect("first bytes sent");
    closed_after(&mut stream, since, ms(3000)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_that_sends_nothing_is_closed_at_the_header_read_timeout() {
    let _shared = EXCLUSIVE.read().await;
    let closed = closed_after_sending(b"").await.expect("a silent connection must be closed");
    assert!(closed >= ms(350), "closed after {closed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_alive_connection_waits_the_idle_timeout_not_the_header_read_timeout() {
    let _shared = EXCLUSIVE.read().await;
    let server = server(ServerLimits::default().header_read_timeout(ms(300)).idle_timeout(ms(1200))).await;
    let mut stream = connect(server.addr).await;
    stream.write_all(get("/ok").as_bytes()).await.expect("request sent");
    let (head, body) = read_response(&mut stream).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert_eq!(body, "ok");
    let idle_from = Instant::now();
    // Longer than the header-read timeout: still open, and serves the next request.
    sleep(ms(700)).await;
    stream.write_all(get("/ok").as_bytes()).await.expect("second request sent");
    let (head, _) = read_response(&mut stream).await;
    assert!(
        head.starts_with("http/1.1 200"),
        "second request on the kept-alive connection: {head} after {:?}",
        idle_from.elapsed()
    );
    let idle_from = Instant::now();
    let closed = closed_after(&mut stream, idle_from, ms(4000)).await.expect("an idle connection must be closed");
    assert!(closed >= ms(1000), "closed after {closed:?}, before the 1200 ms idle timeout");
    // Within the idle timeout and its watchdog recheck, not much later.
    assert!(closed < ms(2500), "closed only after {closed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_request_head_on_a_kept_alive_connection_gets_the_header_read_timeout() {
    let _shared = EXCLUSIVE.read().await;
    let server = server(ServerLimits::default().header_read_timeout(ms(400)).idle_timeout(ms(5000))).await;
    let mut stream = connect(server.addr).await;
    stream.write_all(get("/ok").as_bytes()).await.expect("request sent");
    let (head, _) = read_response(&mut stream).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    // The start of the next head, then nothing: cut long before the idle timeout.
    let start = Instant::now();
    stream.write_all(b"GET /ok HTTP/1.1\r\nhost: 127.0.0.1\r\n").await.expect("partial head sent");
    let closed = closed_after(&mut stream, start, ms(4500)).await.expect("a stalled head must be cut");
    assert!(closed >= ms(350), "closed after {closed:?}");
    assert!(closed < ms(1500), "closed after {closed:?}: the idle timeout (5 s), not the header-read timeout, applied");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn body_shorter_than_announced_gets_408_at_the_body_read_timeout() {
    let _shared = EXCLUSIVE.read().await;
    let server = server(ServerLimits::default().body_read_timeout(ms(500)).request_timeout(ms(10_000))).await;
    for (path, extra) in [("/rpc", ""), ("/mcp/v1", "accept: application/json, text/event-stream\r\n")] {
        let mut stream = connect(server.addr).await;
        let start = Instant::now();
        let request = format!(
            "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n{extra}content-length: 1000\r\n\r\n{{\"jsonrpc\""
        );
        stream.write_all(request.as_bytes()).await.expect("request sent");
        let (head, body) = read_response(&mut stream).await;
        let elapsed = start.elapsed();
        assert!(head.starts_with("http/1.1 408"), "{path}: {head}{body}");
        assert!(head.contains("connection: close"), "{path}: {head}");
        assert!(body.contains("in time"), "{path}: {body}");
        assert!(elapsed >= ms(450) && elapsed < ms(2500), "{path}: answered after {elapsed:?}");
        assert!(closed_after(&mut stream, Instant::now(), ms(2000)).await.is_some(), "{path}: connection left open");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steadily_trickling_body_gets_408_at_the_deadline() {
    let _shared = EXCLUSIVE.read().await;
    let server = server(ServerLimits::default().body_read_timeout(ms(600)).request_timeout(ms(10_000))).await;
    let stream = connect(server.addr).await;
    let (mut reader, mut writer) = stream.into_split();
    let start = Instant::now();
    writer
        .write_all(
            b"POST /rpc HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n",
        )
        .await
        .expect("head sent");
    // One byte every 50 ms: never a pause long enough for a per-read timeout.
    let trickle = tokio::spawn(async move {
        for _ in 0..100 {
            sleep(ms(50)).await;
            if writer.write_all(b" ").await.is_err() {
                break;
            }
        }
    });
    let mut response = Vec::new();
    let _ = timeout(ms(4000), reader.read_to_end(&mut response)).await;
    let elapsed = start.elapsed();
    trickle.abort();
    let response = String::from_utf8_lossy(&response);
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(elapsed >= ms(550) && elapsed < ms(3000), "answered after {elapsed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_handler_gets_408_but_a_streaming_body_is_not_cut() {
    let _shared = EXCLUSIVE.read().await;
    let limits = ServerLimits::default().request_timeout(ms(400)).idle_timeout(ms(300)).header_read_timeout(ms(300));
    let server = server(limits).await;

    let mut stream = connect(server.addr).await;
    let start = Instant::now();
    stream.write_all(get("/sleep").as_bytes()).await.expect("request sent");
    let (head, _) = read_response(&mut stream).await;
    let elapsed = start.elapsed();
    assert!(head.starts_with("http/1.1 408"), "{head}");
    assert!(head.contains("connection: close"), "{head}");
    assert!(elapsed >= ms(350) && elapsed < SLEEP, "answered after {elapsed:?}");

    // The head comes at once, the body takes 2.8 s: longer than the request
    // timeout, and than the idle timeout and the grace period of a graceful
    // close together; it must arrive whole.
    let start = Instant::now();
    let response = reqwest::get(server.url("/stream")).await.expect("stream request sent");
    assert_eq!(response.status(), 200);
    let body = response.text().await.expect("the whole streamed body");
    let expected: String = (0..CHUNKS).map(|i| format!("chunk {i}\n")).collect();
    assert_eq!(body, expected);
    assert!(start.elapsed() >= CHUNK_GAP * CHUNKS - ms(50), "the body streamed for {:?}", start.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_request_heads_are_refused() {
    let _shared = EXCLUSIVE.read().await;
    let server = server(ServerLimits::default().max_header_bytes(8 * 1024).max_headers(20)).await;
    let addr = server.addr;
    let send = |request: String| async move {
        let mut stream = connect(addr).await;
        stream.write_all(request.as_bytes()).await.expect("request sent");
        let (head, _) = read_response(&mut stream).await;
        head
    };
    let with_headers = |headers: String| format!("GET /ok HTTP/1.1\r\nhost: 127.0.0.1\r\n{headers}\r\n");

    // Within the limits.
    let head = send(with_headers(format!("x-big: {}\r\n", "a".repeat(4000)) + &"x-n: 1\r\n".repeat(10))).await;
    assert!(head.starts_with("http/1.1 200"), "a request within the limits: {head}");
    // A head over 8 KiB (hyper's own default would take ~400 KB).
    let head = send(with_headers(format!("x-big: {}\r\n", "a".repeat(16 * 1024)))).await;
    assert!(head.starts_with("http/1.1 431"), "16 KiB header: {head}");
    // More than 20 headers (hyper's default is 100).
    let head = send(with_headers("x-n: 1\r\n".repeat(30))).await;
    assert!(head.starts_with("http/1.1 431"), "30 headers: {head}");

    // An endless head: the server stops reading and closes; it does not buffer it.
    let mut stream = connect(server.addr).await;
    let chunk = vec![b'a'; 64 * 1024];
    let mut sent = 0usize;
    let outcome = timeout(ms(5000), async {
        stream.write_all(b"GET /ok HTTP/1.1\r\nx-endless: ").await?;
        loop {
            stream.write_all(&chunk).await?;
            sent += chunk.len();
            if sent >= 256 * 1024 * 1024 {
                return std::io::Result::Ok(());
            }
        }
    })
    .await;
    assert!(matches!(outcome, Ok(Err(_))), "the server must close on an endless head (sent {sent} bytes: {outcome:?})");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_cap_are_refused_at_once_and_served_again_when_some_close() {
    let _shared = EXCLUSIVE.read().await;
    let cap = 4;
    let server = server(ServerLimits::default().max_connections(cap).header_read_timeout(ms(10_000))).await;
    let mut held = Vec::new();
    for _ in 0..cap {
        held.push(connect(server.addr).await);
    }
    sleep(ms(200)).await;
    // Over the cap: answered 503 at once, again and again (the server keeps accepting).
    for attempt in 0..10 {
        let mut stream = connect(server.addr).await;
        let start = Instant::now();
        stream.write_all(get("/ok").as_bytes()).await.expect("request sent");
        let (head, body) = read_response(&mut stream).await;
        assert!(head.starts_with("http/1.1 503"), "attempt {attempt}: {head}");
        assert!(head.contains("connection: close"), "{head}");
        assert!(body.contains("too many open connections"), "{body}");
        assert!(start.elapsed() < ms(1000), "refused after {:?}", start.elapsed());
        assert!(closed_after(&mut stream, Instant::now(), ms(2000)).await.is_some(), "refused connection left open");
    }
    // Two clients leave: a normal client is served.
    held.truncate(cap - 2);
    let served = served_within(&server, ms(3000)).await;
    assert!(served.is_some(), "no client served after connections closed");
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_flood_keeps_file_descriptors_bounded() {
    let _alone = EXCLUSIVE.write().await;
    rpc::server::raise_open_files_limit().expect("raise the open files limit");
    let cap = 64;
    let flood = 2000;
    let server = server(ServerLimits::default().max_connections(cap).header_read_timeout(ms(1500))).await;
    sleep(ms(100)).await;
    let before = open_fds();

    let mut clients = Vec::with_capacity(flood);
    for _ in 0..flood / 100 {
        let batch = (0..100).map(|_| async {
            let mut stream = connect(server.addr).await;
            // Half a request head, never finished.
            let _ = stream.write_all(b"GET /ok HTTP/1.1\r\n").await;
            stream
        });
        clients.extend(futures_util::future::join_all(batch).await);
    }
    sleep(ms(300)).await;
    let during = open_fds();
    // The flood's own sockets, plus at most the cap and the refusals under way (32).
    let bound = before + flood + cap + 32 + 20;
    assert!(during <= bound, "{during} descriptors open during the flood (before: {before}, bound: {bound})");

    // At the cap and idle, the accept loop must not spin.
    let (cpu, wall) = (cpu_time(), Instant::now());
    sleep(ms(1000)).await;
    let used = cpu_time().saturating_sub(cpu);
    assert!(used < wall.elapsed() / 2, "{used:?} of CPU in {:?} at the cap", wall.elapsed());

    // Once the header-read timeout has closed the half-open connections, a normal client is served.
    let served = served_within(&server, ms(4000)).await;
    assert!(served.is_some(), "no client served after the flood");

    drop(clients);
    let start = Instant::now();
    while open_fds() > before + 10 && start.elapsed() < ms(3000) {
        sleep(ms(50)).await;
    }
    let after = open_fds();
    assert!(after <= before + 10, "{after} descriptors open after the flood ended (before: {before})");
}

/// An HTTP/2 frame.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = u32::try_from(payload.len()).expect("small frame").to_be_bytes();
    let mut out = vec![len[1], len[2], len[3], kind, flags];
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// Reads one HTTP/2 frame: type, flags, stream id, payload (`None` on close).
async fn read_frame(stream: &mut TcpStream) -> Option<(u8, u8, u32, Vec<u8>)> {
    let mut head = [0u8; 9];
    stream.read_exact(&mut head).await.ok()?;
    let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
    let id = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload).await.ok()?;
    Some((head[3], head[4], id, payload))
}

const DATA: u8 = 0;
const HEADERS: u8 = 1;
const RST_STREAM: u8 = 3;
const SETTINGS: u8 = 4;
const PING: u8 = 6;
const WINDOW_UPDATE: u8 = 8;
const REFUSED_STREAM: u32 = 7;

/// Opens an HTTP/2 connection with prior knowledge; returns the stream and
/// the server's SETTINGS (identifier, value), acknowledged.
async fn h2_handshake(addr: SocketAddr) -> (TcpStream, Vec<(u16, u32)>) {
    let mut stream = connect(addr).await;
    stream.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await.expect("preface sent");
    stream.write_all(&frame(SETTINGS, 0, 0, &[])).await.expect("settings sent");
    loop {
        let (kind, flags, _, payload) =
            timeout(ms(3000), read_frame(&mut stream)).await.ok().flatten().expect("server SETTINGS");
        if kind == SETTINGS && flags & 1 == 0 {
            let settings = payload
                .chunks_exact(6)
                .map(|s| (u16::from_be_bytes([s[0], s[1]]), u32::from_be_bytes([s[2], s[3], s[4], s[5]])))
                .collect();
            stream.write_all(&frame(SETTINGS, 1, 0, &[])).await.expect("settings acknowledged");
            return (stream, settings);
        }
    }
}

/// An HPACK header block for `GET path` (literals without indexing, no Huffman).
fn get_block(path: &str) -> Vec<u8> {
    let mut block = vec![0x82, 0x86]; // :method GET, :scheme http
    for (index, value) in [(4u8, path), (1, "127.0.0.1")] {
        block.push(index); // :path, :authority
        block.push(u8::try_from(value.len()).expect("short value"));
        block.extend_from_slice(value.as_bytes());
    }
    block
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_advertises_its_limits_and_refuses_streams_over_the_maximum() {
    let _shared = EXCLUSIVE.read().await;
    let limits = ServerLimits::default().http2_max_concurrent_streams(3).http2_max_header_list_size(4096);
    let server = server(limits).await;
    let (mut stream, settings) = h2_handshake(server.addr).await;
    assert!(settings.contains(&(0x3, 3)), "SETTINGS_MAX_CONCURRENT_STREAMS: {settings:?}");
    assert!(settings.contains(&(0x6, 4096)), "SETTINGS_MAX_HEADER_LIST_SIZE: {settings:?}");
    // Let the server see the acknowledgement (its limits apply from then on).
    sleep(ms(200)).await;
    for id in [1u32, 3, 5, 7, 9] {
        // END_STREAM | END_HEADERS
        stream.write_all(&frame(HEADERS, 0x5, id, &get_block("/sleep"))).await.expect("stream opened");
    }
    let (mut answered, mut refused) = (Vec::new(), Vec::new());
    let deadline = Instant::now() + SLEEP + ms(3000);
    while answered.len() + refused.len() < 5 {
        let Ok(Some((kind, flags, id, payload))) = timeout_at(deadline, read_frame(&mut stream)).await else {
            break;
        };
        match kind {
            HEADERS => answered.push(id),
            RST_STREAM if payload == REFUSED_STREAM.to_be_bytes() => refused.push(id),
            PING if flags & 1 == 0 => {
                stream.write_all(&frame(PING, 1, 0, &payload)).await.expect("ping acknowledged");
            }
            DATA | SETTINGS | PING | WINDOW_UPDATE => {}
            other => panic!("unexpected frame type {other} on stream {id}: {payload:?}"),
        }
    }
    answered.sort_unstable();
    refused.sort_unstable();
    assert_eq!(answered, [1, 3, 5], "the first three streams are served");
    assert_eq!(refused, [7, 9], "the streams over the maximum are refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preface_sent_in_pieces_is_served_as_http2() {
    let _shared = EXCLUSIVE.read().await;
    let server = server(ServerLimits::default()).await;
    let mut stream = connect(server.addr).await;
    // The server tells the version from the first bytes: pieces of the
    // preface that arrive apart must neither be lost nor taken for HTTP/1.
    for piece in [&b"P"[..], b"RI * HTTP/2", b".0\r\n\r\nSM\r\n\r\n"] {
        stream.write_all(piece).await.expect("piece sent");
        sleep(ms(60)).await;
    }
    stream.write_all(&frame(SETTINGS, 0, 0, &[])).await.expect("settings sent");
    stream.write_all(&frame(SETTINGS, 1, 0, &[])).await.expect("settings acknowledged");
    stream.write_all(&frame(HEADERS, 0x5, 1, &get_block("/ok"))).await.expect("request sent");
    let deadline = Instant::now() + ms(3000);
    loop {
        let Ok(Some((kind, _, id, payload))) = timeout_at(deadline, read_frame(&mut stream)).await else {
            panic!("no HTTP/2 response to a preface sent in pieces");
        };
        if kind == HEADERS {
            assert_eq!(id, 1);
            assert_eq!(payload.first(), Some(&0x88), "literal :status 200 (HPACK index 8): {payload:?}");
            break;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http1_request_whose_first_byte_comes_alone_is_served() {
    let _shared = EXCLUSIVE.read().await;
    let server = server(ServerLimits::default()).await;
    let mut stream = connect(server.addr).await;
    // "P" begins both "POST" and the HTTP/2 preface: the server waits for more.
    let request = "POST /ok HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 0\r\n\r\n";
    stream.write_all(&request.as_bytes()[..1]).await.expect("first byte sent");
    sleep(ms(100)).await;
    stream.write_all(&request.as_bytes()[1..]).await.expect("the rest sent");
    let (head, _) = timeout(ms(3000), read_response(&mut stream)).await.expect("answered");
    assert!(head.starts_with("http/1.1 200"), "{head}");
    // The connection goes on as usual.
    stream.write_all(get("/ok").as_bytes()).await.expect("second request sent");
    let (head, _) = timeout(ms(3000), read_response(&mut stream)).await.expect("answered again");
    assert!(head.starts_with("http/1.1 200"), "{head}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_a_preface_is_closed_at_the_header_read_timeout() {
    let _shared = EXCLUSIVE.read().await;
    let closed = closed_after_sending(b"PRI * HTTP/2.0\r\n")
        .await
        .expect("a connection that stops inside the preface must be closed");
    assert!(closed >= ms(350), "closed after {closed:?}, before the header-read timeout");
}

/// An HTTP/2 client connection (hyper) with prior knowledge, and the task
/// driving it (ends when the server closes the connection).
async fn h2_client(
    addr: SocketAddr,
) -> (hyper::client::conn::http2::SendRequest<Empty<Bytes>>, tokio::task::JoinHandle<hyper::Result<()>>) {
    let io = TokioIo::new(connect(addr).await);
    let (send, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), io).await.expect("HTTP/2 handshake");
    (send, tokio::spawn(connection))
}

fn h2_get(addr: SocketAddr, header: &str) -> Request<Empty<Bytes>> {
    Request::get(format!("http://{addr}/ok")).header("x-big", header).body(Empty::new()).expect("request")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_huge_header_list_gets_431() {
    let _shared = EXCLUSIVE.read().await;
    let server = server(ServerLimits::default().http2_max_header_list_size(4096)).await;
    let (mut send, _connection) = h2_client(server.addr).await;
    let response = send.send_request(h2_get(server.addr, &"a".repeat(1024))).await.expect("small request answered");
    assert_eq!(response.status(), StatusCode::OK);
    // 8 KiB: over the 4 KiB limit, under hyper's 16 KiB default.
    let response = send.send_request(h2_get(server.addr, &"a".repeat(8 * 1024))).await;
    match response {
        Ok(response) => assert_eq!(response.status(), StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE),
        Err(e) => panic!("expected a 431, got {e}"),
    }
    // The connection goes on.
    let response = send.send_request(h2_get(server.addr, "small")).await.expect("answered after the 431");
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_idle_connection_is_closed_after_the_idle_timeout() {
    let _shared = EXCLUSIVE.read().await;
    let server = server(ServerLimits::default().header_read_timeout(ms(300)).idle_timeout(ms(1000))).await;
    let (mut send, connection) = h2_client(server.addr).await;
    let response = send.send_request(h2_get(server.addr, "x")).await.expect("answered");
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.into_body().collect().await.expect("body").to_bytes();
    assert_eq!(body, "ok");
    let idle_from = Instant::now();
    let ended = timeout(ms(5000), connection).await;
    let elapsed = idle_from.elapsed();
    assert!(ended.is_ok(), "the idle HTTP/2 connection is still open after {elapsed:?}");
    assert!(elapsed >= ms(850), "closed after {elapsed:?}, before the 1000 ms idle timeout");
    assert!(elapsed < ms(4000), "closed after {elapsed:?}");
}

/// A client that asks for a large response and never reads it: the write
/// makes no progress, and after the write timeout the connection is closed,
/// releasing what the response held (before, it stayed in flight until the
/// client went away). A client that reads slowly but steadily keeps it.
#[tokio::test]
async fn a_client_that_never_reads_is_closed_at_the_write_timeout() {
    let _shared = EXCLUSIVE.read().await;
    let server = server(ServerLimits::default().write_timeout(ms(600)).header_read_timeout(ms(500))).await;
    let total = BIG_CHUNKS * 64 * 1024;

    let mut stalled = connect(server.addr).await;
    stalled.write_all(b"GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n").await.unwrap();
    sleep(ms(2500)).await;
    // Whatever the socket buffers took, then the end: not the whole response.
    let mut received = 0usize;
    let mut buf = vec![0u8; 256 * 1024];
    let ended = timeout(Duration::from_secs(10), async {
        loop {
            match stalled.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received += n,
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the server closed the connection");
    assert!(received < total / 2, "the response was cut: {received} of {total} bytes");

    // A slow reader: 64 KiB every 100 ms is progress; it gets everything it reads.
    let mut slow = connect(server.addr).await;
    slow.write_all(b"GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n").await.unwrap();
    let started = Instant::now();
    let mut read = 0usize;
    while started.elapsed() < Duration::from_secs(2) {
        let n = timeout(Duration::from_secs(5), slow.read(&mut buf[..64 * 1024])).await.expect("data").unwrap();
        assert!(n > 0, "a slow reader is not cut after {read} bytes");
        read += n;
        sleep(ms(100)).await;
    }
}
