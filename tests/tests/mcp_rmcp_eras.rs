//! The catalog's MCP endpoint driven by rmcp (the official Rust SDK) in both
//! protocol eras and over both transports, beyond `mcp_rmcp.rs` (handshake
//! era over Streamable HTTP):
//!
//! * Streamable HTTP in the 2026-07-28 era, with rmcp's `Discover` and `Auto`
//!   lifecycles: the negotiated version, every tool, `Catalog.get` against
//!   its `outputSchema`, a tool error, `Catalog.stats` reporting progress and
//!   a log message (asked per request in `_meta`), resources, a prompt,
//!   completion, and `Catalog.unsubscribe_all` asking the user through an
//!   input-required round answered by `ClientHandler::create_elicitation`.
//! * The stdio transport (`mcp::stdio::serve` on in-memory pipes), in the
//!   handshake era (`Initialize`) and the 2026-07-28 era (`Discover`): the
//!   same checks, with every line the server writes recorded in order, so a
//!   progress notification written after the call's response is caught.
//! * Cancellation: a running call cancelled by the client (rmcp's
//!   `RequestHandle::cancel`, or a dropped `call_tool` future), then another
//!   call on the same connection; over stdio, no response and no further
//!   progress is written for the cancelled call.

// rmcp marks logging deprecated (SEP-2577); 2026-07-28 still defines it.
#![allow(deprecated)]

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use e2e_tests::TestServer;
use rmcp::ClientHandler;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ClientRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, ErrorData, FormElicitationCapability,
    GetPromptRequestParams, Implementation, LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam,
    ProgressToken, ProtocolVersion, ReadResourceRequestParams, RequestId, RequestMetaObject, ServerResult,
    SetLevelRequestParams,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, PeerRequestOptions, RequestContext, RequestHandle,
    RoleClient, RunningService, ServiceError,
};
use rmcp::transport::StreamableHttpClientTransport;
use rpc::Environment;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::mcp_rmcp::{TOOLS, assert_valid_structured};

/// The bound on every wait for an event.
const WAIT: Duration = Duration::from_secs(10);
const MODERN: &str = "2026-07-28";
const HANDSHAKE: &str = "2025-11-25";

/// What the client's handler saw, in the order its callbacks ran (rmcp runs
/// each notification's callback in a task of its own; the tests'
/// current-thread runtime runs them in the order they arrived). Not proof of
/// the order on the wire relative to a response: the stdio tests read that
/// from [`Wire`].
#[derive(Debug)]
enum Seen {
    Progress(ProgressNotificationParam),
    Log(LoggingMessageNotificationParam),
    Asked(String),
}

/// A client handler that declares form elicitation, records every progress
/// notification, log message and question, and confirms every question.
#[derive(Clone)]
struct Recorder(mpsc::UnboundedSender<Seen>);

impl ClientHandler for Recorder {
    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        let _ = self.0.send(Seen::Progress(params));
    }

    async fn on_logging_message(&self, params: LoggingMessageNotificationParam, _: NotificationContext<RoleClient>) {
        let _ = self.0.send(Seen::Log(params));
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = match request {
            ElicitRequestParams::FormElicitationParams { message, .. } => message,
            other => format!("not a form: {other:?}"),
        };
        let _ = self.0.send(Seen::Asked(message));
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirm": true})))
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        ClientConfig::new(capabilities, Implementation::new("rmcp-eras", "1.0.0"))
    }
}

/// The events a [`Recorder`] reported, read as they come.
struct Events {
    rx: mpsc::UnboundedReceiver<Seen>,
    seen: Vec<Seen>,
}

impl Events {
    /// Reads events until `done` holds for all seen so far (at most [`WAIT`]).
    async fn until(&mut self, what: &str, done: impl Fn(&Events) -> bool) {
        let waited = tokio::time::timeout(WAIT, async {
            while !done(self) {
                let event = self.rx.recv().await.expect("the client's handler is alive");
                self.seen.push(event);
            }
        })
        .await;
        assert!(waited.is_ok(), "{what} within {WAIT:?}; the handler saw {:?}", self.seen);
    }

    /// `(progress, total)` of the notifications for `token`, in order.
    fn progress(&self, token: &ProgressToken) -> Vec<(f64, Option<f64>)> {
        self.seen
            .iter()
            .filter_map(|s| match s {
                Seen::Progress(p) if &p.progress_token == token => Some((p.progress, p.total)),
                _ => None,
            })
            .collect()
    }

