//! The stdio transport driven over in-memory pipes: both eras, streaming,
//! cancellation, malformed and oversized input, the end of input.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp::McpEndpoint;
use mcp::stdio::Stdio;
use rpc::{CallInfo, Environment, Executor, Listener, MaybeReady, Registry};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::task::JoinHandle;

mod fixtures {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use mcp::{Context, LogLevel};

    rpc::api_group! {
        /// The test tools.
        pub struct Work => "work", mcp = true;
    }

    /// Counts its drops: a cancelled call drops its future, and this with it.
    pub struct OnDrop(pub Arc<AtomicUsize>);

    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Tools for the transport.
    pub struct Tools {
        pub dropped: Arc<AtomicUsize>,
    }

    #[rpc::service(alias = "work", groups(Work))]
    impl Tools {
        /// Adds.
        pub fn add(&self, a: i32, b: i32) -> i32 {
            a + b
        }

        /// Echoes a text (newlines and all).
        pub fn echo(&self, text: String) -> String {
            text
        }

        /// Counts to `steps`, reporting progress and logging each step, then
        /// working on for 80 ms (longer than a progress notification waits).
        ///
        /// # Arguments
        /// * `steps` - How far to count
        pub async fn count(&self, ctx: Context, #[rpc(default = 3)] steps: u32) -> u32 {
            for i in 1..=steps {
                ctx.progress(f64::from(i), Some(f64::from(steps)), Some(&format!("step {i}")));
                ctx.log(LogLevel::Info, format!("step {i}"));
                tokio::time::sleep(Duration::from_millis(80)).await;
            }
            steps
        }

        /// Reports progress to `steps` and ends at once.
        ///
        /// # Arguments
        /// * `steps` - How far to count
        pub async fn quick(&self, ctx: Context, #[rpc(default = 3)] steps: u32) -> u32 {
            for i in 1..=steps {
                ctx.progress(f64::from(i), Some(f64::from(steps)), None);
                tokio::task::yield_now().await;
            }
            steps
        }

        /// Runs until cancelled.
        pub async fn forever(&self) -> u32 {
            let _flag = OnDrop(self.dropped.clone());
            std::future::pending::<()>().await;
            0
        }

        /// Routes by region (mirrored into `Mcp-Param-Region` over HTTP).
        ///
        /// # Arguments
        /// * `region` - The region
        pub fn route(&self, #[rpc(header = "Region")] region: String) -> String {
            format!("to {region}")
        }
    }
}

const MODERN: &str = "2026-07-28";

/// A client on the other end of the transport's pipes.
struct Client {
    input: DuplexStream,
    output: BufReader<DuplexStream>,
    served: JoinHandle<io::Result<()>>,
    dropped: Arc<AtomicUsize>,
}

fn endpoint(dropped: &Arc<AtomicUsize>, max_body: usize) -> McpEndpoint {
    endpoint_with(dropped, max_body, Vec::new())
}

fn endpoint_with(dropped: &Arc<AtomicUsize>, max_body: usize, listeners: Vec<Arc<dyn Listener>>) -> McpEndpoint {
    let registry =
        Registry::builder().service(fixtures::Tools { dropped: Arc::clone(dropped) }).build().expect("registry");
    let executor = Executor::new(registry, Environment::Dev).with_listeners(listeners);
    McpEndpoint::builder::<fixtures::Work>(executor).max_body_bytes(max_body).build()
}

impl Client {
    fn start() -> Self {
        Self::with(|stdio| stdio, 1 << 20)
    }

    fn with(configure: impl FnOnce(Stdio) -> Stdio, max_body: usize) -> Self {
        let dropped = Arc::new(AtomicUsize::new(0));
        let stdio = configure(Stdio::new(endpoint(&dropped, max_body), 1));
        Self::serving(stdio, dropped, 64 * 1024)
    }

