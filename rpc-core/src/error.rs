//! RPC errors and how they are reported.
//!
//! Every failure becomes an [`RpcError`]: a JSON-RPC error code, a message, and
//! `data` whose content depends on the [`Environment`]:
//!
//! * production: `{"exception": <error type>, "extra": <what the error chose to expose>}`;
//! * dev and test: additionally `message` (the original error text), `sources`
//!   (the `source()` chain) and `location` (where the error was created).
//!
//! Application errors implement [`ApplicationError`] and then convert into
//! `RpcError` with `?`:
//!
//! ```
//! # extern crate rpc_core as rpc;
//! #[derive(Debug)]
//! struct NotFound(u64);
//! impl std::fmt::Display for NotFound {
//!     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
//!         write!(f, "product {} not found", self.0)
//!     }
//! }
//! impl std::error::Error for NotFound {}
//! impl rpc::ApplicationError for NotFound {
//!     fn code(&self) -> i32 { 404 }
//!     fn data(&self) -> Option<serde_json::Value> { Some(serde_json::json!({"id": self.0})) }
//! }
//! fn find(id: u64) -> Result<(), rpc::RpcError> {
//!     Err(NotFound(id))?
//! }
//! let err = find(7).unwrap_err();
//! assert_eq!(err.code(), 404);
//! assert_eq!(err.message(), "product 7 not found");
//! ```

use std::borrow::Cow;
use std::fmt;
use std::panic::Location;

use serde_json::{Map, Value, json};

/// Standard JSON-RPC 2.0 error codes.
pub mod code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i32 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i32 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i32 = -32602;
    /// Internal error.
    pub const INTERNAL_ERROR: i32 = -32603;
    /// A logic error of the procedure; also a call refused because the
    /// method is locked by another call (`#[rpc::lock]`).
    pub const LOGIC_ERROR: i32 = -32400;
    /// A server error: the call did not finish within its time limit.
    pub const TIMEOUT: i32 = -32000;
    /// The caller's credential lacks a scope the method needs (HTTP's 403
    /// in the JSON-RPC server-error range).
    pub const FORBIDDEN: i32 = -32403;
    /// The client is over its rate limit (HTTP's 429 in the JSON-RPC
    /// server-error range); `data.extra.retryAfter` says when to retry.
    pub const RATE_LIMITED: i32 = -32429;
}

/// The longest message, in bytes, of an error about the request (parse
/// errors, invalid requests, unknown methods, unreadable params).
pub const MAX_PROTOCOL_MESSAGE: usize = 512;

/// `text` cut to at most `max` bytes at a character boundary, with `…`
/// when cut.
pub fn bounded(text: Cow<'static, str>, max: usize) -> Cow<'static, str> {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…", &text[..end]))
}

/// Where the server runs; decides how much an error reveals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Environment {
    /// Development: full error details.
    Dev,
    /// Automated tests: full error details.
    Test,
    /// Production: only the error type and the data the error exposes.
    #[default]
    Prod,
}

impl Environment {
    /// Whether errors carry their full details.
    pub fn is_debug(self) -> bool {
        matches!(self, Environment::Dev | Environment::Test)
    }
}

impl std::str::FromStr for Environment {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "dev" => Ok(Environment::Dev),
            "test" => Ok(Environment::Test),
            "prod" => Ok(Environment::Prod),
            other => Err(format!("unknown environment `{other}` (expected dev, test or prod)")),
        }
    }
}

/// An error an application method returns, with its own JSON-RPC code.
///
/// Implementing this trait makes `?` convert the error into [`RpcError`].
/// Codes should lie outside the reserved range `-32768..=-32000`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned as an RPC error",
    label = "the error type of this method",
    note = "return `rpc::RpcError`, or implement `rpc::ApplicationError` for `{Self}` if it is a type of \
            this crate (it gives the JSON-RPC error code); another crate's type (`String`, `Box<dyn Error>`, \
            `anyhow::Error`) cannot implement it: map it, `.map_err(|e| rpc::RpcError::new(code, e.to_string()))?`"
)]
pub trait ApplicationError: std::error::Error + Send + Sync + 'static {
    /// The JSON-RPC error code.
    fn code(&self) -> i32;
    /// Data exposed to clients in every environment (`data.extra`).
    fn data(&self) -> Option<Value> {
        None
    }
}

/// A JSON-RPC error: code, message and environment-dependent data.
///
/// One pointer wide, so `Result<T, RpcError>` stays small.
#[derive(Clone, PartialEq)]
pub struct RpcError(Box<Repr>);

#[derive(Clone, PartialEq)]
struct Repr {
    code: i32,
    message: Cow<'static, str>,
    kind: Cow<'static, str>,
    extra: Option<Value>,
    detail: Option<Detail>,
}

