//! What a well-formed answer of the catalog's endpoints (`/rpc`, `/mcp`) is,
//! whatever the request: a status from [`STATUSES`], a body whose kind its
//! `Content-Type` names (a JSON-RPC response, a batch of them, `{"error":
//! ...}`, the OpenRPC document, or SSE events carrying JSON-RPC messages and
//! ending with the response), response ids that the request carried, and a
//! size bounded by the request's ([`BASE_BYTES`] + [`AMPLIFICATION`] × its
//! size). A body must also end within a deadline ([`collect`]).
//!
//! The application is the catalog in `Environment::Prod`: error data never
//! carries the debug members (`sources`, `location`), and no answer carries
//! `-32603` (an internal error: over MCP a tool's failure is a result whose
//! content quotes its code) unless the request did.
//!
//! Shared by the property tests (`tests/hostile_props.rs`) and the fuzz
//! harnesses (`fuzz/src`, which include this file by path), so it uses
//! only crates both depend on: `http`, `http-body`, `http-body-util`,
//! `bytes`, `serde`, `serde_json`, `tokio`.
//!
//! JSON is read as [`RawValue`]s, so a number that `f64` cannot hold (an id
//! `1e400` echoed verbatim) is still JSON, as the grammar says.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt::Display;
use std::time::Duration;

use bytes::Buf;
use http::header::{ALLOW, CONTENT_TYPE};
use http_body::Body;
use http_body_util::BodyExt;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The HTTP statuses the endpoints may answer with: success (200, 202,
/// 204), the client's mistakes (400, 404, 405, 406, 413, 415), refusals of
/// the security layer (401, 403, 429) and a full session store (503). A 500
/// is a finding: the catalog is configured correctly.
pub const STATUSES: &[u16] = &[200, 202, 204, 400, 401, 403, 404, 405, 406, 413, 415, 429, 503];

/// Bytes any response may have whatever the request (the OpenRPC document
/// and a `tools/list` page are a few KiB).
pub const BASE_BYTES: usize = 64 * 1024;

/// How many times the request's size a response may add to [`BASE_BYTES`]
/// (error messages quote parts of the request, escaped once or twice).
pub const AMPLIFICATION: usize = 8;

/// A response read to its end.
#[derive(Debug)]
pub struct Collected {
    /// The HTTP status.
    pub status: u16,
    /// The response headers.
    pub headers: http::HeaderMap,
    /// The whole body.
    pub body: Vec<u8>,
}

impl Collected {
    /// The body as text, for messages.
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.body)
    }
}

/// What the checker needs to know of the request.
#[derive(Debug, Clone, Copy)]
pub struct Sent<'a> {
    /// The HTTP method (`POST`, `GET`, ...).
    pub method: &'a str,
    /// The request body.
    pub body: &'a [u8],
    /// The request's size: target, header names and values, and body.
    pub size: usize,
}

impl Sent<'_> {
    /// The largest well-formed response to this request.
    pub fn max_response(&self) -> usize {
        BASE_BYTES + AMPLIFICATION * self.size
    }
}

/// Reads `response` to its end: an error if the body fails, is still
/// going after `deadline` (a hang), or grows past `limit` bytes.
pub async fn collect<B>(response: http::Response<B>, deadline: Duration, limit: usize) -> Result<Collected, String>
where
    B: Body + Unpin,
    B::Error: Display,
{
    let (parts, mut body) = response.into_parts();
    let mut out = Vec::new();
    let read = async {
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| format!("the body failed: {e}"))?;
            if let Ok(mut data) = frame.into_data() {
                while data.has_remaining() {
                    let chunk = data.chunk();
                    out.extend_from_slice(chunk);
                    let n = chunk.len();
                    data.advance(n);
                }
                if out.len() > limit {
                    return Err(format!("the body grew past {limit} bytes"));
                }
            }
        }
        Ok(())
    };
    match tokio::time::timeout(deadline, read).await {
        Ok(Ok(())) => Ok(Collected { status: parts.status.as_u16(), headers: parts.headers, body: out }),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(format!(
            "status {}: the body did not end within {deadline:?}; read so far: {:?}",
            parts.status,
            String::from_utf8_lossy(&out[..out.len().min(512)])
        )),
    }
}

