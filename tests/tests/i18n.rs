//! Localised titles and descriptions: every step of the fallback chain for
//! titles and descriptions separately, over MCP (both eras) and OpenRPC;
//! `Accept-Language` negotiation; `Content-Language` and `Vary`; lists
//! built once; the catalog's own translations; startup errors of broken
//! translation files.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use e2e_tests::TestServer;
use e2e_tests::modern_mcp::Modern;
use e2e_tests::raw_mcp::RawMcp;
use mcp::{McpEndpoint, ProtocolVersion, ServerInfo};
use rpc::server::Router;
use rpc::{Environment, Executor, JsonRpcService, Language, Translations};
use serde_json::{Value, json};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/i18n")
}

fn fixture_translations() -> Arc<Translations> {
    Arc::new(Translations::load(fixture()).expect("the fixture loads"))
}

/// The catalog's endpoints with `translations`.
fn app(translations: Arc<Translations>) -> (Router, McpEndpoint, JsonRpcService) {
    let executor = Executor::new(catalog::registry().unwrap(), Environment::Prod);
    let rpc = JsonRpcService::builder(executor.clone()).translations(translations.clone()).build();
    let mcp = McpEndpoint::builder::<catalog::Mcp>(executor)
        .server_info(ServerInfo::new("catalog", "1.0.0").title("code title"))
        .instructions("code instructions")
        .translations(translations)
        .build();
    (Router::new().nest("/rpc", rpc.clone()).nest("/mcp", mcp.clone()), mcp, rpc)
}

/// `tools/list` over 2026-07-28 with `accept_language`: the tools by name,
/// the whole result, and the response's headers.
async fn modern_tools(url: &str, accept_language: &str) -> (Value, Value, reqwest::header::HeaderMap) {
    let client = Modern::new(url);
    let body = client.request("tools/list", json!({}), json!(1));
    let reply = client.exchange(&body, &[("accept-language", accept_language)]).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let tools = by_name(&reply.json["result"]["tools"]);
    (tools, reply.json["result"].clone(), reply.headers)
}

fn by_name(tools: &Value) -> Value {
    let map = tools.as_array().expect("tools").iter().map(|t| (t["name"].as_str().unwrap().to_owned(), t.clone()));
    Value::Object(map.collect())
}

#[tokio::test]
async fn every_step_of_the_fallback_chain_for_titles_and_descriptions() {
    let (router, _, _) = app(fixture_translations());
    let server = TestServer::start(router).await;
    let (tools, _, _) = modern_tools(&server.url("/mcp/v1"), "uk").await;
    let text = |tool: &str, field: &str| tools[tool][field].as_str().unwrap_or("").to_owned();
    // 1. group + client language.
    assert_eq!(text("Catalog.categories", "title"), "mcp-uk categories title");
    assert_eq!(text("Catalog.search", "description"), "mcp-uk search description");
    // 2. group + default language.
    assert_eq!(text("Catalog.search", "title"), "mcp-en search title");
    assert_eq!(text("Catalog.categories", "description"), "mcp-en categories description");
    // 3. base + client language.
    assert_eq!(text("Catalog.get", "title"), "base-uk get title");
    assert_eq!(text("ping", "description"), "base-uk ping description");
    // 4. base + default language.
    assert_eq!(text("ping", "title"), "base-en ping title");
    assert_eq!(text("Catalog.get", "description"), "base-en get description");
    // 5. the code: the doc comment, `#[mcp_tool(title)]`, else the tool's name.
    assert!(text("Catalog.stats", "description").starts_with("Figures about the catalog"));
    assert_eq!(text("Catalog.stats", "title"), "Catalog.stats");
    let (english, _, _) = modern_tools(&server.url("/mcp/v1"), "en").await;
    assert_eq!(english["Catalog.get"]["title"], "Get product", "no title in any file: #[mcp_tool(title)]");
    assert_eq!(english["Catalog.get"]["annotations"]["title"], "Get product");
    assert_eq!(tools["Catalog.get"]["annotations"]["title"], "base-uk get title", "annotations follow the title");
    assert_eq!(
        english["Catalog.search"]["description"],
        "Search products by name.\n\nReturns up to `limit` products whose name contains `query`, in id order."
    );
}