#[derive(Clone, PartialEq, Debug)]
struct Detail {
    message: Option<String>,
    sources: Vec<String>,
    location: Option<String>,
}

impl RpcError {
    /// An error with a code and a message, typed `rpc::RpcError`.
    #[track_caller]
    pub fn new(code: i32, message: impl Into<Cow<'static, str>>) -> Self {
        RpcError(Box::new(Repr {
            code,
            message: message.into(),
            kind: Cow::Borrowed("rpc::RpcError"),
            extra: None,
            detail: Some(Detail { message: None, sources: Vec::new(), location: Some(caller()) }),
        }))
    }

    /// An error about the request itself: no source location is recorded,
    /// since the framework, not application code, raised it.
    /// The message is cut to [`MAX_PROTOCOL_MESSAGE`] bytes: it may quote
    /// what the client sent (a method name, a value serde could not read),
    /// and an error must not echo a large request back.
    fn protocol(code: i32, message: impl Into<Cow<'static, str>>, kind: &'static str) -> Self {
        let message = bounded(message.into(), MAX_PROTOCOL_MESSAGE);
        RpcError(Box::new(Repr { code, message, kind: Cow::Borrowed(kind), extra: None, detail: None }))
    }

    /// `-32700`: the body is not valid JSON.
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        RpcError::protocol(code::PARSE_ERROR, "Parse error", "rpc::ParseError").with_detail(detail)
    }

    /// `-32600`: not a valid JSON-RPC request object.
    pub fn invalid_request(reason: impl Into<Cow<'static, str>>) -> Self {
        let reason = reason.into();
        RpcError::protocol(code::INVALID_REQUEST, format!("Invalid Request: {reason}"), "rpc::InvalidRequest")
    }

    /// `-32601`: the method does not exist in this API version.
    pub fn method_not_found(method: &str) -> Self {
        RpcError::protocol(code::METHOD_NOT_FOUND, format!("Method not found: {method}"), "rpc::MethodNotFound")
    }

    /// `-32602` with a message.
    pub fn invalid_params(message: impl Into<Cow<'static, str>>) -> Self {
        RpcError::protocol(code::INVALID_PARAMS, message, "rpc::InvalidParams")
    }

    /// `-32602` listing each offending parameter and why (`data.extra`); the
    /// message says it too, in short (`Invalid params for M: email: ...; digest: ...`,
    /// cut to [`MAX_PROTOCOL_MESSAGE`]), for clients that show only the
    /// message (an AI agent's tool-call error).
    pub fn invalid_param_list(method: &str, violations: Map<String, Value>) -> Self {
        let mut message = format!("Invalid params for {method}");
        for (i, (name, reasons)) in violations.iter().enumerate() {
            if message.len() >= MAX_PROTOCOL_MESSAGE {
                break;
            }
            message.push_str(if i == 0 { ": " } else { "; " });
            if !name.is_empty() {
                message.push_str(name);
                message.push_str(": ");
            }
            let first = match reasons {
                Value::Array(list) => list.first().and_then(Value::as_str).unwrap_or(""),
                Value::String(text) => text,
                _ => "",
            };
            message.push_str(first);
        }
        RpcError::invalid_params(message).with_data(Value::Object(violations))
    }

    /// `-32400` "Method 'X' is locked": another call holds the method's lock.
    pub fn locked(method: &str) -> Self {
        RpcError::protocol(code::LOGIC_ERROR, format!("Method '{method}' is locked"), "rpc::Locked")
    }

    /// `-32403`: the caller's credential lacks `missing`, scopes `method`
    /// needs; `data.extra.scope` lists them, space-separated, as OAuth's
    /// `insufficient_scope` does, for a client to ask for them.
    pub fn insufficient_scope(method: &str, missing: &[&str]) -> Self {
        let scope = missing.join(" ");
        RpcError::protocol(
            code::FORBIDDEN,
            format!("Method '{method}' needs scope {scope}, which the access token does not grant"),
            "rpc::InsufficientScope",
        )
        .with_data(json!({ "error": "insufficient_scope", "scope": scope }))
    }

    /// `-32429`: the client is over its rate of `what` ("calls", "new
    /// sessions"); `data.extra.retryAfter` is the seconds to wait.
    pub fn rate_limited(what: &str, retry_after: std::time::Duration) -> Self {
        let seconds = crate::rate::retry_after_secs(retry_after);
        RpcError::protocol(code::RATE_LIMITED, format!("Too many {what}: retry after {seconds} s"), "rpc::RateLimited")
            .with_data(json!({ "retryAfter": seconds }))
    }

    /// `-32000`: the method did not finish within `limit` (`$rpc.timeout`).
    pub fn timed_out(method: &str, limit: std::time::Duration) -> Self {
        RpcError::protocol(
            code::TIMEOUT,
            format!("Method '{method}' did not finish within {} s", limit.as_secs_f64()),
            "rpc::Timeout",
        )
    }

    /// `-32603` for an unexpected condition; `detail` is shown in dev/test only.
    #[track_caller]
    pub fn internal(detail: impl fmt::Display) -> Self {
        RpcError::new(code::INTERNAL_ERROR, "Internal error").with_kind("rpc::InternalError").with_detail(detail)
    }

    /// An error from any `std::error::Error`: its message, type and source chain.
    #[track_caller]
    pub fn from_error<E: std::error::Error + 'static>(code: i32, error: &E) -> Self {
        let mut err = RpcError::new(code, error.to_string()).with_kind(std::any::type_name::<E>());
        let mut sources = Vec::new();
        let mut source = error.source();
        while let Some(s) = source {
            sources.push(s.to_string());
            source = s.source();
        }
        if let Some(detail) = err.0.detail.as_mut() {
            detail.sources = sources;
        }
        err
    }

    /// Sets the error type reported in `data.exception`.
    pub fn with_kind(mut self, kind: impl Into<Cow<'static, str>>) -> Self {
        self.0.kind = kind.into();
        self
    }

    /// Sets the data exposed to clients in every environment (`data.extra`).
    pub fn with_data(mut self, extra: Value) -> Self {
        self.0.extra = Some(extra);
        self
    }

    /// Adds a detail message shown in dev/test only.
    pub fn with_detail(mut self, detail: impl fmt::Display) -> Self {
        let detail_box =
            self.0.detail.get_or_insert_with(|| Detail { message: None, sources: Vec::new(), location: None });
        detail_box.message = Some(detail.to_string());
        self
    }

    /// Replaces the recorded location (dev/test only).
    pub fn with_location(mut self, location: impl Into<String>) -> Self {
        if let Some(detail) = self.0.detail.as_mut() {
            detail.location = Some(location.into());
        }
        self
    }

    /// The JSON-RPC error code.
    pub fn code(&self) -> i32 {
        self.0.code
    }

    /// The error message.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The error type reported in `data.exception`.
    pub fn kind(&self) -> &str {
        &self.0.kind
    }

    /// The data exposed in every environment.
    pub fn extra(&self) -> Option<&Value> {
        self.0.extra.as_ref()
    }

    /// The `data` member for `env`.
    pub fn data(&self, env: Environment) -> Value {
        let mut data = Map::new();
        data.insert("exception".into(), Value::String(self.0.kind.to_string()));
        if let Some(extra) = &self.0.extra {
            data.insert("extra".into(), extra.clone());
        }
        if env.is_debug()
            && let Some(detail) = &self.0.detail
        {
            if let Some(message) = &detail.message {
                data.insert("message".into(), Value::String(message.clone()));
            }
            if !detail.sources.is_empty() {
                data.insert("sources".into(), json!(detail.sources));
            }
            if let Some(location) = &detail.location {
                data.insert("location".into(), Value::String(location.clone()));
            }
        }
        Value::Object(data)
    }

    /// Appends the JSON-RPC error object for `env`, serialised: the bytes
    /// of [`to_json`](Self::to_json)'s value, without building it.
    pub fn write_json(&self, out: &mut Vec<u8>, env: Environment) {
        fn put<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, name: &[u8], value: &T) {
            out.extend_from_slice(name);
            // Numbers, strings and values serialise into a Vec without failing.
            let _ = serde_json::to_writer(&mut *out, value);
        }
        put(out, b"{\"code\":", &self.0.code);
        put(out, b",\"message\":", &*self.0.message);
        put(out, b",\"data\":{\"exception\":", &*self.0.kind);
        if let Some(extra) = &self.0.extra {
            put(out, b",\"extra\":", extra);
        }
        if env.is_debug()
            && let Some(detail) = &self.0.detail
        {
            if let Some(message) = &detail.message {
                put(out, b",\"message\":", &**message);
            }
            if !detail.sources.is_empty() {
                put(out, b",\"sources\":", &detail.sources);
            }
            if let Some(location) = &detail.location {
                put(out, b",\"location\":", &**location);
            }
        }
        out.extend_from_slice(b"}}");
    }

    /// The JSON-RPC error object `{"code", "message", "data"}` for `env`.
    pub fn to_json(&self, env: Environment) -> Value {
        json!({"code": self.0.code, "message": self.0.message, "data": self.data(env)})
    }
}