    /// The token of the first progress notification seen, if any.
    fn first_token(&self) -> Option<ProgressToken> {
        self.seen.iter().find_map(|s| match s {
            Seen::Progress(p) => Some(p.progress_token.clone()),
            _ => None,
        })
    }

    fn logs(&self) -> Vec<&LoggingMessageNotificationParam> {
        self.seen.iter().filter_map(|s| if let Seen::Log(l) = s { Some(l) } else { None }).collect()
    }

    fn questions(&self) -> Vec<&str> {
        self.seen.iter().filter_map(|s| if let Seen::Asked(q) = s { Some(q.as_str()) } else { None }).collect()
    }
}

type Client = RunningService<RoleClient, Recorder>;

fn discover() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
}

fn auto() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

fn recorder() -> (Recorder, Events) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Recorder(tx), Events { rx, seen: Vec::new() })
}

async fn http(url: String, lifecycle: ClientLifecycleMode) -> (Client, Events) {
    let (handler, events) = recorder();
    let client = handler
        .serve_with_lifecycle(StreamableHttpClientTransport::from_uri(url), lifecycle)
        .await
        .expect("rmcp connects over Streamable HTTP");
    (client, events)
}

/// Every line the server wrote to the client, parsed, in order.
#[derive(Clone, Default)]
struct Wire(Arc<Mutex<Vec<Value>>>);

impl Wire {
    fn lines(&self) -> Vec<Value> {
        self.0.lock().expect("wire log").clone()
    }
}

/// Copies the server's output to the client line by line, recording each.
async fn tap(from: DuplexStream, mut to: DuplexStream, wire: Wire) {
    let mut lines = BufReader::new(from).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("a stdio line is not JSON ({e}): {line}"));
        wire.0.lock().expect("wire log").push(value);
        if to.write_all(format!("{line}\n").as_bytes()).await.is_err() {
            break;
        }
    }
}

/// rmcp connected to the catalog's stdio transport on in-memory pipes.
struct Stdio {
    client: Client,
    events: Events,
    wire: Wire,
    served: JoinHandle<io::Result<()>>,
}

async fn stdio(lifecycle: ClientLifecycleMode) -> Stdio {
    let endpoint = catalog::stdio_endpoint(Environment::Dev, catalog::Setup::default()).expect("catalog endpoint");
    let (client_write, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, tap_in) = tokio::io::duplex(1 << 16);
    let (tap_out, client_read) = tokio::io::duplex(1 << 16);
    let served = tokio::spawn(mcp::stdio::serve(endpoint.server(), 1, server_in, server_out));
    let wire = Wire::default();
    tokio::spawn(tap(tap_in, tap_out, wire.clone()));
    let (handler, events) = recorder();
    let client =
        handler.serve_with_lifecycle((client_read, client_write), lifecycle).await.expect("rmcp connects over stdio");
    Stdio { client, events, wire, served }
}

impl Stdio {
    /// Closes the client; the transport must then end cleanly by itself.
    async fn close(self) {
        self.client.cancel().await.expect("client closes");
        let served = tokio::time::timeout(WAIT, self.served).await.expect("stdio ends at the end of input");
        served.expect("no panic").expect("a clean end");
    }
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, got {other}"),
    }
}

fn call(name: &'static str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name).with_arguments(args(arguments))
}

fn text(result: &CallToolResult) -> String {
    result.content[0].as_text().expect("first content block is text").text.clone()
}

fn version(client: &Client) -> String {
    client.peer_info().expect("server info").protocol_version.as_str().to_owned()
}

/// Sends `Catalog.stats` asking for log messages at `info` (per request in
/// 2026-07-28; the handshake era asks once, with `logging/setLevel`).
async fn start_stats(client: &Client) -> RequestHandle<RoleClient> {
    let mut options = PeerRequestOptions::no_options();
    if version(client) == MODERN {
        let mut meta = RequestMetaObject::new();
        meta.set_log_level(LoggingLevel::Info);
        options = options.with_meta(meta);
    } else {
        client.set_level(SetLevelRequestParams::new(LoggingLevel::Info)).await.expect("logging/setLevel");
    }
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new("Catalog.stats")));
    client.send_cancellable_request(request, options).await.expect("Catalog.stats sent")
}

async fn finish_stats(handle: RequestHandle<RoleClient>) {
    let response = tokio::time::timeout(WAIT, handle.await_response()).await.expect("Catalog.stats answers");
    let Ok(ServerResult::CallToolResult(result)) = response else { panic!("Catalog.stats: {response:?}") };
    assert_eq!(result.is_error, Some(false));
    assert_eq!(result.structured_content.as_ref().map(|s| &s["result"]["products"]), Some(&json!(100)));
}