/// Sends `request` to `service` in-process (as `tower::ServiceExt::oneshot`
/// does) and reads the answer with [`collect`]; `deadline` bounds both the
/// call and the body.
pub async fn exchange<S, B, R>(
    service: S,
    request: http::Request<B>,
    deadline: Duration,
    limit: usize,
) -> Result<Collected, String>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>>,
    S::Error: std::fmt::Debug,
    R: Body + Unpin,
    R::Error: Display,
{
    use tower::ServiceExt;
    let started = tokio::time::Instant::now();
    let response = match tokio::time::timeout(deadline, service.oneshot(request)).await {
        Ok(Ok(response)) => response,
        Ok(Err(e)) => return Err(format!("the service failed: {e:?}")),
        Err(_) => return Err(format!("no response within {deadline:?}")),
    };
    collect(response, deadline.saturating_sub(started.elapsed()), limit).await
}

/// Checks that `got` is a well-formed answer to `sent`; the error says what
/// is wrong.
pub fn check(sent: &Sent<'_>, got: &Collected) -> Result<(), String> {
    let status = got.status;
    if !STATUSES.contains(&status) {
        return Err(format!("unexpected status {status}"));
    }
    if got.body.len() > sent.max_response() {
        return Err(format!(
            "a {}-byte response to a {}-byte request (at most {})",
            got.body.len(),
            sent.size,
            sent.max_response()
        ));
    }
    if status == 405 && !got.headers.contains_key(ALLOW) {
        return Err("405 without an Allow header".into());
    }
    if matches!(status, 202 | 204) && !got.body.is_empty() {
        return Err(format!("{status} with a body"));
    }
    let mut types = got.headers.get_all(CONTENT_TYPE).iter();
    let content_type = types.next();
    if types.next().is_some() {
        return Err("more than one Content-Type".into());
    }
    let media = match content_type.map(|v| v.to_str()) {
        None => None,
        Some(Ok(v)) => Some(v.split(';').next().unwrap_or("").trim().to_ascii_lowercase()),
        Some(Err(_)) => return Err("a Content-Type that is not visible ASCII".into()),
    };
    if contains(&got.body, b"-32603") && !contains(sent.body, b"32603") {
        return Err("an internal error (-32603): a method panicked, or the server failed".into());
    }
    let ids = Ids { body: sent.body, parsed: std::cell::OnceCell::new() };
    match media.as_deref() {
        None if got.body.is_empty() => Ok(()),
        None => Err("a body without a Content-Type".into()),
        Some("application/json") => check_json(sent, status, &got.body, &ids),
        // A GET stream (a session's own) carries notifications only, and may
        // end before any (the server shutting down).
        Some("text/event-stream") if sent.method.eq_ignore_ascii_case("GET") => check_sse(&got.body, &ids, false),
        Some("text/event-stream") => check_sse(&got.body, &ids, true),
        // The docs page, for a GET (or HEAD) that accepts HTML (`text/*`
        // does): a static page, with its content security policy.
        Some("text/html") if status == 200 && matches!(sent.method.to_ascii_uppercase().as_str(), "GET" | "HEAD") => {
            check_docs_page(got)
        }
        Some(other) => Err(format!("unexpected Content-Type {other:?}")),
    }
}

