//! The transport-free `McpServer` driven with messages, no HTTP and no
//! stdio: both eras, a batch, a stream of progress then the response,
//! cancellation within a scope, and refusals (unknown version, a
//! response sent to the server, a session that does not exist).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use mcp::McpServer;
use mcp::server::{Caller, Frame, Incoming, Reply, Status};
use rpc::jsonrpc::envelope::parse_body;
use rpc::{Environment, Executor, Registry};
use serde_json::{Value, json};

mod fixtures {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use mcp::Context;

    rpc::api_group!(pub struct Work => "work", mcp = true);

    /// Counts its drops: a cancelled call drops its future, and this with it.
    pub struct OnDrop(pub Arc<AtomicUsize>);

    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Tools for the server.
    pub struct Tools {
        pub dropped: Arc<AtomicUsize>,
    }

    #[rpc::service(alias = "work", groups(Work))]
    impl Tools {
        /// Adds.
        pub fn add(&self, a: i32, b: i32) -> i32 {
            a + b
        }

        /// Counts to `steps`, reporting progress.
        pub async fn count(&self, ctx: Context, steps: u32) -> u32 {
            for i in 1..=steps {
                ctx.progress(f64::from(i), Some(f64::from(steps)), None);
                tokio::task::yield_now().await;
            }
            steps
        }

        /// A note, as a resource.
        #[mcp::mcp_resource(uri = "work://notes/{id}", mime_type = "text/plain")]
        pub fn note(&self, id: u32) -> String {
            format!("note {id}")
        }

        /// A greeting prompt.
        #[mcp::mcp_prompt]
        pub fn greet(&self, who: String) -> String {
            format!("Greet {who}.")
        }

        /// Never ends (until cancelled).
        pub async fn forever(&self) -> u32 {
            let _guard = OnDrop(self.dropped.clone());
            tokio::time::sleep(Duration::from_secs(3600)).await;
            0
        }
    }
}

fn server() -> (McpServer, Arc<AtomicUsize>) {
    let dropped = Arc::new(AtomicUsize::new(0));
    let registry = Registry::builder().service(fixtures::Tools { dropped: dropped.clone() }).build().expect("registry");
    let endpoint = mcp::McpEndpoint::builder::<fixtures::Work>(Executor::new(registry, Environment::Dev)).build();
    (endpoint.server(), dropped)
}

/// The one message of `reply`, as JSON, with its status.
fn message(reply: Reply) -> (Status, Value, Option<String>) {
    match reply {
        Reply::Message(m) => (m.status, serde_json::from_slice(&m.body).expect("JSON"), m.session),
        other => panic!("one message, not {other:?}"),
    }
}

async fn send(server: &McpServer, body: &Value, session: Option<&str>, protocol: Option<&str>) -> Reply {
    let bytes = serde_json::to_vec(body).expect("JSON");
    let parsed = parse_body(&bytes, true).expect("a JSON-RPC body");
    let mut incoming = Incoming::new(parsed, 1, Caller::default());
    incoming.session = session;
    incoming.protocol = protocol;
    server.handle(&incoming).await
}

/// The `initialize` request of handshake-era `protocol`.
fn initialize(protocol: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": protocol, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

fn stateless_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}})
}

