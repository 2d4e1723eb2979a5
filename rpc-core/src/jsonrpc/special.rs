//! The special parameter `$rpc` of `/rpc` calls: options about the call
//! itself, split off the named parameters before the method is looked up,
//! so no method ever sees it and no schema lists it (over MCP it is an
//! unknown argument like any other).
//!
//! ```json
//! {"jsonrpc": "2.0", "id": 1, "method": "Catalog.reindex",
//!  "params": {"$rpc": {"callback": "https://hooks.example.com/rpc", "timeout": 30, "ignoreCache": true}}}
//! ```
//!
//! * `callback`: the call is acknowledged at once with
//!   `{"async": true, "callback": url}`, runs after that response was sent,
//!   and its JSON-RPC response is POSTed to the URL (which the server's
//!   `Callbacks` policy must allow; off by default);
//! * `timeout`: seconds (`0 < timeout ≤` [`MAX_TIMEOUT_SECS`]) an async
//!   method may take before the call fails with `-32000`;
//! * `ignoreCache`: `true` skips the cache read (the fresh result is stored);
//! * `rayId`: the id of a parent request, for tracing (a string or number; logged).

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::error::RpcError;
use crate::executor::Params;

/// The name of the special parameter.
pub const SPECIAL: &str = "$rpc";
/// The largest `$rpc.timeout`, in seconds.
pub const MAX_TIMEOUT_SECS: f64 = 120.0;
/// The longest `$rpc.callback` URL, in bytes.
pub const MAX_CALLBACK_BYTES: usize = 2048;

/// What `$rpc` asked for.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Special {
    /// Where the response goes, asynchronously.
    pub callback: Option<String>,
    /// The longest the method may take.
    pub timeout: Option<Duration>,
    /// Skip the cache read.
    pub ignore_cache: bool,
    /// The parent request's id, for tracing.
    pub ray_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Raw {
    #[serde(default)]
    callback: Option<String>,
    #[serde(default)]
    timeout: Option<f64>,
    #[serde(default)]
    ignore_cache: Option<bool>,
    #[serde(default)]
    ray_id: Option<Value>,
}

/// Whether raw named parameters may hold the call options (`$rpc`,
/// written plainly or with `$` escaped as `\u0024`): when not, they need
/// no [`split`] and may go to the executor unread.
pub fn may_hold(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    // Parameters without a `$` or a backslash, the common case, are told
    // apart with one scan, without building the two searchers.
    memchr::memchr2(b'$', b'\\', bytes).is_some()
        && (memchr::memmem::find(bytes, SPECIAL.as_bytes()).is_some()
            || memchr::memmem::find(bytes, b"\\u0024").is_some())
}

/// Splits `$rpc` off named `params`: what it asked for (`None`: absent),
/// or `-32602` saying what is wrong with it.
pub fn split(params: &mut Params) -> Result<Option<Special>, RpcError> {
    let Params::Named(map) = params else { return Ok(None) };
    let Some(value) = map.shift_remove(SPECIAL) else { return Ok(None) };
    parse(value).map(Some)
}

fn invalid(why: impl std::fmt::Display) -> RpcError {
    RpcError::invalid_params(format!("Invalid `$rpc`: {why}"))
}

fn parse(value: Value) -> Result<Special, RpcError> {
    if !value.is_object() {
        return Err(invalid("it is an object of call options (callback, timeout, ignoreCache, rayId)"));
    }
    let raw: Raw = serde_json::from_value(value).map_err(invalid)?;
    let timeout = match raw.timeout {
        None => None,
        Some(t) if t > 0.0 && t <= MAX_TIMEOUT_SECS => Some(Duration::from_secs_f64(t)),
        Some(t) => return Err(invalid(format!("timeout is seconds, above 0 and at most {MAX_TIMEOUT_SECS}; got {t}"))),
    };
    let callback = match raw.callback {
        Some(url) if url.trim().is_empty() => return Err(invalid("callback is empty")),
        Some(url) if url.len() > MAX_CALLBACK_BYTES => {
            return Err(invalid(format!("callback is longer than {MAX_CALLBACK_BYTES} bytes")));
        }
        other => other,
    };
    let ray_id = match raw.ray_id {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.len() <= 256 => Some(s),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(_) => return Err(invalid("rayId is a string of at most 256 bytes, or a number")),
    };
    Ok(Special { callback, timeout, ignore_cache: raw.ignore_cache.unwrap_or(false), ray_id })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn named(v: Value) -> Params {
        match v {
            Value::Object(m) => Params::Named(m),
            _ => unreachable!(),
        }
    }

    #[test]
    fn may_hold_finds_every_spelling() {
        assert!(may_hold(r#"{"id":1,"$rpc":{"timeout":1}}"#));
        assert!(may_hold(r#"{"id":1,"\u0024rpc":{"timeout":1}}"#));
        assert!(!may_hold(r#"{"id":1,"name":"rpc$"}"#));
        assert!(!may_hold(r#"{"id":1,"name":"a\nb"}"#), "a backslash alone is not the escape");
        assert!(!may_hold(r#"{"id":1,"name":"plain"}"#));
        let escaped: serde_json::Map<String, Value> = serde_json::from_str(r#"{"\u0024rpc":{}}"#).unwrap();
        assert!(escaped.contains_key(SPECIAL), "the escape this looks for is the one JSON reads as `$`");
    }

    #[test]
    fn splits_the_options_off() {
        let mut params = named(json!({"id": 1, "$rpc": {"timeout": 2.5, "ignoreCache": true, "rayId": "abc"}}));
        let special = split(&mut params).unwrap().unwrap();
        assert_eq!(special.timeout, Some(Duration::from_millis(2500)));
        assert!(special.ignore_cache);
        assert_eq!(special.ray_id.as_deref(), Some("abc"));
        assert!(matches!(params, Params::Named(ref m) if m.len() == 1 && m.contains_key("id")));
        let mut none = named(json!({"id": 1}));
        assert_eq!(split(&mut none).unwrap(), None);
        let mut positional = Params::Positional(vec![json!({"$rpc": {}})]);
        assert_eq!(split(&mut positional).unwrap(), None, "only named parameters carry options");
    }

    #[test]
    fn refuses_what_it_does_not_understand() {
        for (bad, says) in [
            (json!("x"), "object of call options"),
            (json!({"timeout": 0}), "above 0"),
            (json!({"timeout": 121}), "at most 120"),
            (json!({"timeout": "5"}), "invalid type"),
            (json!({"ignoreCache": "yes"}), "invalid type"),
            (json!({"callbak": "http://x"}), "unknown field `callbak`"),
            (json!({"callback": " "}), "empty"),
            (json!({"callback": "h".repeat(5000)}), "longer than 2048"),
            (json!({"rayId": [1]}), "rayId"),
        ] {
            let mut params = named(json!({"$rpc": bad}));
            let error = split(&mut params).unwrap_err();
            assert_eq!(error.code(), -32602);
            assert!(error.message().contains(says), "{} should say {says}", error.message());
        }
    }
}
