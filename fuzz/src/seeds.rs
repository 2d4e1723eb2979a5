//! The seed corpus: small, meaningful inputs of each target, written to
//! `corpus/<target>/` (`FUZZ_WRITE_SEEDS=1 cargo test --manifest-path
//! fuzz/Cargo.toml seeds_are_committed`) and replayed by the tests. The
//! seeds of the HTTP targets say which statuses their requests get, so a
//! seed that stops reaching the code it was written for is noticed.

use crate::script::{ABSOLUTE, CHUNKED, Encoder, FAILING, FOREIGN, Focus, MCP_TARGETS, RPC_TARGETS, STANDARD};

/// One seed.
#[derive(Debug)]
pub struct Seed {
    /// Its file name.
    pub name: &'static str,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// The statuses its requests get (HTTP targets).
    pub expect: Option<&'static [u16]>,
}

/// The seeds of every target.
pub fn all() -> Vec<(&'static str, Vec<Seed>)> {
    vec![("jsonrpc_message", jsonrpc()), ("mcp_request", mcp()), ("rpc_request", rpc()), ("stdio_lines", stdio())]
}

/// The statuses the requests of `bytes` get, run as `target`'s input.
pub fn statuses(target: &str, bytes: &[u8]) -> Vec<u16> {
    let focus = if target == "rpc_request" { Focus::Rpc } else { Focus::Mcp };
    crate::app::statuses(bytes, focus)
}

fn raw(name: &'static str, body: &str) -> Seed {
    Seed { name, bytes: body.as_bytes().to_vec(), expect: None }
}