#[tokio::test]
async fn the_handshake_era_without_a_transport() {
    let (server, _) = server();
    let init = initialize("2025-11-25");
    let (status, reply, session) = message(send(&server, &init, None, None).await);
    assert_eq!(status, Status::Ok);
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
    // The group's crate names the server: this test crate is `mcp`'s own.
    assert_eq!(reply["result"]["serverInfo"]["name"], "mcp");
    let session = session.expect("initialize opens a session");
    let s = Some(session.as_str());
    let v = Some("2025-11-25");

    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert!(matches!(send(&server, &initialized, s, v).await, Reply::Accepted));

    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (_, reply, _) = message(send(&server, &list, s, v).await);
    let names: Vec<&str> =
        reply["result"]["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["work.add", "work.count", "work.forever"], "resources and prompts are not tools");

    let read = json!({"jsonrpc": "2.0", "id": 21, "method": "resources/read", "params": {"uri": "work://notes/4"}});
    let (_, reply, _) = message(send(&server, &read, s, v).await);
    assert_eq!(
        reply["result"]["contents"],
        json!([{"uri": "work://notes/4", "mimeType": "text/plain", "text": "note 4"}])
    );
    let prompt = json!({"jsonrpc": "2.0", "id": 22, "method": "prompts/get", "params": {"name": "work.greet", "arguments": {"who": "Ann"}}});
    let (_, reply, _) = message(send(&server, &prompt, s, v).await);
    assert_eq!(reply["result"]["messages"][0]["content"]["text"], "Greet Ann.");

    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "work.add", "arguments": {"a": 2, "b": 3}}});
    let (_, reply, _) = message(send(&server, &call, s, v).await);
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 3, "result": {
        "content": [{"type": "text", "text": "5"}], "structuredContent": {"result": 5}, "isError": false}})
    );

    let invalid = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "work.add", "arguments": {"a": "x"}}});
    let (_, reply, _) = message(send(&server, &invalid, s, v).await);
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert_eq!(reply["id"], 4);

    let unknown = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"});
    let (status, reply, _) = message(send(&server, &unknown, Some("no-such-session"), v).await);
    assert_eq!(status, Status::NotFound, "{reply}");
}

#[tokio::test]
async fn a_batch_under_2025_03_26() {
    let (server, _) = server();
    let init = initialize("2025-03-26");
    let (_, _, session) = message(send(&server, &init, None, None).await);
    let batch = json!([
        {"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "work.add", "arguments": {"a": 1, "b": 1}}},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/call", "params": {"name": "work.add", "arguments": {"a": 2, "b": 2}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}
    ]);
    let (_, reply, _) = message(send(&server, &batch, session.as_deref(), Some("2025-03-26")).await);
    let results: Vec<(Value, Value)> = reply
        .as_array()
        .expect("an array of responses")
        .iter()
        .map(|r| (r["id"].clone(), r["result"]["content"][0]["text"].clone()))
        .collect();
    // 2025-03-26 has no structured content: the result is text.
    assert_eq!(results, [(json!("a"), json!("2")), (json!("b"), json!("4"))], "{reply}");
    assert!(reply[0]["result"].get("structuredContent").is_none());
}

#[tokio::test]
async fn the_stateless_era_and_its_refusals() {
    let (server, _) = server();
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "work.add", "arguments": {"a": 2, "b": 40}, "_meta": stateless_meta()}});
    let (status, reply, session) = message(send(&server, &call, None, None).await);
    assert_eq!((status, session), (Status::Ok, None), "no session in 2026-07-28");
    assert_eq!(reply["result"]["structuredContent"]["result"], 42, "{reply}");
    assert_eq!(reply["result"]["resultType"], "complete");

    let read = json!({"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "work://notes/5", "_meta": stateless_meta()}});
    let (_, reply, _) = message(send(&server, &read, None, None).await);
    assert_eq!(reply["result"]["contents"][0]["text"], "note 5", "{reply}");
    assert_eq!(reply["result"]["resultType"], "complete");

    let discover =
        json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": stateless_meta()}});
    let (_, reply, _) = message(send(&server, &discover, None, None).await);
    assert!(
        reply["result"]["supportedVersions"].as_array().is_some_and(|v| v.contains(&json!("2026-07-28"))),
        "{reply}"
    );

    let unknown_method =
        json!({"jsonrpc": "2.0", "id": 3, "method": "nope/nope", "params": {"_meta": stateless_meta()}});
    let (status, reply, _) = message(send(&server, &unknown_method, None, None).await);
    assert_eq!((status, reply["error"]["code"].clone()), (Status::NotFound, json!(-32601)), "{reply}");

    // A client's response belongs to a handshake-era session.
    let response = json!({"jsonrpc": "2.0", "id": 9, "result": {}});
    let (status, reply, _) = message(send(&server, &response, None, None).await);
    assert_eq!(status, Status::BadRequest, "{reply}");
    assert!(reply["error"]["message"].as_str().is_some_and(|m| m.contains("Mcp-Session-Id")), "{reply}");

    let bytes = serde_json::to_vec(&call).expect("JSON");
    let incoming = Incoming::new(parse_body(&bytes, true).expect("parsed"), 7, Caller::default());
    let (status, reply, _) = message(server.handle(&incoming).await);
    assert_eq!(status, Status::NotFound, "no version 7: {reply}");
}

#[tokio::test]
async fn progress_then_the_response_as_a_stream() {
    let (server, _) = server();
    let mut meta = stateless_meta();
    meta["progressToken"] = json!("p1");
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "work.count", "arguments": {"steps": 3}, "_meta": meta}});
    let Reply::Stream(mut stream) = send(&server, &call, None, None).await else { panic!("a stream") };
    let mut messages = Vec::new();
    while let Some(frame) = tokio::time::timeout(Duration::from_secs(10), stream.next()).await.expect("in time") {
        if let Frame::Message(bytes) = frame {
            messages.push(serde_json::from_slice::<Value>(&bytes).expect("JSON"));
        }
    }
    let progress: Vec<&Value> = messages.iter().filter(|m| m["method"] == "notifications/progress").collect();
    assert_eq!(progress.len(), 3, "{messages:?}");
    assert_eq!(progress[2]["params"], json!({"progressToken": "p1", "progress": 3.0, "total": 3.0}));
    let last = messages.last().expect("a response");
    assert_eq!(last["result"]["structuredContent"]["result"], 3, "the response comes last: {messages:?}");
}

