//! Resources, resource templates, prompts and completion over Streamable
//! HTTP, in both eras: lists and pagination, reads of text, binary and
//! templated resources, not-found as each revision says, subscriptions
//! (handshake era), prompts with typed arguments, completion, the
//! capabilities that announce them, and hostile input.

use e2e_tests::TestServer;
use e2e_tests::modern_mcp::Modern;
use e2e_tests::raw_mcp::RawMcp;
use rpc::Environment;
use serde_json::{Value, json};

async fn conformance() -> TestServer {
    TestServer::start(conformance_server::app(Environment::Dev).expect("the conformance app")).await
}

async fn handshake(server: &TestServer) -> RawMcp {
    let mut client = RawMcp::new(server.url("/mcp"));
    let init = client.initialize("2025-11-25").await;
    let caps = &init.json["result"]["capabilities"];
    assert_eq!(caps["resources"], json!({"subscribe": true, "listChanged": false}), "{}", init.text);
    assert_eq!(caps["prompts"], json!({"listChanged": false}));
    assert_eq!(caps["completions"], json!({}));
    client
}

async fn request(client: &RawMcp, method: &str, params: Value) -> Value {
    let reply = client.post(&json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params})).await;
    assert_eq!(reply.status, 200, "{method}: {}", reply.text);
    reply.json
}

#[tokio::test]
async fn handshake_era_resources() {
    let server = conformance().await;
    let client = handshake(&server).await;
    let list = request(&client, "resources/list", json!({})).await;
    let uris: Vec<&str> =
        list["result"]["resources"].as_array().expect("resources").iter().filter_map(|r| r["uri"].as_str()).collect();
    assert_eq!(uris, ["test://static-binary", "test://static-text", "test://watched-resource"], "{list}");
    assert_eq!(list["result"]["resources"][1]["name"], "static-text");
    assert_eq!(list["result"]["resources"][1]["title"], "Static text");
    assert!(list["result"].get("ttlMs").is_none(), "no caching hints before 2026-07-28");

    let templates = request(&client, "resources/templates/list", json!({})).await;
    assert_eq!(templates["result"]["resourceTemplates"][0]["uriTemplate"], "test://template/{id}/data", "{templates}");

    let text = request(&client, "resources/read", json!({"uri": "test://static-text"})).await;
    assert_eq!(
        text["result"],
        json!({"contents": [{"uri": "test://static-text", "mimeType": "text/plain", "text": conformance_server::library::STATIC_TEXT}]})
    );
    let binary = request(&client, "resources/read", json!({"uri": "test://static-binary"})).await;
    assert_eq!(binary["result"]["contents"][0]["blob"], conformance_server::services::RED_PIXEL_PNG);
    assert_eq!(binary["result"]["contents"][0]["mimeType"], "image/png");
    let data = request(&client, "resources/read", json!({"uri": "test://template/a%20b/data"})).await;
    let body: Value =
        serde_json::from_str(data["result"]["contents"][0]["text"].as_str().expect("text")).expect("JSON");
    assert_eq!(body, json!({"id": "a b", "templateTest": true, "data": "Data for ID: a b"}), "variables are decoded");

    let missing = request(&client, "resources/read", json!({"uri": "test://nope"})).await;
    assert_eq!(missing["error"]["code"], -32002, "2025-11-25: resource not found: {missing}");
    assert_eq!(missing["error"]["data"]["uri"], "test://nope");
    let not_text = request(&client, "resources/read", json!({"uri": 7})).await;
    assert_eq!(not_text["error"]["code"], -32602, "{not_text}");
}

