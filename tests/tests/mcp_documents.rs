//! `GET /mcp/v{N}/server.json` and `GET /mcp/v{N}/manifests/{client}` from
//! the running catalog: checked against the registry's schema and the
//! clients' formats (tests/fixtures/registry, tests/fixtures/clients), the
//! public URL (configured, or the checked `Host`; never forwarding
//! headers), token rules, placeholders instead of tokens, settings from a
//! file, refusals of other methods, paths and clients.

use std::path::Path;
use std::sync::Arc;

use e2e_tests::TestServer;
use mcp::settings::Settings;
use rpc::server::PublicUrl;
use rpc::{Environment, HostPolicy, Security, TokenPolicy};
use serde_json::Value;

const CLIENTS: [&str; 4] = ["claude-code", "cursor", "gemini-cli", "openai"];

fn fixture(path: &str) -> Value {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(path);
    serde_json::from_str(&std::fs::read_to_string(&file).expect("fixture readable")).expect("fixture is JSON")
}

fn assert_valid(schema: &str, doc: &Value) {
    let validator = jsonschema::validator_for(&fixture(schema)).expect("schema compiles");
    let errors: Vec<String> = validator.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{schema}: {errors:?}\n{doc:#}");
}

async fn get(url: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let mut request = reqwest::Client::new().get(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("request sent");
    let status = response.status().as_u16();
    (status, response.text().await.expect("body"))
}

async fn get_json(url: &str, headers: &[(&str, &str)]) -> Value {
    let (status, body) = get(url, headers).await;
    assert_eq!(status, 200, "{url}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{url}: not JSON ({e}): {body}"))
}

fn app(setup: catalog::Setup) -> rpc::server::Router {
    catalog::app_configured(Environment::Prod, setup).expect("the catalog builds")
}

fn localhost() -> Security {
    Security::new().hosts(HostPolicy::localhost())
}

#[tokio::test]
async fn server_json_is_registry_valid_for_each_version() {
    let server = TestServer::catalog(Environment::Prod).await;
    for (version, name) in [(1, catalog::REGISTRY_NAME.to_owned()), (2, format!("{}-v2", catalog::REGISTRY_NAME))] {
        let doc = get_json(&server.url(&format!("/mcp/v{version}/server.json")), &[]).await;
        assert_valid("registry/server.schema.json", &doc);
        assert_eq!(doc["name"], name.as_str());
        assert_eq!(doc["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(doc["remotes"][0]["type"], "streamable-http");
        assert_eq!(doc["remotes"][0]["url"], server.url(&format!("/mcp/v{version}")).as_str());
        assert!(doc["remotes"][0].get("headers").is_none(), "an open API asks for no header: {doc}");
    }
    // `/mcp/server.json` is version 1's, at the unversioned URL.
    let doc = get_json(&server.url("/mcp/server.json"), &[]).await;
    assert_eq!(doc["remotes"][0]["url"], server.url("/mcp").as_str());
}

#[tokio::test]
async fn documents_name_the_configured_public_url_never_forwarded_hosts() {
    let setup = catalog::Setup {
        security: localhost(),
        public_url: Some(PublicUrl::parse("https://api.example.com/base/").unwrap()),
        ..Default::default()
    };
    let server = TestServer::start(app(setup)).await;
    let forged =
        [("x-forwarded-host", "evil.example"), ("x-forwarded-proto", "javascript"), ("forwarded", "host=evil")];
    let doc = get_json(&server.url("/mcp/v1/server.json"), &forged).await;
    assert_eq!(doc["remotes"][0]["url"], "https://api.example.com/base/mcp/v1");
    let manifest = get_json(&server.url("/mcp/v1/manifests/cursor"), &forged).await;
    assert_eq!(manifest["mcpServers"]["catalog"]["url"], "https://api.example.com/base/mcp/v1");
    // Without a configured base: the request's checked host; a host outside
    // the allowed names never gets that far.
    let server = TestServer::start(app(catalog::Setup { security: localhost(), ..Default::default() })).await;
    let (status, _) = get(&server.url("/mcp/v1/server.json"), &[("host", "evil.example")]).await;
    assert_eq!(status, 403);
    let doc = get_json(&server.url("/mcp/v1/server.json"), &forged).await;
    assert!(doc["remotes"][0]["url"].as_str().unwrap().starts_with("http://127.0.0.1:"), "{doc}");
}

#[tokio::test]
async fn manifests_match_the_clients_formats_with_placeholders() {
    let tokens = TokenPolicy::new().token("s3cret-token").unwrap();
    let security = localhost().tokens(tokens);
    let server = TestServer::start(app(catalog::Setup { security, ..Default::default() })).await;
    let endpoint = server.url("/mcp/v1");
    for client in CLIENTS {
        let url = server.url(&format!("/mcp/v1/manifests/{client}"));
        let (status, body) = get(&url, &[]).await;
        assert_eq!(status, 200, "documents are not protected by default: {body}");
        assert!(!body.contains("s3cret"), "{client}: a manifest never carries a token: {body}");
        let doc: Value = serde_json::from_str(&body).unwrap();
        assert_valid(&format!("clients/{client}.schema.json"), &doc);
        let entry = if client == "openai" { &doc } else { &doc["mcpServers"]["catalog"] };
        let url_field = match client {
            "gemini-cli" => "httpUrl",
            "openai" => "server_url",
            _ => "url",
        };
        assert_eq!(entry[url_field], endpoint.as_str(), "{client}: {doc}");
        let placeholder = entry["headers"]["Ufo-RPC-Token"].as_str().unwrap_or_else(|| panic!("{client}: {doc}"));
        assert!(placeholder.contains("CATALOG_TOKEN"), "{client}: {placeholder}");
    }
    let openai = get_json(&server.url("/mcp/v1/manifests/openai"), &[]).await;
    let allowed: Vec<&str> = openai["allowed_tools"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(allowed.contains(&"Catalog.get") && allowed.contains(&"Catalog.search"), "{allowed:?}");
    assert!(
        !allowed.contains(&"Catalog.rename") && !allowed.contains(&"Catalog.reindex"),
        "read-only only: {allowed:?}"
    );
    let doc = get_json(&server.url("/mcp/v1/server.json"), &[]).await;
    assert_valid("registry/server.schema.json", &doc);
    let header = &doc["remotes"][0]["headers"][0];
    assert_eq!(header["name"], "Ufo-RPC-Token");
    assert_eq!((header["isSecret"].as_bool(), header["isRequired"].as_bool()), (Some(true), Some(true)));
}

#[tokio::test]
async fn protected_documents_need_a_token() {
    let tokens = TokenPolicy::new().token("s3cret-token").unwrap().protect_docs(true);
    let server =
        TestServer::start(app(catalog::Setup { security: localhost().tokens(tokens), ..Default::default() })).await;
    for path in ["/mcp/v1/server.json", "/mcp/v1/manifests/claude-code"] {
        let (status, body) = get(&server.url(path), &[]).await;
        assert_eq!(status, 401, "{path}: {body}");
        let (status, _) = get(&server.url(path), &[("ufo-rpc-token", "wrong")]).await;
        assert_eq!(status, 403, "{path}");
        let (status, body) = get(&server.url(path), &[("authorization", "Bearer s3cret-token")]).await;
        assert_eq!(status, 200, "{path}: {body}");
        assert!(!body.contains("s3cret"), "{body}");
    }
}

#[tokio::test]
async fn refusals_are_specific() {
    let server = TestServer::catalog(Environment::Prod).await;
    let (status, body) = get(&server.url("/mcp/v1/manifests/vim"), &[]).await;
    assert_eq!(status, 404);
    assert!(body.contains("claude-code, cursor, gemini-cli, openai") && !body.contains("vim"), "{body}");
    let long = format!("/mcp/v1/manifests/{}", "<script>".repeat(500));
    let (status, body) = get(&server.url(&long), &[]).await;
    assert_eq!(status, 404);
    assert!(!body.contains("<script>"), "the path is never echoed: {body}");
    for path in ["/mcp/v9/server.json", "/mcp/v1/server.json/x", "/mcp/v1/manifests/", "/mcp/v1//server.json"] {
        let (status, _) = get(&server.url(path), &[]).await;
        assert_eq!(status, 404, "{path}");
    }
    let response = reqwest::Client::new()
        .post(server.url("/mcp/v1/server.json"))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 405);
    assert_eq!(response.headers()["allow"], "GET, HEAD, OPTIONS");
}

#[tokio::test]
async fn settings_from_a_file_shape_the_documents() {
    let dir = std::env::temp_dir().join(format!("catalog-settings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("catalog.toml");
    std::fs::write(
        &file,
        r#"
        public_url = "https://mcp.example.org"
        [server]
        registry_name = "org.example/catalog"
        description = "Bundle-wide description"
        [groups.mcp.server]
        title = "Catalog for agents"
        registry_description = "The example catalog, for AI agents"
        repository = { url = "https://git.example.org/catalog", source = "gitlab", subfolder = "examples/catalog" }
        "#,
    )
    .unwrap();
    let settings = Settings::load_with(Some(&file), None).expect("settings load");
    let setup = catalog::Setup { security: localhost(), settings: Some(settings), ..Default::default() };
    let server = TestServer::start(app(setup)).await;
    let doc = get_json(&server.url("/mcp/v1/server.json"), &[]).await;
    assert_valid("registry/server.schema.json", &doc);
    assert_eq!(doc["name"], "org.example/catalog");
    assert_eq!(doc["title"], "Catalog for agents");
    assert_eq!(doc["description"], "The example catalog, for AI agents");
    assert_eq!(doc["repository"]["source"], "gitlab");
    assert_eq!(doc["remotes"][0]["url"], "https://mcp.example.org/mcp/v1");

    // A setting the registry would refuse stops the application at start,
    // naming the key.
    std::fs::write(&file, "[groups.mcp.server]\ndescription = \"".to_owned() + &"x".repeat(101) + "\"\n").unwrap();
    let settings = Settings::load_with(Some(&file), None).expect("valid on its own");
    let setup = catalog::Setup { security: localhost(), settings: Some(settings), ..Default::default() };
    let error = catalog::app_configured(Environment::Prod, setup).expect_err("refused at start");
    assert!(error.contains("description") && error.contains("100"), "{error}");
    std::fs::write(&file, "[groups.mcp]\nsesion_ttl = \"1h\"\n").unwrap();
    let error = Settings::load_with(Some(&file), None).unwrap_err();
    assert_eq!(error.key, "groups.mcp.sesion_ttl");
    assert!(error.to_string().contains("did you mean `session_ttl`"), "{error}");
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
async fn documents_are_localised() {
    let translations = rpc::Translations::load(catalog::translations_dir()).expect("translations load");
    let setup =
        catalog::Setup { security: localhost(), translations: Some(Arc::new(translations)), ..Default::default() };
    let server = TestServer::start(app(setup)).await;
    let en = get_json(&server.url("/mcp/v1/server.json"), &[("accept-language", "en")]).await;
    let uk = get_json(&server.url("/mcp/v1/server.json"), &[("accept-language", "uk")]).await;
    assert_valid("registry/server.schema.json", &uk);
    assert_ne!(en["description"], uk["description"], "{en}\n{uk}");
}
