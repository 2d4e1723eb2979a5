//! A raw MCP-over-HTTP client for protocol-level tests: it sends exactly
//! the headers and bodies a test asks for.

use reqwest::header::HeaderMap;
use serde_json::{Value, json};

/// One HTTP exchange.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Response headers.
    pub headers: HeaderMap,
    /// The body as JSON (of an SSE body, the last message: the response);
    /// `Null` when empty.
    pub json: Value,
    /// The raw body text.
    pub text: String,
}

/// A session-aware raw client for one MCP endpoint URL.
#[derive(Clone)]
pub struct RawMcp {
    /// The endpoint URL.
    pub url: String,
    /// The session id after `initialize`.
    pub session: Option<String>,
    /// The negotiated revision after `initialize`, sent as `MCP-Protocol-Version`
    /// from 2025-06-18 on (as real clients do).
    pub protocol: Option<String>,
    client: reqwest::Client,
}

impl RawMcp {
    /// A client for `url` without a session.
    pub fn new(url: impl Into<String>) -> Self {
        RawMcp { url: url.into(), session: None, protocol: None, client: reqwest::Client::new() }
    }

    /// Sends `initialize` at `version`, keeps the session id, sends
    /// `notifications/initialized`; returns the initialize reply.
    pub async fn initialize(&mut self, version: &str) -> Reply {
        let reply = self
            .post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "e2e-tests", "version": "1.0.0"}
            }}))
            .await;
        self.session = reply.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
        self.protocol =
            reply.json["result"]["protocolVersion"].as_str().filter(|v| *v >= "2025-06-18").map(str::to_owned);
        let ack = self.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        assert_eq!(ack.status, 202, "notifications/initialized is accepted: {}", ack.text);
        reply
    }

    /// Sends `initialize` at `version` and returns the reply, asserting
    /// nothing (for servers expected to refuse it).
    pub async fn initialize_lenient(&mut self, version: &str) -> Reply {
        let reply = self
            .post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "e2e-tests", "version": "1.0.0"}
            }}))
            .await;
        self.session = reply.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
        reply
    }

    /// POSTs `body` with the standard headers and the session id.
    pub async fn post(&self, body: &Value) -> Reply {
        self.send(reqwest::Method::POST, Some(body.to_string()), &[]).await
    }

    /// Sends a request with extra headers (`(name, value)`; a value of `""`
    /// removes a standard header).
    pub async fn send(&self, method: reqwest::Method, body: Option<String>, extra: &[(&str, &str)]) -> Reply {
        let mut headers: Vec<(String, String)> = vec![
            ("content-type".into(), "application/json".into()),
            ("accept".into(), "application/json, text/event-stream".into()),
        ];
        if let Some(s) = &self.session {
            headers.push(("mcp-session-id".into(), s.clone()));
        }
        if let Some(p) = &self.protocol {
            headers.push(("mcp-protocol-version".into(), p.clone()));
        }
        for (name, value) in extra {
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            if !value.is_empty() {
                headers.push(((*name).into(), (*value).into()));
            }
        }
        let mut request = self.client.request(method, &self.url);
        for (name, value) in &headers {
            request = request.header(name.as_str(), value.as_str());
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = request.send().await.expect("request sent");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.expect("body read");
        let json = parse_body(&text);
        Reply { status, headers, json, text }
    }

    /// Calls a tool and returns the JSON-RPC response object.
    pub async fn call(&self, name: &str, arguments: Value) -> Value {
        let reply = self
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}))
            .await;
        assert_eq!(reply.status, 200, "tools/call answered: {}", reply.text);
        reply.json
    }
}

fn parse_body(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Null;
    }
    if let Ok(v) = serde_json::from_str(text) {
        return v;
    }
    // An SSE body: notifications, then the response, which is the last message.
    let data: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).collect();
    match data.last() {
        Some(last) => serde_json::from_str(last).unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {text}")),
        None => panic!("body is neither JSON nor SSE: {text}"),
    }
}