/// Asserts progress values that increase, of a total of 100, up to 100.
fn assert_progress(values: &[(f64, Option<f64>)]) {
    assert!(!values.is_empty(), "at least one progress notification");
    assert!(values.windows(2).all(|w| w[0].0 < w[1].0), "increasing: {values:?}");
    assert!(values.iter().all(|&(done, total)| total == Some(100.0) && done <= 100.0), "of 100: {values:?}");
}

fn is_progress_of(line: &Value, token: &ProgressToken) -> bool {
    line["method"] == "notifications/progress" && line["params"]["progressToken"] == json!(token)
}

fn is_response_to(line: &Value, id: &RequestId) -> bool {
    line.get("method").is_none() && line["id"] == json!(id)
}

/// `Catalog.stats` with a progress token: increasing progress through
/// `on_progress` (over HTTP exactly 25, 50, 75, 100 of 100) and the summary
/// through `on_logging_message`. With `wire` (stdio): the handler got what was
/// written, and nothing for the call was written after its response, up to a
/// later call that outlasts the server's 50 ms hold of a progress value.
async fn check_stats(client: &Client, events: &mut Events, wire: Option<&Wire>) {
    let logs_before = events.logs().len();
    let handle = start_stats(client).await;
    let (id, token) = (handle.id.clone(), handle.progress_token.clone());
    finish_stats(handle).await;
    let expected = match wire {
        None => 4,
        Some(wire) => wire.lines().iter().filter(|l| is_progress_of(l, &token)).count(),
    };
    events
        .until("the progress notifications and the log message", |e| {
            e.progress(&token).len() >= expected && e.logs().len() > logs_before
        })
        .await;
    let values = events.progress(&token);
    assert_progress(&values);
    let log = events.logs()[logs_before];
    assert_eq!(log.level, LoggingLevel::Info);
    assert_eq!(log.data["products"], json!(100), "the summary: {log:?}");
    let Some(wire) = wire else {
        assert_eq!(values, [25.0, 50.0, 75.0, 100.0].map(|v| (v, Some(100.0))), "every batch, over HTTP");
        return;
    };
    let barrier = client.call_tool(call("Catalog.reindex", json!({"pause_ms": 200}))).await.expect("a later call");
    assert_eq!(barrier.is_error, Some(false), "{barrier:?}");
    let lines = wire.lines();
    let answered = lines.iter().position(|l| is_response_to(l, &id)).expect("the response on the wire");
    let late: Vec<&Value> = lines[answered..].iter().filter(|l| is_progress_of(l, &token)).collect();
    assert!(late.is_empty(), "progress written after the response: {late:?}");
    let written: Vec<f64> =
        lines.iter().filter(|l| is_progress_of(l, &token)).filter_map(|l| l["params"]["progress"].as_f64()).collect();
    assert_eq!(values.iter().map(|v| v.0).collect::<Vec<_>>(), written, "the handler got every value written");
    let logged = lines.iter().position(|l| l["method"] == "notifications/message").expect("the log on the wire");
    assert!(logged < answered, "the log message precedes the response");
}

