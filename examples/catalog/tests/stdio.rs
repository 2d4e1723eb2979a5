//! The catalog binary with `--stdio`, as a desktop client runs it: JSON-RPC
//! lines on stdin and stdout, only JSON on stdout, logs on stderr, exit 0
//! when stdin closes.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A catalog serving MCP on its stdin/stdout.
struct Catalog {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
}

impl Drop for Catalog {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_catalog"));
    command.arg("--stdio").args(args).env_remove("RPC_TOKENS").env_remove("RPC_REDIS_URL");
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    command
}

fn start(mut command: Command) -> Catalog {
    let mut child = command.spawn().expect("the catalog starts");
    let stdin = child.stdin.take();
    let stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let (line_tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).split(b'\n') {
            let Ok(line) = line else { break };
            // Raw bytes: whatever is on stdout must be a JSON line.
            if line_tx.send(String::from_utf8(line).expect("UTF-8 on stdout")).is_err() {
                break;
            }
        }
    });
    let (err_tx, stderr_text) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        let _ = err_tx.send(text);
    });
    Catalog { child, stdin, lines, stderr: stderr_text }
}

impl Catalog {
    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("written");
        stdin.flush().expect("flushed");
    }

    fn recv(&mut self) -> Value {
        let line = self.lines.recv_timeout(Duration::from_secs(20)).expect("a line on stdout within 20 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carries only JSON lines ({e}): {line:?}"))
    }

    fn call(&mut self, message: Value) -> Value {
        self.send(&message);
        self.recv()
    }

    /// Closes stdin; the process must exit 0 within 5 s. Its stderr.
    fn close(mut self) -> String {
        drop(self.stdin.take());
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("waitable") {
                break status;
            }
            assert!(started.elapsed() < Duration::from_secs(5), "the catalog did not exit after stdin closed");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "exit status {status}");
        let rest: Vec<String> = self.lines.try_iter().collect();
        assert!(rest.is_empty(), "nothing more on stdout: {rest:?}");
        self.stderr.recv_timeout(Duration::from_secs(5)).expect("stderr")
    }
}

fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn modern(id: Value, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    request(id, method, params)
}

