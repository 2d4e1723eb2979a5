//! Test harness: starts an application on an ephemeral loopback port, in
//! the test's own process, and gives its base URL. Requests go over real
//! HTTP (TCP), exactly as an external client's would.

pub mod modern_mcp;
pub mod raw_http;
pub mod raw_mcp;
pub mod redis_server;
pub mod strict_schema;
pub mod wellformed;

use std::net::SocketAddr;

use rpc::Environment;
use rpc::server::Router;
use tokio::sync::oneshot;

/// A running server; shuts down when dropped.
pub struct TestServer {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    /// The bound address.
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
}

impl TestServer {
    /// Serves `app` on 127.0.0.1 with an OS-chosen port.
    pub async fn start(app: Router) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind an ephemeral port");
        let addr = listener.local_addr().expect("local address");
        let (tx, rx) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = rpc::server::serve(listener, app, async {
                let _ = rx.await;
            })
            .await;
        });
        TestServer { base: format!("http://{addr}"), addr, shutdown: Some(tx) }
    }

    /// Serves `app` like [`TestServer::start`], under `limits`.
    pub async fn start_with(app: Router, limits: rpc::server::ServerLimits) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind an ephemeral port");
        let addr = listener.local_addr().expect("local address");
        let (tx, rx) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = rpc::server::serve_with(
                listener,
                app,
                async {
                    let _ = rx.await;
                },
                limits,
            )
            .await;
        });
        TestServer { base: format!("http://{addr}"), addr, shutdown: Some(tx) }
    }

    /// A server the test started itself (e.g. with axum), stopped through
    /// `shutdown` when this drops.
    pub fn external(base: String, addr: SocketAddr, shutdown: oneshot::Sender<()>) -> TestServer {
        TestServer { base, addr, shutdown: Some(shutdown) }
    }

    /// The catalog example in environment `env`.
    pub async fn catalog(env: Environment) -> TestServer {
        TestServer::start(catalog::app(env).expect("catalog registry builds")).await
    }

    /// `base + path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// POSTs a raw body to `url` with `Content-Type: application/json`; returns
/// the status and the body parsed as JSON (`Null` for an empty body).
pub async fn post_json(url: &str, body: &str) -> (u16, serde_json::Value) {
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .expect("request sent");
    let status = response.status().as_u16();
    let text = response.text().await.expect("body read");
    let json = if text.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("response is not JSON ({e}): {text}"))
    };
    (status, json)
}

/// GETs `url`; returns the status and the body parsed as JSON (`Null` when empty).
pub async fn get_json(url: &str) -> (u16, serde_json::Value) {
    let response = reqwest::get(url).await.expect("request sent");
    let status = response.status().as_u16();
    let text = response.text().await.expect("body read");
    let json = if text.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text))
    };
    (status, json)
}
