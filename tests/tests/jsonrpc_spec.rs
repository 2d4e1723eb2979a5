//! The examples of the JSON-RPC 2.0 specification (section 7), adapted to
//! the catalog's methods, plus the envelope rules around them: ids, `jsonrpc`,
//! `params: null`, notifications and batches.

use crate::jsonrpc_common;

use e2e_tests::{TestServer, post_json};
use jsonrpc_common::{assert_envelope, by_id, expect_error, notification, post_raw, request};
use rpc::Environment;
use serde_json::{Value, json};

async fn catalog() -> (TestServer, String) {
    let server = TestServer::catalog(Environment::Dev).await;
    let url = server.url("/rpc");
    (server, url)
}

/// POSTs a raw body and expects HTTP 200 with a JSON body.
async fn post(url: &str, body: &str) -> Value {
    let (status, response) = post_json(url, body).await;
    assert_eq!(status, 200, "HTTP status for {body}: {response}");
    response
}

#[tokio::test]
async fn positional_params() {
    let (_server, url) = catalog().await;
    let response = post(&url, r#"{"jsonrpc": "2.0", "method": "Catalog.search", "params": ["n1", 3], "id": 1}"#).await;
    assert_eq!(response["result"], json!([{"id":1,"name":"n1"},{"id":10,"name":"n10"},{"id":11,"name":"n11"}]));
    assert_eq!(response["id"], json!(1));

    let response = post(&url, r#"{"jsonrpc": "2.0", "method": "Catalog.get", "params": [42], "id": 2}"#).await;
    assert_eq!(response, json!({"jsonrpc": "2.0", "id": 2, "result": {"id": 42, "name": "n42"}}));
}

#[tokio::test]
async fn named_params_in_any_order() {
    let (_server, url) = catalog().await;
    let expected = json!([{"id":1,"name":"n1"},{"id":10,"name":"n10"},{"id":11,"name":"n11"}]);
    for body in [
        r#"{"jsonrpc": "2.0", "method": "Catalog.search", "params": {"query": "n1", "limit": 3}, "id": 3}"#,
        r#"{"jsonrpc": "2.0", "method": "Catalog.search", "params": {"limit": 3, "query": "n1"}, "id": 3}"#,
    ] {
        let response = post(&url, body).await;
        assert_eq!(response, json!({"jsonrpc": "2.0", "id": 3, "result": expected}), "{body}");
    }
}

#[tokio::test]
async fn notification_gets_204_and_empty_body() {
    let (_server, url) = catalog().await;
    for body in [
        r#"{"jsonrpc": "2.0", "method": "ping", "params": ["me"]}"#,
        r#"{"jsonrpc": "2.0", "method": "ping"}"#,
        // A notification to a method that does not exist gets no response either.
        r#"{"jsonrpc": "2.0", "method": "foobar"}"#,
        // Nor a notification whose params are invalid.
        r#"{"jsonrpc": "2.0", "method": "Catalog.get", "params": {"id": "seven"}}"#,
    ] {
        let (status, _headers, text) = post_raw(&url, body).await;
        assert_eq!(status, 204, "{body}");
        assert_eq!(text, "", "{body}");
    }
}

#[tokio::test]
async fn notification_still_runs_the_method() {
    let (_server, url) = catalog().await;
    let (status, _headers, _text) = post_raw(&url, notification("Catalog.reindex", Value::Null).to_string()).await;
    assert_eq!(status, 204);
    let response = post(&url, &request("Catalog.reindex", Value::Null, json!(1)).to_string()).await;
    assert_eq!(response["result"], json!(2), "the notification ran first: {response}");
}

#[tokio::test]
async fn non_existent_method() {
    let (_server, url) = catalog().await;
    let response = post(&url, r#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#).await;
    let error = expect_error(&response, -32601);
    assert_eq!(response["id"], json!("1"));
    assert_eq!(error["message"], json!("Method not found: foobar"));
}

#[tokio::test]
async fn invalid_json() {
    let (_server, url) = catalog().await;
    let response = post(&url, r#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#).await;
    let error = expect_error(&response, -32700);
    assert_eq!(response["id"], Value::Null);
    assert_eq!(error["message"], json!("Parse error"));
}

#[tokio::test]
async fn empty_and_trailing_garbage_bodies_are_parse_errors() {
    let (_server, url) = catalog().await;
    for body in ["", "   ", r#"{"jsonrpc": "2.0", "method": "ping", "id": 1} x"#] {
        let response = post(&url, body).await;
        expect_error(&response, -32700);
        assert_eq!(response["id"], Value::Null, "{body:?}");
    }
}

#[tokio::test]
async fn invalid_utf8_is_a_parse_error() {
    let (_server, url) = catalog().await;
    let (status, _headers, text) =
        post_raw(&url, b"{\"jsonrpc\":\"2.0\",\"method\":\"p\xffng\",\"id\":1}".to_vec()).await;
    assert_eq!(status, 200);
    let response: Value = serde_json::from_str(&text).expect("a JSON body");
    expect_error(&response, -32700);
    assert_eq!(response["id"], Value::Null);
}

#[tokio::test]
async fn deeply_nested_json_is_refused_without_harm() {
    let (_server, url) = catalog().await;
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    // Refused before parsing, by the nesting limit (64 levels by default).
    let response = post(&url, &deep).await;
    expect_error(&response, -32600);
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("nested deeper than 64"), "{response}");
    // As params: too deep to parse.
    let body = format!(r#"{{"jsonrpc": "2.0", "method": "ping", "params": {{"who": {deep}}}, "id": 1}}"#);
    let response = post(&url, &body).await;
    assert!(response.get("error").is_some(), "{response}");
    // The server is fine.
    let response = post(&url, r#"{"jsonrpc": "2.0", "method": "ping", "id": 2}"#).await;
    assert_eq!(response["result"], json!("pong x"));
}

#[tokio::test]
async fn invalid_request_object() {
    let (_server, url) = catalog().await;
    let response = post(&url, r#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#).await;
    expect_error(&response, -32600);
    assert_eq!(response["id"], Value::Null);
}

#[tokio::test]
async fn batch_with_invalid_json_is_one_parse_error() {
    let (_server, url) = catalog().await;
    let response = post(
        &url,
        r#"[
            {"jsonrpc": "2.0", "method": "Catalog.search", "params": ["n1", 2], "id": "1"},
            {"jsonrpc": "2.0", "method"
        ]"#,
    )
    .await;
    assert!(response.is_object(), "a single response object, not an array: {response}");
    expect_error(&response, -32700);
    assert_eq!(response["id"], Value::Null);
}

#[tokio::test]
async fn empty_batch_is_one_invalid_request() {
    let (_server, url) = catalog().await;
    let response = post(&url, "[]").await;
    assert!(response.is_object(), "a single response object, not an array: {response}");
    expect_error(&response, -32600);
    assert_eq!(response["id"], Value::Null);
}

#[tokio::test]
async fn batch_of_one_non_object() {
    let (_server, url) = catalog().await;
    let response = post(&url, "[1]").await;
    let items = response.as_array().unwrap_or_else(|| panic!("an array: {response}"));
    assert_eq!(items.len(), 1, "{response}");
    expect_error(&items[0], -32600);
    assert_eq!(items[0]["id"], Value::Null);
}

#[tokio::test]
async fn batch_of_three_non_objects() {
    let (_server, url) = catalog().await;
    let response = post(&url, "[1,2,3]").await;
    let items = response.as_array().unwrap_or_else(|| panic!("an array: {response}"));
    assert_eq!(items.len(), 3, "{response}");
    for item in items {
        expect_error(item, -32600);
        assert_eq!(item["id"], Value::Null);
    }
}

#[tokio::test]
async fn mixed_batch_answers_every_request_but_no_notification() {
    let (_server, url) = catalog().await;
    let response = post(
        &url,
        r#"[
            {"jsonrpc": "2.0", "method": "Catalog.search", "params": ["n1", 2], "id": "1"},
            {"jsonrpc": "2.0", "method": "ping", "params": ["notify"]},
            {"jsonrpc": "2.0", "method": "Catalog.get", "params": {"id": 7}, "id": "2"},
            {"foo": "boo"},
            {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
            {"jsonrpc": "2.0", "method": "ping", "id": "9"},
            {"jsonrpc": "2.0", "method": "Catalog.get", "params": {"id": 999}, "id": 10}
        ]"#,
    )
    .await;
    let responses = by_id(&response);
    let keys: Vec<&str> = responses.keys().map(String::as_str).collect();
    assert_eq!(keys, ["\"1\"", "\"2\"", "\"5\"", "\"9\"", "10", "null"], "{response}");

    assert_eq!(responses["\"1\""][0]["result"], json!([{"id":1,"name":"n1"},{"id":10,"name":"n10"}]));
    assert_eq!(responses["\"2\""][0]["result"], json!({"id": 7, "name": "n7"}));
    expect_error(&responses["\"5\""][0], -32601);
    assert_eq!(responses["\"9\""][0]["result"], json!("pong x"));
    expect_error(&responses["10"][0], 404);
    assert_eq!(responses["null"].len(), 1, "only the invalid object has a null id: {response}");
    expect_error(&responses["null"][0], -32600);
}

#[tokio::test]
async fn all_notification_batch_gets_204() {
    let (_server, url) = catalog().await;
    let body = r#"[
        {"jsonrpc": "2.0", "method": "ping", "params": ["a"]},
        {"jsonrpc": "2.0", "method": "Catalog.get", "params": {"id": 7}},
        {"jsonrpc": "2.0", "method": "nope"}
    ]"#;
    let (status, _headers, text) = post_raw(&url, body).await;
    assert_eq!(status, 204);
    assert_eq!(text, "");
}

#[tokio::test]
async fn wrong_jsonrpc_version_echoes_the_id() {
    let (_server, url) = catalog().await;
    for (body, id) in [
        (r#"{"jsonrpc": "1.0", "method": "ping", "id": "a"}"#, json!("a")),
        (r#"{"jsonrpc": 2.0, "method": "ping", "id": 7}"#, json!(7)),
        (r#"{"method": "ping", "id": 8}"#, json!(8)),
    ] {
        let response = post(&url, body).await;
        expect_error(&response, -32600);
        assert_eq!(response["id"], id, "{body}");
    }
}

#[tokio::test]
async fn null_id_is_a_request_not_a_notification() {
    let (_server, url) = catalog().await;
    let response = post(&url, r#"{"jsonrpc": "2.0", "method": "ping", "id": null}"#).await;
    assert_eq!(response, json!({"jsonrpc": "2.0", "id": null, "result": "pong x"}));
}

#[tokio::test]
async fn ids_are_echoed_byte_for_byte() {
    let (_server, url) = catalog().await;
    for id in
        [r#""abc""#, r#""""#, r#""ü\u00e9 \"quoted\" \\""#, "0", "-5", "7", "1.5e3", "-0.25", "12345678901234567890123"]
    {
        let body = format!(r#"{{"jsonrpc": "2.0", "method": "ping", "id": {id}}}"#);
        let (status, _headers, text) = post_raw(&url, body.clone()).await;
        assert_eq!(status, 200, "{body}");
        assert!(text.contains(&format!(r#""id":{id}"#)), "id {id} echoed exactly: {text}");
        let response: Value = serde_json::from_str(&text).expect("response is JSON");
        assert_eq!(response["result"], json!("pong x"), "{text}");
    }
}

#[tokio::test]
async fn ids_of_other_types_are_invalid() {
    let (_server, url) = catalog().await;
    for id in ["{}", "[1]", "true"] {
        let body = format!(r#"{{"jsonrpc": "2.0", "method": "ping", "id": {id}}}"#);
        let response = post(&url, &body).await;
        expect_error(&response, -32600);
        assert_eq!(response["id"], Value::Null, "{body}");
    }
}

#[tokio::test]
async fn null_params_mean_no_params() {
    let (_server, url) = catalog().await;
    let response = post(&url, r#"{"jsonrpc": "2.0", "method": "ping", "params": null, "id": 1}"#).await;
    assert_eq!(response["result"], json!("pong x"), "{response}");
    // Absent params: a required parameter is then missing.
    let response = post(&url, r#"{"jsonrpc": "2.0", "method": "Catalog.get", "params": null, "id": 2}"#).await;
    let error = expect_error(&response, -32602);
    assert_eq!(error["data"]["extra"], json!({"id": ["required parameter is missing"]}));
}

#[tokio::test]
async fn params_of_other_types_are_invalid_requests() {
    let (_server, url) = catalog().await;
    for params in [r#""bar""#, "1", "true"] {
        let body = format!(r#"{{"jsonrpc": "2.0", "method": "ping", "params": {params}, "id": 3}}"#);
        let response = post(&url, &body).await;
        expect_error(&response, -32600);
        assert_eq!(response["id"], json!(3), "the id is readable, so it is echoed: {body}");
    }
}

#[tokio::test]
async fn a_response_object_is_not_a_request() {
    let (_server, url) = catalog().await;
    let response = post(&url, r#"{"jsonrpc": "2.0", "result": "pong x", "id": 4}"#).await;
    expect_error(&response, -32600);
    assert_eq!(response["id"], json!(4));
}

#[tokio::test]
async fn batch_responses_keep_every_id() {
    let (_server, url) = catalog().await;
    let batch: Vec<Value> = (1..=100).map(|i| request("Catalog.get", json!({"id": i}), json!(i))).collect();
    let response = post(&url, &Value::Array(batch).to_string()).await;
    let responses = by_id(&response);
    assert_eq!(responses.len(), 100);
    for i in 1..=100u64 {
        let item = &responses[&i.to_string()][0];
        assert_eq!(item["result"], json!({"id": i, "name": format!("n{i}")}), "{item}");
    }
}

#[tokio::test]
async fn oversized_batch_is_one_invalid_request() {
    let (_server, url) = catalog().await;
    let batch: Vec<Value> = (1..=101).map(|i| request("ping", Value::Null, json!(i))).collect();
    let response = post(&url, &Value::Array(batch).to_string()).await;
    assert!(response.is_object(), "a single response object, not an array: {response}");
    expect_error(&response, -32600);
    assert_eq!(response["id"], Value::Null);
}

#[tokio::test]
async fn every_response_has_the_envelope() {
    let (_server, url) = catalog().await;
    for body in [
        r#"{"jsonrpc": "2.0", "method": "ping", "id": 1}"#,
        r#"{"jsonrpc": "2.0", "method": "nope", "id": 1}"#,
        r#"{"jsonrpc": "2.0", "method": "Catalog.get", "params": {"id": 999}, "id": 1}"#,
        r#"{"jsonrpc": "2.0", "method": "Catalog.get", "params": {"id": -1}, "id": 1}"#,
        r#"not json"#,
    ] {
        assert_envelope(&post(&url, body).await);
    }
}

#[tokio::test]
async fn escaped_jsonrpc_member_is_still_2_0() {
    // `"2\u002e0"` is the JSON string "2.0", written with an escape.
    let (_server, url) = catalog().await;
    let response = post(&url, r#"{"jsonrpc": "2\u002e0", "method": "ping", "id": 1}"#).await;
    assert_eq!(response, json!({"jsonrpc": "2.0", "id": 1, "result": "pong x"}));
}