    /// A client of an endpoint whose executor counts after-response events
    /// (the counter returned), with an output pipe of `output_capacity`.
    fn counting_sent(output_capacity: usize) -> (Self, Arc<Sent>) {
        let dropped = Arc::new(AtomicUsize::new(0));
        let sent = Arc::new(Sent::default());
        let endpoint = endpoint_with(&dropped, 1 << 20, vec![sent.clone() as Arc<dyn Listener>]);
        (Self::serving(Stdio::new(endpoint, 1), dropped, output_capacity), sent)
    }

    /// A client of `stdio`, whose output pipe holds `output_capacity` bytes
    /// the client has not read.
    fn serving(stdio: Stdio, dropped: Arc<AtomicUsize>, output_capacity: usize) -> Self {
        let (input, server_in) = tokio::io::duplex(64 * 1024);
        let (server_out, output) = tokio::io::duplex(output_capacity);
        let served = tokio::spawn(stdio.serve(server_in, server_out));
        Client { input, output: BufReader::new(output), served, dropped }
    }

    async fn write_raw(&mut self, bytes: &[u8]) {
        self.input.write_all(bytes).await.expect("the transport reads");
    }

    async fn send(&mut self, message: &Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.write_raw(&line).await;
    }

    /// The next line, which must be one JSON value.
    async fn recv(&mut self) -> Value {
        read_answer(&mut self.output).await
    }

    /// Writes `lines` from a task of its own, which hands the input back
    /// once it has written them all (the client reads meanwhile).
    fn feed(&mut self, lines: Vec<Vec<u8>>) -> JoinHandle<DuplexStream> {
        let mut input = std::mem::replace(&mut self.input, tokio::io::duplex(1).0);
        tokio::spawn(async move {
            for line in lines {
                input.write_all(&line).await.expect("the transport reads");
            }
            input
        })
    }

    async fn call(&mut self, message: Value) -> Value {
        self.send(&message).await;
        self.recv().await
    }

    /// Closes the input; the transport must end by itself, cleanly.
    async fn close(mut self) -> Arc<AtomicUsize> {
        self.input.shutdown().await.expect("closed");
        drop(self.input);
        let served = tokio::time::timeout(Duration::from_secs(10), self.served)
            .await
            .expect("the transport ends at the end of input")
            .expect("no panic");
        served.expect("a clean end");
        let mut rest = String::new();
        let _ = tokio::time::timeout(
            Duration::from_secs(1),
            tokio::io::AsyncReadExt::read_to_string(&mut self.output, &mut rest),
        )
        .await;
        assert_eq!(rest, "", "nothing after the last answer");
        self.dropped
    }
}

/// The next line of `output`, which must be one JSON value.
async fn read_answer(output: &mut BufReader<DuplexStream>) -> Value {
    let mut line = String::new();
    let read = tokio::time::timeout(Duration::from_secs(10), output.read_line(&mut line))
        .await
        .expect("a line within 10 s")
        .expect("readable");
    assert!(read > 0, "the transport closed its output");
    assert!(line.ends_with('\n'), "a whole line: {line:?}");
    assert!(!line.trim_end_matches('\n').contains(['\n', '\r']), "one line per message: {line:?}");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
}

/// `count` 2026-07-28 calls of `work.echo` with `text`, as lines.
fn echo_lines(count: usize, text: &str) -> Vec<Vec<u8>> {
    (0..count)
        .map(|id| {
            let call = modern(json!(id), "tools/call", json!({"name": "work.echo", "arguments": {"text": text}}));
            let mut line = call.to_string().into_bytes();
            line.push(b'\n');
            line
        })
        .collect()
}

fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

fn modern(id: Value, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "stdio-test", "version": "1"},
    });
    request(id, method, params)
}

async fn initialize(client: &mut Client, version: &str) -> Value {
    let params = json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let reply = client.call(request(json!(0), "initialize", params)).await;
    client.send(&notification("notifications/initialized", json!({}))).await;
    reply
}

