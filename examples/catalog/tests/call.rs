//! `catalog call '<json>'`: one JSON-RPC request from the command line,
//! through the same pipeline as HTTP (tokens, versions, validation), the
//! pretty response on stdout and the exit code saying how it went.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Runs `catalog <server args> call <call args>`, with `stdin` if given,
/// bounded to 30 s.
fn run(server: &[&str], call: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_catalog"));
    command.args(server).arg("call").args(call).env_remove("RPC_TOKENS").env_remove("RPC_CALL_TOKEN");
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().expect("the catalog runs");
    let mut input = child.stdin.take().expect("stdin");
    let bytes = stdin.map(<[u8]>::to_vec);
    let writer = std::thread::spawn(move || {
        if let Some(bytes) = bytes {
            let _ = input.write_all(&bytes);
        }
    });
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        assert!(started.elapsed() < Duration::from_secs(30), "`call` did not end");
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = writer.join();
    child.wait_with_output().expect("output")
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is JSON ({e}): {}", String::from_utf8_lossy(&output.stdout)))
}

const GET: &str = r#"{"jsonrpc":"2.0","id":7,"method":"Catalog.get","params":{"id":1}}"#;

#[test]
fn a_result_prints_pretty_and_exits_zero() {
    let output = run(&[], &[GET], None);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.starts_with("{\n  \"jsonrpc\": \"2.0\""), "pretty: {text}");
    assert_eq!(json_of(&output), json!({"jsonrpc": "2.0", "id": 7, "result": {"id": 1, "name": "n1"}}));
}

#[test]
fn an_error_response_exits_one() {
    let missing = run(&[], &[r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.nope"}"#], None);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(json_of(&missing)["error"]["code"], -32601);
    let invalid = run(&[], &[r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":"x"}}"#], None);
    assert_eq!(invalid.status.code(), Some(1));
    assert_eq!(json_of(&invalid)["error"]["code"], -32602, "validated as over HTTP");
    let garbage = run(&[], &["{not json"], None);
    assert_eq!(garbage.status.code(), Some(1));
    assert_eq!(json_of(&garbage)["error"]["code"], -32700);
}

#[test]
fn batches_versions_and_stdin() {
    let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":2}},
                     {"jsonrpc":"2.0","method":"Catalog.get","params":{"id":3}}]"#;
    let output = run(&[], &["-", "--version", "2"], Some(batch));
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let answers = json_of(&output);
    assert_eq!(answers.as_array().map(Vec::len), Some(1), "the notification has no answer: {answers}");
    let absent = run(&[], &[GET, "--version", "9"], None);
    assert_ne!(absent.status.code(), Some(0), "version 9 does not exist");
    let notification = run(&[], &[r#"{"jsonrpc":"2.0","method":"Catalog.get","params":{"id":1}}"#], None);
    assert_eq!(notification.status.code(), Some(0));
    assert!(notification.stdout.is_empty(), "a notification prints nothing");
}

#[test]
fn tokens_are_checked_as_over_http() {
    let refused = run(&["--token", "s3cret"], &[GET], None);
    assert_eq!(refused.status.code(), Some(2), "no token: {}", String::from_utf8_lossy(&refused.stdout));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("401"), "{}", String::from_utf8_lossy(&refused.stderr));
    let wrong = run(&["--token", "s3cret"], &[GET, "--token", "guess"], None);
    assert_eq!(wrong.status.code(), Some(2));
    let accepted = run(&["--token", "s3cret"], &[GET, "--token", "s3cret"], None);
    assert_eq!(accepted.status.code(), Some(0), "{}", String::from_utf8_lossy(&accepted.stderr));
    let from_env = Command::new(env!("CARGO_BIN_EXE_catalog"))
        .args(["--token", "s3cret", "call", GET])
        .env("RPC_CALL_TOKEN", "s3cret")
        .output()
        .expect("runs");
    assert_eq!(from_env.status.code(), Some(0), "RPC_CALL_TOKEN: {}", String::from_utf8_lossy(&from_env.stderr));
}

#[test]
fn hostile_input_is_refused_boundedly() {
    // 17 MiB on stdin: refused before it is parsed.
    let huge = vec![b' '; 17 << 20];
    let output = run(&[], &["-"], Some(&huge));
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("larger than"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Deep nesting: the endpoint's own limits answer.
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{{"id":{}1{}}}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let output = run(&[], &[&deep], None);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let bad_path = run(&[], &[GET, "--path", "rpc"], None);
    assert_eq!(bad_path.status.code(), Some(2));
}