/// Checks that `got` is the docs page: an HTML document sent with a content
/// security policy that allows nothing by default.
fn check_docs_page(got: &Collected) -> Result<(), String> {
    if !got.body.starts_with(b"<!DOCTYPE html>") {
        return Err("a text/html answer that is not the docs page".into());
    }
    let policy = got.headers.get("content-security-policy").and_then(|v| v.to_str().ok()).unwrap_or("");
    if !policy.starts_with("default-src 'none'") {
        return Err(format!("the docs page without its content security policy: {policy:?}"));
    }
    Ok(())
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Checks a whole response, naming the request in the error.
pub fn check_or_describe(sent: &Sent<'_>, got: &Collected, request: &dyn std::fmt::Debug) -> Result<(), String> {
    check(sent, got).map_err(|why| {
        format!("{why}\nrequest: {request:?}\nresponse: {} {:?}\n{}", got.status, got.headers, got.text())
    })
}

fn check_json(sent: &Sent<'_>, status: u16, body: &[u8], ids: &Ids<'_>) -> Result<(), String> {
    let whole: &RawValue = serde_json::from_slice(body).map_err(|e| format!("a JSON body that is not JSON: {e}"))?;
    let text = whole.get();
    if text.starts_with('[') {
        let items: Vec<&RawValue> = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if items.is_empty() {
            return Err("an empty batch response".into());
        }
        return items.into_iter().try_for_each(|item| check_response(item, ids));
    }
    if !text.starts_with('{') {
        return Err(format!("a JSON body that is neither an object nor an array: {text:.64}"));
    }
    let members = members(whole)?;
    let has = |key: &str| members.iter().any(|(k, _)| k == key);
    if has("jsonrpc") {
        return check_response(whole, ids);
    }
    if members.len() == 1 && has("error") && members[0].1.get().starts_with('"') {
        return Ok(()); // the router's `{"error": "no endpoint at ..."}`
    }
    if has("openrpc") && status == 200 && matches!(sent.method, "GET" | "HEAD") {
        return Ok(());
    }
    Err("a JSON object that is neither a JSON-RPC response nor an error".into())
}

/// A JSON-RPC response object: `jsonrpc` `"2.0"`, an `id` that the request
/// carried (or `null`), exactly one of `result` and a well-formed `error`.
fn check_response(raw: &RawValue, ids: &Ids<'_>) -> Result<(), String> {
    let members = members(raw)?;
    let get = |key: &str| members.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
    if let Some((key, _)) = members.iter().find(|(k, _)| !matches!(k.as_ref(), "jsonrpc" | "id" | "result" | "error")) {
        return Err(format!("a response member {key:?}: {}", raw.get()));
    }
    if get("jsonrpc").map(RawValue::get) != Some("\"2.0\"") {
        return Err(format!("a response without \"jsonrpc\":\"2.0\": {:.200}", raw.get()));
    }
    let Some(id) = get("id") else {
        return Err(format!("a response without an id: {:.200}", raw.get()));
    };
    if id.get() != "null" && !ids.get().contains(id.get()) {
        return Err(format!("a response id {} the request did not carry (it had {:?})", id.get(), ids.get()));
    }
    match (get("result"), get("error")) {
        (Some(_), None) => Ok(()),
        (None, Some(error)) => check_error(error),
        _ => Err(format!("a response needs exactly one of result and error: {:.200}", raw.get())),
    }
}

fn check_error(raw: &RawValue) -> Result<(), String> {
    let fields = members(raw)?;
    let get = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.get());
    if let Some((key, _)) = fields.iter().find(|(k, _)| !matches!(k.as_ref(), "code" | "message" | "data")) {
        return Err(format!("an error member {key:?}: {}", raw.get()));
    }
    if get("code").is_none_or(|c| c.parse::<i32>().is_err()) {
        return Err(format!("an error code that is not an integer: {:.200}", raw.get()));
    }
    if !get("message").is_some_and(|m| m.starts_with('"')) {
        return Err(format!("an error message that is not a string: {:.200}", raw.get()));
    }
    if let Some(data) = get("data").filter(|d| d.starts_with('{')) {
        let data: &RawValue = serde_json::from_str(data).map_err(|e| e.to_string())?;
        if let Some((key, _)) = members(data)?.iter().find(|(k, _)| matches!(k.as_ref(), "sources" | "location")) {
            return Err(format!("error data with the debug member {key:?} in production: {:.200}", raw.get()));
        }
    }
    Ok(())
}