#[tokio::test]
async fn legacy_handshake() {
    let mut client = Client::start();
    // Before `initialize`, a call is refused in stdio's terms (no header to name).
    let early = client.call(request(json!("early"), "tools/list", json!({}))).await;
    assert_eq!(early["id"], "early", "{early}");
    let message = early["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("send `initialize` first") && !message.contains("header"), "{early}");
    let reply = initialize(&mut client, "2025-11-25").await;
    assert_eq!(reply["id"], 0);
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
    assert!(reply["result"]["capabilities"]["tools"].is_object(), "{reply}");

    let list = client.call(request(json!(1), "tools/list", json!({}))).await;
    assert_eq!(list["id"], 1, "the notification got no answer: {list}");
    let names: Vec<&str> =
        list["result"]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"work.add") && names.contains(&"work.count"), "{names:?}");
    assert!(list["result"]["tools"][0]["outputSchema"].is_object(), "2025-11-25 lists have output schemas: {list}");

    let sum = client
        .call(request(json!("a"), "tools/call", json!({"name": "work.add", "arguments": {"a": 2, "b": 3}})))
        .await;
    assert_eq!(sum["id"], "a");
    assert_eq!(sum["result"]["structuredContent"]["result"], 5, "{sum}");
    assert!(sum["result"].get("resultType").is_none(), "no 2026-07-28 fields in a session: {sum}");

    let text = "two\nlines\r\nand \"quotes\"";
    let echo =
        client.call(request(json!(2), "tools/call", json!({"name": "work.echo", "arguments": {"text": text}}))).await;
    assert_eq!(echo["result"]["structuredContent"]["result"], text);

    let invalid =
        client.call(request(json!(3), "tools/call", json!({"name": "work.add", "arguments": {"a": "x"}}))).await;
    assert_eq!(invalid["id"], 3);
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");

    let pong = client.call(request(json!(4), "ping", json!({}))).await;
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": 4, "result": {}}));
    client.close().await;
}

#[tokio::test]
async fn legacy_progress_and_logs_stream_before_the_result() {
    let mut client = Client::start();
    initialize(&mut client, "2025-06-18").await;
    let level = client.call(request(json!(1), "logging/setLevel", json!({"level": "info"}))).await;
    assert_eq!(level["result"], json!({}), "{level}");
    client
        .send(&request(
            json!(2),
            "tools/call",
            json!({"name": "work.count", "arguments": {"steps": 3}, "_meta": {"progressToken": "p"}}),
        ))
        .await;
    let mut lines = Vec::new();
    loop {
        let line = client.recv().await;
        let done = line.get("id").is_some();
        lines.push(line);
        if done {
            break;
        }
    }
    let progress: Vec<&Value> = lines.iter().filter(|l| l["method"] == "notifications/progress").collect();
    let logs: Vec<&Value> = lines.iter().filter(|l| l["method"] == "notifications/message").collect();
    assert_eq!(logs.len(), 3, "{lines:#?}");
    // Each step's progress is written 50 ms after it while the call goes
    // on (80 ms): three, unless this machine was slower than 30 ms to wake
    // the transport (the next value then takes the place of the last).
    assert!((1..=3).contains(&progress.len()), "{lines:#?}");
    let values: Vec<f64> = progress.iter().map(|p| p["params"]["progress"].as_f64().unwrap()).collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "increasing: {values:?}");
    assert!(progress.iter().all(|p| p["params"]["progressToken"] == "p"), "{progress:?}");
    let last = lines.last().unwrap();
    assert_eq!((last["id"].clone(), last["result"]["structuredContent"]["result"].clone()), (json!(2), json!(3)));
    client.close().await;
}