#[test]
fn legacy_session_over_stdio() {
    let mut catalog = start(command(&["--env", "prod"]));
    let init = catalog.call(request(
        json!(0),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    ));
    assert_eq!(init["result"]["serverInfo"]["name"], "catalog", "{init}");
    catalog.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let list = catalog.call(request(json!(1), "tools/list", json!({})));
    let names: Vec<&str> =
        list["result"]["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"Catalog.get") && names.contains(&"Catalog.stats"), "{names:?}");
    let got = catalog.call(request(json!(2), "tools/call", json!({"name": "Catalog.get", "arguments": {"id": 7}})));
    assert_eq!(got["result"]["structuredContent"]["result"]["name"], "n7", "{got}");
    catalog.send(&request(
        json!(3),
        "tools/call",
        json!({"name": "Catalog.stats", "arguments": {}, "_meta": {"progressToken": "s"}}),
    ));
    let mut progress = 0;
    let result = loop {
        let line = catalog.recv();
        if line["method"] == "notifications/progress" {
            progress += 1;
            continue;
        }
        break line;
    };
    // 100 ms a batch, and a value written 50 ms after it: four, unless this
    // machine was that much slower to wake the transport.
    assert!(progress >= 1, "progress arrives as lines before the result");
    assert_eq!(result["result"]["structuredContent"]["result"]["products"], 100, "{result}");
    let stderr = catalog.close();
    assert!(stderr.contains("serving MCP"), "logs go to stderr: {stderr}");
}

#[test]
fn modern_requests_over_stdio_and_version_2() {
    let mut catalog = start(command(&["--stdio-version", "2", "--no-translations"]));
    let discover = catalog.call(modern(json!(1), "server/discover", json!({})));
    assert_eq!(discover["result"]["supportedVersions"], json!(["2026-07-28"]), "{discover}");
    let count = catalog.call(modern(json!(2), "tools/call", json!({"name": "Catalog.count", "arguments": {}})));
    assert_eq!(count["result"]["structuredContent"]["result"], 100, "version 2 has Catalog.count: {count}");
    catalog.send(&request(json!(3), "tools/list", json!({})));
    let refused = catalog.recv();
    assert_eq!(refused["id"], 3, "a legacy request before initialize is refused, with its id: {refused}");
    catalog.close();
}

#[test]
fn tokens_do_not_apply_over_stdio() {
    let mut with_tokens = command(&[]);
    with_tokens.env("RPC_TOKENS", "s3cret");
    let mut catalog = start(with_tokens);
    let discover = catalog.call(modern(json!(1), "server/discover", json!({})));
    assert!(discover["result"].is_object(), "no token needed: {discover}");
    let stderr = catalog.close();
    assert!(stderr.contains("HTTP only"), "a warning says the tokens are not used: {stderr}");
}

#[test]
fn stdio_refuses_http_options_and_unknown_versions() {
    for args in [&["--listen", "127.0.0.1:0"][..], &["--public-url", "https://api.example.com"], &["--allow-host", "x"]]
    {
        let output = command(args).stdin(Stdio::null()).output().expect("runs");
        assert!(!output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("cannot be used with"), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
    let output = command(&["--stdio-version", "9"]).stdin(Stdio::null()).output().expect("runs");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("version 9"));
    assert!(output.stdout.is_empty(), "stdout stays empty");
    let output = Command::new(env!("CARGO_BIN_EXE_catalog")).args(["--stdio-version", "2"]).output().expect("runs");
    assert!(!output.status.success(), "--stdio-version needs --stdio");
}

/// The lines up to and including the first for which `done` holds.
fn until(catalog: &mut Catalog, done: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut lines = Vec::new();
    loop {
        let line = catalog.recv();
        let stop = done(&line);
        lines.push(line);
        if stop {
            return lines;
        }
    }
}

fn is_update_of(line: &Value, uri: &str) -> bool {
    line["method"] == "notifications/resources/updated" && line["params"]["uri"] == uri
}

#[test]
fn a_session_gets_the_updates_of_the_resources_it_subscribed_to() {
    // What HTTP sends on the session's GET stream comes as lines.
    let mut catalog = start(command(&[]));
    let init = catalog.call(request(
        json!(0),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    ));
    assert_eq!(init["result"]["capabilities"]["resources"]["subscribe"], true, "{init}");
    catalog.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let subscribed = catalog.call(request(json!(1), "resources/subscribe", json!({"uri": "catalog://products/13"})));
    assert_eq!(subscribed["result"], json!({}), "{subscribed}");
    let rename = |id: u32, name: &str| {
        request(json!(id), "tools/call", json!({"name": "Catalog.rename", "arguments": {"id": id, "name": name}}))
    };
    // Not subscribed to 14: its answer, and no update.
    let other = catalog.call(rename(14, "n14 renamed"));
    assert_eq!(other["id"], 14, "{other}");
    catalog.send(&rename(13, "n13 renamed"));
    let mut lines = until(&mut catalog, |line| line["id"] == 13);
    if !lines.iter().any(|line| is_update_of(line, "catalog://products/13")) {
        lines.extend(until(&mut catalog, |line| is_update_of(line, "catalog://products/13")));
    }
    assert!(!lines.iter().any(|line| is_update_of(line, "catalog://products/14")), "{lines:?}");
    let stderr = catalog.close();
    assert!(stderr.contains("stdin closed; exiting"), "the stream ends with the conversation: {stderr}");
}

#[test]
fn a_listen_stream_ends_with_its_last_message_when_stdin_closes() {
    let mut catalog = start(command(&[]));
    let filter = json!({"notifications": {"resourceSubscriptions": ["catalog://products/15"]}});
    catalog.send(&modern(json!(1), "subscriptions/listen", filter));
    let acknowledged = catalog.recv();
    assert_eq!(acknowledged["method"], "notifications/subscriptions/acknowledged", "{acknowledged}");
    let subscription = acknowledged["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].clone();
    catalog.send(&modern(
        json!(2),
        "tools/call",
        json!({"name": "Catalog.rename", "arguments": {"id": 15, "name": "x"}}),
    ));
    let mut lines = until(&mut catalog, |line| line["id"] == 2);
    if !lines.iter().any(|line| is_update_of(line, "catalog://products/15")) {
        lines.extend(until(&mut catalog, |line| is_update_of(line, "catalog://products/15")));
    }
    let update = lines.iter().find(|line| is_update_of(line, "catalog://products/15")).expect("the update");
    assert_eq!(update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], subscription, "{update}");
    // The end of input ends the stream at once: its last message, then the
    // process exits (not after the grace period calls in flight get).
    let closed = Instant::now();
    drop(catalog.stdin.take());
    let last = catalog.recv();
    assert_eq!((last["id"].clone(), last["result"]["resultType"].clone()), (json!(1), json!("complete")), "{last}");
    while catalog.child.try_wait().expect("waitable").is_none() {
        assert!(closed.elapsed() < Duration::from_secs(2), "the catalog exits at once when stdin closes");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_second_initialize_takes_over_the_stream_of_updates() {
    // The conversation speaks for the session it opened last: the updates
    // it gets are that session's.
    let mut catalog = start(command(&[]));
    let initialize = |id: u32| {
        request(
            json!(id),
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
    };
    let subscribe = |id: u32, uri: &str| request(json!(id), "resources/subscribe", json!({"uri": uri}));
    let rename = |id: u32, product: u32| {
        request(json!(id), "tools/call", json!({"name": "Catalog.rename", "arguments": {"id": product, "name": "r"}}))
    };
    let first = catalog.call(initialize(0));
    assert!(first["result"].is_object(), "{first}");
    assert_eq!(catalog.call(subscribe(1, "catalog://products/23"))["result"], json!({}));
    let second = catalog.call(initialize(2));
    assert!(second["result"].is_object(), "{second}");
    assert_eq!(catalog.call(subscribe(3, "catalog://products/24"))["result"], json!({}));
    // The first session's product, then the second's.
    let other = catalog.call(rename(4, 23));
    assert_eq!(other["id"], 4, "no update before the answer: {other}");
    catalog.send(&rename(5, 24));
    let mut lines = until(&mut catalog, |line| line["id"] == 5);
    if !lines.iter().any(|line| is_update_of(line, "catalog://products/24")) {
        lines.extend(until(&mut catalog, |line| is_update_of(line, "catalog://products/24")));
    }
    assert!(!lines.iter().any(|line| is_update_of(line, "catalog://products/23")), "{lines:?}");
    catalog.close();
}
