//! Property tests on hostile input: arbitrary JSON (deep nesting, numbers
//! beyond `f64`, unicode and escapes, duplicate keys written as raw text),
//! arbitrary JSON-RPC-ish envelopes and batches, arbitrary header sets
//! (duplicates, contradictions, invalid values) sent to both endpoints of
//! the catalog, in-process through its `Router` and, for a few cases, over
//! real HTTP. Every answer must be well-formed: the checks of
//! `e2e_tests::wellformed` (shared with the fuzz harnesses in `fuzz/`).

use std::time::Duration;

use bytes::Bytes;
use e2e_tests::TestServer;
use e2e_tests::wellformed::{self, Collected, Sent};
use http::{HeaderMap, HeaderName, HeaderValue, Request};
use http_body_util::Full;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestRunner;
use rpc::Environment;
use rpc::server::Router;
use serde_json::Value;

/// How long a response may take to end (real time: the catalog answers in
/// milliseconds).
const DEADLINE: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------- JSON text

/// A JSON string literal of `s`.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// `s` with every character written as `\uXXXX`.
fn escaped(s: &str) -> String {
    let mut out = String::from("\"");
    let mut units = [0u16; 2];
    for c in s.chars() {
        for unit in c.encode_utf16(&mut units) {
            out.push_str(&format!("\\u{unit:04x}"));
        }
    }
    out.push('"');
    out
}

/// Member names: the ones the endpoints read, and any other.
fn key() -> impl Strategy<Value = String> {
    let known = select(vec![
        "jsonrpc",
        "id",
        "method",
        "params",
        "result",
        "error",
        "name",
        "arguments",
        "_meta",
        "cursor",
        "level",
        "protocolVersion",
        "query",
        "limit",
        "sort",
        "page",
        "io.modelcontextprotocol/protocolVersion",
        "progressToken",
    ]);
    prop_oneof![
        3 => known.prop_map(quoted),
        1 => any::<String>().prop_map(|s| quoted(&s)),
        1 => "[a-z]{1,8}".prop_map(|s| escaped(&s)),
    ]
}

/// A JSON value as text, including what `serde_json::Value` cannot say.
fn json() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        any::<bool>().prop_map(|b| b.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| if f.is_finite() { f.to_string() } else { "1e999".to_owned() }),
        (any::<bool>(), 1u8..=9, vec(0u8..=9, 19..300)).prop_map(|(negative, first, rest)| {
            let digits: String = std::iter::once(first).chain(rest).map(|d| char::from(b'0' + d)).collect();
            if negative { format!("-{digits}") } else { digits }
        }),
        select(vec!["1e400", "-0", "1E-400", "0.0000000000000000000001", "-9223372036854775809"])
            .prop_map(str::to_owned),
        any::<String>().prop_map(|s| quoted(&s)),
        any::<String>().prop_map(|s| escaped(&s)),
        select(vec![r#""\ud800""#, r#""\udc00\ud800""#, r#""\u0000""#, r#""\\\"\/\b\f\n\r\t""#])
            .prop_map(str::to_owned),
    ];
    leaf.prop_recursive(6, 48, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(|items| format!("[{}]", items.join(","))),
            vec((key(), inner.clone()), 0..6).prop_map(|members| {
                let members: Vec<String> = members.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
                format!("{{{}}}", members.join(","))
            }),
            (key(), inner.clone(), inner).prop_map(|(k, a, b)| format!("{{{k}:{a},{k}:{b}}}")),
        ]
    })
}

/// Nesting deeper than any parser's limit, of arrays or objects.
fn deep() -> impl Strategy<Value = String> {
    (1usize..5000, any::<bool>()).prop_map(|(n, objects)| {
        let (open, close) = if objects { ("{\"a\":", "}") } else { ("[", "]") };
        format!("{}1{}", open.repeat(n), close.repeat(n))
    })
}

// ---------------------------------------------------------------- envelopes

const METHODS: &[&str] = &[
    "tools/call",
    "tools/list",
    "initialize",
    "notifications/initialized",
    "ping",
    "logging/setLevel",
    "server/discover",
    "notifications/cancelled",
    "Catalog.get",
    "Catalog.search",
    "Catalog.list",
    "Catalog.categories",
    "Catalog.stats",
    "Catalog.count",
    "Catalog.reindex",
    "Catalog.rename",
    "Catalog.subscribe",
    "Activity.summary",
    "",
];

