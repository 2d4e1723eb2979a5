//! Asking the client during a call, in both eras: a request on the call's
//! stream answered by the same session only (handshake era), refusals
//! (no stream, an undeclared capability, no answer in time, too many open
//! questions, JSON-RPC), and input-required rounds with a sealed
//! `requestState` (2026-07-28): tampered, replayed for other arguments or
//! another tool, malformed responses.

use std::time::Duration;

use e2e_tests::TestServer;
use e2e_tests::modern_mcp::{Modern, SseReader};
use e2e_tests::raw_mcp::RawMcp;
use rpc::Environment;
use serde_json::{Value, json};

mod fixtures {
    use mcp::AskClient;

    rpc::api_group!(pub struct Ask => "ask", mcp = true);

    /// Tools that ask.
    pub struct Asker;

    #[rpc::service(alias = "ask", groups(Ask))]
    impl Asker {
        /// Asks a name, greets.
        pub async fn greet(&self, ctx: mcp::Context, #[rpc(default = 0)] tag: u32) -> Result<String, rpc::RpcError> {
            let schema = serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let answer = ctx.elicit("name", &format!("Your name? ({tag})"), schema).await?;
            Ok(format!("hello {}", answer.accepted_str("name").unwrap_or("nobody")))
        }
    }
}

async fn server(timeout: Duration) -> TestServer {
    let registry = rpc::Registry::builder().service(fixtures::Asker).build().expect("registry");
    let executor = rpc::Executor::new(registry, Environment::Dev);
    let endpoint = mcp::McpEndpoint::builder::<fixtures::Ask>(executor).ask_timeout(timeout).build();
    TestServer::start(rpc::server::Router::new().nest("/mcp", endpoint)).await
}

/// A handshake-era session declaring `capabilities`.
async fn session(server: &TestServer, capabilities: Value) -> RawMcp {
    let mut client = RawMcp::new(server.url("/mcp"));
    let reply = client
        .post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "asking", "version": "1"}}}))
        .await;
    client.session = reply.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    client.protocol = Some("2025-11-25".into());
    client
}

/// Starts `ask.greet` on a stream of `client`'s session.
async fn start_greet(client: &RawMcp, server: &TestServer, tag: u32) -> SseReader {
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "ask.greet", "arguments": {"tag": tag}}});
    let response = reqwest::Client::new()
        .post(server.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", client.session.clone().expect("a session"))
        .header("mcp-protocol-version", "2025-11-25")
        .body(body.to_string())
        .send()
        .await
        .expect("sent");
    SseReader::new(response)
}

#[tokio::test]
async fn handshake_era_a_question_on_the_stream_answered_by_its_own_session() {
    let server = server(Duration::from_secs(30)).await;
    let alice = session(&server, json!({"elicitation": {}})).await;
    let mallory = session(&server, json!({"elicitation": {}})).await;
    let mut stream = start_greet(&alice, &server, 1).await;
    let question = stream.next(Duration::from_secs(10)).await.expect("a question");
    assert_eq!(question["method"], "elicitation/create", "{question}");
    assert_eq!(question["params"]["message"], "Your name? (1)");
    let id = question["id"].clone();
    // Another session answering the same id reaches nothing.
    let foreign = mallory
        .post(&json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"name": "mallory"}}}))
        .await;
    assert_eq!(foreign.status, 202);
    assert!(stream.next_within(Duration::from_millis(300)).await.is_none(), "the call still waits");
    let answer = alice
        .post(&json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"name": "alice"}}}))
        .await;
    assert_eq!(answer.status, 202);
    let response = stream.next(Duration::from_secs(10)).await.expect("the response");
    assert_eq!(response["id"], 5);
    assert_eq!(response["result"]["content"][0]["text"], "\"hello alice\"", "{response}");
    // A second answer to the same question is ignored.
    let again = alice.post(&json!({"jsonrpc": "2.0", "id": id, "result": {}})).await;
    assert_eq!(again.status, 202);
}

#[tokio::test]
async fn handshake_era_refusals() {
    let server = server(Duration::from_millis(300)).await;
    // The client did not declare elicitation.
    let plain = session(&server, json!({})).await;
    let reply = plain.call("ask.greet", json!({})).await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert!(reply.to_string().contains("-32021"), "{reply}");
    // It takes no stream: it cannot be asked.
    let able = session(&server, json!({"elicitation": {}})).await;
    let json_only = able
        .send(
            reqwest::Method::POST,
            Some(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask.greet"}}).to_string(),
            ),
            &[("accept", "application/json")],
        )
        .await;
    assert!(json_only.text.contains("-32030"), "{}", json_only.text);
    // No answer in time.
    let mut stream = start_greet(&able, &server, 2).await;
    let question = stream.next(Duration::from_secs(10)).await.expect("a question");
    assert_eq!(question["method"], "elicitation/create");
    let response = stream.next(Duration::from_secs(10)).await.expect("the response");
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert!(response.to_string().contains("did not answer"), "{response}");
}

