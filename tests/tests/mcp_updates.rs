//! Resource updates on `subscriptions/listen` streams (2026-07-28,
//! `resourceSubscriptions`): only the subscribed resources, tagged with the
//! subscription; hostile filters refused; and two instances sharing Redis,
//! where a change raised on one reaches the streams open on the other.

use std::time::Duration;

use e2e_tests::TestServer;
use e2e_tests::modern_mcp::{Modern, SseReader};
use e2e_tests::redis_server::Redis;
use mcp::ListChanges;
use rpc::Environment;
use serde_json::{Value, json};

mod fixtures {
    use mcp::mcp_resource;

    rpc::api_group!(pub struct Docs => "docs", mcp = true);

    /// Documents.
    pub struct Documents;

    #[rpc::service(alias = "docs", groups(Docs))]
    impl Documents {
        /// One document.
        #[mcp_resource(uri = "doc://items/{id}", mime_type = "text/plain")]
        pub fn item(&self, id: u32) -> String {
            format!("item {id}")
        }

        /// Says hello.
        pub fn hello(&self) -> String {
            "hello".into()
        }
    }
}

fn app(changes: ListChanges) -> rpc::server::Router {
    let registry = rpc::Registry::builder().service(fixtures::Documents).build().expect("registry");
    let executor = rpc::Executor::new(registry, Environment::Dev);
    let endpoint = mcp::McpEndpoint::builder::<fixtures::Docs>(executor).list_changes(changes).build();
    rpc::server::Router::new().nest("/mcp", endpoint)
}

async fn listen(client: &Modern, filter: Value, id: u32) -> SseReader {
    let body = client.request("subscriptions/listen", json!({"notifications": filter}), json!(id));
    SseReader::new(client.send(&body, &[]).await)
}

const WAIT: Duration = Duration::from_secs(5);

#[tokio::test]
async fn a_stream_gets_the_updates_of_the_resources_it_subscribed_to() {
    let changes = ListChanges::new();
    let server = TestServer::start(app(changes.clone())).await;
    let client = Modern::new(server.url("/mcp"));
    let discover = client.call("server/discover", json!({})).await;
    assert_eq!(discover.json["result"]["capabilities"]["resources"]["subscribe"], true, "{}", discover.json);

    let filter = json!({"resourceSubscriptions": ["doc://items/1", "doc://items/1", "doc://items/2"]});
    let mut stream = listen(&client, filter, 41).await;
    let ack = stream.next(WAIT).await.expect("acknowledged");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"]["resourceSubscriptions"], json!(["doc://items/1", "doc://items/2"]));

    changes.resource_updated("doc://items/3");
    changes.tools_changed();
    changes.resource_updated("doc://items/2");
    let update = stream.next(WAIT).await.expect("an update");
    assert_eq!(update["method"], "notifications/resources/updated", "{update}");
    assert_eq!(update["params"]["uri"], "doc://items/2", "only subscribed resources: {update}");
    assert_eq!(update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 41);
    assert!(stream.next_within(Duration::from_millis(300)).await.is_none(), "nothing else was asked for");
}

#[tokio::test]
async fn hostile_subscription_filters_are_refused() {
    let changes = ListChanges::new();
    let server = TestServer::start(app(changes)).await;
    let client = Modern::new(server.url("/mcp"));
    let many: Vec<String> = (0..101).map(|i| format!("doc://items/{i}")).collect();
    for filter in [
        json!({"resourceSubscriptions": "doc://items/1"}),
        json!({"resourceSubscriptions": [1]}),
        json!({"resourceSubscriptions": [""]}),
        json!({"resourceSubscriptions": ["x".repeat(3000)]}),
        json!({"resourceSubscriptions": many}),
    ] {
        let reply = client.call("subscriptions/listen", json!({"notifications": filter})).await;
        assert_eq!((reply.status, reply.json["error"]["code"].clone()), (400, json!(-32602)), "{}", reply.text);
        assert!(reply.text.len() < 1024, "the filter is not echoed: {}", reply.text.len());
    }
}

#[tokio::test]
async fn a_change_raised_on_one_instance_reaches_the_streams_of_another() {
    let Some(redis) = Redis::start() else { return };
    let connect = || async {
        rpc::store::redis::RedisStore::connect(&redis.url).await.expect("redis").with_prefix(redis.prefix.clone())
    };
    let (here, there) = (ListChanges::new(), ListChanges::new());
    here.share_through_redis(&connect().await).await.expect("shared");
    there.share_through_redis(&connect().await).await.expect("shared");
    assert!(there.share_through_redis(&connect().await).await.is_err(), "shared once");
    let (one, two) = (TestServer::start(app(here.clone())).await, TestServer::start(app(there.clone())).await);
    let (on_one, on_two) = (Modern::new(one.url("/mcp")), Modern::new(two.url("/mcp")));
    let filter = json!({"toolsListChanged": true, "resourceSubscriptions": ["doc://items/7"]});
    let mut far = listen(&on_two, filter.clone(), 1).await;
    let mut near = listen(&on_one, filter, 2).await;
    for stream in [&mut far, &mut near] {
        assert_eq!(stream.next(WAIT).await.expect("ack")["method"], "notifications/subscriptions/acknowledged");
    }

    here.resource_updated("doc://items/7");
    here.tools_changed();
    for stream in [&mut far, &mut near] {
        // Kinds are not ordered between each other: both arrive, once each.
        let mut got = Vec::new();
        for _ in 0..2 {
            let message = stream.next(WAIT).await.expect("a change");
            got.push(format!(
                "{} {}",
                message["method"].as_str().unwrap_or(""),
                message["params"]["uri"].as_str().unwrap_or("")
            ));
        }
        got.sort();
        assert_eq!(got, ["notifications/resources/updated doc://items/7", "notifications/tools/list_changed "]);
        assert!(stream.next_within(Duration::from_millis(300)).await.is_none(), "each change once, never echoed back");
    }
    // And the other way.
    there.resource_updated("doc://items/7");
    assert_eq!(near.next(WAIT).await.expect("from two")["params"]["uri"], "doc://items/7");
    assert_eq!(far.next(WAIT).await.expect("its own")["params"]["uri"], "doc://items/7");
}