/// A JSON-RPC notification (`method` without `id`) sent on a stream.
fn check_notification(raw: &RawValue) -> Result<(), String> {
    check_method_message(raw, false)
}

/// A notification, or with `request` a request to the client (`method`
/// and a string or number `id`).
fn check_method_message(raw: &RawValue, request: bool) -> Result<(), String> {
    let members = members(raw)?;
    let get = |key: &str| members.iter().find(|(k, _)| k == key).map(|(_, v)| v.get());
    let id_ok = match get("id") {
        None => !request,
        Some(id) => request && (id.starts_with('"') || id.parse::<f64>().is_ok()),
    };
    if get("jsonrpc") != Some("\"2.0\"") || !get("method").is_some_and(|m| m.starts_with('"')) || !id_ok {
        return Err(format!("a malformed notification or request: {:.200}", raw.get()));
    }
    if let Some(key) =
        members.iter().map(|(k, _)| k).find(|k| !matches!(k.as_ref(), "jsonrpc" | "id" | "method" | "params"))
    {
        return Err(format!("a notification or request member {key:?}: {:.200}", raw.get()));
    }
    if get("params").is_some_and(|p| !p.starts_with('{')) {
        return Err(format!("notification params that are not an object: {:.200}", raw.get()));
    }
    Ok(())
}

/// One message a server writes on a stream of its own (a line of the
/// stdio transport): a response to one of `ids` (the ids its input
/// carried, see [`request_ids`]) or `null`, a notification, or a request to
/// the client.
pub fn check_message(raw: &RawValue, ids: &BTreeSet<String>) -> Result<(), String> {
    let members = members(raw)?;
    if members.iter().any(|(k, _)| k == "method") {
        return check_method_message(raw, members.iter().any(|(k, _)| k == "id"));
    }
    let ids = Ids { body: &[], parsed: std::cell::OnceCell::from(ids.clone()) };
    check_response(raw, &ids)
}

/// An SSE body: complete events of `event:`/`data:`/`id:`/`retry:` lines
/// and comments; each `data` a JSON-RPC message; the last message the
/// response (the only one, except for a batch: one per request).
fn check_sse(body: &[u8], ids: &Ids<'_>, answers: bool) -> Result<(), String> {
    let text = std::str::from_utf8(body).map_err(|_| "an SSE body that is not UTF-8".to_owned())?;
    if !answers && text.is_empty() {
        return Ok(());
    }
    if !text.ends_with("\n\n") {
        return Err("an SSE body that does not end with a complete event".into());
    }
    let mut responses = 0;
    let mut last_was_response = false;
    for event in text.split("\n\n").filter(|e| !e.is_empty()) {
        let mut data = String::new();
        for line in event.split('\n') {
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "" => {} // a comment (keep-alive)
                "event" | "id" | "retry" => {}
                "data" => {
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(value);
                }
                other => return Err(format!("an SSE line with field {other:?}")),
            }
        }
        if data.is_empty() {
            continue;
        }
        let message: &RawValue =
            serde_json::from_str(&data).map_err(|e| format!("SSE data that is not JSON ({e}): {data:.200}"))?;
        let is_response = members(message)?.iter().any(|(k, _)| k == "id");
        if is_response {
            check_response(message, ids)?;
            responses += 1;
        } else {
            check_notification(message)?;
        }
        last_was_response = is_response;
    }
    if !answers {
        return if responses == 0 { Ok(()) } else { Err("a response on a GET stream (it answers no request)".into()) };
    }
    // A batch is answered with one event per response (2025-03-26).
    let batch = ids.body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    if responses == 0 || (!batch && responses != 1) || !last_was_response {
        return Err(format!("an SSE stream must end with its one response ({responses} responses)"));
    }
    Ok(())
}