const TOOLS: &[&str] = &[
    "Catalog.search",
    "Catalog.get",
    "Catalog.list",
    "Catalog.categories",
    "Catalog.stats",
    "Catalog.count",
    "Catalog.rename",
    "Catalog.subscribe",
    "nope",
];

const VERSIONS: &[&str] = &["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2099-01-01"];

/// A string from `table`, or any JSON (a string or not).
fn one_of(table: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![4 => select(table).prop_map(quoted), 1 => json()]
}

fn object(members: Vec<Option<(&str, String)>>) -> String {
    let members: Vec<String> = members.into_iter().flatten().map(|(k, v)| format!("{}:{v}", quoted(k))).collect();
    format!("{{{}}}", members.join(","))
}

/// `$rpc` options, near-valid: a callback (callbacks are off in the app),
/// a timeout, `ignoreCache`, `rayId`, or anything.
fn rpc_options() -> impl Strategy<Value = String> {
    let callback = one_of(&["http://127.0.0.1:1/x", "http://169.254.169.254/", "file:///etc/passwd", ""]);
    let timeout = prop_oneof![Just("0.01".to_owned()), Just("120".to_owned()), Just("-1".to_owned()), json()];
    let flag = prop_oneof![Just("true".to_owned()), Just("false".to_owned()), json()];
    (
        proptest::option::of(callback),
        proptest::option::of(timeout),
        proptest::option::of(flag),
        proptest::option::of(json()),
        proptest::option::of(json()),
    )
        .prop_map(|(callback, timeout, ignore, ray, extra)| {
            object(vec![
                callback.map(|c| ("callback", c)),
                timeout.map(|t| ("timeout", t)),
                ignore.map(|i| ("ignoreCache", i)),
                ray.map(|r| ("rayId", r)),
                extra.map(|e| ("other", e)),
            ])
        })
}

/// Tool arguments: mostly the catalog's names, any values.
fn arguments() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        4 => any::<u32>().prop_map(|n| n.to_string()),
        4 => select(vec!["\"n1\"", "\"id_asc\"", "\"name\"", "-1", "4294967296", "1.5", "null", "\"\"", "\"a@b.example\""])
            .prop_map(str::to_owned),
        4 => json(),
        1 => rpc_options(),
    ];
    let name = prop_oneof![4 => select(vec!["query", "limit", "id", "sort", "page", "who", "offset", "name", "email", "$rpc"]).prop_map(str::to_owned), 1 => any::<String>()];
    vec((name, value), 0..4).prop_map(|args| {
        let members: Vec<String> = args.into_iter().map(|(k, v)| format!("{}:{v}", quoted(&k))).collect();
        format!("{{{}}}", members.join(","))
    })
}