#[tokio::test]
async fn handshake_era_subscriptions() {
    let server = conformance().await;
    let client = handshake(&server).await;
    let subscribe = |uri: String| {
        let client = &client;
        async move { request(client, "resources/subscribe", json!({"uri": uri})).await }
    };
    assert_eq!(subscribe("test://watched-resource".into()).await["result"], json!({}));
    assert_eq!(subscribe("test://watched-resource".into()).await["result"], json!({}), "again: still one");
    let unknown = subscribe("test://nope".into()).await;
    assert_eq!(unknown["error"]["code"], -32002, "{unknown}");
    // A session keeps at most 32 subscriptions.
    for i in 0..31 {
        let reply = subscribe(format!("test://template/{i}/data")).await;
        assert_eq!(reply["result"], json!({}), "subscription {i}: {reply}");
    }
    let over = subscribe("test://template/x/data".into()).await;
    assert_eq!(over["error"]["code"], -32602, "{over}");
    assert!(over["error"]["message"].as_str().is_some_and(|m| m.contains("32")), "{over}");
    let unsubscribe = request(&client, "resources/unsubscribe", json!({"uri": "test://template/0/data"})).await;
    assert_eq!(unsubscribe["result"], json!({}));
    assert_eq!(subscribe("test://template/x/data".into()).await["result"], json!({}), "room again");
}

#[tokio::test]
async fn handshake_era_prompts_and_completion() {
    let server = conformance().await;
    let client = handshake(&server).await;
    let list = request(&client, "prompts/list", json!({})).await;
    let prompts = list["result"]["prompts"].as_array().expect("prompts");
    let with_args = prompts.iter().find(|p| p["name"] == "test_prompt_with_arguments").expect("the prompt");
    assert_eq!(
        with_args["arguments"],
        json!([
            {"name": "arg1", "description": "First test argument", "required": true},
            {"name": "arg2", "description": "Second test argument", "required": true}
        ])
    );
    let got = request(
        &client,
        "prompts/get",
        json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}),
    )
    .await;
    assert_eq!(
        got["result"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Prompt with arguments: arg1='a', arg2='b'"}}])
    );
    let missing =
        request(&client, "prompts/get", json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a"}}))
            .await;
    assert_eq!(missing["error"]["code"], -32602, "a required argument is missing: {missing}");
    assert!(missing["error"]["data"]["extra"]["arg2"].is_array(), "{missing}");
    let not_string = request(
        &client,
        "prompts/get",
        json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": 1, "arg2": "b"}}),
    )
    .await;
    assert_eq!(not_string["error"]["code"], -32602, "{not_string}");
    let unknown = request(&client, "prompts/get", json!({"name": "nope"})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let image = request(&client, "prompts/get", json!({"name": "test_prompt_with_image"})).await;
    assert_eq!(image["result"]["messages"][0]["content"]["type"], "image");

    let complete = |value: &str| json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": value}});
    let pa = request(&client, "completion/complete", complete("pa")).await;
    assert_eq!(pa["result"]["completion"], json!({"values": ["paris", "park", "party"], "total": 3, "hasMore": false}));
    let pari = request(&client, "completion/complete", complete("pari")).await;
    assert_eq!(pari["result"]["completion"]["values"], json!(["paris"]));
    let other_arg = request(
        &client,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg2", "value": "x"}}),
    )
    .await;
    assert_eq!(other_arg["result"]["completion"]["values"], json!([]), "no provider: nothing to suggest");
    let unknown_ref = request(
        &client,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}}),
    )
    .await;
    assert_eq!(unknown_ref["error"]["code"], -32602, "{unknown_ref}");
    let bad_ref = request(
        &client,
        "completion/complete",
        json!({"ref": {"type": "ref/what"}, "argument": {"name": "a", "value": ""}}),
    )
    .await;
    assert_eq!(bad_ref["error"]["code"], -32602, "{bad_ref}");
}