fn jsonrpc() -> Vec<Seed> {
    vec![
        raw("call_named.json", r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":7}}"#),
        raw("call_positional.json", r#"{"jsonrpc":"2.0","id":"a","method":"Catalog.search","params":["n",3]}"#),
        raw("notification.json", r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
        raw("null_id.json", r#"{"jsonrpc":"2.0","id":null,"method":"ping","params":null}"#),
        raw("batch.json", r#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},1,[]]"#),
        raw("empty_batch.json", " [ ] "),
        raw("response.json", r#"{"jsonrpc":"2.0","id":3,"result":{"ok":true}}"#),
        raw("error_response.json", r#"{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"m"}}"#),
        raw("duplicate_params.json", r#"{"jsonrpc":"2.0","id":1,"method":"a","params":{},"params":[]}"#),
        raw("duplicate_inner_keys.json", r#"{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":1,"x":2}}"#),
        raw("escaped_members.json", r#"{"\u006asonrpc":"2\u002e0","\u0069d":1,"method":"\u0074ools/list"}"#),
        raw(
            "huge_numbers.json",
            r#"{"jsonrpc":"2.0","id":1e400,"method":"a","params":[123456789012345678901234567890,-1e-400]}"#,
        ),
        raw("bad_id.json", r#"{"jsonrpc":"2.0","id":{"a":1},"method":"a"}"#),
        raw("bad_version.json", r#"{"jsonrpc":"1.0","id":1,"method":"a"}"#),
        raw("bad_params.json", r#"{"jsonrpc":"2.0","id":1,"method":"a","params":"x"}"#),
        raw("method_not_string.json", r#"{"jsonrpc":"2.0","id":1,"method":7}"#),
        raw("trailing.json", r#"{"jsonrpc":"2.0","id":1,"method":"a"} x"#),
        raw("truncated.json", r#"{"jsonrpc":"2.0","id":1,"method":"a","params":{"#),
        raw("scalar.json", "42"),
        raw(
            "unicode.json",
            "{\"jsonrpc\":\"2.0\",\"id\":\"\u{e9}\u{1f600}\",\"method\":\"caf\u{e9}\",\"params\":[\"\\ud83d\\ude00\"]}",
        ),
        raw("lone_surrogate.json", r#"{"jsonrpc":"2.0","id":"\ud800","method":"a"}"#),
        raw(
            "deep.json",
            &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"a","params":{}{}}}"#, "[".repeat(300), "]".repeat(300)),
        ),
        raw("whitespace.json", " \t\r\n{\"jsonrpc\" : \"2.0\" , \"method\" : \"a\"}\n"),
        raw("form_feed.json", "\u{c}{\"jsonrpc\":\"2.0\",\"method\":\"a\"}"),
        raw("empty.json", ""),
    ]
}

/// A 2026-07-28 request: `params` are the members besides `_meta`.
fn modern(method: &str, params: &str) -> String {
    modern_meta(method, "", params)
}

/// A 2026-07-28 request whose `_meta` has the members `meta` too.
fn modern_meta(method: &str, meta: &str, params: &str) -> String {
    let comma = if params.is_empty() { "" } else { "," };
    let meta_comma = if meta.is_empty() { "" } else { "," };
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"seed","version":"1.0"}}{meta_comma}{meta}}}{comma}{params}}}}}"#
    )
}

fn call(method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#)
}

struct Http {
    targets: &'static [&'static str],
}

impl Http {
    /// One standard request to `target` with `body` after a handshake at `handshake`.
    fn post(&self, handshake: Option<&str>, target: &str, body: &str) -> Vec<u8> {
        Encoder::new(handshake).request("POST", target, self.targets, STANDARD, &[], body).finish()
    }

    /// One request with header operations after the standard ones.
    fn with(&self, verb: &str, target: &str, flags: u8, headers: &[(u8, &str, &str)], body: &str) -> Vec<u8> {
        Encoder::new(None).request(verb, target, self.targets, flags, headers, body).finish()
    }
}

fn seed(name: &'static str, bytes: Vec<u8>, expect: &'static [u16]) -> Seed {
    Seed { name, bytes, expect: Some(expect) }
}

fn mcp() -> Vec<Seed> {
    let h = Http { targets: MCP_TARGETS };
    let stats = r#""name":"Catalog.stats","arguments":{}"#;
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"seed","version":"1"}}}"#;
    vec![
        seed("modern_tools_list", h.post(None, "/mcp/v1", &modern("tools/list", "")), &[200]),
        seed("modern_tools_list_v2", h.post(None, "/mcp/v2", &modern("tools/list", "")), &[200]),
        seed("modern_discover", h.post(None, "/mcp/v1", &modern("server/discover", "")), &[200]),
        seed("modern_call_get", h.post(None, "/mcp/v1", &modern("tools/call", r#""name":"Catalog.get","arguments":{"id":7}"#)), &[200]),
        seed("modern_call_not_found", h.post(None, "/mcp/v1", &modern("tools/call", r#""name":"Catalog.get","arguments":{"id":999}"#)), &[200]),
        seed("modern_call_invalid_args", h.post(None, "/mcp/v1", &modern("tools/call", r#""name":"Catalog.list","arguments":{"sort":"up","page":-1}"#)), &[400]),
        seed("modern_call_unknown_tool", h.post(None, "/mcp/v1", &modern("tools/call", r#""name":"nope","arguments":{}"#)), &[400]),
        seed("modern_call_unicode_name", h.post(None, "/mcp/v1", &modern("tools/call", r#""name":"caf\u00e9","arguments":{}"#)), &[400]),
        seed("modern_stats_progress", h.post(None, "/mcp/v1", &modern_meta("tools/call", r#""progressToken":"p""#, stats)), &[200]),
        seed("modern_stats_log_level", h.post(None, "/mcp/v1", &modern_meta("tools/call", r#""io.modelcontextprotocol/logLevel":"debug""#, stats)), &[200]),
        seed("modern_stats_bad_token", h.post(None, "/mcp/v1", &modern_meta("tools/call", r#""progressToken":{}"#, stats)), &[400]),
        seed("modern_bad_log_level", h.post(None, "/mcp/v1", &modern_meta("tools/list", r#""io.modelcontextprotocol/logLevel":7"#, "")), &[400]),
        seed("modern_bad_cursor", h.post(None, "/mcp/v1", &modern("tools/list", r#""cursor":"zz""#)), &[400]),
        seed("modern_notification", h.post(None, "/mcp/v1", &modern("notifications/progress", "").replace(r#""id":1,"#, "")), &[202]),
        seed("modern_initialize", h.post(None, "/mcp/v1", &modern("initialize", "")), &[404]),
        seed("modern_unknown_method", h.post(None, "/mcp/v1", &modern("resources/frobnicate", "")), &[404]),
        seed("modern_unsupported_version", h.with("POST", "/mcp/v1", STANDARD, &[], &modern("tools/list", "").replace("2026-07-28", "2099-01-01")), &[400]),
        seed("modern_method_mismatch", h.with("POST", "/mcp/v1", STANDARD, &[(1, "mcp-method", "tools/call")], &modern("tools/list", "")), &[400]),
        seed("modern_method_twice", h.with("POST", "/mcp/v1", STANDARD, &[(0, "mcp-method", "@method")], &modern("tools/list", "")), &[400]),
        seed("modern_name_base64", h.with("POST", "/mcp/v1", STANDARD, &[(1, "mcp-name", "@base64:@name")], &modern("tools/call", r#""name":"Catalog.get","arguments":{"id":1}"#)), &[200]),
        seed("modern_version_header_missing", h.with("POST", "/mcp/v1", STANDARD, &[(2, "mcp-protocol-version", "")], &modern("tools/list", "")), &[400]),
        seed("modern_meta_not_object", h.with("POST", "/mcp/v1", STANDARD, &[(1, "mcp-protocol-version", "2026-07-28"), (1, "mcp-method", "@method")], &call("tools/list", r#"{"_meta":[1]}"#)), &[400]),
        seed("modern_null_id", h.post(None, "/mcp/v1", &modern("tools/list", "").replace(r#""id":1"#, r#""id":null"#)), &[400]),
        seed("modern_huge_id", h.post(None, "/mcp/v1", &modern("tools/list", "").replace(r#""id":1"#, r#""id":1e400"#)), &[200]),
        seed("modern_accept_html", h.with("POST", "/mcp/v1", STANDARD, &[(1, "accept", "text/plain")], &modern("tools/list", "")), &[406]),
        seed("modern_sse_only", h.with("POST", "/mcp/v1", STANDARD, &[(1, "accept", "text/event-stream")], &modern("tools/call", r#""name":"Catalog.get","arguments":{"id":2}"#)), &[200]),
        seed("handshake_initialize", h.post(None, "/mcp/v1", init), &[200]),
        seed("handshake_tools_list", h.post(Some("2025-06-18"), "/mcp/v1", &call("tools/list", "{}")), &[200]),
        seed("handshake_call_search", h.post(Some("2025-11-25"), "/mcp/v1", &call("tools/call", r#"{"name":"Catalog.search","arguments":{"query":"n1","limit":3}}"#)), &[200]),
        seed("modern_call_v2_count", h.post(None, "/mcp/v2", &modern("tools/call", r#""name":"Catalog.count""#)), &[200]),
        seed("handshake_old_revision", h.post(Some("2024-11-05"), "/mcp/v1", &call("tools/call", r#"{"name":"Catalog.categories","arguments":{}}"#)), &[200]),
        seed("handshake_stats_progress", h.post(Some("2025-06-18"), "/mcp/v1", &call("tools/call", r#"{"name":"Catalog.stats","arguments":{},"_meta":{"progressToken":7}}"#)), &[200]),
        seed(
            "handshake_set_level_then_stats",
            Encoder::new(Some("2025-11-25"))
                .request("POST", "/mcp/v1", MCP_TARGETS, STANDARD, &[], call("logging/setLevel", r#"{"level":"debug"}"#))
                .request("POST", "/mcp/v1", MCP_TARGETS, STANDARD, &[], call("tools/call", r#"{"name":"Catalog.stats"}"#))
                .finish(),
            &[200, 200],
        ),
        seed("handshake_batch", h.post(Some("2025-03-26"), "/mcp/v1", r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":3}}},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}},{"jsonrpc":"2.0","id":2,"method":"ping"},7,{"jsonrpc":"2.0","id":3,"result":{}}]"#), &[200]),
        seed("handshake_batch_not_allowed", h.post(Some("2025-06-18"), "/mcp/v1", r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#), &[400]),
        seed("handshake_batch_of_notifications", h.post(Some("2025-03-26"), "/mcp/v1", r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#), &[202]),
        seed("handshake_initialize_in_batch", h.post(Some("2025-03-26"), "/mcp/v1", &format!("[{init}]")), &[200]),
        seed("handshake_initialize_twice", h.post(Some("2025-03-26"), "/mcp/v1", init), &[200]),
        seed("handshake_cancel", h.post(Some("2025-06-18"), "/mcp/v1", r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x","reason":"r"}}"#), &[202]),
        seed("handshake_response", h.post(Some("2025-06-18"), "/mcp/v1", r#"{"jsonrpc":"2.0","id":9,"result":{}}"#), &[202]),
        seed("handshake_wrong_version_header", Encoder::new(Some("2025-06-18")).request("POST", "/mcp/v1", MCP_TARGETS, STANDARD, &[(1, "mcp-protocol-version", "2099-01-01")], call("ping", "{}")).finish(), &[400]),
        seed("handshake_unknown_session", h.with("POST", "/mcp/v1", STANDARD, &[(1, "mcp-session-id", "@raw:nope")], &call("tools/list", "{}")), &[404]),
        seed("handshake_no_session", h.post(None, "/mcp/v1", &call("tools/list", "{}")), &[400]),
        seed("handshake_delete", Encoder::new(Some("2025-06-18")).request("DELETE", "/mcp/v1", MCP_TARGETS, STANDARD, &[], "").finish(), &[200]),
        seed("handshake_session_other_version", h.post(Some("2025-06-18"), "/mcp/v2", &call("tools/list", "{}")), &[404]),
        seed("get_stream", h.with("GET", "/mcp/v1", STANDARD, &[], ""), &[400]),
        seed("put", h.with("PUT", "/mcp/v1", STANDARD, &[], ""), &[405]),
        seed("options_preflight", h.with("OPTIONS", "/mcp/v1", STANDARD, &[(1, "origin", "http://localhost:8080"), (0, "access-control-request-method", "POST")], ""), &[204]),
        seed("foreign_host", h.with("POST", "/mcp/v1", STANDARD, &[(1, "host", "evil.example")], &modern("tools/list", "")), &[403]),
        seed("foreign_origin", h.with("POST", "/mcp/v1", STANDARD, &[(1, "origin", "http://evil.example")], &modern("tools/list", "")), &[403]),
        seed("two_hosts", h.with("POST", "/mcp/v1", STANDARD, &[(0, "host", "127.0.0.1:8080")], &modern("tools/list", "")), &[403]),
        seed("no_host", h.with("POST", "/mcp/v1", STANDARD, &[(2, "host", "")], &modern("tools/list", "")), &[403]),
        seed("absolute_target", h.with("POST", "/mcp/v1", STANDARD | ABSOLUTE, &[(2, "host", "")], &modern("tools/list", "")), &[200]),
        seed("absolute_foreign_target", h.with("POST", "/mcp/v1", STANDARD | FOREIGN, &[], &modern("tools/list", "")), &[403]),
        seed("text_body", h.with("POST", "/mcp/v1", STANDARD, &[(1, "content-type", "text/plain")], &modern("tools/list", "")), &[415]),
        seed("huge_content_length", h.with("POST", "/mcp/v1", STANDARD, &[(1, "content-length", "18446744073709551616")], &modern("tools/list", "")), &[200]),
        seed("too_long_content_length", h.with("POST", "/mcp/v1", STANDARD, &[(1, "content-length", "4194305")], &modern("tools/list", "")), &[413]),
        seed("chunked_body", h.with("POST", "/mcp/v1", STANDARD | CHUNKED, &[(1, "transfer-encoding", "chunked")], &modern("tools/list", "")), &[200]),
        seed("failing_body", h.with("POST", "/mcp/v1", STANDARD | FAILING, &[], &modern("tools/list", "")), &[400]),
        seed("parse_error", h.post(None, "/mcp/v1", "{\"jsonrpc\":"), &[400]),
        seed("empty_body", h.post(None, "/mcp/v1", ""), &[400]),
        seed("unknown_version_path", h.post(None, "/mcp/v3", &modern("tools/list", "")), &[404]),
        seed("nested_path", h.post(None, "/mcp/v1/extra", &modern("tools/list", "")), &[404]),
        seed("no_endpoint", h.post(None, "/elsewhere", ""), &[404]),
        seed("path_with_quote", h.post(None, "/it's", ""), &[404]),
        seed("deep_arguments", Encoder::new(None).generated(0, STANDARD, 4, &[0x88, 0x13, 6]).finish(), &[400]),
        seed("large_body", Encoder::new(None).generated(0, STANDARD, 6, &[65]).finish(), &[413]),
        seed("generated_message", Encoder::new(None).generated(0, STANDARD, 1, b"\x00\x03\x01\x00\x00\x00\x02\x01").finish(), &[400]),
    ]
}

fn rpc() -> Vec<Seed> {
    let h = Http { targets: RPC_TARGETS };
    let post = |target: &str, body: &str| h.post(None, target, body);
    vec![
        seed("get_named", post("/rpc", &call("Catalog.get", r#"{"id":7}"#)), &[200]),
        seed("get_positional", post("/rpc", &call("Catalog.get", "[8]")), &[200]),
        seed("get_missing", post("/rpc", &call("Catalog.get", r#"{"id":1000}"#)), &[200]),
        seed("search_defaults", post("/rpc", &call("Catalog.search", r#"{"query":"n"}"#)), &[200]),
        seed("search_max_limit", post("/rpc", &call("Catalog.search", r#"{"query":"","limit":4294967295}"#)), &[200]),
        seed("list_last_page", post("/rpc", &call("Catalog.list", r#"{"sort":"name","page":4294967295}"#)), &[200]),
        seed("list_bad_sort", post("/rpc", &call("Catalog.list", r#"{"sort":"up","extra":1}"#)), &[200]),
        seed(
            "v2_search_offset",
            post("/rpc/v2", &call("Catalog.search", r#"{"query":"n","limit":4294967295,"offset":4294967295}"#)),
            &[200],
        ),
        seed("v2_list_removed", post("/rpc/v2", &call("Catalog.list", r#"{"sort":"name"}"#)), &[200]),
        seed("stats_with_context", post("/rpc", &call("Catalog.stats", "{}")), &[200]),
        seed("reindex_admin", post("/rpc", &call("Catalog.reindex", "null")), &[200]),
        seed("ping_default", post("/rpc", &call("ping", "[]")), &[200]),
        seed("notification", post("/rpc", r#"{"jsonrpc":"2.0","method":"Catalog.reindex"}"#), &[204]),
        seed(
            "batch_mixed",
            post(
                "/rpc",
                r#"[{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":1}},{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","id":"x","method":"nope"},1,{"jsonrpc":"2.0","id":3,"result":1}]"#,
            ),
            &[200],
        ),
        seed(
            "batch_of_notifications",
            post("/rpc", r#"[{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","method":"ping"}]"#),
            &[204],
        ),
        seed("batch_empty", post("/rpc", "[]"), &[200]),
        seed("batch_too_long", post("/rpc", &format!("[{}1]", "1,".repeat(100))), &[200]),
        seed("parse_error", post("/rpc", r#"{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]"#), &[200]),
        seed("method_not_found", post("/rpc", &call("Catalog.nope", "{}")), &[200]),
        seed("params_string", post("/rpc", &call("Catalog.get", r#""x""#)), &[200]),
        seed(
            "params_deep",
            post("/rpc", &call("Catalog.get", &format!(r#"{{"id":{}1{}}}"#, "[".repeat(200), "]".repeat(200)))),
            &[200],
        ),
        seed("params_duplicate_key", post("/rpc", &call("Catalog.get", r#"{"id":1,"id":"x"}"#)), &[200]),
        seed("params_huge_number", post("/rpc", &call("Catalog.get", r#"{"id":1e400}"#)), &[200]),
        seed("params_float_id", post("/rpc", &call("Catalog.get", r#"{"id":7.0}"#)), &[200]),
        seed("id_exp", post("/rpc", r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#), &[200]),
        seed("id_object", post("/rpc", r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#), &[200]),
        seed("escaped_version", post("/rpc", r#"{"jsonrpc":"2\u002e0","id":"\u00e9","method":"\u0070ing"}"#), &[200]),
        seed(
            "non_utf8",
            Encoder::new(None)
                .request(
                    "POST",
                    "/rpc",
                    RPC_TARGETS,
                    STANDARD,
                    &[],
                    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
                )
                .finish(),
            &[200],
        ),
        seed("openrpc", h.with("GET", "/rpc", STANDARD, &[], ""), &[200]),
        seed(
            "openrpc_v2_forwarded",
            h.with("GET", "/rpc/v2", STANDARD, &[(0, "x-forwarded-proto", "https")], ""),
            &[200],
        ),
        seed("openrpc_head", h.with("HEAD", "/rpc", STANDARD, &[], ""), &[200]),
        seed("unknown_version", post("/rpc/v3", &call("ping", "[]")), &[404]),
        seed("version_zero", post("/rpc/v0", &call("ping", "[]")), &[404]),
        seed("put", h.with("PUT", "/rpc", STANDARD, &[], ""), &[405]),
        seed(
            "too_long_content_length",
            h.with("POST", "/rpc", STANDARD, &[(1, "content-length", "4194305")], &call("ping", "[]")),
            &[413],
        ),
        seed("failing_body", h.with("POST", "/rpc", STANDARD | FAILING, &[], &call("ping", "[]")), &[400]),
        seed(
            "chunked_body",
            h.with("POST", "/rpc", STANDARD | CHUNKED, &[], &call("Catalog.get", r#"{"id":3}"#)),
            &[200],
        ),
        seed("no_headers", h.with("POST", "/rpc", 0, &[], &call("ping", "[]")), &[403]),
        seed("large_body", Encoder::new(None).generated(0, STANDARD, 6, &[65]).finish(), &[413]),
        seed("deep_batch", Encoder::new(None).generated(0, STANDARD, 4, &[0x10, 0x27, 8]).finish(), &[200]),
        // The execution pipeline: `$rpc` options, locks, cache relations, rules.
        seed(
            "rpc_options",
            post("/rpc", &call("Catalog.get", r#"{"id":7,"$rpc":{"timeout":2.5,"ignoreCache":true,"rayId":"r"}}"#)),
            &[200],
        ),
        seed(
            "rpc_callback_refused",
            post("/rpc", &call("ping", r#"{"$rpc":{"callback":"http://127.0.0.1:1/x"}}"#)),
            &[200],
        ),
        seed("rpc_options_bad", post("/rpc", &call("ping", r#"{"$rpc":{"timeout":-1,"nope":[{}]}}"#)), &[200]),
        seed(
            "rename_locked_batch",
            post(
                "/rpc",
                r#"[{"jsonrpc":"2.0","id":1,"method":"Catalog.rename","params":{"id":3,"name":"x"}},{"jsonrpc":"2.0","id":2,"method":"Catalog.rename","params":{"id":3,"name":"y"}},{"jsonrpc":"2.0","id":3,"method":"Catalog.get","params":{"id":3}}]"#,
            ),
            &[200],
        ),
        seed("reindex_paused", post("/rpc", &call("Catalog.reindex", r#"{"pause_ms":4000}"#)), &[200]),
        seed(
            "subscribe_rules",
            post(
                "/rpc",
                &call("Catalog.subscribe", r#"{"id":1,"email":"a@b.example","digest":"daily","until":"2027-02-30"}"#),
            ),
            &[200],
        ),
        seed(
            "unsubscribe_uuid",
            post("/rpc", &call("Catalog.unsubscribe", r#"["5b6f0c1e-0000-4000-8000-000000000001"]"#)),
            &[200],
        ),
    ]
}

/// Lines for the stdio transport: `lines` joined, each ending with `\n`.
fn lines(name: &'static str, lines: &[&str]) -> Seed {
    let mut bytes = Vec::new();
    for line in lines {
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
    }
    Seed { name, bytes, expect: None }
}

const STDIO_INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"fuzz","version":"1"}}}"#;
const STDIO_INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const STDIO_MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"fuzz","version":"1"}}"#;

fn stdio() -> Vec<Seed> {
    let modern = |id: u32, method: &str, params: &str| {
        let params =
            if params.is_empty() { STDIO_MODERN_META.to_owned() } else { format!("{params},{STDIO_MODERN_META}") };
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}}}}}"#)
    };
    let discover = modern(1, "server/discover", "");
    let call = modern(2, "tools/call", r#""name":"Catalog.get","arguments":{"id":7}"#);
    let listen =
        modern(3, "subscriptions/listen", r#""notifications":{"resourceSubscriptions":["catalog://products/4"]}"#);
    let rename = modern(4, "tools/call", r#""name":"Catalog.rename","arguments":{"id":4,"name":"x"}"#);
    let unsubscribe =
        modern(5, "tools/call", r#""name":"Catalog.unsubscribe_all","arguments":{"email":"a@example.com"}"#);
    vec![
        lines(
            "session_calls.jsonl",
            &[
                STDIO_INITIALIZE,
                STDIO_INITIALIZED,
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":7}}}"#,
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":"seven"}}}"#,
                r#"{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"catalog://products/7"}}"#,
                r#"{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"Catalog.review","arguments":{"name":"n7"}}}"#,
                r#"{"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"Catalog.review"},"argument":{"name":"name","value":"n9"}}}"#,
            ],
        ),
        lines(
            "session_progress_logs_subscription.jsonl",
            &[
                STDIO_INITIALIZE,
                STDIO_INITIALIZED,
                r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}"#,
                r#"{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"catalog://products/3"}}"#,
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Catalog.stats","arguments":{},"_meta":{"progressToken":"p"}}}"#,
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Catalog.rename","arguments":{"id":3,"name":"n3 renamed"}}}"#,
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
            ],
        ),
        lines(
            "session_elicitation_answered.jsonl",
            &[
                STDIO_INITIALIZE,
                STDIO_INITIALIZED,
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Catalog.subscribe","arguments":{"id":3,"email":"a@example.com"}}}"#,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Catalog.unsubscribe_all","arguments":{"email":"a@example.com"}}}"#,
                r#"{"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"confirm":true}}}"#,
            ],
        ),
        lines("modern_calls.jsonl", &[&discover, &call, &listen, &rename, &unsubscribe]),
        lines(
            "batches_and_garbage.jsonl",
            &[
                STDIO_INITIALIZE,
                r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
                r#"[]"#,
                r#"not json at all"#,
                r#"{"jsonrpc":"2.0","id":{"an":"object"},"method":"ping"}"#,
                r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
                "",
                "   ",
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":7},"_meta":{"progressToken":{"bad":1}}}}"#,
            ],
        ),
    ]
}