/// `params._meta` of the 2026-07-28 era, near-valid.
fn meta() -> impl Strategy<Value = String> {
    let capabilities = prop_oneof![Just("{}".to_owned()), Just(r#"{"sampling":{}}"#.to_owned()), json()];
    let level = one_of(&["debug", "info", "error", "emergency", "loud"]);
    let token = prop_oneof![Just("\"t\"".to_owned()), Just("7".to_owned()), json()];
    (
        proptest::option::weighted(0.9, one_of(VERSIONS)),
        proptest::option::weighted(0.9, capabilities),
        proptest::option::of(level),
        proptest::option::of(token),
    )
        .prop_map(|(version, capabilities, level, token)| {
            object(vec![
                version.map(|v| ("io.modelcontextprotocol/protocolVersion", v)),
                capabilities.map(|c| ("io.modelcontextprotocol/clientCapabilities", c)),
                level.map(|l| ("io.modelcontextprotocol/logLevel", l)),
                token.map(|t| ("progressToken", t)),
            ])
        })
}

/// `params`: absent, `null`, MCP-shaped, named or positional arguments, or any JSON.
fn params() -> impl Strategy<Value = Option<String>> {
    let mcp = (
        proptest::option::of(meta()),
        proptest::option::of(one_of(TOOLS)),
        proptest::option::of(arguments()),
        proptest::option::of(one_of(VERSIONS)),
        proptest::option::of(one_of(&["debug", "info", "nope"])),
        proptest::option::of(json()),
    )
        .prop_map(|(meta, name, arguments, version, level, cursor)| {
            object(vec![
                meta.map(|m| ("_meta", m)),
                name.map(|n| ("name", n)),
                arguments.map(|a| ("arguments", a)),
                version.map(|v| ("protocolVersion", v)),
                Some(("capabilities", "{}".to_owned())),
                level.map(|l| ("level", l)),
                cursor.map(|c| ("cursor", c)),
            ])
        });
    prop_oneof![
        1 => Just(None),
        1 => Just(Some("null".to_owned())),
        4 => mcp.prop_map(Some),
        2 => arguments().prop_map(Some),
        1 => vec(json(), 0..3).prop_map(|items| Some(format!("[{}]", items.join(",")))),
        1 => json().prop_map(Some),
    ]
}

/// A JSON-RPC-ish message: each member right, wrong or absent, extra and
/// repeated members, in any order.
fn envelope() -> impl Strategy<Value = String> {
    let version = prop_oneof![6 => Just(Some("\"2.0\"".to_owned())), 1 => Just(None), 1 => json().prop_map(Some)];
    let id = prop_oneof![
        2 => Just(None),
        4 => any::<u16>().prop_map(|n| Some(n.to_string())),
        1 => any::<String>().prop_map(|s| Some(quoted(&s))),
        1 => json().prop_map(Some),
    ];
    let method =
        prop_oneof![6 => select(METHODS).prop_map(quoted), 1 => any::<String>().prop_map(|s| quoted(&s)), 1 => json()];
    (version, id, method, params(), vec((key(), json()), 0..3), any::<prop::sample::Index>()).prop_map(
        |(version, id, method, params, extra, rotate)| {
            let mut members: Vec<String> = Vec::new();
            members.extend(version.map(|v| format!("\"jsonrpc\":{v}")));
            members.extend(id.map(|i| format!("\"id\":{i}")));
            members.push(format!("\"method\":{method}"));
            members.extend(params.map(|p| format!("\"params\":{p}")));
            members.extend(extra.into_iter().map(|(k, v)| format!("{k}:{v}")));
            let by = rotate.index(members.len());
            members.rotate_left(by);
            format!("{{{}}}", members.join(","))
        },
    )
}

/// A request body: an envelope, a batch, any JSON, deep nesting, a cut
/// envelope, or bytes.
fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => envelope().prop_map(String::into_bytes),
        2 => vec(envelope(), 0..5).prop_map(|items| format!("[{}]", items.join(",")).into_bytes()),
        2 => json().prop_map(String::into_bytes),
        1 => deep().prop_map(String::into_bytes),
        1 => (envelope(), any::<prop::sample::Index>()).prop_map(|(e, at)| e.as_bytes()[..at.index(e.len() + 1)].to_vec()),
        1 => vec(any::<u8>(), 0..64),
    ]
}

// ---------------------------------------------------------------- headers

const HEADER_NAMES: &[&str] = &[
    "host",
    "origin",
    "content-type",
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "mcp-param-id",
    "authorization",
    "ufo-rpc-token",
    "content-length",
    "transfer-encoding",
    "x-forwarded-proto",
];

const HEADER_VALUES: &[&str] = &[
    "localhost",
    "127.0.0.1:8080",
    "evil.example",
    "http://localhost",
    "http://evil.example",
    "null",
    "application/json",
    "text/plain",
    "text/event-stream",
    "application/json, text/event-stream",
    "*/*",
    "application/json;q=0",
    "2026-07-28",
    "2025-06-18",
    "2025-03-26",
    "tools/call",
    "tools/list",
    "Catalog.get",
    "Bearer x",
    "0",
    "18446744073709551616",
    "4194305",
    "chunked",
    "=?base64?Q2F0YWxvZy5nZXQ=?=",
    "=?base64?%?=",
    "",
];

