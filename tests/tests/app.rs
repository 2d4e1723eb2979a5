//! `mcp::App`: one builder serving both endpoints with defaults: the
//! server's identity from the crate that declared the group, hosts from the
//! listen address, settings applied to both endpoints, and a refused
//! `Host` that says how to allow it.

use e2e_tests::raw_mcp::RawMcp;
use e2e_tests::{post_json, raw_http};
use serde_json::{Value, json};
use tokio::sync::oneshot;

mod fixtures {
    rpc::api_group!(pub struct Tools => "apptools", mcp = true);

    /// A counter.
    pub struct Counter;

    #[rpc::service(groups(Tools))]
    impl Counter {
        /// Doubles.
        pub fn double(&self, n: i64) -> i64 {
            n * 2
        }
    }
}

/// Serves `app` on an ephemeral loopback port; the sender stops it.
async fn start(app: mcp::App) -> (String, std::net::SocketAddr, oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(app.serve_on(listener, async {
        let _ = stopped.await;
    }));
    (format!("http://{addr}"), addr, stop)
}

#[tokio::test]
async fn one_builder_serves_both_endpoints_with_the_application_identity() {
    let (base, _addr, _stop) = start(mcp::App::new::<fixtures::Tools>().service(fixtures::Counter)).await;

    let (status, reply) =
        post_json(&format!("{base}/rpc"), r#"{"jsonrpc":"2.0","id":1,"method":"Counter.double","params":{"n":21}}"#)
            .await;
    assert_eq!((status, &reply["result"]), (200, &json!(42)), "{reply}");
    let (_, document) = e2e_tests::get_json(&format!("{base}/rpc")).await;
    assert_eq!(document["info"]["title"], env!("CARGO_PKG_NAME"), "{document}");
    assert_eq!(document["info"]["version"], env!("CARGO_PKG_VERSION"));

    let mut client = RawMcp::new(format!("{base}/mcp/v1"));
    let init = client.initialize("2025-11-25").await;
    // This crate declared the group: not the framework's `mcp 0.1.0`.
    assert_eq!(init.json["result"]["serverInfo"]["name"], env!("CARGO_PKG_NAME"), "{}", init.text);
    assert_eq!(init.json["result"]["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    let result = client.call("Counter.double", json!({"n": 4})).await;
    assert_eq!(result["result"]["structuredContent"]["result"], 8, "{result}");
}

#[tokio::test]
async fn a_refused_host_says_how_to_allow_it() {
    let (_base, addr, _stop) = start(mcp::App::new::<fixtures::Tools>().service(fixtures::Counter)).await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"Counter.double","params":{"n":1}}"#;
    let head = format!(
        "POST /rpc HTTP/1.1\r\nHost: intranet.example\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let response = raw_http::exchange(addr, &head, body.as_bytes()).await;
    assert_eq!(response.status, 403);
    let text = response.text();
    assert!(text.contains("--allow-host") && text.contains("allowed_hosts"), "{text}");
}

#[tokio::test]
async fn the_endpoints_builders_stay_reachable() {
    let app = mcp::App::new::<fixtures::Tools>()
        .service(fixtures::Counter)
        .rpc(|b| b.info(rpc::ApiInfo::new("Counter API", "9.9.9")))
        .mcp(|b| b.server_info(mcp::ServerInfo::new("counter", "2.0.0")).instructions("Double numbers."));
    let (base, _addr, _stop) = start(app).await;
    let (_, document) = e2e_tests::get_json(&format!("{base}/rpc")).await;
    assert_eq!(document["info"]["title"], "Counter API");
    let mut client = RawMcp::new(format!("{base}/mcp/v1"));
    let init = client.initialize("2025-11-25").await;
    assert_eq!(init.json["result"]["serverInfo"], json!({"name": "counter", "version": "2.0.0"}), "{}", init.text);
    assert_eq!(init.json["result"]["instructions"], "Double numbers.");
}

#[tokio::test]
async fn settings_apply_to_both_endpoints() {
    let dir = std::env::temp_dir().join(format!("app-settings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let file = dir.join("mcp.toml");
    std::fs::write(&file, "allowed_hosts = [\"intranet.example\"]\n[server]\nname = \"from-settings\"\n")
        .expect("write");
    let settings = mcp::settings::Settings::load_with(Some(&file), None).expect("settings load");
    let app = mcp::App::new::<fixtures::Tools>().service(fixtures::Counter).configure(settings);
    let (_base, addr, _stop) = start(app).await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"Counter.double","params":{"n":1}}"#;
    for path in ["/rpc", "/mcp/v1"] {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: intranet.example\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let response = raw_http::exchange(addr, &head, body.as_bytes()).await;
        assert_ne!(response.status, 403, "{path}: the settings' host is allowed: {}", response.text());
    }
    let mut client = RawMcp::new(format!("http://{addr}/mcp/v1"));
    let init = client.initialize("2025-11-25").await;
    assert_eq!(init.json["result"]["serverInfo"]["name"], "from-settings", "{}", init.text);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_broken_registry_is_an_error_not_a_panic() {
    // The same service twice.
    let app = mcp::App::new::<fixtures::Tools>().service(fixtures::Counter).service(fixtures::Counter);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let error = app.serve_on(listener, async {}).await.expect_err("a duplicate service is refused");
    assert!(matches!(error, mcp::AppError::Registry(_)), "{error}");
    let _: Value = json!(error.to_string());
}

#[tokio::test]
async fn the_router_mounts_in_axum_and_keeps_the_prefix() {
    let listing = mcp::RegistryListing::new("com.example/counter")
        .and_then(|l| l.description("Doubles numbers."))
        .expect("a registry listing");
    let router = mcp::App::new::<fixtures::Tools>()
        .service(fixtures::Counter)
        .mcp(move |b| b.registry(listing))
        .router()
        .expect("the app builds");
    let app = axum::Router::new().nest_service("/api", router);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let (_stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await;
    });
    let base = format!("http://{addr}");
    let (status, document) = e2e_tests::get_json(&format!("{base}/api/rpc")).await;
    assert_eq!(status, 200, "{document}");
    assert_eq!(document["servers"][0]["url"], format!("{base}/api/rpc"), "the mount prefix is kept");
    let mut client = RawMcp::new(format!("{base}/api/mcp/v1"));
    let init = client.initialize("2025-11-25").await;
    assert_eq!(init.status, 200, "{}", init.text);
    let result = client.call("Counter.double", json!({"n": 5})).await;
    assert_eq!(result["result"]["structuredContent"]["result"], 10, "{result}");
    let (status, server_json) = e2e_tests::get_json(&format!("{base}/api/mcp/v1/server.json")).await;
    assert_eq!(status, 200, "{server_json}");
    assert_eq!(server_json["remotes"][0]["url"], format!("{base}/api/mcp/v1"), "{server_json}");
}