/// Everything but `Catalog.stats`, in the era `client` negotiated; `label`
/// makes the subscribers' address unique.
async fn check_catalog(client: &Client, events: &mut Events, label: &str) {
    let modern = version(client) == MODERN;
    let info = client.peer_info().expect("server info");
    assert_eq!(info.server_info.as_ref().map(|s| s.name.as_str()), Some("catalog"), "{info:?}");
    assert!(info.capabilities.tools.is_some(), "tools capability: {info:?}");

    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(), TOOLS);
    let get = client.call_tool(call("Catalog.get", json!({"id": 7}))).await.expect("Catalog.get");
    assert_eq!(get.is_error, Some(false));
    let structured = get.structured_content.clone().expect("structuredContent");
    assert_eq!(structured, json!({"result": {"id": 7, "name": "n7"}}));
    assert_valid_structured(tools.iter().find(|t| t.name == "Catalog.get").expect("Catalog.get listed"), &structured);
    assert_eq!(serde_json::from_str::<Value>(&text(&get)).expect("JSON text"), structured["result"]);

    let missing = client.call_tool(call("Catalog.get", json!({"id": 999}))).await.expect("a tool error is a result");
    assert_eq!(missing.is_error, Some(true));
    assert!(text(&missing).contains("product 999 not found"), "{missing:?}");

    // Resources: the template, a read, an unknown URI (-32002 until
    // 2025-11-25; 2026-07-28 retired it for -32602).
    let templates = client.list_all_resource_templates().await.expect("resources/templates/list");
    let templates = serde_json::to_value(&templates).expect("JSON");
    assert!(
        templates.as_array().is_some_and(|t| t.iter().any(|t| t["uriTemplate"] == "catalog://products/{id}")),
        "{templates}"
    );
    let read = client.read_resource(ReadResourceRequestParams::new("catalog://products/7")).await.expect("read");
    let read = serde_json::to_value(&read).expect("JSON");
    assert_eq!(read["contents"][0]["mimeType"], "application/json", "{read}");
    let product: Value = serde_json::from_str(read["contents"][0]["text"].as_str().expect("text")).expect("JSON");
    assert_eq!(product, json!({"id": 7, "name": "n7"}));
    let unknown = client.read_resource(ReadResourceRequestParams::new("catalog://nothing/here")).await;
    let Err(ServiceError::McpError(error)) = unknown else { panic!("an unknown URI: {unknown:?}") };
    assert_eq!(error.code.0, if modern { -32602 } else { -32002 }, "{error:?}");

    // A prompt with arguments, and completion of its argument and of a template variable.
    let prompts = serde_json::to_value(client.list_all_prompts().await.expect("prompts/list")).expect("JSON");
    let review = prompts.as_array().and_then(|p| p.iter().find(|p| p["name"] == "Catalog.review")).expect("listed");
    let names: Vec<&Value> = review["arguments"].as_array().expect("arguments").iter().map(|a| &a["name"]).collect();
    assert_eq!(names, ["name", "tone"]);
    let params =
        GetPromptRequestParams::new("Catalog.review").with_arguments(args(json!({"name": "n7", "tone": "friendly"})));
    let prompt = serde_json::to_value(client.get_prompt(params).await.expect("prompts/get")).expect("JSON");
    let kinds: Vec<&Value> =
        prompt["messages"].as_array().expect("messages").iter().map(|m| &m["content"]["type"]).collect();
    assert_eq!(kinds, ["resource", "text"], "{prompt}");
    assert!(prompt["messages"][1]["content"]["text"].as_str().is_some_and(|t| t.contains("friendly")), "{prompt}");
    let completed = client.complete_prompt_argument("Catalog.review", "name", "n9", None).await.expect("complete");
    assert_eq!((&completed.values[..2], completed.total), (&["n9".to_owned(), "n90".to_owned()][..], Some(11)));
    let ids = client.complete_resource_argument("catalog://products/{id}", "id", "10", None).await.expect("complete");
    assert_eq!(ids.values, ["10", "100"]);

    // A tool that asks the user first: a request on the call's stream in the
    // handshake era, an input-required round in 2026-07-28; rmcp answers
    // both through `create_elicitation`.
    let email = format!("{label}@example.com");
    for id in [3, 4] {
        let subscribed = client.call_tool(call("Catalog.subscribe", json!({"id": id, "email": email}))).await;
        assert_eq!(subscribed.expect("Catalog.subscribe").is_error, Some(false));
    }
    let asked_before = events.questions().len();
    let result = client.call_tool(call("Catalog.unsubscribe_all", json!({"email": email}))).await.expect("answered");
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(text(&result), json!(format!("cancelled 2 subscriptions of {email}")).to_string());
    events.until("the question", |e| e.questions().len() > asked_before).await;
    let questions = &events.questions()[asked_before..];
    assert!(questions.len() == 1 && questions[0].contains("Cancel all 2"), "{questions:?}");
}

#[tokio::test]
async fn http_discover_speaks_2026_07_28() {
    let server = TestServer::catalog(Environment::Dev).await;
    let (client, mut events) = http(server.url("/mcp/v1"), discover()).await;
    assert_eq!(version(&client), MODERN);
    check_catalog(&client, &mut events, "http-discover").await;
    check_stats(&client, &mut events, None).await;
    client.cancel().await.expect("client closes");
}

#[tokio::test]
async fn http_auto_settles_on_2026_07_28() {
    let server = TestServer::catalog(Environment::Dev).await;
    let (client, mut events) = http(server.url("/mcp/v1"), auto()).await;
    assert_eq!(version(&client), MODERN, "the server answers server/discover: no fallback to initialize");
    check_catalog(&client, &mut events, "http-auto").await;
    check_stats(&client, &mut events, None).await;
    client.cancel().await.expect("client closes");
}

#[tokio::test]
async fn stdio_handshake_era() {
    let mut stdio = stdio(ClientLifecycleMode::Initialize).await;
    assert_eq!(version(&stdio.client), HANDSHAKE, "counter-offer for rmcp's newer version");
    check_catalog(&stdio.client, &mut stdio.events, "stdio-initialize").await;
    check_stats(&stdio.client, &mut stdio.events, Some(&stdio.wire)).await;
    stdio.close().await;
}