#[tokio::test]
async fn handshake_era_open_questions_are_bounded() {
    let server = server(Duration::from_secs(30)).await;
    let client = session(&server, json!({"elicitation": {}})).await;
    let mut streams = Vec::new();
    for tag in 0..16 {
        let mut stream = start_greet(&client, &server, tag).await;
        let question = stream.next(Duration::from_secs(10)).await.expect("a question");
        assert_eq!(question["method"], "elicitation/create");
        streams.push(stream);
    }
    // Refused at once: a plain answer, no stream.
    let refused = client.call("ask.greet", json!({"tag": 99})).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(refused.to_string().contains("at most 16 questions"), "{refused}");
    // Another session is not held up.
    let other = session(&server, json!({"elicitation": {}})).await;
    let mut theirs = start_greet(&other, &server, 100).await;
    assert_eq!(theirs.next(Duration::from_secs(10)).await.expect("a question")["method"], "elicitation/create");
}

#[tokio::test]
async fn stateless_rounds_with_a_sealed_state() {
    let server = server(Duration::from_secs(30)).await;
    let mut client = Modern::new(server.url("/mcp"));
    client.capabilities = json!({"elicitation": {}});
    let first = client.tool("ask.greet", json!({"tag": 1})).await;
    let result = &first.json["result"];
    assert_eq!(result["resultType"], "input_required", "{}", first.text);
    assert_eq!(result["inputRequests"]["name"]["method"], "elicitation/create");
    let state = result["requestState"].as_str().expect("a state").to_owned();

    let retry = |arguments: Value, responses: Value, state: Value| {
        let client = client.clone();
        async move {
            let body = client.request(
                "tools/call",
                json!({"name": "ask.greet", "arguments": arguments, "inputResponses": responses, "requestState": state}),
                json!(2),
            );
            client.exchange(&body, &[]).await
        }
    };
    let answer = json!({"name": {"action": "accept", "content": {"name": "ann"}}});
    let done = retry(json!({"tag": 1}), answer.clone(), json!(state)).await;
    assert_eq!(done.json["result"]["content"][0]["text"], "\"hello ann\"", "{}", done.text);
    assert_eq!(done.json["result"]["resultType"], "complete");

    let tampered = retry(json!({"tag": 1}), answer.clone(), json!(format!("{state}x"))).await;
    assert_eq!(tampered.json["error"]["code"], -32602, "{}", tampered.text);
    let other_arguments = retry(json!({"tag": 2}), answer.clone(), json!(state)).await;
    assert_eq!(
        other_arguments.json["error"]["code"], -32602,
        "a state is bound to its arguments: {}",
        other_arguments.text
    );
    assert!(other_arguments.text.contains("another request"), "{}", other_arguments.text);
    let not_an_object = retry(json!({"tag": 1}), json!({"name": 12345}), json!(state)).await;
    assert_eq!(not_an_object.json["error"]["code"], -32602, "{}", not_an_object.text);
    let long_key = retry(json!({"tag": 1}), json!({"k".repeat(300): {}}), Value::Null).await;
    assert_eq!(long_key.json["error"]["code"], -32602, "{}", long_key.text);
    // Without the answer it asks again, never a stream request.
    let missing = retry(json!({"tag": 1}), json!({"other": {"action": "decline"}}), json!(state)).await;
    assert_eq!(missing.json["result"]["resultType"], "input_required", "{}", missing.text);
    assert!(!missing.text.contains("\"method\":\"elicitation/create\",\"id\""));
    // A client without the capability is not asked.
    let plain = Modern::new(server.url("/mcp"));
    let refused = plain.tool("ask.greet", json!({})).await;
    assert_eq!(refused.json["result"]["resultType"], "complete", "{}", refused.text);
    assert_eq!(refused.json["result"]["isError"], true);
}

#[tokio::test]
async fn json_rpc_cannot_ask() {
    let server = TestServer::catalog(Environment::Dev).await;
    let (status, reply) = e2e_tests::post_json(
        &server.url("/rpc"),
        r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.subscribe","params":{"id":3,"email":"rpc@example.com"}}"#,
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    let (_, reply) = e2e_tests::post_json(
        &server.url("/rpc"),
        r#"{"jsonrpc":"2.0","id":2,"method":"Catalog.unsubscribe_all","params":{"email":"rpc@example.com"}}"#,
    )
    .await;
    assert_eq!(reply["error"]["code"], -32030, "{reply}");
    assert!(reply["error"]["message"].as_str().is_some_and(|m| m.contains("over MCP")), "{reply}");
}
