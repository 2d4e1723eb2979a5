//! The documents for people: the HTML page of `GET /rpc`, `/rpc/v{N}` and
//! `/mcp/v{N}` for browsers (strict CSP, every method or tool in it), JSON
//! for everyone else as before, the Postman collections at `/rpc/postman`
//! and `/rpc/v{N}/postman` (golden files `tests/golden/postman.v{N}.json`,
//! regenerate with `UPDATE_GOLDEN=1`), and the token rules of documents.

use std::path::Path;
use std::sync::Arc;

use e2e_tests::TestServer;
use rpc::{Environment, HostPolicy, Security, TokenPolicy, Translations};
use serde_json::{Value, json};

const BROWSER: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

async fn get(url: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = reqwest::Client::new().get(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.expect("GET sent")
}

/// The names of the methods the OpenRPC document at `url` lists.
async fn method_names(url: &str) -> Vec<String> {
    let doc: Value = get(url, &[]).await.json().await.expect("an OpenRPC document");
    doc["methods"].as_array().expect("methods").iter().map(|m| m["name"].as_str().unwrap().to_owned()).collect()
}

/// Checks a page response: 200, HTML, the security headers; gives the body.
async fn page(response: reqwest::Response) -> String {
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(csp.starts_with("default-src 'none';") && csp.contains("connect-src 'self'"), "{csp}");
    assert!(csp.contains("script-src 'sha256-") && !csp.contains("unsafe"), "{csp}");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert!(headers.get_all("vary").iter().any(|v| v.to_str().unwrap().contains("accept")));
    let body = response.text().await.expect("a body");
    assert!(body.starts_with("<!DOCTYPE html>"), "{body}");
    assert!(!body.contains("src=\"http") && !body.contains("href=\"http"), "nothing loaded from elsewhere");
    body
}

#[tokio::test]
async fn browsers_get_the_page_of_each_version() {
    let server = TestServer::catalog(Environment::Dev).await;
    for path in ["/rpc", "/rpc/v2"] {
        let body = page(get(&server.url(path), &[("accept", BROWSER)]).await).await;
        let names = method_names(&server.url(path)).await;
        assert!(names.len() > 5, "{names:?}");
        for name in names {
            assert!(body.contains(&format!("\"name\":\"{name}\"")), "{path}: {name} is on the page");
        }
        assert!(body.contains("\"kind\":\"jsonrpc\""));
        assert!(body.contains(&format!("\"endpoint\":\"{}\"", server.url(path))), "{path}");
        assert!(body.contains("\"href\":\"/rpc/v1\"") && body.contains("\"href\":\"/rpc/v2\""), "versions listed");
    }
    // HEAD likewise.
    let head = reqwest::Client::new().head(server.url("/rpc")).header("accept", BROWSER).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["content-type"], "text/html; charset=utf-8");
}

#[tokio::test]
async fn api_clients_still_get_json() {
    let server = TestServer::catalog(Environment::Dev).await;
    for accept in
        [None, Some("*/*"), Some("application/json"), Some("application/json, text/html"), Some("text/html;q=0.5, */*")]
    {
        let headers: Vec<(&str, &str)> = accept.map(|a| ("accept", a)).into_iter().collect();
        let response = get(&server.url("/rpc/v2"), &headers).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "application/json", "{accept:?}");
        let doc: Value = response.json().await.unwrap();
        assert_eq!(doc["openrpc"], "1.3.2", "{accept:?}");
    }
}

#[tokio::test]
async fn the_page_speaks_the_negotiated_language() {
    let translations = Translations::load(catalog::translations_dir()).expect("the catalog's translations load");
    let setup = catalog::Setup {
        security: Security::new().hosts(HostPolicy::localhost()),
        translations: Some(Arc::new(translations)),
        ..catalog::Setup::default()
    };
    let server = TestServer::start(catalog::app_configured(Environment::Dev, setup).unwrap()).await;
    for path in ["/rpc", "/mcp/v1"] {
        let response = get(&server.url(path), &[("accept", BROWSER), ("accept-language", "uk")]).await;
        assert_eq!(response.headers()["content-language"], "uk");
        let body = page(response).await;
        assert!(body.contains("<html lang=\"uk\">"), "{path}");
        assert!(body.contains("Товар"), "{path}: the Ukrainian texts");
    }
}

