use serde_json::json;

use super::*;

const HOSTILE: &str = "</script><img src=x onerror=alert(1)><!-- <script>alert(2)</script> \u{2028} & ' \"";

fn hostile_page() -> Page {
    Page {
        kind: PageKind::JsonRpc,
        title: format!("</title><script>alert(0)</script>{HOSTILE}"),
        description: Some(HOSTILE.to_owned()),
        app_version: Some(HOSTILE.to_owned()),
        language: "en\"><script>alert(3)</script>".to_owned(),
        version: 1,
        versions: vec![VersionLink { name: HOSTILE.to_owned(), href: "javascript:alert(4)".to_owned(), current: true }],
        endpoint: HOSTILE.to_owned(),
        post_path: "/rpc".to_owned(),
        protected: true,
        links: vec![(HOSTILE.to_owned(), "/rpc/postman".to_owned())],
        note: Some(HOSTILE.to_owned()),
        protocol: None,
        try_it: true,
        entries: vec![Entry {
            name: format!("Evil.{HOSTILE}"),
            title: Some(HOSTILE.to_owned()),
            description: Some(HOSTILE.to_owned()),
            deprecated: false,
            params: vec![Param {
                name: HOSTILE.to_owned(),
                description: Some(HOSTILE.to_owned()),
                required: true,
                schema: json!({"type": "string", "default": HOSTILE}),
            }],
            input_schema: None,
            result: Some(json!({"description": HOSTILE})),
            tags: vec![HOSTILE.to_owned()],
            errors: vec![
                ErrorUse::Shared(HOSTILE.to_owned()),
                ErrorUse::Inline(ErrorDoc { message: Some(HOSTILE.to_owned()), ..ErrorDoc::default() }),
                ErrorUse::Unresolved { reference: HOSTILE.to_owned(), reason: HOSTILE.to_owned() },
            ],
            annotations: Map::from_iter([(HOSTILE.to_owned(), json!(HOSTILE))]),
            example: json!({HOSTILE: HOSTILE}),
        }],
        schemas: json!({HOSTILE: {"description": HOSTILE}}),
        tags: vec![Tag { name: HOSTILE.to_owned(), description: Some(HOSTILE.to_owned()) }],
        errors: BTreeMap::from_iter([(
            HOSTILE.to_owned(),
            ErrorDoc {
                code: Some(-1),
                message: Some(HOSTILE.to_owned()),
                description: Some(HOSTILE.to_owned()),
                data_schema: Some(json!({"description": HOSTILE})),
                data: Some(json!(HOSTILE)),
            },
        )]),
    }
}

