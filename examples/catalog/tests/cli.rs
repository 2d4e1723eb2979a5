//! The catalog binary as a user runs it: tokens from `--token` (repeatable),
//! `RPC_TOKENS` and `--token-file`, extra host names, and startup errors
//! that name the offending option.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// A running catalog process, killed when dropped.
struct Catalog {
    child: Child,
    base: String,
}

impl Drop for Catalog {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_catalog"));
    command.args(["--listen", "127.0.0.1:0", "--env", "prod"]).args(args).env_remove("RPC_TOKENS");
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    command
}

fn start(mut command: Command) -> Catalog {
    let mut child = command.spawn().expect("the catalog starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("a line on stdout");
    let base = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("unexpected: {line}")).to_owned();
    Catalog { child, base }
}

/// Runs the binary expecting it to refuse to start; its stderr. One that
/// starts after all is stopped after 20 s, and the test fails.
fn refused(args: &[&str]) -> String {
    use std::io::Read;
    let mut child = command(args).stdout(Stdio::null()).spawn().expect("the catalog runs");
    let mut stderr = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let stderr = reader.join().expect("stderr read");
    assert!(status.is_some_and(|s| !s.success()), "{args:?} should fail to start; it served instead:\n{stderr}");
    stderr
}

async fn call(base: &str, headers: &[(&str, &str)]) -> u16 {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/rpc"))
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":7}}"#);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("answered");
    let status = response.status().as_u16();
    if status == 200 {
        let body: Value = response.json().await.expect("JSON");
        assert_eq!(body["result"]["id"], 7, "{body}");
    }
    status
}

#[tokio::test]
async fn tokens_from_the_command_line() {
    let catalog = start(command(&["--token", "s3cret", "--token", "second"]));
    assert_eq!(call(&catalog.base, &[]).await, 401);
    assert_eq!(call(&catalog.base, &[("Ufo-RPC-Token", "nope")]).await, 403);
    assert_eq!(call(&catalog.base, &[("Ufo-RPC-Token", "s3cret")]).await, 200);
    assert_eq!(call(&catalog.base, &[("authorization", "Bearer second")]).await, 200);
    let mcp = reqwest::Client::new()
        .post(format!("{}/mcp/v1", catalog.base))
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status(), 401, "the MCP endpoint is protected too");
}

#[tokio::test]
async fn tokens_from_the_environment_and_a_file() {
    let mut with_env = command(&["--token-header", "X-Api-Key"]);
    with_env.env("RPC_TOKENS", "first, second");
    let catalog = start(with_env);
    assert_eq!(call(&catalog.base, &[]).await, 401);
    assert_eq!(call(&catalog.base, &[("x-api-key", "second")]).await, 200);
    assert_eq!(call(&catalog.base, &[("ufo-rpc-token", "second")]).await, 401, "only the configured header counts");
    drop(catalog);

    let file = std::env::temp_dir().join(format!("catalog-tokens-{}", std::process::id()));
    std::fs::write(&file, "# team tokens\nfrom-file\n\n").unwrap();
    let catalog = start(command(&["--token-file", file.to_str().unwrap(), "--protect-docs"]));
    assert_eq!(call(&catalog.base, &[("authorization", "Bearer from-file")]).await, 200);
    let docs = reqwest::get(format!("{}/rpc", catalog.base)).await.unwrap();
    assert_eq!(docs.status(), 401, "--protect-docs");
    std::fs::remove_file(&file).unwrap();
}

#[tokio::test]
async fn allowed_hosts() {
    let catalog = start(command(&["--allow-host", "api.example"]));
    let addr = catalog.base.trim_start_matches("http://").to_owned();
    let status = |host: &'static str| {
        let addr = addr.clone();
        async move {
            use std::io::{Read, Write};
            let mut stream = std::net::TcpStream::connect(&addr).unwrap();
            write!(stream, "GET /rpc HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
            let mut response = String::new();
            let _ = stream.read_to_string(&mut response);
            response.split(' ').nth(1).unwrap_or("").to_owned()
        }
    };
    assert_eq!(status("api.example").await, "200");
    assert_eq!(status("localhost").await, "200");
    assert_eq!(status("evil.example").await, "403");
}

#[test]
fn startup_errors_name_the_option() {
    assert!(refused(&["--cors-origin", "not an origin"]).contains("--cors-origin"));
    assert!(refused(&["--protect-docs"]).contains("--protect-docs"));
    assert!(refused(&["--token", "has space"]).contains("--token"));
    assert!(refused(&["--token-file", "/nonexistent/tokens"]).contains("--token-file"));
    assert!(refused(&["--token-header", "bad header", "--token", "x"]).contains("--token-header"));
    assert!(refused(&["--public-url", "javascript://evil.example"]).contains("--public-url"));
}