/// Extra headers: realistic names, realistic or arbitrary values (bytes a
/// header value cannot hold are dropped), appended or replacing.
fn headers() -> impl Strategy<Value = Vec<(bool, &'static str, Vec<u8>)>> {
    let value = prop_oneof![
        4 => select(HEADER_VALUES).prop_map(|v| v.as_bytes().to_vec()),
        1 => vec(any::<u8>(), 0..24),
    ];
    vec((any::<bool>(), select(HEADER_NAMES), value), 0..6)
}

fn header_value(bytes: &[u8]) -> HeaderValue {
    let kept: Vec<u8> = bytes.iter().copied().filter(|&b| b == b'\t' || (b >= 0x20 && b != 0x7f)).collect();
    HeaderValue::from_bytes(&kept).expect("visible bytes are a header value")
}

/// The headers a client sends with `body`: `Host`, JSON, both media types,
/// and for a 2026-07-28 body the mirrored ones.
fn standard(body: &[u8]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("host", HeaderValue::from_static("localhost"));
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    headers.insert("accept", HeaderValue::from_static("application/json, text/event-stream"));
    let json: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let visible = |v: &Value| v.as_str().and_then(|s| HeaderValue::from_str(s).ok());
    if let Some(version) = visible(&json["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]) {
        headers.insert("mcp-protocol-version", version);
        if let Some(method) = visible(&json["method"]) {
            headers.insert("mcp-method", method);
        }
        if let Some(name) = visible(&json["params"]["name"]) {
            headers.insert("mcp-name", name);
        }
    }
    headers
}

fn apply(headers: &mut HeaderMap, extra: &[(bool, &'static str, Vec<u8>)]) {
    for (replace, name, value) in extra {
        let name = HeaderName::from_static(name);
        if *replace {
            headers.insert(name, header_value(value));
        } else {
            headers.append(name, header_value(value));
        }
    }
}

// ---------------------------------------------------------------- running

/// Runs `test` on values of the strategy `make` builds (the default case
/// count, or `cases`), in a thread with a large stack: proptest's nested
/// strategies use more than a test thread's 2 MiB in debug builds.
fn check<S, F>(cases: Option<u32>, make: fn() -> S, test: F)
where
    S: Strategy + 'static,
    S::Value: std::fmt::Debug,
    F: Fn(S::Value) -> Result<(), TestCaseError> + Send + 'static,
{
    let mut config = ProptestConfig { failure_persistence: None, ..ProptestConfig::default() };
    if let Some(cases) = cases {
        config.cases = cases;
    }
    let outcome = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || TestRunner::new(config).run(&make(), test).map_err(|e| e.to_string()))
        .expect("a test thread")
        .join()
        .expect("the runner does not panic");
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime")
}

/// The application, shared by the cases (sessions are closed by the test
/// that opens them).
fn app() -> Router {
    static APP: std::sync::OnceLock<Router> = std::sync::OnceLock::new();
    APP.get_or_init(|| catalog::app(Environment::Prod).expect("the catalog builds")).clone()
}

/// Sends a request in-process and checks the answer.
fn exchange(
    runtime: &tokio::runtime::Runtime,
    method: &str,
    path: &str,
    headers: HeaderMap,
    body: &[u8],
) -> Result<Collected, TestCaseError> {
    let size = path.len() + headers.iter().map(|(n, v)| n.as_str().len() + v.len()).sum::<usize>() + body.len();
    let sent = Sent { method, body, size };
    let mut request =
        Request::builder().method(method).uri(path).body(Full::new(Bytes::copy_from_slice(body))).expect("a request");
    *request.headers_mut() = headers;
    let described = format!("{method} {path} {:?} {:?}", request.headers(), String::from_utf8_lossy(body));
    let got = runtime
        .block_on(wellformed::exchange(app(), request, DEADLINE, sent.max_response()))
        .map_err(|why| TestCaseError::fail(format!("{why}\nrequest: {described}")))?;
    wellformed::check_or_describe(&sent, &got, &described).map_err(TestCaseError::fail)?;
    Ok(got)
}

#[test]
fn rpc_answers_any_body_and_headers() {
    let make = || (select(vec!["/rpc", "/rpc/v2", "/rpc/v3"]), body(), headers());
    check(None, make, |(path, body, extra)| {
        let mut headers = standard(&body);
        apply(&mut headers, &extra);
        exchange(&runtime(), "POST", path, headers, &body).map(drop)
    });
}

#[test]
fn mcp_answers_any_body_and_headers() {
    let make = || (select(vec!["/mcp/v1", "/mcp/v2", "/mcp"]), body(), headers());
    check(None, make, |(path, body, extra)| {
        let mut headers = standard(&body);
        apply(&mut headers, &extra);
        exchange(&runtime(), "POST", path, headers, &body).map(drop)
    });
}

#[test]
fn both_endpoints_answer_any_method_and_headers() {
    let make = || {
        (
            select(vec!["GET", "HEAD", "DELETE", "PUT", "OPTIONS", "PATCH", "POST"]),
            select(vec!["/rpc", "/rpc/v2", "/mcp/v1", "/mcp/v2", "/nowhere", "/it's"]),
            any::<bool>(),
            headers(),
        )
    };
    check(None, make, |(method, path, with_standard, extra)| {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        let mut headers = if with_standard { standard(body) } else { HeaderMap::new() };
        apply(&mut headers, &extra);
        exchange(&runtime(), method, path, headers, body).map(drop)
    });
}

/// Inside a handshake-era session (2025-03-26: batches allowed), any
/// messages with any extra headers; then the session is closed.
#[test]
fn a_session_answers_any_message() {
    let make = || (select(vec!["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]), vec(body(), 1..4), headers());
    check(None, make, |(version, bodies, extra)| {
        let runtime = runtime();
        let initialize = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"props","version":"1"}}}}}}"#
        );
        let got = exchange(&runtime, "POST", "/mcp/v1", standard(b""), initialize.as_bytes())?;
        prop_assert_eq!(got.status, 200);
        let session = got.headers.get("mcp-session-id").expect("a session id").clone();
        let in_session = || {
            let mut headers = standard(b"");
            headers.insert("mcp-session-id", session.clone());
            if version >= "2025-06-18" {
                headers.insert("mcp-protocol-version", HeaderValue::from_static(version));
            }
            headers
        };
        for body in &bodies {
            let mut headers = in_session();
            apply(&mut headers, &extra);
            exchange(&runtime, "POST", "/mcp/v1", headers, body)?;
        }
        let closed = exchange(&runtime, "DELETE", "/mcp/v1", in_session(), b"")?;
        prop_assert_eq!(closed.status, 200);
        Ok(())
    });
}