#[tokio::test]
async fn progress_that_the_response_overtakes_is_not_written() {
    // A client that read a progress notification with the response (the
    // TypeScript SDK) would find its request gone and call the token unknown.
    let mut client = Client::start();
    initialize(&mut client, "2025-11-25").await;
    for era in ["legacy", "modern"] {
        let params = json!({"name": "work.quick", "arguments": {"steps": 3}, "_meta": {"progressToken": "q"}});
        let mut call = if era == "legacy" {
            request(json!(1), "tools/call", params)
        } else {
            modern(json!(1), "tools/call", params)
        };
        if era == "modern" {
            call["params"]["_meta"]["progressToken"] = json!("q");
        }
        let answer = client.call(call).await;
        assert_eq!(
            (answer["id"].clone(), answer["result"]["structuredContent"]["result"].clone()),
            (json!(1), json!(3)),
            "{era}: the response, no progress before it: {answer}"
        );
    }
    client.close().await;
}

#[tokio::test]
async fn answers_come_out_in_the_order_of_their_lines() {
    let mut client = Client::start();
    initialize(&mut client, "2025-11-25").await;
    // One read: a call answered at once, then one that streams (it reports
    // progress) and is done at once too, then another answered at once.
    let lines: Vec<u8> = [
        request(json!(2), "tools/call", json!({"name": "work.add", "arguments": {"a": 1, "b": 2}})),
        request(
            json!(3),
            "tools/call",
            json!({"name": "work.quick", "arguments": {"steps": 2}, "_meta": {"progressToken": "c"}}),
        ),
        request(json!(4), "tools/call", json!({"name": "work.add", "arguments": {"a": 2, "b": 2}})),
    ]
    .iter()
    .flat_map(|m| format!("{m}\n").into_bytes())
    .collect();
    client.write_raw(&lines).await;
    let ids: Vec<Value> =
        [client.recv().await, client.recv().await, client.recv().await].iter().map(|l| l["id"].clone()).collect();
    assert_eq!(ids[0], json!(2), "the first line's answer comes first: {ids:?}");
    assert!(ids.contains(&json!(3)) && ids.contains(&json!(4)), "{ids:?}");
    client.close().await;
}

#[tokio::test]
async fn modern_discover_then_stateless_calls() {
    let mut client = Client::start();
    let discover = client.call(modern(json!(1), "server/discover", json!({}))).await;
    assert_eq!(discover["id"], 1);
    assert_eq!(discover["result"]["supportedVersions"], json!([MODERN]), "{discover}");

    let list = client.call(modern(json!(2), "tools/list", json!({}))).await;
    assert_eq!(list["result"]["resultType"], "complete", "{list}");

    let sum =
        client.call(modern(json!(3), "tools/call", json!({"name": "work.add", "arguments": {"a": 1, "b": 2}}))).await;
    assert_eq!(sum["result"]["structuredContent"]["result"], 3, "{sum}");
    assert_eq!(sum["result"]["resultType"], "complete");

    // The headers 2026-07-28 mirrors from the body (Mcp-Param-Region here,
    // non-ASCII too) are filled in by the transport.
    let routed = client
        .call(modern(json!(4), "tools/call", json!({"name": "work.route", "arguments": {"region": "Київ"}})))
        .await;
    assert_eq!(routed["result"]["structuredContent"]["result"], "to Київ", "{routed}");

    let mut streamed = modern(json!(5), "tools/call", json!({"name": "work.count", "arguments": {"steps": 2}}));
    streamed["params"]["_meta"]["progressToken"] = json!(7);
    client.send(&streamed).await;
    let first = client.recv().await;
    assert_eq!(
        (first["method"].clone(), first["params"]["progressToken"].clone()),
        (json!("notifications/progress"), json!(7))
    );
    let mut result = client.recv().await;
    if result["method"] == "notifications/progress" {
        result = client.recv().await;
    }
    assert_eq!((result["id"].clone(), result["result"]["structuredContent"]["result"].clone()), (json!(5), json!(2)));

    let wrong = client.call(modern(json!(6), "initialize", json!({}))).await;
    assert_eq!(wrong["error"]["code"], -32601, "initialize is not part of 2026-07-28: {wrong}");
    let unknown = client.call(modern(json!(7), "nope/nothing", json!({}))).await;
    assert_eq!((unknown["id"].clone(), unknown["error"]["code"].clone()), (json!(7), json!(-32601)));
    client.close().await;
}