#[tokio::test]
async fn stateless_era() {
    let server = conformance().await;
    let client = Modern::new(server.url("/mcp"));
    let discover = client.call("server/discover", json!({})).await;
    let caps = &discover.json["result"]["capabilities"];
    // Subscriptions are `resourceSubscriptions` on `subscriptions/listen` in this era.
    assert_eq!(caps["resources"], json!({"subscribe": true, "listChanged": true}), "{}", discover.text);
    assert_eq!(caps["completions"], json!({}));

    let list = client.call("resources/list", json!({})).await;
    assert_eq!(list.json["result"]["resultType"], "complete", "{}", list.text);
    assert!(list.json["result"]["ttlMs"].is_u64() && list.json["result"]["cacheScope"].is_string());
    let read = client.call("resources/read", json!({"uri": "test://static-text"})).await;
    assert_eq!(read.status, 200, "{}", read.text);
    let result = &read.json["result"];
    assert_eq!(result["contents"][0]["text"], conformance_server::library::STATIC_TEXT);
    assert!(
        result["ttlMs"].is_u64() && result["cacheScope"].is_string() && result["resultType"] == "complete",
        "{result}"
    );
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());

    let missing = client.call("resources/read", json!({"uri": "test://nope"})).await;
    assert_eq!(
        (missing.status, missing.json["error"]["code"].clone()),
        (400, json!(-32602)),
        "SEP-2164: {}",
        missing.text
    );
    assert_eq!(missing.json["error"]["data"]["uri"], "test://nope");
    assert_eq!(missing.json["id"], 1, "errors carry the request id");

    // `Mcp-Name` mirrors the URI.
    let body = client.request("resources/read", json!({"uri": "test://static-text"}), json!(2));
    let mismatch = client.exchange(&body, &[("mcp-name", "test://other")]).await;
    assert_eq!((mismatch.status, mismatch.json["error"]["code"].clone()), (400, json!(-32020)), "{}", mismatch.text);

    for method in ["resources/subscribe", "resources/unsubscribe"] {
        let reply = client.call(method, json!({"uri": "test://watched-resource"})).await;
        assert_eq!(
            (reply.status, reply.json["error"]["code"].clone()),
            (404, json!(-32601)),
            "{method}: {}",
            reply.text
        );
    }
    let prompt = client.call("prompts/get", json!({"name": "test_simple_prompt"})).await;
    assert_eq!(prompt.json["result"]["messages"][0]["content"]["text"], "This is a simple prompt for testing.");
    assert_eq!(prompt.json["result"]["resultType"], "complete");
    let complete = client
        .call("completion/complete", json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": "par"}}))
        .await;
    assert_eq!(complete.json["result"]["completion"]["values"], json!(["paris", "park", "party"]), "{}", complete.text);
    let bad_cursor = client.call("prompts/list", json!({"cursor": "not-a-cursor"})).await;
    assert_eq!(bad_cursor.json["error"]["code"], -32602, "{}", bad_cursor.text);
}

mod tools_only {
    rpc::api_group!(pub struct Plain => "plain", mcp = true);

    /// Tools and nothing else.
    pub struct Plain1;

    #[rpc::service(groups(Plain))]
    impl Plain1 {
        /// Echoes.
        pub fn echo(&self, text: String) -> String {
            text
        }
    }
}

#[tokio::test]
async fn an_endpoint_without_them_does_not_announce_or_serve_them() {
    let registry = rpc::Registry::builder().service(tools_only::Plain1).build().expect("registry");
    let executor = rpc::Executor::new(registry, Environment::Dev);
    let endpoint = mcp::McpEndpoint::builder::<tools_only::Plain>(executor).build();
    let server = TestServer::start(rpc::server::Router::new().nest("/mcp", endpoint)).await;
    let client = Modern::new(server.url("/mcp"));
    let discover = client.call("server/discover", json!({})).await;
    let caps = discover.json["result"]["capabilities"].as_object().expect("capabilities").clone();
    let names: Vec<&str> = caps.keys().map(String::as_str).collect();
    assert_eq!(names, ["tools", "logging"], "{}", discover.text);
    for method in ["resources/list", "resources/read", "prompts/list", "prompts/get", "completion/complete"] {
        let reply = client.call(method, json!({"uri": "x://y", "name": "n"})).await;
        assert_eq!(
            (reply.status, reply.json["error"]["code"].clone()),
            (404, json!(-32601)),
            "{method}: {}",
            reply.text
        );
    }
    let mut legacy = RawMcp::new(server.url("/mcp"));
    let init = legacy.initialize("2025-11-25").await;
    assert!(init.json["result"]["capabilities"].get("resources").is_none(), "{}", init.text);
    let list = request(&legacy, "resources/list", json!({})).await;
    assert_eq!(list["error"]["code"], -32601, "{list}");
}

