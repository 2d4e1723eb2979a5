use serde_json::value::RawValue;

use super::*;
use crate::jsonrpc::envelope::{Body, parse_body_with};

fn items(body: &str) -> Vec<Result<Message<'_>, Invalid<'_>>> {
    match parse_body_with(body.as_bytes(), false, &JsonLimits::default().max_batch(1000)) {
        Ok(Body::Batch(items)) => items,
        other => panic!("a batch: {other:?}"),
    }
}

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_owned()).unwrap()
}

fn call(id: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m","params":{params}}}"#)
}

fn batch(calls: &[String]) -> String {
    format!("[{}]", calls.join(","))
}

/// The message of the error refusing message `index`.
fn refused(plan: &Plan<'_>, index: usize) -> String {
    match plan.role(index) {
        Role::Refused(error) => {
            assert_eq!(error.code(), -32602, "{error:?}");
            error.message().to_owned()
        }
        other => panic!("message {index} is not refused: {other:?}"),
    }
}

#[test]
fn a_batch_without_references_is_not_planned() {
    let body = batch(&[call("1", r#"{"a":"x@FROMy"}"#), call("2", r#"{"@FROM:1()":1}"#), call("3", "[1]")]);
    let items = items(&body);
    assert!(mentions(&items), "the byte search only finds the text");
    let plan = Plan::new(&items);
    assert!(!plan.chains(), "a key and text in the middle of a string are not references");
    let plain = batch(&[call("1", r#"{"a":1}"#), call("2", "[2]")]);
    assert!(!mentions(&self::items(&plain)));
}

#[test]
fn references_anywhere_in_the_params() {
    let body = batch(&[
        call("1", "{}"),
        call(r#""b""#, "{}"),
        call("3", r#"{"x":"@FROM:1(id)","deep":[{"y":"@FROM:b(user.name)"}],"z":"@FROM:1()"}"#),
        call("4", r#"["@FROM:3(0)", "@FROM:1(a.b)"]"#),
    ]);
    let items = items(&body);
    let plan = Plan::new(&items);
    assert!(plan.chains());
    assert!(matches!(plan.role(0), Role::Plain));
    assert!(matches!(plan.role(2), Role::Child { parents: 2, .. }));
    assert!(matches!(plan.role(3), Role::Child { parents: 2, .. }));
    assert_eq!(plan.children(0), [2, 3]);
    assert_eq!(plan.children(1), [2]);
    assert_eq!(plan.children(2), [3]);
    let results = [raw(r#"{"id":7,"a":{"b":[true]}}"#), raw(r#"{"user":{"name":"Ann \"A\""}}"#)];
    let outcome = |i: usize| results.get(i).map_or(Outcome::Running, |r| Outcome::Result(r));
    let mut resolver = Resolver::new(&JsonLimits::default());
    let params = plan.substitute(2, outcome, &mut resolver).unwrap();
    assert_eq!(
        params.get(),
        r#"{"x":7,"deep":[{"y":"Ann \"A\""}],"z":{"id":7,"a":{"b":[true]}}}"#,
        "spliced as the results' bytes"
    );
}

#[test]
fn ids_match_as_written() {
    let body = batch(&[
        call(r#""7""#, "{}"),
        call("8", "{}"),
        call("8.0", "{}"),
        call(r#""a\"b""#, "{}"),
        call("null", "{}"),
        call("10", r#"{"a":"@FROM:7()","b":"@FROM:8.0()"}"#),
        call("11", r#"{"a":"@FROM:null()"}"#),
        call("12", r#"{"a":"@FROM:9()"}"#),
    ]);
    let items = items(&body);
    let plan = Plan::new(&items);
    assert!(matches!(plan.role(5), Role::Child { parents: 2, .. }), "`7` names \"7\"; `8.0` names 8.0, not 8");
    assert_eq!(refused(&plan, 6), "`@FROM:null()`: no request with id null in this batch");
    assert_eq!(refused(&plan, 7), "`@FROM:9()`: no request with id 9 in this batch");
    let body = batch(&[call("7", "{}"), call(r#""7""#, "{}"), call("3", r#"{"a":"@FROM:7()"}"#)]);
    let items = self::items(&body);
    assert_eq!(refused(&Plan::new(&items), 2), "`@FROM:7()`: 2 requests in this batch have id 7");
}

#[test]
fn bad_references_name_the_syntax() {
    for (reference, why) in [
        ("@FROM", "`@FROM` is followed by `:` and the id"),
        ("@FROMAGE", "`@FROM` is followed by `:` and the id"),
        ("@FROM:1", "the id is followed by `(`"),
        ("@FROM:(x)", "the id is one or more characters other than parentheses"),
        ("@FROM:1(x", "the field ends with `)`, the last character"),
        ("@FROM:1(x) ", "the field ends with `)`, the last character"),
        ("@FROM:1(a(b))", "a field has no parentheses"),
        ("@FROM:1(a..b)", "a field path is names separated by single dots"),
        ("@FROM:1(.a)", "a field path is names separated by single dots"),
        ("@FROM:1(\\u0061)", "a reference is written without escapes"),
    ] {
        let body = batch(&[call("1", "{}"), call("2", &format!(r#"{{"a":"{reference}"}}"#))]);
        let items = items(&body);
        let message = refused(&Plan::new(&items), 1);
        assert!(message.starts_with(&format!("Invalid `@FROM` reference `{reference}`: {why}; write")), "{message}");
    }
    let long = format!("@FROM:1({})", "a".repeat(1_000_000));
    let body = batch(&[call("1", "{}"), call("2", &format!(r#"["{long}"]"#))]);
    let items = items(&body);
    let message = refused(&Plan::new(&items), 1);
    assert!(message.contains("at most 1024 bytes") && message.len() <= 520, "{message}");
    // An escaped `@` is text, never a reference.
    let body = batch(&[call("1", "{}"), call("2", r#"{"a":"\u0040FROM:1()"}"#)]);
    let items = self::items(&body);
    assert!(!Plan::new(&items).chains());
}

#[test]
fn self_references_and_cycles_are_refused() {
    let body = batch(&[
        call("1", r#"{"a":"@FROM:1(x)"}"#),
        call("2", r#"{"a":"@FROM:3(x)"}"#),
        call("3", r#"{"a":"@FROM:2()"}"#),
        call("4", r#"{"a":"@FROM:3()"}"#),
    ]);
    let items = items(&body);
    let plan = Plan::new(&items);
    assert_eq!(refused(&plan, 0), "`@FROM:1(x)`: request 1 depends on itself");
    assert_eq!(refused(&plan, 1), "`@FROM:3(x)`: cycle 2 → 3 → 2");
    assert_eq!(refused(&plan, 2), "`@FROM:2()`: cycle 3 → 2 → 3");
    assert!(matches!(plan.role(3), Role::Child { parents: 1, .. }), "downstream of a cycle: refused when it fails");
    assert_eq!(plan.children(2), [3]);
}

#[test]
fn a_long_cycle_is_named_in_short() {
    let n = 500;
    let calls: Vec<String> =
        (1..=n).map(|i| call(&i.to_string(), &format!(r#"{{"a":"@FROM:{}()"}}"#, i % n + 1))).collect();
    let body = batch(&calls);
    let items = items(&body);
    let started = std::time::Instant::now();
    let plan = Plan::new(&items);
    assert!(started.elapsed() < std::time::Duration::from_millis(500));
    assert_eq!(refused(&plan, 0), "`@FROM:2()`: cycle 1 → 2 → 3 → … → 499 → 500 → 1 (500 requests)");
    assert_eq!(refused(&plan, 9), "`@FROM:11()`: cycle 10 → 11 → 12 → … → 8 → 9 → 10 (500 requests)");
    for i in 0..n {
        refused(&plan, i);
    }
}

#[test]
fn a_dense_cycle_is_refused_in_bounded_time() {
    // Every call names every other: one strongly connected part of 300.
    let n = 300;
    let calls: Vec<String> = (1..=n)
        .map(|i| {
            let refs: Vec<String> = (1..=n).filter(|&j| j != i).map(|j| format!(r#""@FROM:{j}()""#)).collect();
            call(&i.to_string(), &format!("[{}]", refs.join(",")))
        })
        .collect();
    let body = batch(&calls);
    let items = items(&body);
    let started = std::time::Instant::now();
    let plan = Plan::new(&items);
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "{:?}", started.elapsed());
    for i in 0..n {
        assert!(refused(&plan, i).contains("cycle"));
    }
}

#[test]
fn parents_that_failed_or_lack_the_field() {
    let body = batch(&[call("1", "{}"), call("2", "{}"), call("3", r#"{"a":"@FROM:1(x)","b":"@FROM:2(user.id)"}"#)]);
    let items = items(&body);
    let plan = Plan::new(&items);
    let error = |outcomes: [Outcome<'_>; 2]| {
        let mut resolver = Resolver::new(&JsonLimits::default());
        let error = plan.substitute(2, |i| outcomes[i], &mut resolver).unwrap_err();
        assert_eq!((error.code(), error.kind()), (-32602, KIND));
        error.message().to_owned()
    };
    let user = raw(r#"{"user":{"name":"x"}}"#);
    let x = raw(r#"{"x":[1]}"#);
    assert_eq!(error([Outcome::Failed, Outcome::Result(&user)]), "`@FROM:1(x)`: request 1 failed");
    assert_eq!(
        error([Outcome::Asynchronous, Outcome::Result(&user)]),
        "`@FROM:1(x)`: request 1 runs asynchronously (`$rpc.callback`): its result is not in this batch"
    );
    assert_eq!(
        error([Outcome::Result(&x), Outcome::Result(&user)]),
        "`@FROM:2(user.id)`: the result of request 2 has no field `user.id`"
    );
    let timed_out = plan.timed_out(2, |i| i == 0);
    assert_eq!(timed_out.code(), -32000);
    assert_eq!(
        timed_out.message(),
        "`@FROM:2(user.id)`: request 2 did not finish within 120 s (the `$rpc.timeout` of this request, by default 120 s)"
    );
}

#[test]
fn fields_are_found_without_building_the_result() {
    let result = raw(r#" {"a":{"b":[10,{"c":null}],"d\u002ee":1},"a":2,"0":"zero","list":[[1],[2]]}"#);
    let at = |path: &str| field(&result, path).map(|v| v.get().to_owned());
    assert_eq!(at("a.b.0").as_deref(), Some("10"));
    assert_eq!(at("a.b.1.c").as_deref(), Some("null"));
    assert_eq!(at("a").as_deref(), Some(r#"{"b":[10,{"c":null}],"d\u002ee":1}"#), "the first of twin members");
    assert_eq!(at("0").as_deref(), Some(r#""zero""#), "a number names a member of an object");
    assert_eq!(at("list.1.0").as_deref(), Some("2"));
    assert_eq!(at("a.b.2"), None);
    assert_eq!(at("a.b.01"), None, "indexes are written without leading zeros");
    assert_eq!(at("a.b.c"), None);
    assert_eq!(at("a.b.0.x"), None, "a number has no fields");
    assert_eq!(at("missing"), None);
}

#[test]
fn the_wait_is_the_childs_timeout() {
    let body = batch(&[
        call("1", "{}"),
        call("2", r#"{"a":"@FROM:1()","$rpc":{"timeout":0.25}}"#),
        call("3", r#"{"a":"@FROM:1()","$rpc":{"timeout":500}}"#),
    ]);
    let items = items(&body);
    let plan = Plan::new(&items);
    assert!(matches!(plan.role(1), Role::Child { wait, .. } if wait == Duration::from_millis(250)));
    assert!(
        matches!(plan.role(2), Role::Child { wait, .. } if wait == Duration::from_secs(120)),
        "invalid: the default"
    );
}

#[test]
fn substituted_values_are_bounded() {
    let big = raw(&format!("[{}0]", "0,".repeat(60_000)));
    let body = batch(&[call("1", "{}"), call("2", r#"["@FROM:1()","@FROM:1()"]"#)]);
    let items = items(&body);
    let plan = Plan::new(&items);
    let mut resolver = Resolver::new(&JsonLimits::default());
    let error = plan.substitute(1, |_| Outcome::Result(&big), &mut resolver).unwrap_err();
    assert_eq!(
        error.message(),
        "`@FROM:1()`: the params with the values substituted: the JSON holds more than 100000 values"
    );
    let huge = raw(&format!(r#""{}""#, "x".repeat(MAX_SUBSTITUTED_BYTES / 2)));
    let mut resolver = Resolver::new(&JsonLimits::default());
    let error = plan.substitute(1, |_| Outcome::Result(&huge), &mut resolver).unwrap_err();
    assert_eq!(
        error.message(),
        format!("`@FROM:1()`: the values substituted into this batch exceed {MAX_SUBSTITUTED_BYTES} bytes")
    );
}
