//! `<binary> call '<json>'`: one JSON-RPC request (or batch) from the
//! command line, for scripts and cron, as the design reference's
//! `ufo:rpc:process` does.
//!
//! The request goes through the application's own [`Router`] in this
//! process, as an HTTP client's would (token check, version, validation,
//! cache, locks, events), with no listener; the response is printed as
//! pretty JSON on stdout. The exit code says how it went: `0` for a result
//! (or a notification, which prints nothing), `1` when the response (or any
//! response of a batch) is an error, `2` when the request could not be made
//! (unreadable input, refused token, not JSON-RPC).

use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;

use bytes::Bytes;
use clap::Args;
use http::{HeaderValue, Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use tower::Service;

use crate::server::{Connection, Draining, Router};

/// The largest request `call` reads from stdin (`-`).
const MAX_INPUT: u64 = 16 << 20;

/// The arguments of `call`.
#[derive(Debug, Clone, Args)]
pub struct CallArgs {
    /// The request: a JSON-RPC 2.0 object or batch (`-` reads it from stdin)
    #[arg(value_name = "JSON")]
    pub request: String,
    /// The caller's token, sent as `Authorization: Bearer <token>` (prefer
    /// RPC_CALL_TOKEN: a command line is visible to other local users)
    #[arg(long, value_name = "TOKEN", env = "RPC_CALL_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// The API version called
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub version: u32,
    /// Where the application mounts its JSON-RPC endpoint
    #[arg(long, value_name = "PATH", default_value = "/rpc")]
    pub path: String,
}

/// The outcome of a call, before it is printed.
#[derive(Debug, PartialEq)]
pub struct Outcome {
    /// What goes to stdout (pretty JSON), if anything.
    pub stdout: Option<String>,
    /// What goes to stderr, if anything.
    pub stderr: Option<String>,
    /// The process exit code: 0, 1 (an error response) or 2 (no response).
    pub code: u8,
}

impl Outcome {
    fn failed(message: String) -> Self {
        Outcome { stdout: None, stderr: Some(message), code: 2 }
    }

    /// Prints the outcome and gives the exit code. A closed stdout (`| head`) is not an error of the call.
    pub fn report(self) -> ExitCode {
        use std::io::Write;
        if let Some(out) = self.stdout {
            let _ = writeln!(std::io::stdout().lock(), "{out}");
        }
        if let Some(err) = self.stderr {
            let _ = writeln!(std::io::stderr().lock(), "{err}");
        }
        ExitCode::from(self.code)
    }
}

/// The request text of `args`: the argument, or stdin for `-` (bounded).
pub fn read_request(args: &CallArgs) -> Result<String, String> {
    if args.request != "-" {
        return Ok(args.request.clone());
    }
    let mut text = String::new();
    std::io::stdin()
        .take(MAX_INPUT + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the request from stdin: {e}"))?;
    if text.len() as u64 > MAX_INPUT {
        return Err(format!("the request on stdin is larger than {MAX_INPUT} bytes"));
    }
    Ok(text)
}

/// Runs `request` through `router` as `args` say.
pub async fn call(mut router: Router, args: &CallArgs, request: String) -> Outcome {
    let path = args.path.trim_end_matches('/');
    if !path.starts_with('/') {
        return Outcome::failed(format!("--path must start with `/`, not {:?}", args.path));
    }
    let uri = match args.version {
        1 => path.to_owned(),
        n => format!("{path}/v{n}"),
    };
    let mut builder = Request::builder()
        .method(Method::POST)
        .uri(&uri)
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json");
    if let Some(token) = &args.token {
        match HeaderValue::try_from(format!("Bearer {token}")) {
            Ok(value) => builder = builder.header(header::AUTHORIZATION, value),
            Err(_) => return Outcome::failed("the token has characters a header cannot carry".into()),
        }
    }
    let body = Full::new(Bytes::from(request)).map_err(|never| match never {}).boxed_unsync();
    let mut http_request = match builder.body(body) {
        Ok(request) => request,
        Err(e) => return Outcome::failed(format!("cannot build the request for {uri}: {e}")),
    };
    // The sender lives until the call is answered: the server is not shutting down.
    let (_serving, draining) = Draining::channel();
    let local = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    http_request.extensions_mut().insert(Connection::new(local, draining));
    let response = match router.call(http_request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    let status = response.status();
    let bytes = match response.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => return Outcome::failed(format!("reading the response failed: {e}")),
    };
    judge(status, &uri, &bytes)
}

/// The outcome of a response: pretty JSON-RPC, or why there is none.
fn judge(status: StatusCode, uri: &str, bytes: &[u8]) -> Outcome {
    if status == StatusCode::NO_CONTENT {
        return Outcome { stdout: None, stderr: None, code: 0 };
    }
    let text = String::from_utf8_lossy(bytes);
    let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
        let shown: String = text.chars().take(500).collect();
        return Outcome::failed(format!("{uri} answered {status} without JSON: {shown}"));
    };
    let is_rpc = |v: &Value| v.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    let errors = match &value {
        Value::Array(items) if items.iter().all(is_rpc) => items.iter().filter(|i| i.get("error").is_some()).count(),
        single if is_rpc(single) => usize::from(single.get("error").is_some()),
        _ => {
            let shown: String = text.chars().take(500).collect();
            return Outcome::failed(format!("{uri} answered {status}: {shown}"));
        }
    };
    let pretty = serde_json::to_string_pretty(&value).unwrap_or_else(|_| text.into_owned());
    let stderr = (!status.is_success()).then(|| format!("HTTP {status}"));
    Outcome { stdout: Some(pretty), stderr, code: if errors > 0 { 1 } else { 0 } }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_errors_and_batches_are_judged() {
        let ok = judge(StatusCode::OK, "/rpc", br#"{"jsonrpc":"2.0","id":1,"result":{"a":1}}"#);
        assert_eq!(ok.code, 0);
        assert_eq!(
            ok.stdout.as_deref(),
            Some("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {\n    \"a\": 1\n  }\n}")
        );
        let error = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#;
        assert_eq!(judge(StatusCode::OK, "/rpc", error).code, 1);
        let batch =
            br#"[{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"x"}}]"#;
        assert_eq!(judge(StatusCode::OK, "/rpc", batch).code, 1);
        let limited = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32429,"message":"slow down"}}"#;
        let outcome = judge(StatusCode::TOO_MANY_REQUESTS, "/rpc", limited);
        assert_eq!((outcome.code, outcome.stderr.as_deref()), (1, Some("HTTP 429 Too Many Requests")));
        assert_eq!(judge(StatusCode::NO_CONTENT, "/rpc", b""), Outcome { stdout: None, stderr: None, code: 0 });
    }

    #[test]
    fn what_is_not_json_rpc_is_a_failure_to_call() {
        let refused = judge(StatusCode::UNAUTHORIZED, "/rpc", br#"{"error":"invalid_token"}"#);
        assert_eq!(refused.code, 2);
        assert!(refused.stderr.is_some_and(|e| e.contains("401")));
        let html = judge(StatusCode::NOT_FOUND, "/rpc/v9", &[b'x'; 10_000]);
        assert_eq!(html.code, 2);
        assert!(html.stderr.is_some_and(|e| e.len() < 600), "shown text is bounded");
    }
}
