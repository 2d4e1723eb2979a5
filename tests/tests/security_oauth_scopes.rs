//! Scopes per method with OAuth callers: per-caller tools, resources and
//! prompts lists (`cacheScope: private`), refusals naming the scope (a 403
//! step-up challenge over MCP's HTTP), service-wide scopes, and lists that
//! stay public behind static tokens.

use crate::oauth_fixture::*;
use e2e_tests::TestServer;
use e2e_tests::modern_mcp::Modern;
use jsonwebtoken::Algorithm;
use reqwest::header::HeaderValue;
use rpc::security::oauth::OAuthSettings;
use rpc::{Environment, Security};
use serde_json::{Value, json};

#[tokio::test]
async fn callers_see_and_call_the_tools_their_scopes_allow() {
    let key = rsa(RSA1);
    let issuer = Issuer::start(json!({"keys": [jwk(&key, Algorithm::RS256, "k1")]})).await;
    let audience = "http://127.0.0.1:1/";
    let policy = OAuthSettings::new(issuer.url(), audience).unwrap().discover().await.expect("the issuer is read");
    let server = catalog(policy).await;
    let (rpc, mcp) = (server.url("/rpc"), server.url("/mcp/v1"));
    let token = |scope: &str| {
        sign(&key, Algorithm::RS256, Some("k1"), &with(claims(issuer.url(), audience), json!({"scope": scope})))
    };
    let (reader, writer, admin) = (token("catalog:read"), token("catalog:read catalog:write"), token("catalog:admin"));
    let rename = json!({"id": 7, "name": "Scoped"});

    // 2026-07-28: each caller's list holds what it may call, marked private.
    let modern = Modern::new(mcp.clone());
    let list = |token: &str| {
        let authorization = format!("Bearer {token}");
        let modern = &modern;
        async move {
            let body = modern.request("tools/list", json!({}), json!(1));
            modern.exchange(&body, &[("authorization", authorization.as_str())]).await
        }
    };
    let seen_by_reader = list(&reader).await;
    assert_eq!(seen_by_reader.status, 200, "{}", seen_by_reader.text);
    let result = &seen_by_reader.json["result"];
    assert_eq!(result["cacheScope"], "private", "{result}");
    let names = tool_names(result);
    assert!(names.contains(&"Catalog.get".to_owned()), "{names:?}");
    assert!(
        !names.contains(&"Catalog.rename".to_owned()) && !names.contains(&"Catalog.reindex".to_owned()),
        "{names:?}"
    );
    let seen_by_writer = tool_names(&list(&writer).await.json["result"]);
    assert!(seen_by_writer.contains(&"Catalog.rename".to_owned()), "{seen_by_writer:?}");
    assert!(!seen_by_writer.contains(&"Catalog.reindex".to_owned()), "{seen_by_writer:?}");
    let seen_by_admin = tool_names(&list(&admin).await.json["result"]);
    assert!(
        seen_by_admin.contains(&"Catalog.reindex".to_owned()) && !seen_by_admin.contains(&"Catalog.rename".to_owned())
    );
    assert_eq!(seen_by_writer.len(), names.len() + 1, "{seen_by_writer:?} / {names:?}");
    // The same lists again (served from the pages kept per grant).
    assert_eq!(tool_names(&list(&reader).await.json["result"]), names);

    // Calling a tool outside one's scopes: the era's error naming the scope.
    let auth = |token: &str| format!("Bearer {token}");
    // Over HTTP, a 403 whose challenge names the scopes to ask for (what
    // the token has and what the tool needs: MCP's step-up authorization).
    let refused = modern.tool_with("Catalog.rename", rename.clone(), &[("authorization", &auth(&reader))]).await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    assert_eq!(refused.json["error"]["code"], -32403, "{}", refused.text);
    assert_eq!(refused.json["error"]["data"]["extra"]["scope"], "catalog:write", "{}", refused.text);
    let step_up = refused.headers.get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or_default();
    assert_eq!(
        step_up,
        "Bearer error=\"insufficient_scope\", error_description=\"the token lacks the scope catalog:write\", \
         scope=\"catalog:read catalog:write\", \
         resource_metadata=\"http://127.0.0.1:1/.well-known/oauth-protected-resource\""
    );
    let renamed = modern.tool_with("Catalog.rename", rename.clone(), &[("authorization", &auth(&writer))]).await;
    assert_eq!(renamed.json["result"]["isError"], false, "{}", renamed.text);
    assert!(renamed.json["result"]["structuredContent"].is_object(), "{}", renamed.text);

    // Handshake era: the same lists and refusals within a session.
    let session = |token: String| {
        let mcp = mcp.clone();
        async move {
            let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
            let (status, headers, body) = post(&mcp, &initialize.to_string(), bearer(&token)).await;
            assert_eq!(status, 200, "{body}");
            let mut headers_out = bearer(&token);
            headers_out.insert("mcp-session-id", headers["mcp-session-id"].clone());
            headers_out.insert("mcp-protocol-version", HeaderValue::from_static("2025-11-25"));
            let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
            assert_eq!(post(&mcp, initialized, headers_out.clone()).await.0, 202);
            headers_out
        }
    };
    let reader_session = session(reader.clone()).await;
    let list_body = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (_, _, body) = post(&mcp, list_body, reader_session.clone()).await;
    assert_eq!(tool_names(&body["result"]), names, "{body}");
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "Catalog.rename", "arguments": rename}})
    .to_string();
    let (status, headers, body) = post(&mcp, &call, reader_session).await;
    assert_eq!((status, &body["error"]["code"]), (403, &json!(-32403)), "{body}");
    assert!(challenge(&headers).contains(r#"scope="catalog:read catalog:write""#), "{}", challenge(&headers));
    let writer_session = session(writer.clone()).await;
    let (_, _, body) = post(&mcp, list_body, writer_session.clone()).await;
    assert_eq!(tool_names(&body["result"]), seen_by_writer, "{body}");
    let (_, _, body) = post(&mcp, &call, writer_session).await;
    assert!(body["result"]["structuredContent"].is_object(), "{body}");

    // JSON-RPC: the same check, the same error.
    let rpc_rename = json!({"jsonrpc": "2.0", "id": 1, "method": "Catalog.rename", "params": rename}).to_string();
    let (status, _, body) = post(&rpc, &rpc_rename, bearer(&reader)).await;
    assert_eq!((status, &body["error"]["code"]), (200, &json!(-32403)), "{body}");
    assert!(body["error"]["message"].as_str().unwrap_or_default().contains("catalog:write"), "{body}");
    let (_, _, body) = post(&rpc, &rpc_rename, bearer(&writer)).await;
    assert_eq!(body["result"]["name"], "Scoped", "{body}");
    // A token granting no scope at all still calls what needs none.
    let (_, _, body) = post(&rpc, CALL, bearer(&token(""))).await;
    assert_eq!(body["result"]["id"], 7, "{body}");

    // OpenRPC names each method's scopes.
    let document: Value = reqwest::get(server.url("/rpc")).await.unwrap().json().await.unwrap();
    let methods = document["methods"].as_array().expect("methods");
    let scopes_of = |name: &str| methods.iter().find(|m| m["name"] == name).map(|m| m["x-scopes"].clone());
    assert_eq!(scopes_of("Catalog.rename"), Some(json!(["catalog:write"])));
    assert_eq!(scopes_of("Catalog.get"), Some(Value::Null));
}

#[tokio::test]
async fn without_scoped_callers_every_tool_is_listed_to_everyone() {
    // Static tokens give identities without scopes: one list, public.
    let security = Security::new().tokens(rpc::TokenPolicy::new().token("s3cret").unwrap());
    let server = TestServer::start(catalog::app_with(Environment::Prod, security).expect("catalog")).await;
    let modern = Modern::new(server.url("/mcp/v1"));
    let body = modern.request("tools/list", json!({}), json!(1));
    let reply = modern.exchange(&body, &[("authorization", "Bearer s3cret")]).await;
    let result = &reply.json["result"];
    assert_eq!(result["cacheScope"], "public", "{}", reply.text);
    let names = tool_names(result);
    assert!(names.contains(&"Catalog.rename".to_owned()) && names.contains(&"Catalog.reindex".to_owned()), "{names:?}");
    let renamed = modern
        .tool_with("Catalog.rename", json!({"id": 3, "name": "By token"}), &[("authorization", "Bearer s3cret")])
        .await;
    assert_eq!(renamed.json["result"]["isError"], false, "{}", renamed.text);
}

mod vault {
    use mcp::{mcp_prompt, mcp_resource};

    rpc::api_group!(pub struct Vaulted => "vault", mcp = true);

    /// Notes, some of them secret.
    pub struct Vault;

    #[rpc::service(groups(Vaulted))]
    impl Vault {
        /// Notes anyone may read.
        #[mcp_resource(uri = "vault://notes", mime_type = "text/plain")]
        pub fn notes(&self) -> String {
            "public".to_owned()
        }

        /// Notes for holders of vault:read.
        #[mcp_resource(uri = "vault://secret", mime_type = "text/plain", scopes("vault:read"))]
        pub fn secret(&self) -> String {
            "secret".to_owned()
        }

        /// One item, for holders of vault:read.
        ///
        /// # Arguments
        /// * `id` - The item
        #[mcp_resource(uri = "vault://items/{id}", mime_type = "text/plain")]
        #[rpc::info(scopes("vault:read"))]
        pub fn item(&self, id: String) -> String {
            format!("item {id}")
        }

        /// Greets.
        ///
        /// # Arguments
        /// * `name` - Who
        #[mcp_prompt]
        pub fn hello(&self, name: String) -> String {
            format!("Say hello to {name}.")
        }

        /// Rotates the keys: for holders of vault:admin.
        #[mcp_prompt(scopes("vault:admin"))]
        pub fn rotate(&self) -> String {
            "Rotate the keys.".to_owned()
        }
    }

    /// The archive: every method needs vault:archive.
    pub struct Archive;

    #[rpc::service(groups(Vaulted), scopes("vault:archive"))]
    impl Archive {
        /// Archived notes, for holders of vault:archive and vault:read.
        #[mcp_resource(uri = "vault://archive", mime_type = "text/plain", scopes("vault:read"))]
        pub fn archived(&self) -> String {
            "archived".to_owned()
        }
    }
}

#[tokio::test]
async fn resources_and_prompts_are_listed_and_served_by_scope_too() {
    let key = rsa(RSA1);
    let issuer = Issuer::start(json!({"keys": [jwk(&key, Algorithm::RS256, "k1")]})).await;
    let audience = "http://127.0.0.1:1/";
    let policy = OAuthSettings::new(issuer.url(), audience).unwrap().discover().await.expect("the issuer is read");
    let registry = rpc::Registry::builder().service(vault::Vault).service(vault::Archive).build().expect("registry");
    let executor = rpc::Executor::new(registry, Environment::Prod);
    let endpoint =
        mcp::McpEndpoint::builder::<vault::Vaulted>(executor).security(Security::new().oauth(policy)).build();
    let server = TestServer::start(rpc::server::Router::new().nest("/mcp", endpoint)).await;
    let modern = Modern::new(server.url("/mcp"));
    let token = |scope: &str| {
        let claims = with(claims(issuer.url(), audience), json!({"scope": scope}));
        format!("Bearer {}", sign(&key, Algorithm::RS256, Some("k1"), &claims))
    };
    let ask = async |method: &str, params: Value, authorization: &str| {
        let body = modern.request(method, params, json!(1));
        modern.exchange(&body, &[("authorization", authorization)]).await
    };
    let names = |result: &Value, key: &str, field: &str| -> Vec<String> {
        let items = result[key].as_array().cloned().unwrap_or_default();
        items.iter().filter_map(|i| i[field].as_str().map(str::to_owned)).collect()
    };
    let (nobody, reader, admin) = (token(""), token("vault:read"), token("vault:admin vault:read"));

    let list = ask("resources/list", json!({}), &nobody).await;
    assert_eq!(names(&list.json["result"], "resources", "uri"), ["vault://notes"], "{}", list.text);
    assert_eq!(list.json["result"]["cacheScope"], "private", "{}", list.text);
    let list = ask("resources/list", json!({}), &reader).await;
    assert_eq!(names(&list.json["result"], "resources", "uri"), ["vault://notes", "vault://secret"], "{}", list.text);
    let templates = ask("resources/templates/list", json!({}), &nobody).await;
    assert_eq!(names(&templates.json["result"], "resourceTemplates", "uriTemplate"), Vec::<String>::new());
    let templates = ask("resources/templates/list", json!({}), &reader).await;
    assert_eq!(names(&templates.json["result"], "resourceTemplates", "uriTemplate"), ["vault://items/{id}"]);
    let prompts = ask("prompts/list", json!({}), &reader).await;
    assert_eq!(names(&prompts.json["result"], "prompts", "name"), ["Vault.hello"], "{}", prompts.text);
    let prompts = ask("prompts/list", json!({}), &admin).await;
    assert_eq!(names(&prompts.json["result"], "prompts", "name"), ["Vault.hello", "Vault.rotate"], "{}", prompts.text);

    // Reading or getting what one's scopes do not allow: -32403 naming the scope.
    for (method, params) in [
        ("resources/read", json!({"uri": "vault://secret"})),
        ("resources/read", json!({"uri": "vault://items/9"})),
        ("prompts/get", json!({"name": "Vault.rotate"})),
    ] {
        let refused = ask(method, params.clone(), &nobody).await;
        assert_eq!(refused.json["error"]["code"], -32403, "{method} {params}: {}", refused.text);
        let allowed = ask(method, params.clone(), &admin).await;
        assert!(allowed.json.get("result").is_some(), "{method} {params}: {}", allowed.text);
    }
    let read = ask("resources/read", json!({"uri": "vault://secret"}), &reader).await;
    assert_eq!(read.json["result"]["contents"][0]["text"], "secret", "{}", read.text);

    // A service's scopes add to each of its methods' own.
    let archivist = token("vault:archive vault:read");
    let list = ask("resources/list", json!({}), &archivist).await;
    assert!(names(&list.json["result"], "resources", "uri").contains(&"vault://archive".to_owned()), "{}", list.text);
    for partial in [&reader, &token("vault:archive")] {
        let list = ask("resources/list", json!({}), partial).await;
        assert!(!names(&list.json["result"], "resources", "uri").contains(&"vault://archive".to_owned()));
        let refused = ask("resources/read", json!({"uri": "vault://archive"}), partial).await;
        assert_eq!(refused.json["error"]["code"], -32403, "{}", refused.text);
    }
    let read = ask("resources/read", json!({"uri": "vault://archive"}), &archivist).await;
    assert_eq!(read.json["result"]["contents"][0]["text"], "archived", "{}", read.text);
}