/// The members of a JSON object, in order, duplicates kept; keys unescaped.
fn members(raw: &RawValue) -> Result<Vec<(Cow<'_, str>, &RawValue)>, String> {
    struct Members;
    impl<'de> Visitor<'de> for Members {
        type Value = Vec<(Cow<'de, str>, &'de RawValue)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
            let mut out = Vec::new();
            while let Some(key) = map.next_key::<Key<'de>>()? {
                out.push((key.0, map.next_value()?));
            }
            Ok(out)
        }
    }
    struct Key<'a>(Cow<'a, str>);
    impl<'de> serde::Deserialize<'de> for Key<'de> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct K;
            impl<'de> Visitor<'de> for K {
                type Value = Key<'de>;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a key")
                }
                fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                    Ok(Key(Cow::Borrowed(v)))
                }
                fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                    Ok(Key(Cow::Owned(v.to_owned())))
                }
            }
            d.deserialize_str(K)
        }
    }
    let mut de = serde_json::Deserializer::from_str(raw.get());
    let out = (&mut de).deserialize_map(Members).map_err(|e| format!("not a JSON object ({e}): {:.200}", raw.get()))?;
    let mut seen = BTreeSet::new();
    if let Some((dup, _)) = out.iter().find(|(k, _)| !seen.insert(k.clone())) {
        return Err(format!("duplicate member {dup:?}: {:.200}", raw.get()));
    }
    Ok(out)
}

/// The ids of a request, parsed when a response names one (a large body
/// is read only when needed).
struct Ids<'a> {
    body: &'a [u8],
    parsed: std::cell::OnceCell<BTreeSet<String>>,
}

impl Ids<'_> {
    fn get(&self) -> &BTreeSet<String> {
        self.parsed.get_or_init(|| request_ids(self.body))
    }
}

/// Every `id` a request body carries (the raw text of each `id` member of
/// the object, or of each object of the array), duplicates included.
///
/// Read from the body with invalid UTF-8 replaced: `serde_json` (like the
/// endpoints' parser) skips members without checking their UTF-8, but
/// cannot borrow a raw value from bytes that are not UTF-8; an id the
/// server can echo is valid UTF-8 and stays as it is.
pub fn request_ids(body: &[u8]) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let text = String::from_utf8_lossy(body);
    let Ok(whole) = serde_json::from_str::<&RawValue>(&text) else { return ids };
    let objects: Vec<&RawValue> =
        if whole.get().starts_with('[') { serde_json::from_str(whole.get()).unwrap_or_default() } else { vec![whole] };
    for object in objects.into_iter().filter(|o| o.get().starts_with('{')) {
        let mut de = serde_json::Deserializer::from_str(object.get());
        if let Ok(all) = (&mut de).deserialize_map(AllIds) {
            ids.extend(all);
        }
    }
    ids
}

/// Collects the raw `id` members of an object, duplicates included.
struct AllIds;

