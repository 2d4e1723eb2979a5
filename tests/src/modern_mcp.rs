//! A raw client of the 2026-07-28 (stateless) era: every request carries
//! `_meta` with the protocol version and client capabilities, and the
//! mirrored headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`), as
//! real clients send them; tests override any of it. Also reads SSE
//! responses frame by frame, with a deadline.

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::{Map, Value, json};

use crate::raw_mcp::Reply;

/// The revision this client speaks.
pub const VERSION: &str = "2026-07-28";

/// A stateless-era client for one endpoint URL.
#[derive(Clone)]
pub struct Modern {
    /// The endpoint URL.
    pub url: String,
    /// `clientCapabilities` sent in `_meta`.
    pub capabilities: Value,
    client: reqwest::Client,
}

/// The `_meta` of a request.
pub fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "e2e-modern", "version": "1.0.0"}
    })
}

impl Modern {
    /// A client of `url` declaring no capabilities.
    pub fn new(url: impl Into<String>) -> Self {
        Modern { url: url.into(), capabilities: json!({}), client: reqwest::Client::new() }
    }

    /// The request object for `method` with `params` (an object, `_meta`
    /// added unless it has one) and `id`.
    pub fn request(&self, method: &str, params: Value, id: Value) -> Value {
        let mut params: Map<String, Value> = params.as_object().cloned().unwrap_or_default();
        params.entry("_meta").or_insert_with(|| meta(self.capabilities.clone()));
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    /// The standard headers for `body` (a request object).
    pub fn headers_for(body: &Value) -> Vec<(String, String)> {
        let mut headers = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("accept".to_owned(), "application/json, text/event-stream".to_owned()),
            ("mcp-protocol-version".to_owned(), VERSION.to_owned()),
        ];
        if let Some(method) = body["method"].as_str() {
            headers.push(("mcp-method".to_owned(), method.to_owned()));
        }
        // `Mcp-Name` mirrors `params.uri` for `resources/read`, `params.taskId`
        // for `tasks/*`, `params.name` elsewhere.
        let name = match body["method"].as_str() {
            Some("resources/read") => &body["params"]["uri"],
            Some(m) if m.starts_with("tasks/") => &body["params"]["taskId"],
            _ => &body["params"]["name"],
        };
        if let Some(name) = name.as_str() {
            headers.push(("mcp-name".to_owned(), name.to_owned()));
        }
        headers
    }

    /// POSTs `body` with the standard headers, changed by `overrides`
    /// (`(name, value)`; `""` removes a header).
    pub async fn send(&self, body: &Value, overrides: &[(&str, &str)]) -> reqwest::Response {
        let mut headers = Self::headers_for(body);
        for (name, value) in overrides {
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            if !value.is_empty() {
                headers.push(((*name).to_owned(), (*value).to_owned()));
            }
        }
        let mut request = self.client.post(&self.url);
        for (name, value) in &headers {
            request = request.header(name.as_str(), value.as_str());
        }
        request.body(body.to_string()).send().await.expect("request sent")
    }

    /// POSTs `body` and reads the whole reply (an SSE body's last `data:` line is the JSON).
    pub async fn exchange(&self, body: &Value, overrides: &[(&str, &str)]) -> Reply {
        let response = self.send(body, overrides).await;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.expect("body read");
        let json = last_message(&text);
        Reply { status, headers, json, text }
    }

    /// `method` with `params`, id 1, standard headers.
    pub async fn call(&self, method: &str, params: Value) -> Reply {
        self.exchange(&self.request(method, params, json!(1)), &[]).await
    }

    /// `tools/call` of `name` with `arguments`.
    pub async fn tool(&self, name: &str, arguments: Value) -> Reply {
        self.call("tools/call", json!({"name": name, "arguments": arguments})).await
    }

    /// `tools/call` of `name` with `arguments` and header `overrides`.
    pub async fn tool_with(&self, name: &str, arguments: Value, overrides: &[(&str, &str)]) -> Reply {
        let body = self.request("tools/call", json!({"name": name, "arguments": arguments}), json!(1));
        self.exchange(&body, overrides).await
    }
}

/// The JSON of a body: the object itself, or the last SSE `data:` message.
pub fn last_message(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Null;
    }
    if let Ok(value) = serde_json::from_str(text) {
        return value;
    }
    sse_messages(text).pop().unwrap_or(Value::Null)
}

/// Every `data:` message of an SSE body, parsed.
pub fn sse_messages(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {d}")))
        .collect()
}

/// Reads an SSE response incrementally.
pub struct SseReader {
    response: reqwest::Response,
    buffer: String,
    /// Comment lines (keep-alives) seen so far.
    pub comments: usize,
}

impl SseReader {
    /// Reads `response`, which must be an SSE stream.
    pub fn new(response: reqwest::Response) -> Self {
        let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("");
        assert!(content_type.starts_with("text/event-stream"), "an SSE response, got {content_type}");
        SseReader { response, buffer: String::new(), comments: 0 }
    }

    /// The response's headers.
    pub fn headers(&self) -> &HeaderMap {
        self.response.headers()
    }

    /// The next message, `None` at the end of the stream; panics after `deadline`.
    pub async fn next(&mut self, deadline: Duration) -> Option<Value> {
        tokio::time::timeout(deadline, self.next_inner()).await.expect("an SSE message within the deadline")
    }

    /// The next message, or `None` if none arrives within `wait` or the stream ended.
    pub async fn next_within(&mut self, wait: Duration) -> Option<Value> {
        tokio::time::timeout(wait, self.next_inner()).await.ok().flatten()
    }

    async fn next_inner(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let mut data = None;
                for line in event.lines() {
                    if line.starts_with(':') {
                        self.comments += 1;
                    } else if let Some(d) = line.strip_prefix("data:") {
                        data = Some(serde_json::from_str(d.trim()).expect("SSE data is JSON"));
                    }
                }
                if data.is_some() {
                    return data;
                }
                continue;
            }
            match self.response.chunk().await {
                Ok(Some(chunk)) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
                Ok(None) | Err(_) => return None,
            }
        }
    }
}