#[track_caller]
fn caller() -> String {
    located(Location::caller())
}

fn located(loc: &Location<'_>) -> String {
    format!("{}:{}:{}", loc.file(), loc.line(), loc.column())
}

impl RpcError {
    /// The error, recorded as created at `to` if it was recorded as created
    /// at `from` (and as it is otherwise): for the generated code, which
    /// converts a method's error where the method's return type is.
    pub(crate) fn relocated(mut self, from: &Location<'_>, to: &Location<'_>) -> Self {
        if let Some(detail) = self.0.detail.as_mut()
            && let Some(location) = detail.location.as_mut()
            && *location == located(from)
        {
            *location = located(to);
        }
        self
    }
}

impl fmt::Debug for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RpcError")
            .field("code", &self.0.code)
            .field("message", &self.0.message)
            .field("kind", &self.0.kind)
            .field("extra", &self.0.extra)
            .field("detail", &self.0.detail)
            .finish()
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.0.message, self.0.code)
    }
}

impl std::error::Error for RpcError {}

/// An I/O error from a method is an internal error: its text (often a
/// path) is shown in dev/test only.
impl From<std::io::Error> for RpcError {
    #[track_caller]
    fn from(error: std::io::Error) -> Self {
        let mut err = RpcError::internal(&error).with_kind("std::io::Error");
        let mut sources = Vec::new();
        let mut source = std::error::Error::source(&error);
        while let Some(s) = source {
            sources.push(s.to_string());
            source = s.source();
        }
        if let Some(detail) = err.0.detail.as_mut() {
            detail.sources = sources;
        }
        err
    }
}