/// Writes `text` as a settings file of its own; its path.
fn settings_file(name: &str, text: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("catalog-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

/// Configuration that every backend would not take is refused at startup,
/// naming the key: what passes startup never fails later.
#[test]
fn configuration_is_checked_against_what_the_backends_take() {
    let long = "d".repeat(200);
    let cases = [
        ("ttl.toml", "session_ttl = \"1000000000y\"\n".to_owned(), "session_ttl"),
        ("hints.toml", "cache_hints = { ttl = \"300000000y\" }\n".to_owned(), "cache_hints.ttl"),
        ("icon.toml", "[[server.icons]]\nsrc = \"http://example.com/i.png\"\n".to_owned(), "server.icons.0.src"),
        ("group.toml", "[groups.mpc]\ninstructions = \"x\"\n".to_owned(), "did you mean `mcp`"),
        // The catalog loads translations of the server's texts: the
        // configured description is checked all the same.
        ("description.toml", format!("[server]\ndescription = \"{long}\"\n"), "description"),
    ];
    for (name, text, expected) in cases {
        let path = settings_file(name, &text);
        let stderr = refused(&["--config", path.to_str().unwrap()]);
        std::fs::remove_file(&path).ok();
        assert!(stderr.contains(expected), "{name}: {stderr}");
    }
    let path = settings_file("fine.toml", "session_ttl = \"365d\"\n[groups.mcp]\ninstructions = \"x\"\n");
    let catalog = start(command(&["--config", path.to_str().unwrap()]));
    std::fs::remove_file(&path).ok();
    drop(catalog);
}

/// Serves `http://127.0.0.1:PORT`: answers every request 500, counting them.
fn refusing_receiver() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut request = Vec::new();
                let mut buf = [0u8; 65536];
                // The head, then the announced body.
                let body_start = loop {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                    if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                        break end + 4;
                    }
                };
                let head = String::from_utf8_lossy(&request[..body_start]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                while request.len() < body_start + length {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = stream
                    .write_all(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            });
        }
    });
    (port, count)
}

/// Text from clients reaches log lines escaped and bounded, at every
/// level: a method name, a `rayId`, a notification's method and parameters
/// that carry a newline and an escape sequence cannot forge a line or move
/// the cursor, and twenty calls with 1 MiB method names do not write 20 MB
/// of logs.
#[tokio::test]
async fn outside_text_never_forges_or_floods_a_log_line() {
    use std::io::Read;
    let (port, posted) = refusing_receiver();
    let hooks = format!("http://127.0.0.1:{port}/hooks");
    let mut command = command(&["--callback-allow", &hooks]);
    command.env("RUST_LOG", "debug");
    let mut catalog = start(command);
    let mut stderr = catalog.child.stderr.take().expect("stderr");
    let log = std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = stderr.read_to_end(&mut all);
        all
    });

    let client = reqwest::Client::new();
    let send = async |body: String| {
        client
            .post(format!("{}/rpc", catalog.base))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("answered")
            .text()
            .await
            .expect("body")
    };
    let forged = "1999-01-01T00:00:00.000000Z  WARN rpc: forged line\u{1b}[2K";
    let callback = serde_json::json!({"callback": format!("{hooks}/x"), "rayId": format!("ray\nFORGED ray {forged}")});
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": format!("Catalog.get\n{forged}"),
        "params": {"id": 1, "$rpc": callback}});
    send(body.to_string()).await;
    let huge = "M".repeat(1024 * 1024);
    for i in 0..20 {
        let body =
            serde_json::json!({"jsonrpc": "2.0", "id": i, "method": huge, "params": {"$rpc": {"callback": hooks}}});
        send(body.to_string()).await;
    }
    let unknown = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": format!("nope\nFORGED unknown {forged}")});
    send(unknown.to_string()).await;
    let invalid = serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "Catalog.get",
        "params": {"id": format!("x\nFORGED param {forged}")}});
    send(invalid.to_string()).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while posted.load(std::sync::atomic::Ordering::SeqCst) < 21 {
        assert!(std::time::Instant::now() < deadline, "the callbacks were posted");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let _ = catalog.child.kill();
    let _ = catalog.child.wait();
    let log = log.join().expect("stderr read");
    let text = String::from_utf8_lossy(&log);

    assert!(text.contains("callback endpoint refused the response"), "the refusals were logged:\n{text}");
    assert!(text.contains(r"Catalog.get\n1999-01-01"), "the forged method name was logged, escaped:\n{text}");
    assert!(!log.contains(&0x1b), "no escape sequence reaches the log");
    for line in text.lines() {
        assert!(!line.starts_with("1999-") && !line.starts_with("FORGED"), "a forged line: {line}");
        assert!(line.len() < 4096, "a line of {} bytes", line.len());
    }
    assert!(log.len() < 1024 * 1024, "20 MiB of method names wrote {} bytes of logs", log.len());
}