#[tokio::test]
async fn the_handshake_era_negotiates_per_request() {
    let (router, _, _) = app(fixture_translations());
    let server = TestServer::start(router).await;
    let mut client = RawMcp::new(server.url("/mcp/v1"));
    let init = client.initialize("2025-11-25").await;
    let info = &init.json["result"];
    assert_eq!(info["serverInfo"]["title"], "base-en server", "no Accept-Language: the default language");
    assert_eq!(info["instructions"], "mcp-en instructions", "group + default beats base + default");
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    for (language, title) in
        [("uk", "mcp-uk categories title"), ("en", "Catalog.categories"), ("uk", "mcp-uk categories title")]
    {
        let reply = client.send(reqwest::Method::POST, Some(list.clone()), &[("accept-language", language)]).await;
        assert_eq!(reply.headers["content-language"], language, "the session does not pin a language");
        let tools = by_name(&reply.json["result"]["tools"]);
        assert_eq!(tools["Catalog.categories"]["title"], title, "{language}");
    }
    let ukrainian = RawMcp::new(server.url("/mcp/v1"));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let reply = ukrainian.send(reqwest::Method::POST, Some(init.to_string()), &[("accept-language", "uk")]).await;
    assert_eq!(reply.json["result"]["serverInfo"]["title"], "base-uk server");
    assert_eq!(reply.json["result"]["instructions"], "mcp-en instructions");
}

#[tokio::test]
async fn openrpc_takes_the_base_chain_and_the_server_texts() {
    let (router, _, _) = app(fixture_translations());
    let server = TestServer::start(router).await;
    let get = |language: &'static str| {
        let url = server.url("/rpc");
        async move {
            let response = reqwest::Client::new().get(url).header("accept-language", language).send().await.unwrap();
            let headers = response.headers().clone();
            (response.json::<Value>().await.unwrap(), headers)
        }
    };
    let (doc, headers) = get("uk").await;
    assert_eq!(headers["content-language"], "uk");
    assert!(headers.get_all("vary").iter().any(|v| v.to_str().unwrap().contains("accept-language")));
    assert_eq!(doc["info"]["title"], "base-uk server");
    let methods = by_name(&doc["methods"]);
    assert_eq!(methods["Catalog.search"]["summary"], "base-uk search title");
    assert_eq!(methods["Catalog.search"]["description"], "base-uk search description", "no group texts on /rpc");
    assert_eq!(methods["Catalog.get"]["summary"], "base-uk get title");
    assert_eq!(methods["Catalog.get"]["description"], "base-en get description");
    assert_eq!(methods["Catalog.categories"]["summary"], "The category tree.", "the doc comment");
    let (english, headers) = get("en-GB, uk;q=0.5").await;
    assert_eq!(headers["content-language"], "en");
    assert_eq!(by_name(&english["methods"])["Catalog.get"]["summary"], "Get one product by id.");
}