impl<E: ApplicationError> From<E> for RpcError {
    #[track_caller]
    fn from(error: E) -> Self {
        let mut err = RpcError::from_error(error.code(), &error);
        err.0.extra = error.data();
        err
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Inner;
    impl fmt::Display for Inner {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("disk on fire")
        }
    }
    impl std::error::Error for Inner {}

    #[derive(Debug)]
    struct Outer(Inner);
    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("save failed")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }
    impl ApplicationError for Outer {
        fn code(&self) -> i32 {
            1001
        }
        fn data(&self) -> Option<Value> {
            Some(json!({"retry": true}))
        }
    }

    fn fails() -> Result<(), RpcError> {
        Err(Outer(Inner))?;
        Ok(())
    }

    #[test]
    fn written_json_is_the_object_in_every_environment() {
        let errors = [
            RpcError::new(-32000, "out of \"stock\""),
            RpcError::invalid_params("bad").with_data(json!({"id": ["\"x\" is not an integer"]})),
            RpcError::internal("boom").with_detail("detail").with_location("here.rs:1:2"),
            RpcError::from(std::io::Error::other(std::io::Error::other("disk"))),
            RpcError::from_error(-32000, &Outer(Inner)),
            RpcError::method_not_found("x.y"),
        ];
        for env in [Environment::Dev, Environment::Test, Environment::Prod] {
            for error in &errors {
                let mut out = Vec::new();
                error.write_json(&mut out, env);
                assert_eq!(out, serde_json::to_vec(&error.to_json(env)).unwrap(), "{error:?} in {env:?}");
            }
        }
    }

    #[test]
    fn data_depends_on_environment() {
        let err = fails().unwrap_err();
        assert_eq!(err.code(), 1001);
        assert_eq!(err.message(), "save failed");
        let prod = err.data(Environment::Prod);
        assert_eq!(prod, json!({"exception": "rpc_core::error::tests::Outer", "extra": {"retry": true}}));
        let dev = err.data(Environment::Dev);
        assert_eq!(dev["sources"], json!(["disk on fire"]));
        let location = dev["location"].as_str().unwrap();
        assert!(location.starts_with("rpc-core/src/error.rs:"), "{location}");
        assert_eq!(err.data(Environment::Test), dev);
    }

    #[test]
    fn internal_hides_detail_in_prod() {
        let err = RpcError::internal("secret");
        assert_eq!(
            err.to_json(Environment::Prod),
            json!({"code": -32603, "message": "Internal error", "data": {"exception": "rpc::InternalError"}})
        );
        assert_eq!(err.data(Environment::Dev)["message"], "secret");
    }

    #[test]
    fn io_errors_are_internal() {
        fn read() -> Result<(), RpcError> {
            Err(std::io::Error::new(std::io::ErrorKind::NotFound, "/etc/secret is missing"))?;
            Ok(())
        }
        let err = read().unwrap_err();
        assert_eq!(err.code(), code::INTERNAL_ERROR);
        assert_eq!(err.to_json(Environment::Prod)["data"], json!({"exception": "std::io::Error"}));
        assert_eq!(err.data(Environment::Dev)["message"], "/etc/secret is missing");
        let as_std: &dyn std::error::Error = &err;
        assert_eq!(as_std.to_string(), "Internal error (-32603)");
    }

    #[test]
    fn environment_parses() {
        assert_eq!("dev".parse::<Environment>(), Ok(Environment::Dev));
        assert!("DEV".parse::<Environment>().is_err());
    }
}