#[tokio::test]
async fn cancellation_in_both_eras() {
    let mut client = Client::start();
    // 2026-07-28: no session; the transport drops the call.
    client.send(&modern(json!("m1"), "tools/call", json!({"name": "work.forever"}))).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    client.send(&notification("notifications/cancelled", json!({"requestId": "m1", "reason": "test"}))).await;
    let discover = client.call(modern(json!(9), "server/discover", json!({}))).await;
    assert_eq!(discover["id"], 9, "no answer for the cancelled call: {discover}");
    wait_for(&client.dropped, 1).await;

    // Handshake era.
    initialize(&mut client, "2025-11-25").await;
    client.send(&request(json!(10), "tools/call", json!({"name": "work.forever"}))).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    client.send(&notification("notifications/cancelled", json!({"requestId": 10}))).await;
    wait_for(&client.dropped, 2).await;
    let pong = client.call(request(json!(11), "ping", json!({}))).await;
    assert_eq!(pong["id"], 11, "no answer for the cancelled call: {pong}");
    // Cancelling what is not running changes nothing.
    client.send(&notification("notifications/cancelled", json!({"requestId": 12345}))).await;
    client.send(&notification("notifications/cancelled", json!({}))).await;
    let pong = client.call(request(json!(12), "ping", json!({}))).await;
    assert_eq!(pong["id"], 12);
    client.close().await;
}