#[tokio::test]
async fn accept_language_with_q_values_ranges_and_wildcards() {
    let (router, _, _) = app(fixture_translations());
    let server = TestServer::start(router).await;
    let url = server.url("/mcp/v1");
    for (header, language) in [
        ("uk;q=0.9, en;q=0.8", "uk"),
        ("en;q=0.8, uk;q=0.9", "uk"),
        ("uk-UA", "uk"),
        ("de", "en"),
        ("de, uk;q=0.1", "uk"),
        ("*", "en"),
        ("de, *;q=0.5, uk;q=0.2", "en"),
        ("uk;q=0", "en"),
        ("", "en"),
        ("!!!, ;;;", "en"),
    ] {
        let (_, result, headers) = modern_tools(&url, header).await;
        assert_eq!(headers["content-language"], language, "Accept-Language: {header}");
        assert_eq!(headers["vary"], "accept-language", "{header}");
        let title = result["_meta"]["io.modelcontextprotocol/serverInfo"]["title"].as_str().unwrap_or_default();
        assert_eq!(title, format!("base-{language} server"), "{header}: the server's identity in the result");
    }
    // Every response says its language, errors and calls included.
    let client = Modern::new(&url);
    let reply = client.tool_with("Catalog.get", json!({"id": 1}), &[("accept-language", "uk")]).await;
    assert_eq!(reply.headers["content-language"], "uk");
    let meta = &reply.json["result"]["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(meta["title"], "base-uk server");
    let discover =
        client.exchange(&client.request("server/discover", json!({}), json!(1)), &[("accept-language", "uk")]).await;
    assert_eq!(discover.json["result"]["instructions"], "mcp-en instructions");
    let unknown = client.tool_with("Nope", json!({}), &[("accept-language", "uk")]).await;
    assert_eq!(unknown.headers["content-language"], "uk");
}

#[tokio::test]
async fn two_languages_from_one_server_from_lists_built_once() {
    let (router, mcp, rpc) = app(fixture_translations());
    let server = TestServer::start(router).await;
    let url = server.url("/mcp/v1");
    let (uk, _, _) = modern_tools(&url, "uk").await;
    let (en, _, _) = modern_tools(&url, "en").await;
    assert_ne!(uk["Catalog.search"]["description"], en["Catalog.search"]["description"]);
    let translations = mcp.translations();
    let ukrainian = translations.all().find(|l| translations.tag(*l) == "uk").expect("uk is served");
    // The list a request gets is the one built with the endpoint: the same buffer every time.
    let first = mcp.tools_list(1, None, ukrainian, ProtocolVersion::V2026_07_28, None).unwrap();
    let second = mcp.tools_list(1, None, ukrainian, ProtocolVersion::V2026_07_28, None).unwrap();
    assert_eq!(first.as_ptr(), second.as_ptr(), "not rebuilt per request");
    let served: Value = serde_json::from_slice(&first).unwrap();
    assert_eq!(by_name(&served["tools"]), uk, "what HTTP serves is the prebuilt list");
    let english = mcp.tools_list(1, None, Language::DEFAULT, ProtocolVersion::V2026_07_28, None).unwrap();
    assert_ne!(english.as_ptr(), first.as_ptr(), "one list per language");
    let doc = rpc.openrpc_document(1, ukrainian).unwrap();
    assert!(std::ptr::eq(doc, rpc.openrpc_document(1, ukrainian).unwrap()));
}

#[tokio::test]
async fn the_catalog_ships_english_and_ukrainian() {
    let translations = Translations::load(catalog::translations_dir()).unwrap();
    assert!(translations.check(&catalog::registry().unwrap()).unwrap().is_empty(), "every key names a method");
    let setup = catalog::Setup { translations: Some(Arc::new(translations)), ..Default::default() };
    let server = TestServer::start(catalog::app_configured(Environment::Prod, setup).unwrap()).await;
    let (tools, _, headers) = modern_tools(&server.url("/mcp/v1"), "uk").await;
    assert_eq!(headers["content-language"], "uk");
    let mcp_text = "Пошук товарів за назвою. Повертає до limit товарів, найрелевантніші першими.";
    assert_eq!(tools["Catalog.search"]["description"], mcp_text, "the design reference's text, in the mcp group");
    assert_eq!(tools["Catalog.search"]["title"], "Пошук товарів");
    let (english, _, _) = modern_tools(&server.url("/mcp/v1"), "en").await;
    assert_eq!(
        english["Catalog.search"]["description"],
        "Search products by name. Returns up to limit products, the most relevant first."
    );
    let mut legacy = RawMcp::new(server.url("/mcp/v1"));
    legacy.initialize("2025-11-25").await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let reply = legacy.send(reqwest::Method::POST, Some(list), &[("accept-language", "uk")]).await;
    assert_eq!(by_name(&reply.json["result"]["tools"])["Catalog.search"]["description"], mcp_text);
    let doc: Value = reqwest::Client::new()
        .get(server.url("/rpc"))
        .header("accept-language", "uk")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let search = &by_name(&doc["methods"])["Catalog.search"];
    assert!(
        search["description"].as_str().unwrap().starts_with("Товари, назва яких"),
        "the base text differs: {search}"
    );
    assert_eq!(doc["info"]["title"], "Каталог товарів");
}

/// Writes `files` (relative path, contents) into a fresh directory.
fn dir_with(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("i18n-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn broken_files_fail_startup_with_file_line_and_reason() {
    // (case, files, the file named, its line, a word of the reason)
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str, Option<u64>, &'a str);
    let cases: [Case<'_>; 6] = [
        ("yaml", &[("rpc.en.yaml", "ping:\n  title: ok\nCatalog.get: [unclosed\n")], "rpc.en.yaml", Some(3), ""),
        ("key", &[("rpc.uk.yaml", "ping:\n  title: ok\n  summary: no\n")], "rpc.uk.yaml", Some(3), "summary"),
        ("tag", &[("rpc.en_US!.yaml", "ping:\n  title: x\n")], "rpc.en_US!.yaml", None, "BCP 47"),
        ("group-tag", &[("rpc/mcp.xx-!!.yaml", "")], "mcp.xx-!!.yaml", None, "BCP 47"),
        ("reserved", &[("rpc/rpc.uk.yaml", "ping:\n  title: x\n")], "rpc.uk.yaml", None, "reserved"),
        ("instructions", &[("rpc.en.yaml", "ping:\n  instructions: no\n")], "rpc.en.yaml", Some(2), "$server"),
    ];
    for (name, files, file, line, reason) in cases {
        let error = Translations::load(dir_with(name, files)).expect_err(name);
        assert!(error.file.ends_with(file), "{name}: {error}");
        assert_eq!(error.line, line, "{name}: {error}");
        assert!(error.reason.contains(reason), "{name}: {error}");
        let shown = error.to_string();
        assert!(shown.contains(file) && line.is_none_or(|l| shown.contains(&format!(":{l}:"))), "{name}: {shown}");
    }
    assert!(Translations::load(dir_with("missing", &[]).join("nope")).is_err());
    assert!(Translations::none().with_default_language("not a tag").is_err());
}

#[test]
fn keys_and_groups_that_name_nothing_are_warnings() {
    let warnings = fixture_translations().check(&catalog::registry().unwrap()).expect("no error");
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    assert!(warnings.iter().any(|w| w.contains("rpc.en.yaml:11") && w.contains("`Nope.nothing`")), "{warnings:#?}");
    assert!(warnings.iter().any(|w| w.contains("other.uk.yaml") && w.contains("`other`")), "{warnings:#?}");
}

mod reserved {
    rpc::api_group!(pub struct Rpc => "rpc");

    pub struct Svc;

    #[rpc::service(groups(Rpc))]
    impl Svc {
        /// Ping.
        pub fn ping(&self) -> u8 {
            1
        }
    }
}

#[test]
fn a_group_named_like_the_base_file_is_refused() {
    let registry = rpc::Registry::builder().service(reserved::Svc).build().unwrap();
    let error = fixture_translations().check(&registry).expect_err("the group `rpc`");
    assert!(error.reason.contains("group `rpc`") && error.reason.contains("rename"), "{error}");
}

fn headers_of(response: &reqwest::Response) -> String {
    response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned()
}

/// Every kind of answer of the MCP endpoint says its language once:
/// a JSON answer (its headers built once per language), an SSE one, a 202,
/// refusals before the body is read (415, 413) or parsed (400), 405 and a
/// DELETE's answer.
#[tokio::test]
async fn every_kind_of_mcp_answer_says_its_language_once() {
    let (router, _, _) = app(fixture_translations());
    let server = TestServer::start(router).await;
    let url = server.url("/mcp/v1");
    let client = reqwest::Client::new();
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let opened = client
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize)
        .send()
        .await
        .expect("sent");
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let notification = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let huge = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":"{}"}}}}"#, "x".repeat(5 << 20));
    let cases: Vec<(&str, reqwest::Method, &str, &str, String)> = vec![
        ("JSON", reqwest::Method::POST, "application/json", "application/json", call.to_owned()),
        ("SSE", reqwest::Method::POST, "application/json", "text/event-stream", call.to_owned()),
        ("202", reqwest::Method::POST, "application/json", "application/json", notification.to_owned()),
        ("415", reqwest::Method::POST, "text/plain", "application/json", call.to_owned()),
        ("400", reqwest::Method::POST, "application/json", "application/json", "{".to_owned()),
        ("413", reqwest::Method::POST, "application/json", "application/json", huge),
        ("405", reqwest::Method::PUT, "application/json", "application/json", call.to_owned()),
        ("DELETE", reqwest::Method::DELETE, "application/json", "application/json", String::new()),
    ];
    for (what, method, content_type, accept, body) in cases {
        let response = client
            .request(method, &url)
            .header("content-type", content_type)
            .header("accept", accept)
            .header("accept-language", "uk")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &session)
            .body(body)
            .send()
            .await
            .expect("sent");
        let status = response.status().as_u16();
        let expected = match what {
            "JSON" | "SSE" | "DELETE" => 200,
            "202" => 202,
            other => other.parse().unwrap(),
        };
        assert_eq!(status, expected, "{what}");
        let sse = headers_of(&response).contains("text/event-stream");
        assert_eq!(sse, what == "SSE", "{what}: {status}");
        let headers = response.headers();
        let languages: Vec<_> = headers.get_all("content-language").iter().collect();
        assert_eq!(languages, ["uk"], "{what} ({status})");
        let varies: Vec<_> = headers.get_all("vary").iter().filter(|v| *v == "accept-language").collect();
        assert_eq!(varies.len(), 1, "{what} ({status}): {headers:?}");
    }
}
