//! The OpenRPC document as a request gets it.
//!
//! At build time `servers[0]` gets what the endpoint knows about itself
//! beyond its URL: `x-environment`, `x-transports` (calls over HTTP `POST`,
//! and `$rpc.callback` when callbacks are allowed) and `x-documentation`
//! (the Postman collection, the JSON-RPC and OpenRPC specifications). Per
//! request, the URLs are filled in (the public URL of the endpoint), and
//! `?info` trims the document to its `info` and `servers` (no `methods`,
//! and no `components`, which only the methods use).

use rpc_core::error::Environment;
use serde_json::{Map, Value, json};

/// The JSON-RPC 2.0 specification, linked from every document.
pub const JSON_RPC_SPEC: &str = "https://www.jsonrpc.org/specification";
/// The OpenRPC specification the documents follow.
pub const OPENRPC_SPEC: &str = "https://spec.open-rpc.org/";

/// Adds the server extensions to `servers[0]` of `doc`: the environment,
/// the transports (`callbacks`: whether `$rpc.callback` is allowed) and
/// the documentation links (URLs below the endpoint are filled in by
/// [`served`]).
pub(super) fn describe_server(doc: &mut Value, env: Environment, callbacks: bool) {
    let Some(server) = doc["servers"].get_mut(0).and_then(Value::as_object_mut) else { return };
    let env = match env {
        Environment::Dev => "dev",
        Environment::Test => "test",
        Environment::Prod => "prod",
    };
    server.insert("x-environment".into(), json!(env));
    let mut transports = Map::new();
    transports.insert("http".into(), json!({"method": "POST", "url": ""}));
    if callbacks {
        // The response is POSTed to the URL the call names in `$rpc.callback`.
        transports.insert("callback".into(), json!({"param": "$rpc.callback", "method": "POST"}));
    }
    server.insert("x-transports".into(), Value::Object(transports));
    let mut documentation = Map::new();
    if cfg!(feature = "docs") {
        documentation.insert("postman".into(), json!(""));
    }
    documentation.insert("json-rpc".into(), json!(JSON_RPC_SPEC));
    documentation.insert("openrpc".into(), json!(OPENRPC_SPEC));
    server.insert("x-documentation".into(), Value::Object(documentation));
}

/// Whether the query string asks for the header only (`?info`, `?info=...`).
pub(super) fn asks_info(query: Option<&str>) -> bool {
    query.is_some_and(|q| q.split('&').any(|part| part == "info" || part.starts_with("info=")))
}

/// The copy of `doc` a request gets: the endpoint's public `url` filled in
/// (the server's, its HTTP transport's, its Postman collection's), and
/// without `methods` and `components` when `info_only`.
pub(super) fn served(doc: &Value, url: &str, info_only: bool) -> Value {
    let mut copy = match doc {
        Value::Object(fields) if info_only => {
            let kept = fields.iter().filter(|(k, _)| *k != "methods" && *k != "components");
            Value::Object(kept.map(|(k, v)| (k.clone(), v.clone())).collect())
        }
        other => other.clone(),
    };
    if let Some(server) = copy["servers"].get_mut(0).and_then(Value::as_object_mut) {
        server.insert("url".into(), json!(url));
        if let Some(http) = server.get_mut("x-transports").and_then(|t| t.get_mut("http")) {
            http["url"] = json!(url);
        }
        if let Some(postman) = server.get_mut("x-documentation").and_then(|d| d.get_mut("postman")) {
            *postman = json!(format!("{}/postman", url.trim_end_matches('/')));
        }
    }
    copy
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_is_asked_by_key() {
        assert!(asks_info(Some("info")));
        assert!(asks_info(Some("a=1&info")));
        assert!(asks_info(Some("info=1")));
        assert!(!asks_info(Some("information")));
        assert!(!asks_info(None));
    }

    #[test]
    fn served_fills_urls_and_trims() {
        let mut doc = json!({"openrpc": "1.3.2", "info": {}, "servers": [{"name": "v2", "url": ""}],
            "methods": [], "components": {}});
        describe_server(&mut doc, Environment::Test, true);
        let full = served(&doc, "http://h/rpc/v2", false);
        let server = &full["servers"][0];
        assert_eq!(server["url"], "http://h/rpc/v2");
        assert_eq!(server["x-environment"], "test");
        assert_eq!(server["x-transports"]["http"], json!({"method": "POST", "url": "http://h/rpc/v2"}));
        assert_eq!(server["x-transports"]["callback"]["param"], "$rpc.callback");
        assert_eq!(server["x-documentation"]["json-rpc"], JSON_RPC_SPEC);
        if cfg!(feature = "docs") {
            assert_eq!(server["x-documentation"]["postman"], "http://h/rpc/v2/postman");
        }
        assert!(full.get("methods").is_some());
        let info = served(&doc, "http://h/rpc/", true);
        assert!(info.get("methods").is_none() && info.get("components").is_none(), "{info}");
        assert_eq!(info["servers"][0]["x-documentation"]["openrpc"], OPENRPC_SPEC);
    }
}