async fn wait_for(counter: &AtomicUsize, value: usize) {
    for _ in 0..500 {
        if counter.load(Ordering::SeqCst) >= value {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the call was not dropped");
}

#[tokio::test]
async fn batches_in_a_2025_03_26_session() {
    let mut client = Client::start();
    initialize(&mut client, "2025-03-26").await;
    let batch = json!([
        request(json!(1), "tools/call", json!({"name": "work.add", "arguments": {"a": 1, "b": 1}})),
        notification("notifications/progress", json!({})),
        request(json!(2), "ping", json!({})),
    ]);
    let reply = client.call(batch).await;
    let replies = reply.as_array().expect("one line holding the batch's responses");
    assert_eq!(replies.len(), 2, "{reply}");
    assert!(replies.iter().any(|r| r["id"] == 1 && r["result"]["content"].is_array()), "{reply}");
    assert!(replies.iter().any(|r| r["id"] == 2), "{reply}");
    client.close().await;

    let mut later = Client::start();
    initialize(&mut later, "2025-11-25").await;
    let refused = later.call(json!([request(json!(1), "ping", json!({}))])).await;
    assert_eq!((refused["id"].clone(), refused["error"]["code"].clone()), (Value::Null, json!(-32600)), "{refused}");
    later.close().await;
}

#[tokio::test]
async fn malformed_lines_get_errors_and_the_session_goes_on() {
    let mut client = Client::start();
    let parse = client.call(json!("placeholder")).await;
    assert_eq!(parse["error"]["code"], -32600, "a JSON string is no request: {parse}");
    client.write_raw(b"{not json\n").await;
    let parse = client.recv().await;
    assert_eq!((parse["id"].clone(), parse["error"]["code"].clone()), (Value::Null, json!(-32700)), "{parse}");
    client.write_raw(b"\n   \n\r\n").await;
    client.write_raw(&[0xff, 0xfe, b'\n']).await;
    let bad_utf8 = client.recv().await;
    assert_eq!(bad_utf8["error"]["code"], -32700, "{bad_utf8}");
    // Notifications and responses never get an answer, even refused ones
    // (no session yet).
    client.send(&notification("notifications/initialized", json!({}))).await;
    client.send(&json!({"jsonrpc": "2.0", "id": 99, "result": {}})).await;
    let first = client.call(request(json!(1), "tools/list", json!({}))).await;
    assert_eq!(first["id"], 1, "{first}");
    assert_eq!(first["error"]["code"], -32000, "a legacy request before initialize: {first}");
    // A request with a CRLF line end.
    client.write_raw(format!("{}\r\n", modern(json!(2), "server/discover", json!({}))).as_bytes()).await;
    assert_eq!(client.recv().await["id"], 2);
    client.close().await;
}

#[tokio::test]
async fn an_overlong_line_is_skipped_with_an_error() {
    let mut client = Client::with(|s| s, 4096);
    let long = request(json!(1), "tools/call", json!({"name": "work.echo", "arguments": {"text": "x".repeat(10_000)}}));
    let error = client.call(long).await;
    assert_eq!((error["id"].clone(), error["error"]["code"].clone()), (Value::Null, json!(-32600)), "{error}");
    assert!(error["error"]["message"].as_str().unwrap().contains("4096"), "{error}");
    let fine =
        client.call(modern(json!(2), "tools/call", json!({"name": "work.add", "arguments": {"a": 1, "b": 1}}))).await;
    assert_eq!(fine["id"], 2, "the rest of the long line was skipped: {fine}");

    // 10 MB without a line end: one error, nothing held, then the next line.
    let chunk = vec![b'x'; 1 << 20];
    let writer = async {
        for _ in 0..10 {
            client.input.write_all(&chunk).await.expect("the transport keeps reading");
        }
        client.input.write_all(b"\n").await.expect("written");
    };
    let mut line = String::new();
    let reader = client.output.read_line(&mut line);
    let ((), read) = tokio::time::timeout(Duration::from_secs(20), async { tokio::join!(writer, reader) })
        .await
        .expect("read while written");
    assert!(read.expect("a line") > 0);
    let error: Value = serde_json::from_str(&line).expect("JSON");
    assert_eq!(error["error"]["code"], -32600, "{error}");
    let fine = client.call(modern(json!(3), "server/discover", json!({}))).await;
    assert_eq!(fine["id"], 3);
    client.close().await;
}

#[tokio::test]
async fn end_of_input_lets_calls_finish_then_drops_the_rest() {
    let mut client = Client::with(|s| s.grace(Duration::from_millis(300)), 1 << 20);
    initialize(&mut client, "2025-11-25").await;
    client.send(&request(json!(1), "tools/call", json!({"name": "work.count", "arguments": {"steps": 2}}))).await;
    client.send(&request(json!(2), "tools/call", json!({"name": "work.forever"}))).await;
    client.input.shutdown().await.expect("closed");
    // The call that finishes in time is answered after the end of input.
    let done = client.recv().await;
    assert_eq!((done["id"].clone(), done["result"]["structuredContent"]["result"].clone()), (json!(1), json!(2)));
    let dropped = client.dropped.clone();
    let started = std::time::Instant::now();
    tokio::time::timeout(Duration::from_secs(5), &mut client.served)
        .await
        .expect("the transport ends after the grace period")
        .expect("no panic")
        .expect("a clean end");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(dropped.load(Ordering::SeqCst), 1, "the endless call was dropped");
}

#[tokio::test]
async fn a_version_without_tools_is_refused_at_once() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let error = mcp::stdio::serve(endpoint(&dropped, 1024), 7, tokio::io::empty(), tokio::io::sink())
        .await
        .expect_err("no tools at version 7");
    assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
    assert!(error.to_string().contains("version 7"), "{error}");
}

#[tokio::test]
async fn many_concurrent_calls_are_bounded_and_all_answered() {
    let mut client = Client::with(|s| s.max_in_flight(4), 1 << 20);
    for id in 0..40 {
        client
            .send(&modern(json!(id), "tools/call", json!({"name": "work.add", "arguments": {"a": id, "b": 1}})))
            .await;
    }
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..40 {
        let reply = client.recv().await;
        let id = reply["id"].as_i64().expect("an id");
        assert_eq!(reply["result"]["structuredContent"]["result"], id + 1);
        seen.insert(id);
    }
    assert_eq!(seen.len(), 40);
    client.close().await;
}

/// Counts after-response events.
#[derive(Default)]
struct Sent(AtomicUsize);

impl Listener for Sent {
    fn after_response<'a>(&'a self, _: &'a CallInfo, _: &'a RawValue) -> MaybeReady<'a, ()> {
        self.0.fetch_add(1, Ordering::SeqCst);
        MaybeReady::ready(())
    }
}

