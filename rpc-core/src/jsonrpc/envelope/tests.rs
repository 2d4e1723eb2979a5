//! The envelope's parsing: ids, members, parse errors, batches, early params.

use super::*;

fn request(json: &str) -> Result<(Option<String>, String), (Option<String>, i32)> {
    let raw: &RawValue = serde_json::from_str(json).unwrap();
    match parse_message(raw, false) {
        Ok(Message::Request(r)) => Ok((r.id.map(|i| i.get().to_owned()), r.method.into_owned())),
        Ok(Message::Response { .. }) => panic!("unexpected response"),
        Err(i) => Err((i.id.map(|i| i.get().to_owned()), i.error.code())),
    }
}

#[test]
fn distinguishes_null_id_from_notification() {
    assert_eq!(request(r#"{"jsonrpc":"2.0","method":"a","id":null}"#), Ok((Some("null".into()), "a".into())));
    assert_eq!(request(r#"{"jsonrpc":"2.0","method":"a"}"#), Ok((None, "a".into())));
}

#[test]
fn rejects_invalid_members() {
    assert_eq!(request(r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#), Err((None, -32600)));
    assert_eq!(request(r#"{"jsonrpc":"2.0","method":"a","params":"bar","id":3}"#), Err((Some("3".into()), -32600)));
    assert_eq!(request(r#"{"jsonrpc":"2.0","method":"a","params":{},"params":{}}"#), Err((None, -32600)));
    assert_eq!(request(r#"{"jsonrpc":"1.0","method":"a","id":"x"}"#), Err((Some("\"x\"".into()), -32600)));
    assert_eq!(request(r#"{"jsonrpc":"2.0","method":"a","id":{}}"#), Err((None, -32600)));
    assert_eq!(request("1"), Err((None, -32600)));
}

#[test]
fn parse_errors() {
    let code = |body: &[u8]| match parse_body(body, false) {
        Err(e) => e.code(),
        Ok(Body::Single(Err(invalid))) => invalid.error.code(),
        Ok(_) => 0,
    };
    assert_eq!(code(br#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#), -32700);
    assert_eq!(code(br#"{"jsonrpc":"2.0","method":"a"} trailing"#), -32700);
    assert_eq!(code(b" 1 "), -32600);
    assert_eq!(code(b"1 x"), -32700);
    assert_eq!(code(b""), -32700);
    assert_eq!(code(br#"{"jsonrpc":"2.0","method":"a","params":{},"params":{}}"#), -32600);
    assert_eq!(code(br#"{"jsonrpc":"2.0","method":"a","id":1}"#), 0);
    assert!(matches!(parse_body(b" []", false), Ok(Body::Batch(v)) if v.is_empty()));
    assert_eq!(code(b"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"x\":\"\xff\",\"id\":1}"), -32700, "UTF-8 everywhere");
}

#[test]
fn a_batch_is_read_in_one_pass_and_each_item_answered_alone() {
    let body = br#"[{"jsonrpc":"2.0","method":"a","params":{"x":[1,{"y":2}]},"id":1},
        3, "s", null, true, [1, [2]], {},
        {"jsonrpc":"2.0","method":"b","params":null,"id":null,"extra":{"deep":[{}]}},
        {"jsonrpc":"2.0","method":"c","method":"d","id":2},
        {"jsonrpc":"2.0","\u006dethod":"e","id":3},
        {"jsonrpc":null,"method":"f","id":4},
        {"jsonrpc":"2.0","method":"g"}]"#;
    let Ok(Body::Batch(items)) = parse_body(body, false) else { panic!("a batch") };
    type Shown<'a> = Result<(Option<&'a str>, String, Option<&'a str>), (Option<&'a str>, String)>;
    let shown: Vec<Shown<'_>> = items
        .iter()
        .map(|item| match item {
            Ok(Message::Request(r)) => Ok((r.id.map(RawValue::get), r.method.to_string(), r.params.map(RawValue::get))),
            Ok(Message::Response { .. }) => panic!("no responses on /rpc"),
            Err(invalid) => Err((
                invalid.id.map(RawValue::get),
                invalid.error.message().trim_start_matches("Invalid Request: ").to_owned(),
            )),
        })
        .collect();
    let not_object = Err((None, "a request must be a JSON object".to_owned()));
    assert_eq!(shown[0], Ok((Some("1"), "a".to_owned(), Some(r#"{"x":[1,{"y":2}]}"#))));
    for item in &shown[1..6] {
        assert_eq!(item, &not_object);
    }
    assert_eq!(shown[6], Err((None, "`jsonrpc` must be exactly \"2.0\"".to_owned())));
    assert_eq!(shown[7], Ok((Some("null"), "b".to_owned(), None)), "a null id is an id, null params none");
    assert_eq!(shown[8], Err((None, "malformed request object: duplicate field `method`".to_owned())));
    assert_eq!(shown[9], Ok((Some("3"), "e".to_owned(), None)), "an escaped member name");
    assert_eq!(shown[10], Err((Some("4"), "`jsonrpc` must be exactly \"2.0\"".to_owned())));
    assert_eq!(shown[11], Ok((None, "g".to_owned(), None)));
    assert_eq!(items.len(), 12);
    // A number no f64 holds, where a message should be: that item's -32600.
    let Ok(Body::Batch(items)) = parse_body(br#"[1e999, {"jsonrpc":"2.0","method":"a","id":1}]"#, false) else {
        panic!("a batch")
    };
    assert!(matches!(&items[..], [Err(_), Ok(Message::Request(_))]));
    assert!(matches!(parse_body(b"1e999", false), Ok(Body::Single(Err(_)))));
    // Invalid JSON anywhere is the whole body's parse error.
    assert_eq!(
        parse_body(br#"[{"jsonrpc":"2.0","method":"a","id":1}, {"x": tru}]"#, false).unwrap_err().code(),
        -32700
    );
    assert_eq!(parse_body(br#"[{"jsonrpc":"2.0","method":"a","id":1},]"#, false).unwrap_err().code(), -32700);
    // Each item as it would be alone.
    let alone: &RawValue = serde_json::from_str(r#"{"jsonrpc":"2.0","method":"c","method":"d","id":2}"#).unwrap();
    assert!(parse_message(alone, false).is_err());
}

#[test]
fn params_stay_raw_until_asked() {
    let Ok(Body::Single(Ok(Message::Request(r)))) =
        parse_body(br#"{"jsonrpc":"2.0","method":"a","params":{"x":[1,2]},"id":1}"#, false)
    else {
        panic!("a valid request")
    };
    assert_eq!(r.params.map(RawValue::get), Some(r#"{"x":[1,2]}"#));
    assert!(matches!(r.params(), Ok(Params::Named(m)) if m["x"] == serde_json::json!([1, 2])));
    #[derive(Deserialize)]
    struct X {
        x: Vec<u8>,
    }
    assert_eq!(r.params_as::<X>().unwrap().unwrap().x, [1, 2]);
    assert_eq!(r.params_as::<Vec<u8>>().unwrap_err().code(), -32602);
}

/// Reads `params` of `early/*` methods: an object's `n` only.
#[derive(Debug, PartialEq)]
struct N(u32);

impl<'de> EarlyParams<'de> for N {
    fn reads(method: &str) -> bool {
        method.starts_with("early/")
    }
    fn read<D: serde::Deserializer<'de>>(_: &str, d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Params {
            n: u32,
        }
        // An object only (a derived struct also takes an array).
        struct Object;
        impl<'de> serde::de::Visitor<'de> for Object {
            type Value = Params;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, map: M) -> Result<Params, M::Error> {
                Params::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(Object).map(|p| N(p.n))
    }
}

/// Each message: its method, what was read early, the raw params; or its error code.
type Shown = Result<(String, Option<u32>, Option<String>), i32>;

fn early(body: &str) -> Vec<Shown> {
    let shown = |item: Result<Message<'_, N>, Invalid<'_>>| match item {
        Ok(Message::Request(r)) => {
            Ok((r.method.into_owned(), r.early.map(|n| n.0), r.params.map(|p| p.get().to_owned())))
        }
        Ok(Message::Response { .. }) => panic!("a response"),
        Err(invalid) => Err(invalid.error.code()),
    };
    match parse_body_reading::<N>(body.as_bytes(), false, &JsonLimits::default()) {
        Ok(Body::Single(item)) => vec![shown(item)],
        Ok(Body::Batch(items)) => items.into_iter().map(shown).collect(),
        Err(e) => vec![Err(e.code())],
    }
}

#[test]
fn early_params_are_read_in_the_envelopes_pass_when_the_method_comes_first() {
    let read = |m: &str, n| Ok((m.to_owned(), Some(n), None));
    let raw = |m: &str, p: &str| Ok((m.to_owned(), None, Some(p.to_owned())));
    assert_eq!(early(r#"{"jsonrpc":"2.0","id":1,"method":"early/a","params":{"n":7}}"#), [read("early/a", 7)]);
    // After the params, escaped, or not one the reader names: raw.
    assert_eq!(
        early(r#"{"jsonrpc":"2.0","params":{"n":7},"method":"early/a","id":1}"#),
        [raw("early/a", r#"{"n":7}"#)]
    );
    assert_eq!(
        early(r#"{"jsonrpc":"2.0","id":1,"method":"early\/a","params":{"n":7}}"#),
        [raw("early/a", r#"{"n":7}"#)]
    );
    assert_eq!(early(r#"{"jsonrpc":"2.0","id":1,"method":"late","params":{"n":7}}"#), [raw("late", r#"{"n":7}"#)]);
    // A shape the reader refuses: the body read again, params raw (the method answers).
    for params in [r#"{"n":-1}"#, r#"{"n":1,"m":2}"#, r#"[7]"#, r#"{"n":1e400}"#] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"early/a","params":{params}}}"#);
        assert_eq!(early(&body), [raw("early/a", params)], "{params}");
    }
    // The envelope's own checks are unchanged.
    assert_eq!(early(r#"{"jsonrpc":"2.0","id":1,"method":"early/a","params":"x"}"#), [Err(-32600)]);
    assert_eq!(
        early(r#"{"jsonrpc":"2.0","id":1,"method":"early/a","params":{"n":1},"params":{"n":2}}"#),
        [Err(-32600)]
    );
    assert_eq!(early(r#"{"jsonrpc":"2.0","id":1,"method":"early/a","params":{"n":1},"method":"x"}"#), [Err(-32600)]);
    assert_eq!(
        early(r#"{"jsonrpc":"2.0","id":1,"method":"early/a","params":null}"#),
        [Ok(("early/a".to_owned(), None, None))]
    );
    assert_eq!(early(r#"{"jsonrpc":"2.0","id":1,"method":"early/a","params":{"n":1}"#), [Err(-32700)]);
    // A batch: each item read early where it can be; one refusal reads them all raw.
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"early/a","params":{"n":1}},
        {"jsonrpc":"2.0","id":2,"params":{"n":2},"method":"early/b"}, 3]"#;
    assert_eq!(early(batch), [read("early/a", 1), raw("early/b", r#"{"n":2}"#), Err(-32600)]);
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"early/a","params":{"n":1}},
        {"jsonrpc":"2.0","id":2,"method":"early/b","params":{"n":"2"}}]"#;
    assert_eq!(early(batch), [raw("early/a", r#"{"n":1}"#), raw("early/b", r#"{"n":"2"}"#)]);

    // Invalid JSON gets the raw reading's -32700.
    for body in [
        r#"{"jsonrpc":"2.0","id":1,"method":"early/a","params":{"n":7,}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"early/a","params":{"n":7"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"early/a","params":{"n":tru}}]"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"early/a","params":{"n":"x"}}, {"x": 01}]"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"early/a","params":{"n":7}} x"#,
    ] {
        let early = parse_body_reading::<N>(body.as_bytes(), false, &JsonLimits::default()).unwrap_err();
        let raw = parse_body(body.as_bytes(), false).unwrap_err();
        assert_eq!((early.code(), early.message()), (raw.code(), raw.message()), "{body}");
        assert_eq!(early.code(), -32700);
    }
}

/// One message as a body gave it: its id, method and whether it has params,
/// or its id and error message.
type Outcome = Result<(Option<String>, String, bool), (Option<String>, String)>;

/// What a body gives, message by message.
fn outcome(body: Result<Body<'_, N>, RpcError>) -> Vec<Outcome> {
    let one = |item: Result<Message<'_, N>, Invalid<'_>>| match item {
        Ok(Message::Request(r)) => {
            Ok((r.id.map(|i| i.get().to_owned()), r.method.into_owned(), r.early.is_some() || r.params.is_some()))
        }
        Ok(Message::Response { .. }) => panic!("a response"),
        Err(invalid) => Err((invalid.id.map(|i| i.get().to_owned()), invalid.error.message().to_owned())),
    };
    match body {
        Ok(Body::Single(item)) => vec![one(item)],
        Ok(Body::Batch(items)) => items.into_iter().map(one).collect(),
        Err(e) => vec![Err((None, format!("{} {}", e.code(), e.message())))],
    }
}

#[test]
fn jsonrpc_and_method_read_as_strings_answer_as_read_raw() {
    // `jsonrpc` and `method` are read as strings in the first pass; each
    // body gets what a message read item by item (raw) gets.
    let values = [
        r#""2.0""#,
        r#""2\u002e0""#,
        r#""early/a""#,
        r#""early\/a""#,
        r#""caf\u00e9""#,
        r#""\ud800""#,
        "null",
        "true",
        "1",
        "-1.5",
        "1e400",
        "-1e400",
        "[]",
        r#"[1,{"a":[null]}]"#,
        r#"{"a":{"b":1e400}}"#,
        r#""""#,
    ];
    for jsonrpc in values {
        for method in values {
            let body = format!(r#"{{"jsonrpc":{jsonrpc},"id":7,"method":{method},"params":{{"n":1}}}}"#);
            let raw: &RawValue = serde_json::from_str(&body).unwrap();
            let alone = parse_message(raw, false).map(Message::widen);
            let read = parse_body_reading::<N>(body.as_bytes(), false, &JsonLimits::default());
            assert_eq!(outcome(read), outcome(Ok(Body::Single(alone))), "{body}");
            let batch = format!("[{body},{body}]");
            let read = parse_body_reading::<N>(batch.as_bytes(), false, &JsonLimits::default());
            let expected = outcome(Ok(Body::Single(parse_message(raw, false).map(Message::widen))));
            assert_eq!(outcome(read), [expected.clone(), expected].concat(), "{batch}");
        }
    }
}
