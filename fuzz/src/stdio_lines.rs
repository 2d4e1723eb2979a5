//! Target `stdio_lines`: the input is what a client writes to the catalog's
//! stdio transport (`mcp::stdio`): lines of JSON-RPC, or anything else. The
//! transport serves them on in-memory pipes, on a current-thread runtime
//! whose clock is paused (a call that sleeps, a progress notification held
//! back, the grace period at the end: all pass at once), until the input
//! ends and the transport returns.
//!
//! Findings: the transport does not end within [`DEADLINE`] of (virtual)
//! time; it returns an error though its output was never closed; a line it
//! writes is not one well-formed JSON-RPC 2.0 message (the checks of the
//! HTTP targets' SSE events, `tests/src/wellformed.rs`: a response to an id
//! the input carried, or `null`, with exactly one of `result` and a
//! well-formed `error`; a notification; a request to the client); an
//! internal error (`-32603`: a method panicked) the input did not ask for;
//! more output than [`max_output`] allows for the input.

use std::collections::BTreeSet;
use std::sync::OnceLock;
use std::time::Duration;

use rpc::Environment;
use serde_json::value::RawValue;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::wellformed;

/// How long (virtual time) the transport may take to end after the input.
pub const DEADLINE: Duration = Duration::from_secs(120);

/// The most output an input of `len` bytes may get: a few large answers
/// (a search of 100 products is about 3 KB) whatever the input, and at most
/// 100 times its size beyond that.
pub fn max_output(len: usize) -> usize {
    (1 << 20) + 100 * len
}

/// The catalog's MCP endpoint as `catalog --stdio` serves it, built once.
fn endpoint() -> &'static mcp::McpEndpoint {
    static ENDPOINT: OnceLock<mcp::McpEndpoint> = OnceLock::new();
    ENDPOINT.get_or_init(|| {
        // Long-lived streams (a session's, subscriptions/listen) end at once.
        catalog::changes().close();
        catalog::stdio_endpoint(Environment::Prod, catalog::Setup::default()).expect("the catalog's endpoint builds")
    })
}

/// Runs one input; panics on a finding.
pub fn run(data: &[u8]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    let output = runtime.block_on(serve(data));
    check(data, &output);
}

/// Writes `data` to the transport, closes its input, and returns all it wrote.
async fn serve(data: &[u8]) -> Vec<u8> {
    let (mut client_in, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, mut client_out) = tokio::io::duplex(64 * 1024);
    let stdio = mcp::stdio::Stdio::new(endpoint().server(), 1);
    let serving = stdio.serve(server_in, server_out);
    let feeding = async move {
        // The transport reads its input to the end: a write fails only if
        // it ended early, which `serving` reports.
        let _ = client_in.write_all(data).await;
        let _ = client_in.shutdown().await;
    };
    let limit = max_output(data.len());
    let reading = async move {
        let mut output = Vec::new();
        let mut chunk = vec![0; 16 * 1024];
        loop {
            match client_out.read(&mut chunk).await {
                Ok(0) | Err(_) => return output,
                Ok(n) => {
                    output.extend_from_slice(&chunk[..n]);
                    assert!(
                        output.len() <= limit,
                        "more than {limit} bytes of output for {} bytes of input",
                        data.len()
                    );
                }
            }
        }
    };
    let (served, (), output) = tokio::time::timeout(DEADLINE, async { tokio::join!(serving, feeding, reading) })
        .await
        .unwrap_or_else(|_| panic!("the transport did not end within {DEADLINE:?} after its input"));
    if let Err(error) = served {
        panic!("the transport failed though its output was read to the end: {error}");
    }
    output
}

/// Checks every line the transport wrote: one JSON-RPC message each
/// ([`wellformed::check_message`]), answering only ids the input carried.
fn check(input: &[u8], output: &[u8]) {
    if output.is_empty() {
        return;
    }
    assert!(output.ends_with(b"\n"), "the output ends in the middle of a line");
    let ids: BTreeSet<String> = input.split(|&b| b == b'\n').flat_map(wellformed::request_ids).collect();
    let asked_internal = input.windows(5).any(|w| w == b"32603");
    for line in output[..output.len() - 1].split(|&b| b == b'\n') {
        let text = String::from_utf8_lossy(line);
        let message: &RawValue =
            serde_json::from_slice(line).unwrap_or_else(|e| panic!("a line that is not JSON ({e}): {text:?}"));
        if let Err(why) = wellformed::check_message(message, &ids) {
            panic!("{why}");
        }
        if !asked_internal && text.contains("-32603") {
            panic!("an internal error (-32603): a method panicked, or the server failed: {text}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_with_calls_progress_and_a_subscription_passes() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"catalog://products/3"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Catalog.stats","arguments":{},"_meta":{"progressToken":1}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Catalog.rename","arguments":{"id":3,"name":"x"}}}"#,
            r#"not json"#,
            r#"[{"jsonrpc":"2.0","id":4,"method":"ping"}]"#,
        ];
        let input = lines.join("\n") + "\n";
        let output = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap()
            .block_on(serve(input.as_bytes()));
        check(input.as_bytes(), &output);
        let text = String::from_utf8(output).unwrap();
        assert!(text.contains(r#""id":2,"result""#), "{text}");
        assert!(text.contains(r#""code":-32700"#), "the line that is not JSON: {text}");
    }

    #[test]
    #[should_panic(expected = "exactly one of result and error")]
    fn a_response_with_both_outcomes_is_a_finding() {
        check(PING, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{\"code\":1,\"message\":\"x\"}}\n");
    }

    #[test]
    #[should_panic(expected = "the request did not carry")]
    fn a_response_to_an_id_never_sent_is_a_finding() {
        check(PING, b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
    }

    const PING: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";

    #[test]
    #[should_panic(expected = "not JSON")]
    fn a_line_that_is_not_json_is_a_finding() {
        check(PING, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{oops\n");
    }
}