fn golden(name: &str, actual: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::write(&path, serde_json::to_string_pretty(actual).unwrap() + "\n").unwrap();
        return;
    }
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("read {} ({e}); run with UPDATE_GOLDEN=1 to create it", path.display()));
    let expected: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(&expected, actual, "{name} differs; run with UPDATE_GOLDEN=1 if the change is intended");
}

#[tokio::test]
async fn postman_collections_of_each_version() {
    let server = TestServer::catalog(Environment::Dev).await;
    for (version, path, endpoint) in [(1, "/rpc/postman", "/rpc"), (2, "/rpc/v2/postman", "/rpc/v2")] {
        let response = get(&server.url(path), &[]).await;
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(response.headers()["content-type"], "application/json");
        let disposition = response.headers()["content-disposition"].to_str().unwrap().to_owned();
        assert_eq!(disposition, format!("attachment; filename=\"Catalog-API-v{version}.postman_collection.json\""));
        let mut collection: Value = response.json().await.unwrap();
        assert_eq!(
            collection["info"]["schema"],
            "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"
        );
        assert_eq!(collection["info"]["name"], format!("Catalog API v{version}"));
        assert_eq!(collection["variable"][0], json!({"key": "baseUrl", "value": server.base, "type": "string"}));
        assert!(collection.get("auth").is_none(), "the catalog asks for no token");
        let items = collection["item"].as_array().unwrap();
        let names: Vec<&str> = items.iter().map(|i| i["name"].as_str().unwrap()).collect();
        assert_eq!(names, method_names(&server.url(endpoint)).await);
        for item in items {
            let request = &item["request"];
            assert_eq!(request["method"], "POST");
            assert_eq!(request["url"]["raw"], format!("{{{{baseUrl}}}}/rpc/v{version}"));
            let body: Value = serde_json::from_str(request["body"]["raw"].as_str().unwrap()).unwrap();
            assert_eq!(body["method"], item["name"]);
            assert!(body["params"].is_object());
        }
        // The examples are calls the server takes (a few that change nothing).
        for name in ["Catalog.get", "Catalog.search", "ping"] {
            let item = items.iter().find(|i| i["name"] == name).unwrap();
            let raw = item["request"]["body"]["raw"].as_str().unwrap().to_owned();
            let reply: Value = reqwest::Client::new()
                .post(server.url(endpoint))
                .header("content-type", "application/json")
                .body(raw)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert!(reply.get("result").is_some(), "v{version} {name}: {reply}");
        }
        collection["variable"][0]["value"] = json!("http://127.0.0.1:PORT");
        golden(&format!("postman.v{version}.json"), &collection);
    }
}