#[tokio::test]
async fn the_catalog_serves_its_products_through_the_pipeline() {
    let server = TestServer::catalog(Environment::Dev).await;
    let mut client = RawMcp::new(server.url("/mcp/v1"));
    client.initialize("2025-11-25").await;
    let read = request(&client, "resources/read", json!({"uri": "catalog://products/7"})).await;
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["mimeType"], "application/json");
    assert_eq!(
        serde_json::from_str::<Value>(contents["text"].as_str().expect("text")).expect("JSON"),
        json!({"id": 7, "name": "n7"})
    );
    // Validation of the method's parameters applies to the URI's variables.
    let zero = request(&client, "resources/read", json!({"uri": "catalog://products/0"})).await;
    assert_eq!(zero["error"]["code"], -32602, "{zero}");
    assert_eq!(zero["error"]["data"]["extra"]["id"][0], "0 is less than the minimum of 1");
    let absent = request(&client, "resources/read", json!({"uri": "catalog://products/999"})).await;
    assert_eq!(absent["error"]["code"], 404, "the method's own error: {absent}");
    // The rename refreshes the cached product, as for `Catalog.get`.
    let renamed = client.call("Catalog.rename", json!({"id": 7, "name": "lamp"})).await;
    assert!(renamed["result"]["isError"] == false, "{renamed}");
    let mut seen = Value::Null;
    for _ in 0..50 {
        let again = request(&client, "resources/read", json!({"uri": "catalog://products/7"})).await;
        seen = again["result"]["contents"][0]["text"].clone();
        if seen.as_str().is_some_and(|t| t.contains("lamp")) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(seen.as_str().is_some_and(|t| t.contains("lamp")), "{seen}");

    let review = request(
        &client,
        "prompts/get",
        json!({"name": "Catalog.review", "arguments": {"name": "N8", "tone": "critical"}}),
    )
    .await;
    assert_eq!(review["result"]["messages"][0]["content"]["resource"]["uri"], "catalog://products/8", "{review}");
    assert!(review["result"]["messages"][1]["content"]["text"].as_str().is_some_and(|t| t.contains("critical")));
    let bad_tone = request(
        &client,
        "prompts/get",
        json!({"name": "Catalog.review", "arguments": {"name": "n8", "tone": "angry"}}),
    )
    .await;
    assert_eq!(bad_tone["error"]["code"], -32602, "{bad_tone}");
    let names = request(
        &client,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "Catalog.review"}, "argument": {"name": "name", "value": "N1"}}),
    )
    .await;
    assert_eq!(names["result"]["completion"]["values"][0], "n1", "{names}");
    assert_eq!(names["result"]["completion"]["total"], 12, "n1, n10..n19, n100: {names}");
    let ids = request(
        &client,
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "catalog://products/{id}"}, "argument": {"name": "id", "value": ""}}),
    )
    .await;
    assert_eq!(ids["result"]["completion"]["values"].as_array().map(Vec::len), Some(100), "{ids}");
    assert_eq!(ids["result"]["completion"]["hasMore"], false, "exactly 100 products");
}

#[tokio::test]
async fn hostile_input_gets_a_bounded_answer() {
    let server = conformance().await;
    let client = handshake(&server).await;
    let long = format!("test://template/{}/data", "x".repeat(100_000));
    let started = std::time::Instant::now();
    let reply = request(&client, "resources/read", json!({"uri": long})).await;
    assert_eq!(reply["error"]["code"], -32002, "longer than any URI served: not found");
    let echoed = reply["error"]["data"]["uri"].as_str().expect("the URI, cut");
    assert!(echoed.len() <= 8 * 1024, "the echo is bounded: {}", echoed.len());
    let arguments: serde_json::Map<String, Value> = (0..5000).map(|i| (format!("k{i}"), json!("v"))).collect();
    let many = request(&client, "prompts/get", json!({"name": "test_simple_prompt", "arguments": arguments})).await;
    assert!(many["result"]["messages"].is_array(), "unknown arguments are ignored: {}", many.to_string().len());
    let context: serde_json::Map<String, Value> = (0..5000).map(|i| (format!("k{i}"), json!("v"))).collect();
    let completion = request(
        &client,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": "p"}, "context": {"arguments": context}}),
    )
    .await;
    assert_eq!(completion["result"]["completion"]["total"], 3, "{completion}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
}