#[tokio::test]
async fn after_response_waits_until_the_answer_is_written() {
    // An output pipe of 256 bytes: the answers below wait for the client.
    let (mut client, sent) = Client::counting_sent(256);
    let text = "x".repeat(1000);
    for id in 0..3 {
        client.send(&modern(json!(id), "tools/call", json!({"name": "work.echo", "arguments": {"text": text}}))).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(sent.0.load(Ordering::SeqCst), 0, "no answer was written yet, so no after_response ran");
    for id in 0..3 {
        let reply = client.recv().await;
        assert_eq!(reply["id"], id, "answers in turn: {reply}");
        assert_eq!(reply["result"]["structuredContent"]["result"], text.as_str());
    }
    wait_for(&sent.0, 3).await;
    client.close().await;
    assert_eq!(sent.0.load(Ordering::SeqCst), 3, "once per answer");
}

#[tokio::test]
async fn a_client_that_does_not_read_stops_the_reading_not_the_memory() {
    let mut client = Client::start();
    // 4,000 answers of 8 KB each (32 MB) against a write queue of at most
    // 64 batches of 64 KB: the transport must stop reading long before.
    const CALLS: usize = 4000;
    let text = "y".repeat(4096);
    let feeding = client.feed(echo_lines(CALLS, &text));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!feeding.is_finished(), "the transport went on reading while nobody read its answers");
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..CALLS {
        let reply = client.recv().await;
        assert_eq!(reply["result"]["structuredContent"]["result"], text.as_str());
        seen.insert(reply["id"].as_u64().expect("an id"));
    }
    assert_eq!(seen.len(), CALLS, "every call answered once");
    client.input = feeding.await.expect("fed");
    client.close().await;
}

#[tokio::test]
async fn after_response_keeps_pace_with_a_client_that_reads_slower_than_it_writes() {
    // A small output pipe: the writer always has lines waiting, so its queue
    // never empties while the input lasts.
    let (mut client, sent) = Client::counting_sent(4096);
    const CALLS: usize = 10_000;
    let feeding = client.feed(echo_lines(CALLS, &"z".repeat(1000)));
    for _ in 0..CALLS / 2 {
        client.recv().await;
    }
    assert!(!feeding.is_finished(), "the input still lasts");
    // What waits for its after-response work is bounded: the writer's queue
    // (64 entries of at most 64 KB, about 2 KB an answer here) and one round
    // of its buffer. Without the bound it would be every answer so far.
    let behind = CALLS / 2 - sent.0.load(Ordering::SeqCst);
    assert!(behind < 64 * 33 + 64, "{behind} answers read by the client still wait for after_response");
    for _ in CALLS / 2..CALLS {
        client.recv().await;
    }
    client.input = feeding.await.expect("fed");
    client.close().await;
    assert_eq!(sent.0.load(Ordering::SeqCst), CALLS, "once per answer");
}

#[tokio::test]
async fn output_closed_while_lines_keep_coming_ends_the_transport_with_its_error() {
    // Lines are read before the writer is polled (a ready line first): a
    // writer that failed must still end the transport while the client
    // goes on writing, not once the input ends.
    let mut client = Client::start();
    let Client { output, .. } = &mut client;
    drop(std::mem::replace(output, BufReader::new(tokio::io::duplex(1).0)));
    let feeding = client.feed(echo_lines(50_000, "z"));
    let served = tokio::time::timeout(Duration::from_secs(10), &mut client.served)
        .await
        .expect("the transport ends while the client still writes")
        .expect("no panic");
    let error = served.expect_err("the write error");
    assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "{error}");
    assert!(!feeding.is_finished(), "the transport stopped reading early");
    feeding.abort();
}
