//! An existing axum application that mounts the framework's endpoints.
//!
//! The application has its own routes (`/`, `/health`), its own state
//! (request counter) and a tracing layer; the catalog's JSON-RPC service is
//! nested at `/api/rpc` and its MCP endpoint at `/api/mcp`, with axum's
//! `nest_service`. Both are plain `tower::Service`s, so nothing else is
//! needed; URLs the endpoints publish (OpenRPC `servers[0].url`, MCP
//! documents) keep the `/api/...` prefix (the default `axum` feature reads
//! axum's `OriginalUri`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Json;
use axum::extract::State;
use axum::routing::get;
use mcp::McpEndpoint;
use rpc::{Environment, Executor, HostPolicy, JsonRpcService, RegistryError};
use serde_json::{Value, json};
use tower_http::trace::TraceLayer;

/// The application's own state.
#[derive(Debug, Clone, Default)]
pub struct AppState {
    /// Requests served by the application's own routes.
    pub hits: Arc<AtomicU64>,
}

async fn index(State(state): State<AppState>) -> Json<Value> {
    let hits = state.hits.fetch_add(1, Ordering::Relaxed) + 1;
    Json(json!({
        "app": "axum-mount example",
        "hits": hits,
        "endpoints": {"json-rpc": "/api/rpc", "openrpc": "/api/rpc (GET)", "mcp": "/api/mcp/v1"}
    }))
}

async fn health(State(state): State<AppState>) -> &'static str {
    state.hits.fetch_add(1, Ordering::Relaxed);
    "ok"
}

/// The whole application: its own routes and the nested endpoints.
pub fn app(env: Environment, hosts: HostPolicy) -> Result<axum::Router, RegistryError> {
    let executor = Executor::new(catalog::registry()?, env);
    let rpc = JsonRpcService::new(executor.clone());
    let mcp = McpEndpoint::builder::<catalog::Mcp>(executor).hosts(hosts).build();
    Ok(axum::Router::new()
        .route("/", get(index))
        .route("/health", get(health))
        .nest_service("/api/rpc", rpc)
        .nest_service("/api/mcp", mcp)
        .with_state(AppState::default())
        .layer(TraceLayer::new_for_http()))
}
