use serde_json::json;

use super::*;

fn validator(properties: Value, required: &[&str]) -> ParamValidator {
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
        "$defs": {
            "Mode": {"oneOf": [
                {"type": "string", "const": "fast", "description": "Quickly."},
                {"type": "string", "const": "slow", "description": "Carefully."}
            ]}
        }
    });
    ParamValidator::new(&schema).unwrap()
}

/// The `data.extra` of the error for `args`.
fn reasons(v: &ParamValidator, args: Value) -> Map<String, Value> {
    let error = v.validate("m", &args).unwrap_err();
    assert_eq!(error.code(), -32602);
    error.extra().and_then(Value::as_object).cloned().unwrap()
}

fn only(extra: &Map<String, Value>, name: &str) -> String {
    match extra.get(name).and_then(Value::as_array).map(Vec::as_slice) {
        Some([Value::String(reason)]) => reason.clone(),
        _ => panic!("one reason for `{name}`: {extra:?}"),
    }
}

fn size(extra: &Map<String, Value>) -> usize {
    serde_json::to_string(extra).unwrap().len()
}

#[test]
fn violations_name_each_parameter() {
    let v = validator(json!({"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 0}}), &["query"]);
    assert!(v.validate("m", &json!({"query": "x"})).is_ok());
    let extra = reasons(&v, json!({"limit": -1, "color": "red"}));
    assert_eq!(extra["query"], json!(["required parameter is missing"]));
    assert_eq!(extra["color"], json!(["unknown parameter"]));
    assert_eq!(only(&extra, "limit"), "-1 is less than the minimum of 0", "a short value is shown");
    assert_eq!(extra.len(), 3);
}

#[test]
fn one_reason_per_parameter_however_many_items_fail() {
    let v = validator(json!({"values": {"type": "array", "items": {"type": "integer"}}}), &[]);
    let bad: Vec<String> = (0..50_000).map(|i| format!("{i:0>80}")).collect();
    let extra = reasons(&v, json!({"values": bad}));
    let reason = only(&extra, "values");
    assert!(reason.starts_with("at /0: ") && reason.contains("integer"), "{reason}");
    assert!(size(&extra) < 512, "{extra:?}");
}

#[test]
fn long_values_are_summarised_not_shown() {
    let v = validator(json!({"id": {"type": "integer"}, "name": {"type": "string", "maxLength": 3}}), &[]);
    let extra = reasons(&v, json!({"id": "x".repeat(10_000), "name": "é".repeat(5_000)}));
    assert_eq!(only(&extra, "id"), r#"a string of 10000 bytes is not of type "integer""#);
    assert_eq!(only(&extra, "name"), "a string of 10000 bytes is longer than 3 characters");
    let extra = reasons(&v, json!({"id": [1, 2, 3]}));
    assert_eq!(only(&extra, "id"), r#"[1,2,3] is not of type "integer""#, "a short value is shown");
}

#[test]
fn messages_are_cut() {
    // A nested object refusing a member names it in its message.
    let v = validator(
        json!({"settings": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}}),
        &[],
    );
    let extra = reasons(&v, json!({"settings": {"é".repeat(2_000): 1}}));
    let reason = only(&extra, "settings");
    assert!(reason.len() <= MAX_MESSAGE_BYTES + '…'.len_utf8() && reason.ends_with('…'), "{reason}");
}

#[test]
fn unknown_names_are_listed_boundedly() {
    let v = validator(json!({"a": {"type": "integer"}}), &[]);
    let mut args: Map<String, Value> = (0..5_000).map(|i| (format!("{i}{}", "é".repeat(100)), json!(i))).collect();
    args.insert("a".into(), json!(1));
    let extra = reasons(&v, Value::Object(args));
    assert_eq!(extra.len(), MAX_UNKNOWN_LISTED + 1, "{extra:?}");
    assert_eq!(extra[MORE_KEY], json!(["4990 more unknown parameters"]));
    for name in extra.keys().filter(|k| *k != MORE_KEY) {
        assert!(name.len() <= MAX_NAME_BYTES + 3 && name.ends_with('…'), "{name}");
        assert_eq!(extra[name], json!(["unknown parameter"]));
    }
    assert!(size(&extra) < 1536, "{} bytes", size(&extra));
}

#[test]
fn large_values_under_alternatives_are_not_examined() {
    let modes = json!({"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/Mode"}}, {"type": "null"}]});
    let v = validator(json!({"modes": modes, "mode": {"$ref": "#/$defs/Mode"}}), &[]);
    let many: Vec<String> = (0..5_000).map(|i| format!("m{i}")).collect();
    let extra = reasons(&v, json!({"modes": many, "mode": many}));
    assert_eq!(
        only(&extra, "modes"),
        "an array of 5000 items does not match the schema (values this large are not examined further)"
    );
    assert_eq!(only(&extra, "mode"), r#"an array of 5000 items is not of type "string""#);
    let members: Map<String, Value> = (0..2_000).map(|i| (format!("k{i}"), json!(i))).collect();
    let extra = reasons(&v, json!({"modes": members}));
    assert_eq!(only(&extra, "modes"), r#"an object of 2000 members is not of types "array", "null""#);

    let extra = reasons(&v, json!({"modes": ["fast", "medium"], "mode": "medium"}));
    assert!(only(&extra, "modes").contains("anyOf"), "small values get the validator's reason: {extra:?}");
    assert!(only(&extra, "mode").starts_with(r#""medium" is not valid"#), "{extra:?}");
}

#[test]
fn the_report_has_a_budget() {
    let properties: Map<String, Value> =
        (0..100).map(|i| (format!("p{i}"), json!({"type": "string", "pattern": "^[a-z]{200}$"}))).collect();
    let v = validator(Value::Object(properties), &[]);
    let args: Map<String, Value> = (0..100).map(|i| (format!("p{i}"), json!("x"))).collect();
    let extra = reasons(&v, Value::Object(args));
    assert!(size(&extra) <= MAX_REPORT_BYTES + 256, "{} bytes", size(&extra));
    let note = extra[MORE_KEY][0].as_str().unwrap();
    let left_out: usize = note.split(' ').next().unwrap().parse().unwrap();
    assert_eq!(extra.len() - 1 + left_out, 100, "every reason is listed or counted: {note}");
}

#[test]
fn whole_schema_failures() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}, "minProperties": 1});
    let v = ParamValidator::new(&schema).unwrap();
    assert!(v.validate("m", &json!({"a": 1})).is_ok());
    let extra = reasons(&v, json!({}));
    assert_eq!(only(&extra, ""), "{} has less than 1 property");
    let extra = reasons(&v, json!([1]));
    assert_eq!(only(&extra, ""), r#"[1] is not of type "object""#);
}

#[test]
fn top_types_follow_refs_and_alternatives() {
    let defs: Map<String, Value> = serde_json::from_value(json!({
        "E": {"enum": ["a", 1]},
        "S": {"type": "object"}
    }))
    .unwrap();
    let types = |schema: Value| top_types(&schema, &defs, 0);
    assert_eq!(types(json!({"$ref": "#/$defs/E"})), Some(vec!["number", "string"]));
    assert_eq!(types(json!({"anyOf": [{"$ref": "#/$defs/S"}, {"type": "null"}]})), Some(vec!["null", "object"]));
    assert_eq!(types(json!({"type": ["integer", "null"]})), Some(vec!["integer", "null"]));
    assert_eq!(types(json!({"anyOf": [{}, {"type": "null"}]})), None, "one open alternative opens all");
    assert_eq!(types(json!({"description": "anything"})), None);
    assert!(has_type(&json!(3), "integer") && has_type(&json!(3.0), "integer") && !has_type(&json!(3.5), "integer"));
}