impl<'de> Visitor<'de> for AllIds {
    type Value = Vec<String>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut out = Vec::new();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let value: &RawValue = map.next_value()?;
            if key == "id" {
                out.push(value.get().to_owned());
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collected(status: u16, content_type: Option<&str>, body: &str) -> Collected {
        let mut headers = http::HeaderMap::new();
        if let Some(t) = content_type {
            headers.insert(CONTENT_TYPE, t.parse().unwrap());
        }
        Collected { status, headers, body: body.as_bytes().to_vec() }
    }

    fn verdict(request: &str, status: u16, content_type: Option<&str>, body: &str) -> Result<(), String> {
        let sent = Sent { method: "POST", body: request.as_bytes(), size: request.len() };
        check(&sent, &collected(status, content_type, body))
    }

    const JSON: Option<&str> = Some("application/json");
    const SSE: Option<&str> = Some("text/event-stream");

    #[test]
    fn accepts_well_formed_answers() {
        let req = r#"{"jsonrpc":"2.0","id":1e400,"method":"a"}"#;
        assert_eq!(verdict(req, 200, JSON, r#"{"jsonrpc":"2.0","id":1e400,"result":{}}"#), Ok(()));
        assert_eq!(
            verdict(req, 400, JSON, r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#),
            Ok(())
        );
        assert_eq!(
            verdict(
                "[{\"id\":\"a\"},{\"id\":2}]",
                200,
                JSON,
                r#"[{"jsonrpc":"2.0","id":2,"result":1},{"jsonrpc":"2.0","id":"a","result":1}]"#
            ),
            Ok(())
        );
        assert_eq!(verdict("", 404, JSON, r#"{"error":"no endpoint at `/x`"}"#), Ok(()));
        assert_eq!(verdict("", 202, None, ""), Ok(()));
        let not_utf8 = b"{\"id\":7,\"x\":\"\xff\"}";
        let sent = Sent { method: "POST", body: not_utf8, size: not_utf8.len() };
        assert_eq!(
            check(&sent, &collected(400, JSON, r#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}"#)),
            Ok(())
        );
        let stream = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n: keep-alive\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        assert_eq!(verdict(r#"{"id":1}"#, 200, SSE, stream), Ok(()));
    }

    #[test]
    fn rejects_malformed_answers() {
        let req = r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#;
        let bad = [
            (500, JSON, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, "unexpected status"),
            (200, JSON, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#, "did not carry"),
            (200, JSON, r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#, "exactly one"),
            (200, JSON, r#"{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}"#, "not an integer"),
            (200, JSON, r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":1}"#, "duplicate"),
            (404, JSON, r#"{"error":"no endpoint at `/\'`"}"#, "not JSON"),
            (200, JSON, r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"m"}}"#, "internal error"),
            (200, JSON, r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"text":"{\"code\":-32603}"}]}}"#, "internal"),
            (
                200,
                JSON,
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"location":"x"}}}"#,
                "debug member",
            ),
            (200, JSON, "[]", "empty batch"),
            (204, JSON, "{}", "with a body"),
            (200, None, "x", "without a Content-Type"),
            (200, Some("text/html"), "<p>", "Content-Type"),
            (405, None, "", "Allow"),
            (200, SSE, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", "complete event"),
            (200, SSE, ": keep-alive\n\n", "one response"),
        ];
        for (status, content_type, body, why) in bad {
            let verdict = verdict(req, status, content_type, body);
            assert!(verdict.as_ref().is_err_and(|e| e.contains(why)), "{body}: {verdict:?}, expected {why:?}");
        }
        let huge = format!(r#"{{"jsonrpc":"2.0","id":1,"result":"{}"}}"#, "x".repeat(2 * BASE_BYTES));
        assert!(verdict(req, 200, JSON, &huge).is_err_and(|e| e.contains("byte response")));
    }

    #[test]
    fn collects_with_a_deadline() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let endless = http::Response::new(Pending);
        let outcome = runtime.block_on(collect(endless, Duration::from_millis(20), 1024));
        assert!(outcome.is_err_and(|e| e.contains("did not end")));
        let full = http::Response::new(http_body_util::Full::new(bytes::Bytes::from_static(b"0123456789")));
        let outcome = runtime.block_on(collect(full, Duration::from_secs(1), 4));
        assert!(outcome.is_err_and(|e| e.contains("grew past")));
    }

    /// A body that never yields a frame.
    struct Pending;

    impl Body for Pending {
        type Data = bytes::Bytes;
        type Error = std::convert::Infallible;
        fn poll_frame(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<http_body::Frame<bytes::Bytes>, Self::Error>>> {
            std::task::Poll::Pending
        }
    }
}