#[tokio::test]
async fn stdio_2026_07_28_era() {
    let mut stdio = stdio(discover()).await;
    assert_eq!(version(&stdio.client), MODERN);
    check_catalog(&stdio.client, &mut stdio.events, "stdio-discover").await;
    check_stats(&stdio.client, &mut stdio.events, Some(&stdio.wire)).await;
    stdio.close().await;
}

/// Starts `Catalog.stats`, waits for its first progress notification and
/// cancels it with `notifications/cancelled` (`RequestHandle::cancel`);
/// returns its id and progress token.
async fn start_and_cancel(client: &Client, events: &mut Events) -> (RequestId, ProgressToken) {
    let handle = start_stats(client).await;
    let (id, token) = (handle.id.clone(), handle.progress_token.clone());
    events.until("the first progress of the call", |e| !e.progress(&token).is_empty()).await;
    handle.cancel(Some("the test cancels".into())).await.expect("notifications/cancelled sent");
    (id, token)
}

/// A call started after the cancellation that runs longer than the
/// cancelled one had left (400 ms): succeeds, with its own progress.
/// Over HTTP (`every_batch`), its progress up to 100 of 100 was handled,
/// and with it whatever the server had sent before.
async fn call_after(client: &Client, events: &mut Events, every_batch: bool) {
    let handle = start_stats(client).await;
    let token = handle.progress_token.clone();
    finish_stats(handle).await;
    events
        .until("the later call's progress", |e| {
            e.progress(&token).last().is_some_and(|&(done, _)| !every_batch || done == 100.0)
        })
        .await;
}

#[tokio::test]
async fn stdio_cancelled_call_writes_nothing_more() {
    for lifecycle in [ClientLifecycleMode::Initialize, discover()] {
        let mut stdio = stdio(lifecycle.clone()).await;
        let (id, token) = start_and_cancel(&stdio.client, &mut stdio.events).await;
        call_after(&stdio.client, &mut stdio.events, false).await;
        // The server writes through one ordered writer: had the cancelled call
        // gone on, its response would precede the later call's.
        let lines = stdio.wire.lines();
        assert!(!lines.iter().any(|l| is_response_to(l, &id)), "{lifecycle:?}: a response to the cancelled call");
        let written: Vec<&Value> = lines.iter().filter(|l| is_progress_of(l, &token)).collect();
        assert!(
            written.iter().all(|l| l["params"]["progress"].as_f64().is_some_and(|p| p < 100.0)),
            "{lifecycle:?}: the cancelled call went on: {written:?}"
        );
        stdio.close().await;
    }
}

#[tokio::test]
async fn http_handshake_cancelled_call_stops() {
    let server = TestServer::catalog(Environment::Dev).await;
    let (client, mut events) = http(server.url("/mcp/v1"), ClientLifecycleMode::Initialize).await;
    assert_eq!(version(&client), HANDSHAKE);
    let (_, token) = start_and_cancel(&client, &mut events).await;
    call_after(&client, &mut events, true).await;
    // The cancelled call's stream stays open in this era: had the call gone
    // on, its last batch (100 of 100) would have come before the later call's.
    let values = events.progress(&token);
    assert!(values.iter().all(|&(done, _)| done < 100.0), "the cancelled call went on: {values:?}");
    client.cancel().await.expect("client closes");
}

#[tokio::test]
async fn http_2026_07_28_dropped_call_then_another() {
    let server = TestServer::catalog(Environment::Dev).await;
    let (client, mut events) = http(server.url("/mcp/v1"), discover()).await;
    let mut meta = RequestMetaObject::new();
    meta.set_log_level(LoggingLevel::Info);
    let mut params = CallToolRequestParams::new("Catalog.stats");
    params.meta = Some(meta);
    {
        // Dropping the future is rmcp's cancellation: in 2026-07-28 it closes the call's SSE stream.
        let running = client.call_tool(params);
        tokio::pin!(running);
        tokio::select! {
            done = &mut running => panic!("Catalog.stats ended before its first progress: {done:?}"),
            () = events.until("the first progress", |e| e.first_token().is_some()) => {}
        }
    }
    call_after(&client, &mut events, true).await;
    let again = client.call_tool(call("Catalog.get", json!({"id": 7}))).await.expect("Catalog.get");
    assert_eq!(again.structured_content, Some(json!({"result": {"id": 7, "name": "n7"}})));
    client.cancel().await.expect("client closes");
}