#[tokio::test]
async fn renaming_a_product_updates_its_resource_for_subscribed_agents() {
    let server = TestServer::catalog(Environment::Dev).await;
    let client = Modern::new(server.url("/mcp"));
    let mut stream = listen(&client, json!({"resourceSubscriptions": ["catalog://products/42"]}), 9).await;
    assert_eq!(stream.next(WAIT).await.expect("ack")["method"], "notifications/subscriptions/acknowledged");
    let renamed = client.tool("Catalog.rename", json!({"id": 42, "name": "answer"})).await;
    assert_eq!(renamed.json["result"]["isError"], false, "{}", renamed.text);
    // Other tests rename other products through the same hub: only ours arrives.
    let update = stream.next(WAIT).await.expect("an update");
    assert_eq!(update["method"], "notifications/resources/updated", "{update}");
    assert_eq!(update["params"]["uri"], "catalog://products/42");
    let read = client.call("resources/read", json!({"uri": "catalog://products/42"})).await;
    assert!(read.text.contains("answer"), "the resource reads the new name: {}", read.text);
}

/// Opens the GET stream of `client`'s session.
async fn session_stream(client: &e2e_tests::raw_mcp::RawMcp) -> reqwest::Response {
    let mut request = reqwest::Client::new().get(&client.url).header("accept", "text/event-stream");
    if let Some(session) = &client.session {
        request = request.header("mcp-session-id", session.as_str());
    }
    if let Some(protocol) = &client.protocol {
        request = request.header("mcp-protocol-version", protocol.as_str());
    }
    request.send().await.expect("GET sent")
}

#[tokio::test]
async fn a_handshake_session_gets_updates_of_its_subscriptions_on_its_get_stream() {
    let changes = ListChanges::new();
    let server = TestServer::start(app(changes.clone())).await;
    let mut client = e2e_tests::raw_mcp::RawMcp::new(server.url("/mcp"));
    client.initialize("2025-11-25").await;
    let subscribed = client
        .post(&json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "doc://items/1"}}))
        .await;
    assert!(subscribed.json.get("result").is_some(), "{}", subscribed.text);

    let response = session_stream(&client).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    let mut stream = SseReader::new(response);
    changes.resource_updated("doc://items/2");
    changes.resource_updated("doc://items/1");
    let update = stream.next(WAIT).await.expect("an update");
    assert_eq!(
        update,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "doc://items/1"}})
    );
    assert!(stream.next_within(Duration::from_millis(300)).await.is_none(), "not subscribed to item 2");

    // Unsubscribed (the session store is read at each update): nothing more.
    client
        .post(
            &json!({"jsonrpc": "2.0", "id": 3, "method": "resources/unsubscribe", "params": {"uri": "doc://items/1"}}),
        )
        .await;
    changes.resource_updated("doc://items/1");
    assert!(stream.next_within(Duration::from_millis(300)).await.is_none(), "unsubscribed");

    // The session ends: so does its stream.
    let ended = client.send(reqwest::Method::DELETE, None, &[]).await;
    assert_eq!(ended.status, 200, "{}", ended.text);
    changes.resource_updated("doc://items/1");
    assert!(stream.next(WAIT).await.is_none(), "the stream ended with its session");
}

#[tokio::test]
async fn a_get_stream_needs_a_live_session_and_an_event_stream() {
    let changes = ListChanges::new();
    let server = TestServer::start(app(changes.clone())).await;
    let mut client = e2e_tests::raw_mcp::RawMcp::new(server.url("/mcp"));
    let no_session = session_stream(&client).await;
    assert_eq!(no_session.status(), 400);
    client.session = Some("0123456789abcdef0123456789abcdef".into());
    assert_eq!(session_stream(&client).await.status(), 404, "an unknown session");
    client.initialize("2025-11-25").await;
    let json_only = reqwest::Client::new()
        .get(&client.url)
        .header("accept", "application/json")
        .header("mcp-session-id", client.session.clone().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(json_only.status(), 406);
    // Without a change hub there is nothing to send: 405, as before.
    let registry = rpc::Registry::builder().service(fixtures::Documents).build().expect("registry");
    let executor = rpc::Executor::new(registry, Environment::Dev);
    let endpoint = mcp::McpEndpoint::builder::<fixtures::Docs>(executor).build();
    let quiet = TestServer::start(rpc::server::Router::new().nest("/mcp", endpoint)).await;
    let mut other = e2e_tests::raw_mcp::RawMcp::new(quiet.url("/mcp"));
    other.initialize("2025-11-25").await;
    assert_eq!(session_stream(&other).await.status(), 405);
}
