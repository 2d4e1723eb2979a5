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

/// Runs the binary expecting it to refuse to start; its stderr.
fn refused(args: &[&str]) -> String {
    let output = command(args).output().expect("the catalog runs");
    assert!(!output.status.success(), "{args:?} should fail to start");
    String::from_utf8_lossy(&output.stderr).into_owned()
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