#[tokio::test]
async fn cancelled_within_its_scope() {
    let (server, dropped) = server();
    let call = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
        "params": {"name": "work.forever", "arguments": {}, "_meta": stateless_meta()}});
    let bytes = serde_json::to_vec(&call).expect("JSON");
    let running = tokio::spawn({
        let server = server.clone();
        async move {
            let mut incoming = Incoming::new(parse_body(&bytes, true).expect("parsed"), 1, Caller::default());
            incoming.cancel_scope = Some("conversation-1");
            // A cancelled request gets no response.
            match server.handle(&incoming).await {
                Reply::Accepted => {}
                Reply::Message(m) => panic!("no response, not {}", String::from_utf8_lossy(&m.body)),
                other => panic!("no response, not {other:?}"),
            }
        }
    });
    // Another scope's cancellation does not reach it.
    let cancel = |scope: &'static str| {
        let server = server.clone();
        async move {
            let body = serde_json::to_vec(
                &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 11}}),
            )
            .expect("JSON");
            let mut incoming = Incoming::new(parse_body(&body, true).expect("parsed"), 1, Caller::default());
            incoming.cancel_scope = Some(scope);
            server.handle(&incoming).await
        }
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(matches!(cancel("conversation-2").await, Reply::Accepted));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(dropped.load(Ordering::SeqCst), 0, "still running");
    assert!(matches!(cancel("conversation-1").await, Reply::Accepted));
    tokio::time::timeout(Duration::from_secs(10), running).await.expect("the stream ends").expect("no panic");
    assert_eq!(dropped.load(Ordering::SeqCst), 1, "the call's future was dropped");
}

/// The whole answer to `body`: its status and bytes (or the stream's frames).
async fn answer(server: &McpServer, parsed: Incoming<'_>) -> String {
    match server.handle(&parsed).await {
        Reply::Message(m) => format!("{:?} {}", m.status, String::from_utf8_lossy(&m.body)),
        Reply::Accepted => "accepted".to_owned(),
        Reply::Stream(s) => format!("{:?}", s.collect::<Vec<_>>().await),
        other => format!("{other:?}"),
    }
}