/// Over real HTTP (hyper's framing included): any body to both
/// endpoints, with the extra headers a client can send and hyper frames.
#[test]
fn over_http_both_endpoints_answer_any_body() {
    let make = || (select(vec!["/rpc", "/rpc/v2", "/mcp/v1"]), body(), headers());
    check(Some(24), make, |(path, body, extra)| {
        runtime().block_on(async {
            let server = TestServer::catalog(Environment::Prod).await;
            let mut headers = standard(&body);
            headers.remove("host"); // the real one: 127.0.0.1:PORT
            let framing = |name: &str| matches!(name, "content-length" | "transfer-encoding" | "host");
            let extra: Vec<_> = extra.into_iter().filter(|(_, name, _)| !framing(name)).collect();
            apply(&mut headers, &extra);
            let size = path.len() + headers.iter().map(|(n, v)| n.as_str().len() + v.len()).sum::<usize>() + body.len();
            let response = reqwest::Client::new()
                .post(server.url(path))
                .headers(headers)
                .body(body.clone())
                .send()
                .await
                .map_err(|e| TestCaseError::fail(format!("request failed: {e}")))?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let bytes = tokio::time::timeout(DEADLINE, response.bytes())
                .await
                .map_err(|_| TestCaseError::fail("the body did not end"))?
                .map_err(|e| TestCaseError::fail(format!("the body failed: {e}")))?;
            let got = Collected { status, headers, body: bytes.to_vec() };
            let sent = Sent { method: "POST", body: &body, size };
            wellformed::check_or_describe(&sent, &got, &String::from_utf8_lossy(&body)).map_err(TestCaseError::fail)
        })
    });
}
