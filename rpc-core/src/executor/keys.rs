//! Store keys of a call: the cache key (method, version, a canonical hash of
//! the parameters, the caller) and the lock key (method, and the value of
//! the lock's parameter).

use std::fmt::Write as _;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::security::Identity;

/// `value` as canonical JSON into `out`: object members sorted by name at
/// every depth, no whitespace; arrays keep their order.
fn canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => canonical_object(map, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        // Scalars serialise into a Vec without failing.
        scalar => {
            let _ = serde_json::to_writer(&mut *out, scalar);
        }
    }
}

fn canonical_object(map: &Map<String, Value>, out: &mut Vec<u8>) {
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    members.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.push(b'{');
    for (i, (name, value)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let _ = serde_json::to_writer(&mut *out, name);
        out.push(b':');
        canonical(value, out);
    }
    out.push(b'}');
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// The cache key of a call of `method`: its parameters with the declared
/// defaults filled in (`{"item": 1}` and `{"item": 1, "currency": "EUR"}`
/// are one call when `currency` defaults to `"EUR"`), see [`cache_key`].
pub(crate) fn method_cache_key(
    method: &crate::registry::Method,
    version: u32,
    params: &Map<String, Value>,
    identity: Option<&Identity>,
) -> String {
    let declared = method.descriptor().params;
    let missing = |p: &&crate::descriptor::ParamDescriptor| p.is_param && !params.contains_key(p.name);
    if !declared.iter().filter(missing).any(|p| p.default.is_some()) {
        return cache_key(method.name(), version, params, identity);
    }
    let mut full = params.clone();
    for param in declared.iter().filter(missing) {
        if let Some(default) = param.default {
            full.insert(param.name.to_owned(), default());
        }
    }
    cache_key(method.name(), version, &full, identity)
}

/// The cache key of a call: `rpc:cache:<method>:v<version>:<sha-256>` of
/// the canonical parameters (so their order does not matter) and the
/// caller's subject (an identified caller never gets another's results).
pub(crate) fn cache_key(
    method: &str,
    version: u32,
    params: &Map<String, Value>,
    identity: Option<&Identity>,
) -> String {
    let mut text = Vec::with_capacity(64);
    canonical_object(params, &mut text);
    let mut hasher = Sha256::new();
    hasher.update(&text);
    if let Some(identity) = identity {
        hasher.update(b"\0identity\0");
        hasher.update(identity.subject.as_bytes());
    }
    format!("rpc:cache:{method}:v{version}:{}", hex(&hasher.finalize()))
}

/// The lock key of a call: `rpc:lock:<method>`, followed by a hash of the
/// keying parameter's value when the lock has one (absent counts as `null`).
pub(crate) fn lock_key(method: &str, keyed_by: Option<&Value>) -> String {
    match keyed_by {
        None => format!("rpc:lock:{method}"),
        Some(value) => {
            let mut text = Vec::with_capacity(32);
            canonical(value, &mut text);
            let digest = Sha256::digest(&text);
            format!("rpc:lock:{method}:{}", hex(&digest[..16]))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn cache_keys_ignore_member_order_at_every_depth() {
        let a = map(json!({"q": "x", "f": {"b": 1, "a": [2, {"z": 1, "y": 2}]}}));
        let b = map(json!({"f": {"a": [2, {"y": 2, "z": 1}], "b": 1}, "q": "x"}));
        assert_eq!(cache_key("m", 1, &a, None), cache_key("m", 1, &b, None));
        let c = map(json!({"q": "x", "f": {"b": 1, "a": [{"z": 1, "y": 2}, 2]}}));
        assert_ne!(cache_key("m", 1, &a, None), cache_key("m", 1, &c, None), "array order matters");
        assert!(cache_key("m", 1, &a, None).starts_with("rpc:cache:m:v1:"));
    }

    #[test]
    fn cache_keys_separate_methods_versions_and_callers() {
        let p = map(json!({"id": 1}));
        let base = cache_key("m", 1, &p, None);
        assert_ne!(base, cache_key("n", 1, &p, None));
        assert_ne!(base, cache_key("m", 2, &p, None));
        assert_ne!(base, cache_key("m", 1, &p, Some(&Identity::new("tenant-a"))));
        assert_ne!(
            cache_key("m", 1, &p, Some(&Identity::new("tenant-a"))),
            cache_key("m", 1, &p, Some(&Identity::new("tenant-b")))
        );
        assert_ne!(base, cache_key("m", 1, &map(json!({"id": "1"})), None), "types count");
    }

    #[test]
    fn lock_keys() {
        assert_eq!(lock_key("m", None), "rpc:lock:m");
        assert_eq!(lock_key("m", Some(&json!(7))), lock_key("m", Some(&json!(7))));
        assert_ne!(lock_key("m", Some(&json!(7))), lock_key("m", Some(&json!(8))));
        assert_ne!(lock_key("m", Some(&json!(7))), lock_key("n", Some(&json!(7))));
    }
}