/// `tools/call`'s params read in the envelope's pass (`McpServer::parse`)
/// answer exactly as when read later (`parse_body`, every params raw), in both
/// eras and whatever their shape: a shape the early reading does not take is
/// read again raw, so each refusal keeps its words and its place in the checks.
#[tokio::test]
async fn tools_call_params_read_early_answer_as_when_read_later() {
    let (server, _) = server();
    let init = initialize("2025-11-25");
    let (_, _, session) = message(send(&server, &init, None, None).await);
    let session = session.expect("a session");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    send(&server, &initialized, Some(&session), Some("2025-11-25")).await;
    let meta = format!(r#""_meta":{}"#, stateless_meta());
    // (params with META where the 2026-07-28 envelope goes, read early?)
    let shapes = [
        (r#"{"name":"work.add","arguments":{"a":1,"b":2},META}"#, true),
        (r#"{META,"arguments":{"a":1,"b":2},"name":"work.add","extra":[1,{"x":null}]}"#, true),
        (r#"{"name":"work.add","arguments":{"a":"x","b":2},META}"#, true),
        (r#"{"name":"work.add","arguments":{"a":1e400,"b":2},META}"#, true),
        (r#"{"name":"work.add","arguments":[1,2],META}"#, true),
        (r#"{"name":"work.add","arguments":"a",META}"#, true),
        (r#"{"name":"work.nope","arguments":{},META}"#, true),
        (r#"{"name":5,"arguments":{},META}"#, true),
        (r#"{"arguments":{},META}"#, true),
        (r#"{"name":"work.add","arguments":{"a":1,"b":2},"_meta":[1]}"#, true),
        (r#"{"name":"work.add","arguments":{"a":1,"b":2},"_meta":{"progressToken":{"x":1}},"x":0}"#, true),
        (r#"{"name":"work.add","arguments":{"a":1,"b":2},"inputResponses":{"q":1e400},META}"#, false),
        (r#"{"name":"work.add","arguments":{"a":1,"b":2},"requestState":7,META}"#, false),
        (r#"{"name":"work.add","name":"work.add","arguments":{},META}"#, false),
        (r#"[{"name":"work.add"},{"a":1}]"#, false),
        (r#""work.add""#, false),
        ("null", false),
    ];
    for stateless in [false, true] {
        for (shape, read_early) in shapes {
            let params = shape.replace("META", if stateless { &meta } else { r#""_meta":{}"# });
            for body in [
                format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{params}}}"#),
                format!(r#"{{"jsonrpc":"2.0","params":{params},"id":7,"method":"tools/call"}}"#),
                format!(r#"[{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{params}}}]"#),
            ] {
                let early = server.parse(body.as_bytes()).expect("JSON");
                let first = body.starts_with(r#"{"jsonrpc":"2.0","id""#);
                let was_read = matches!(&early, rpc::jsonrpc::envelope::Body::Single(Ok(
                    rpc::jsonrpc::envelope::Message::Request(r))) if r.early.is_some());
                assert_eq!(was_read, first && read_early, "{body}");
                let (session, protocol) =
                    if stateless { (None, None) } else { (Some(session.as_str()), Some("2025-11-25")) };
                let mut incoming = Incoming::new(early, 1, Caller::default());
                (incoming.session, incoming.protocol) = (session, protocol);
                let read_early = answer(&server, incoming).await;
                let raw = parse_body(body.as_bytes(), true).expect("JSON");
                let mut incoming = Incoming::new(raw, 1, Caller::default());
                (incoming.session, incoming.protocol) = (session, protocol);
                assert_eq!(read_early, answer(&server, incoming).await, "{body}");
            }
        }
    }
}

/// Hostile `tools/call` bodies at the JSON limits, read early and read raw:
/// deep, many values, a large member that sends the body back to the raw
/// reading. The same answers, in bounded time.
#[tokio::test]
async fn hostile_tools_call_bodies_read_early_answer_as_when_read_later() {
    let (server, _) = server();
    let meta = format!(r#""_meta":{}"#, stateless_meta());
    let deep = format!("{}1{}", "[".repeat(60), "]".repeat(60));
    let many = format!("[{}0]", "0,".repeat(90_000));
    let long = "7".repeat(1 << 20);
    for params in [
        format!(r#"{{"name":"work.add","arguments":{{"a":{deep},"b":1}},{meta}}}"#),
        format!(r#"{{"name":"work.add","arguments":{{"a":{many},"b":1}},{meta}}}"#),
        format!(r#"{{"name":"work.add","arguments":{{"a":1,"b":2}},"requestState":{long},{meta}}}"#),
        format!(r#"{{"name":"work.add","arguments":{{"a":1,"b":2}},"inputResponses":{many},{meta}}}"#),
    ] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{params}}}"#);
        let started = std::time::Instant::now();
        let early = answer(&server, Incoming::new(server.parse(body.as_bytes()).expect("JSON"), 1, Caller::default()));
        let early = early.await;
        let raw =
            answer(&server, Incoming::new(parse_body(body.as_bytes(), true).expect("JSON"), 1, Caller::default()));
        assert_eq!(early, raw.await, "{}", &body[..200]);
        assert!(early.len() < 4096, "a short answer: {}", &early[..200]);
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    }
}