/// The text of the data block.
fn data_block(html: &str) -> &str {
    let start = html.find(r#"id="docs-data">"#).expect("a data block") + r#"id="docs-data">"#.len();
    let len = html[start..].find("</script>").expect("the data block ends");
    &html[start..start + len]
}

#[test]
fn hostile_texts_stay_text() {
    let page = hostile_page();
    let html = render(&page);
    let template_scripts = TEMPLATE.matches("<script").count();
    assert_eq!(html.matches("<script").count(), template_scripts, "no script element was added: {html}");
    assert_eq!(html.matches("</script").count(), template_scripts, "no script element was ended early");
    assert!(!html.contains("<img"), "no markup from texts");
    assert!(!html.contains("<!--"), "no comment opened from texts");
    assert!(!data_block(&html).contains('\u{2028}'), "line separators escaped in the data");
    assert!(html.contains("<title>&lt;/title&gt;&lt;script&gt;alert(0)"), "the title is escaped");
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en&quot;&gt;&lt;script&gt;"), "so is the language");
    // The data block carries everything, exactly.
    let data: Value = serde_json::from_str(data_block(&html)).expect("the data block is JSON");
    assert_eq!(data, serde_json::to_value(&page).unwrap());
    assert_eq!(data["entries"][0]["description"], HOSTILE);
}

#[test]
fn placeholders_in_texts_are_not_expanded() {
    let mut page = hostile_page();
    page.title = "{{script}} {{data}}".to_owned();
    let html = render(&page);
    assert_eq!(html.matches(SCRIPT).count(), 1, "the script is written once");
    assert!(html.contains("<title>{{script}} {{data}}</title>"));
}

#[test]
fn script_safe_json_round_trips() {
    let value = json!({"a": "</script>&<>\u{2028}\u{2029}", "b": [1, 2.5, null, true]});
    let text = script_safe_json(&value);
    assert!(!text.contains(['<', '>', '&', '\u{2028}', '\u{2029}']));
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
}

#[test]
fn the_policy_allows_exactly_the_template() {
    let policy = CONTENT_SECURITY_POLICY.as_str();
    assert!(policy.starts_with("default-src 'none'; "), "{policy}");
    assert!(policy.contains(&sha256_source(SCRIPT)) && policy.contains(&sha256_source(STYLE)));
    assert!(!policy.contains("unsafe") && !policy.contains("http"), "{policy}");
    assert!(!TEMPLATE.contains("http") && !STYLE.contains("http") && !SCRIPT.contains("http"), "no external URL");
    for markup in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function(", "srcdoc"] {
        assert!(!SCRIPT.contains(markup), "the script writes text only: {markup}");
    }
    let response = response(&hostile_page());
    let headers = response.headers();
    assert_eq!(headers[header::CONTENT_TYPE], "text/html; charset=utf-8");
    assert_eq!(headers[header::CONTENT_SECURITY_POLICY], policy);
    assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
}

// The page of an OpenRPC document: errors and tags.

mod openrpc {
    use std::time::{Duration, Instant};

    use serde_json::{Value, json};

    use super::{HOSTILE, data_block};
    use crate::docs::openrpc_page::{PageContext, jsonrpc_page};
    use crate::docs::page::{ErrorDoc, ErrorUse, Page, Tag, render};

    fn page_of(doc: &Value) -> Page {
        let context = PageContext {
            endpoint: "http://127.0.0.1/rpc".to_owned(),
            mount: "/rpc",
            version: 1,
            versions: vec![1],
            protected: false,
            language: "en",
        };
        jsonrpc_page(doc, context)
    }

    fn entry<'a>(page: &'a Page, name: &str) -> &'a super::Entry {
        page.entries.iter().find(|e| e.name == name).unwrap_or_else(|| panic!("{name} on the page"))
    }

    fn shared(key: &str) -> ErrorUse {
        ErrorUse::Shared(key.to_owned())
    }

    fn unresolved(page: &Page, method: &str) -> Vec<(String, String)> {
        entry(page, method)
            .errors
            .iter()
            .map(|e| match e {
                ErrorUse::Unresolved { reference, reason } => (reference.clone(), reason.clone()),
                other => panic!("{method}: {other:?} is resolved"),
            })
            .collect()
    }

    #[test]
    fn the_catalog_document_shows_errors_and_tags() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/golden/openrpc.v1.json");
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("the golden document")).unwrap();
        let page = page_of(&doc);
        let get = entry(&page, "Catalog.get");
        assert_eq!(get.tags, ["Catalog"]);
        assert_eq!(
            get.errors,
            ["rpc.InvalidParams", "CatalogError.NotFound", "CatalogError.NoSubscription", "CatalogError.NoSuchName"]
                .iter()
                .chain(&["CatalogError.TooManySubscriptions"])
                .map(|k| shared(k))
                .collect::<Vec<_>>()
        );
        let not_found = &page.errors["CatalogError.NotFound"];
        assert_eq!((not_found.code, not_found.message.as_deref()), (Some(404), Some("No product has this id.")));
        assert_eq!(not_found.data_schema.as_ref().unwrap()["properties"]["extra"]["required"], json!(["id"]));
        assert_eq!(page.errors["rpc.Locked"].code, Some(-32400));
        assert!(page.errors["CatalogError.TooManySubscriptions"].data_schema.is_none());
        assert!(entry(&page, "Catalog.categories").errors.is_empty());
        // Shown in their own places, no longer as raw annotations.
        assert!(!get.annotations.contains_key("errors") && !get.annotations.contains_key("tags"));
        assert!(entry(&page, "Catalog.reindex").annotations.contains_key("x-scopes"));
        // The services, each once, with their descriptions, in order of appearance.
        let names: Vec<&str> = page.tags.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["Activity", "Catalog", "Pinger"]);
        assert_eq!(page.tags[2].description.as_deref(), Some("Is the server there?"));
        assert_eq!(entry(&page, "ping").tags, ["Pinger"]);
        // Every shared error on the page is one a method refers to.
        for key in page.errors.keys() {
            assert!(page.entries.iter().any(|e| e.errors.contains(&shared(key))), "{key} is used");
        }
        // In the data block the script reads.
        let data: Value = serde_json::from_str(data_block(&render(&page))).unwrap();
        assert_eq!(data["errors"]["CatalogError.NotFound"]["code"], 404);
        assert_eq!(data["errors"]["CatalogError.NotFound"]["dataSchema"]["required"], json!(["exception", "extra"]));
        assert_eq!(data["entries"][0]["tags"], json!(["Activity"]));
        assert_eq!(
            data["tags"][1],
            json!({"name": "Catalog", "description": doc["methods"][1]["tags"][0]["description"]})
        );
        let get = data["entries"].as_array().unwrap().iter().find(|e| e["name"] == "Catalog.get").unwrap();
        assert_eq!(get["errors"][1], json!({"shared": "CatalogError.NotFound"}));
    }

    #[test]
    fn broken_references_are_reported_not_followed() {
        let doc = json!({
            "methods": [
                {"name": "missing", "errors": [{"$ref": "#/components/errors/Nope"}]},
                {"name": "cycle", "errors": [{"$ref": "#/components/errors/A"}, {"$ref": "#/components/errors/Self"}]},
                {"name": "foreign", "errors": [
                    {"$ref": "https://evil.example/errors.json#/components/errors/A"},
                    {"$ref": "#/components/schemas/Thing"},
                    {"$ref": "#/components/errors/Sub/Path"},
                    {"$ref": "#/components/errors/ToForeign"}
                ]},
                {"name": "odd", "errors": [{"$ref": 7}, 42, "text", null, {"$ref": "#/components/errors/NotObject"}]},
                {"name": "fine", "errors": [
                    {"$ref": "#/components/errors/Alias"},
                    {"code": 7, "message": "inline", "description": "written out", "data": {"a": 1}},
                    {"$ref": "#/components/errors/Esc~1aped~0"}
                ]}
            ],
            "components": {"errors": {
                "A": {"$ref": "#/components/errors/B"},
                "B": {"$ref": "#/components/errors/A"},
                "Self": {"$ref": "#/components/errors/Self"},
                "ToForeign": {"$ref": "http://127.0.0.1/x"},
                "NotObject": [1, 2],
                "Alias": {"$ref": "#/components/errors/Real"},
                "Real": {"code": 1, "message": "real", "x-data-schema": {"type": "string"}},
                "Esc/aped~": {"code": 2, "message": "escaped"}
            }}
        });
        let page = page_of(&doc);
        assert_eq!(unresolved(&page, "missing")[0].1, "no such error in components.errors");
        for (reference, reason) in unresolved(&page, "cycle") {
            assert_eq!(reason, "a reference cycle", "{reference}");
        }
        let foreign = unresolved(&page, "foreign");
        assert_eq!(foreign.len(), 4);
        assert!(foreign.iter().all(|(_, reason)| reason.starts_with("not a reference into")), "{foreign:?}");
        assert_eq!(foreign[0].0, "https://evil.example/errors.json#/components/errors/A");
        let odd = unresolved(&page, "odd");
        assert_eq!(odd.len(), 5);
        assert_eq!(odd[4].1, "not an error object");
        let fine = &entry(&page, "fine").errors;
        assert_eq!(fine[0], shared("Real"), "an alias resolves to what it names");
        assert_eq!(
            fine[1],
            ErrorUse::Inline(ErrorDoc {
                code: Some(7),
                message: Some("inline".to_owned()),
                description: Some("written out".to_owned()),
                data_schema: None,
                data: Some(json!({"a": 1})),
            })
        );
        assert_eq!(fine[2], shared("Esc/aped~"));
        assert_eq!(page.errors.keys().collect::<Vec<_>>(), ["Esc/aped~", "Real"]);
        assert_eq!(page.errors["Real"].data_schema, Some(json!({"type": "string"})));
    }

    #[test]
    fn long_reference_chains_stop() {
        let mut errors = serde_json::Map::new();
        for i in 0..10_000 {
            errors.insert(format!("e{i}"), json!({"$ref": format!("#/components/errors/e{}", i + 1)}));
        }
        errors.insert("e10000".to_owned(), json!({"code": 1, "message": "end"}));
        let refs: Vec<Value> = (0..10_000).map(|i| json!({"$ref": format!("#/components/errors/e{i}")})).collect();
        let doc = json!({"methods": [{"name": "chain", "errors": refs}], "components": {"errors": errors}});
        let started = Instant::now();
        let page = page_of(&doc);
        assert!(started.elapsed() < Duration::from_secs(5), "bounded work: {:?}", started.elapsed());
        let chain = &entry(&page, "chain").errors;
        assert_eq!(chain.len(), 10_000);
        assert!(matches!(&chain[0], ErrorUse::Unresolved { reason, .. } if reason.starts_with("more than 8")));
        assert_eq!(chain[9_999], shared("e10000"));
        assert_eq!(page.errors.len(), 1);
    }

    #[test]
    fn many_errors_and_methods_stay_linear() {
        let errors: serde_json::Map<String, Value> = (0..10_000)
            .map(|i| (format!("E{i}"), json!({"code": i, "message": format!("error {i}"), "description": HOSTILE})))
            .collect();
        let all: Vec<Value> = (0..10_000).map(|i| json!({"$ref": format!("#/components/errors/E{i}")})).collect();
        let mut methods = vec![json!({"name": "all", "errors": all, "tags": [{"name": "Big"}]})];
        for m in 0..1_000 {
            let some: Vec<Value> =
                (0..10).map(|i| json!({"$ref": format!("#/components/errors/E{}", m * 10 + i)})).collect();
            methods.push(json!({"name": format!("S{}.m{m}", m % 40), "errors": some,
                "tags": [{"name": format!("S{}", m % 40), "description": format!("service {}", m % 40)}]}));
        }
        let doc = json!({"methods": methods, "components": {"errors": errors}});
        let started = Instant::now();
        let page = page_of(&doc);
        let html = render(&page);
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        assert_eq!(page.entries.len(), 1_001);
        assert_eq!(entry(&page, "all").errors.len(), 10_000);
        assert_eq!(page.errors.len(), 10_000, "each shared error once");
        assert_eq!(page.tags.len(), 41);
        assert_eq!(page.tags[1], Tag { name: "S0".to_owned(), description: Some("service 0".to_owned()) });
        // The shared errors are written once, not per method.
        assert_eq!(html.matches("error 9999\"").count(), 1);
    }

    #[test]
    fn a_huge_description_is_carried_safely() {
        let huge = HOSTILE.repeat(100_000);
        let doc = json!({
            "info": {"title": "t", "description": huge},
            "methods": [{"name": "m", "description": huge, "tags": [{"name": huge, "description": huge}],
                "errors": [{"$ref": "#/components/errors/E"}]}],
            "components": {"errors": {"E": {"code": 1, "message": huge, "description": huge}}}
        });
        let started = Instant::now();
        let html = render(&page_of(&doc));
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        let template_scripts = super::TEMPLATE.matches("<script").count();
        assert_eq!(html.matches("<script").count(), template_scripts);
        assert_eq!(html.matches("</script").count(), template_scripts);
        assert!(!html.contains("<img") && !html.contains("<!--"));
        let data: Value = serde_json::from_str(data_block(&html)).unwrap();
        assert_eq!(data["errors"]["E"]["description"], huge.as_str());
        assert_eq!(data["tags"][0]["name"], huge.as_str());
        assert_eq!(data["entries"][0]["tags"][0], huge.as_str());
    }

    #[test]
    fn tags_from_everywhere_once() {
        let doc = json!({
            "tags": [{"name": "Top", "description": "from the top"}, {"name": "Later"}],
            "methods": [
                {"name": "a", "tags": [{"name": "Later", "description": "given by a method"}, {"name": "Later"}, "Plain"]},
                {"name": "b", "tags": [{"$ref": "#/components/tags/Shared"}, {"$ref": "#/components/tags/Loop"},
                    {"$ref": "#/components/tags/Missing"}, {"$ref": "https://x/#/components/tags/Shared"}, 5, {"description": "no name"}]},
                {"name": "c"},
                {"name": "d", "tags": "not a list"}
            ],
            "components": {"tags": {
                "Shared": {"name": "Shared", "description": "a component"},
                "Loop": {"$ref": "#/components/tags/Loop"}
            }}
        });
        let page = page_of(&doc);
        let tags: Vec<(&str, Option<&str>)> =
            page.tags.iter().map(|t| (t.name.as_str(), t.description.as_deref())).collect();
        assert_eq!(
            tags,
            [
                ("Top", Some("from the top")),
                ("Later", Some("given by a method")),
                ("Shared", Some("a component")),
                ("Plain", None)
            ]
        );
        assert_eq!(entry(&page, "a").tags, ["Later", "Plain"]);
        assert_eq!(entry(&page, "b").tags, ["Shared"]);
        assert!(entry(&page, "c").tags.is_empty() && entry(&page, "d").tags.is_empty());
    }
}