#[tokio::test]
async fn unknown_documents_are_404() {
    let server = TestServer::catalog(Environment::Dev).await;
    for path in [
        "/rpc/v1/unknown",
        "/rpc/unknown",
        "/rpc/v9/postman",
        "/rpc/v2/postman/x",
        "/rpc/v2/Postman",
        "/rpc/v01/postman",
    ] {
        let response = get(&server.url(path), &[("accept", BROWSER)]).await;
        assert_eq!(response.status(), 404, "{path}");
        let body: Value = response.json().await.unwrap();
        assert!(body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{path}: {body}");
    }
    let post = reqwest::Client::new()
        .post(server.url("/rpc/postman"))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(post.status(), 405);
    assert_eq!(post.headers()["allow"], "GET, HEAD, OPTIONS");
}

fn tokens() -> TokenPolicy {
    TokenPolicy::new().token("s3cret").unwrap()
}

#[tokio::test]
async fn documents_follow_the_token_rules() {
    // Default: the API is protected, documents are not; the collection asks for a token.
    let app = catalog::app_with(Environment::Dev, Security::new().hosts(HostPolicy::localhost()).tokens(tokens()));
    let server = TestServer::start(app.unwrap()).await;
    page(get(&server.url("/rpc"), &[("accept", BROWSER)]).await).await;
    page(get(&server.url("/mcp/v1"), &[("accept", BROWSER)]).await).await;
    let collection: Value = get(&server.url("/rpc/postman"), &[]).await.json().await.unwrap();
    assert_eq!(
        collection["auth"],
        json!({"type": "bearer", "bearer": [{"key": "token", "value": "{{token}}", "type": "string"}]})
    );
    assert_eq!(collection["variable"][1], json!({"key": "token", "value": "", "type": "secret"}));
    assert!(!collection.to_string().contains("s3cret"), "never a real token");
    // HEAD follows GET's rules: a public document without a token (no body).
    let client = reqwest::Client::new();
    for path in ["/rpc", "/mcp/v1"] {
        let head = client.head(server.url(path)).header("accept", BROWSER).send().await.unwrap();
        assert_eq!(head.status(), 200, "HEAD {path}");
        assert_eq!(head.headers()["content-type"], "text/html; charset=utf-8", "HEAD {path}");
        assert!(head.text().await.unwrap().is_empty(), "HEAD {path} has no body");
    }
    let api = client.head(server.url("/mcp/v1")).header("accept", "application/json").send().await.unwrap();
    assert_eq!(api.status(), 401, "HEAD of the API itself still needs the token");

    // Documents protected: the page and the collection like the OpenRPC document.
    let security = Security::new().hosts(HostPolicy::localhost()).tokens(tokens().protect_docs(true));
    let server = TestServer::start(catalog::app_with(Environment::Dev, security).unwrap()).await;
    for path in ["/rpc", "/rpc/v2", "/rpc/postman", "/rpc/v2/postman", "/mcp/v1"] {
        let refused = get(&server.url(path), &[("accept", BROWSER)]).await;
        assert_eq!(refused.status(), 401, "{path}");
        let wrong = get(&server.url(path), &[("accept", BROWSER), ("authorization", "Bearer nope")]).await;
        assert_eq!(wrong.status(), 403, "{path}");
        let allowed = get(&server.url(path), &[("accept", BROWSER), ("authorization", "Bearer s3cret")]).await;
        assert_eq!(allowed.status(), 200, "{path}");
        assert!(!allowed.text().await.unwrap().contains("s3cret"), "{path}: the token is not echoed");
    }
    let head = reqwest::Client::new().head(server.url("/mcp/v1")).header("accept", BROWSER).send().await.unwrap();
    assert_eq!(head.status(), 401, "HEAD of a protected page needs the token too");
}

#[tokio::test]
async fn the_mcp_page_lists_the_tools() {
    let server = TestServer::catalog(Environment::Dev).await;
    let url = server.url("/mcp/v1");
    let body = page(get(&url, &[("accept", BROWSER)]).await).await;
    assert!(body.contains("\"kind\":\"mcp\"") && body.contains("\"protocol\":\"2026-07-28\""));
    let list = e2e_tests::modern_mcp::Modern::new(&url);
    let reply = list.exchange(&list.request("tools/list", json!({}), json!(1)), &[]).await;
    let tools = reply.json["result"]["tools"].as_array().expect("tools").clone();
    assert!(!tools.is_empty());
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        assert!(body.contains(&format!("\"name\":\"{name}\"")), "{name} is on the page");
    }
    assert!(body.contains("\"readOnlyHint\":true"), "annotations are shown");
    // Clients keep their answers: a GET for a stream, or without Accept, is
    // not a page (the catalog offers a session's own stream: without a
    // session it is 400, without an event stream accepted 406).
    for (accept, status) in [
        (Some("text/event-stream"), 400),
        (Some("text/html, text/event-stream"), 400),
        (Some("application/json"), 406),
        (None, 400),
    ] {
        let headers: Vec<(&str, &str)> = accept.map(|a| ("accept", a)).into_iter().collect();
        let response = get(&url, &headers).await;
        assert_eq!(response.status(), status, "{accept:?}");
        assert!(!response.headers()["content-type"].to_str().unwrap().starts_with("text/html"), "{accept:?}");
    }
}
