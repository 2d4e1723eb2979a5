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
            annotations: Map::from_iter([(HOSTILE.to_owned(), json!(HOSTILE))]),
            example: json!({HOSTILE: HOSTILE}),
        }],
        schemas: json!({HOSTILE: {"description": HOSTILE}}),
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
    assert!(!SCRIPT.contains("innerHTML") && !SCRIPT.contains("eval("), "the script writes text only");
    let response = response(&hostile_page());
    let headers = response.headers();
    assert_eq!(headers[header::CONTENT_TYPE], "text/html; charset=utf-8");
    assert_eq!(headers[header::CONTENT_SECURITY_POLICY], policy);
    assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
}
