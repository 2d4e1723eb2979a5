//! Store keys of a call: the cache key (method, version, a canonical hash of
//! the parameters, the caller) and the lock key (method, and the value of
//! the lock's parameter).

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::identity::Identity;
use crate::jsonrpc::write_json_string;

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
        Value::String(text) => write_json_string(out, text),
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // A number serialises into a Vec without failing.
        Value::Number(number) => {
            let _ = serde_json::to_writer(&mut *out, number);
        }
    }
}

fn canonical_object(map: &Map<String, Value>, out: &mut Vec<u8>) {
    canonical_members(map.iter().map(|(name, value)| (name.as_str(), value)), out);
}

/// `members` as a canonical JSON object: sorted by name (without sorting
/// when they come in order, as one-parameter calls do).
fn canonical_members<'a>(members: impl Iterator<Item = (&'a str, &'a Value)> + Clone, out: &mut Vec<u8>) {
    let mut names = members.clone().map(|(name, _)| name);
    let sorted = names.next().is_none_or(|first| {
        names
            .try_fold(first, |previous, name| match previous < name {
                true => Some(name),
                false => None,
            })
            .is_some()
    });
    out.push(b'{');
    let mut write = |i: usize, name: &str, value: &Value| {
        if i > 0 {
            out.push(b',');
        }
        write_json_string(out, name);
        out.push(b':');
        canonical(value, out);
    };
    if sorted {
        for (i, (name, value)) in members.enumerate() {
            write(i, name, value);
        }
    } else {
        let mut members: Vec<(&str, &Value)> = members.collect();
        members.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (i, (name, value)) in members.into_iter().enumerate() {
            write(i, name, value);
        }
    }
    out.push(b'}');
}

/// `bytes` in lowercase hex, appended to `out`.
fn push_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)]);
        out.push(DIGITS[usize::from(b & 15)]);
    }
}

/// `n` in decimal, appended to `out` (without the formatting machinery).
fn push_decimal(out: &mut Vec<u8>, n: u32) {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        // `rest % 10` is a digit.
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// A key written as bytes, as text: keys are built from text and JSON
/// only, so the lossy branch never runs.
fn into_string(key: Vec<u8>) -> String {
    String::from_utf8(key).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Canonical parameters up to this many bytes are the key themselves
/// (exact, and no hashing); longer ones are hashed.
const INLINE_PARAMS: usize = 96;

/// The parameters of a call of `method` in canonical form, with the
/// declared defaults filled in (`{"item": 1}` and `{"item": 1, "currency":
/// "EUR"}` are one call when `currency` defaults to `"EUR"`), into `out`.
fn write_canonical_params(method: &crate::registry::Method, params: &Map<String, Value>, out: &mut Vec<u8>) {
    let declared = method.descriptor().params;
    // Only parameters with a default are looked up (most have none).
    let defaults: Vec<(&str, Value)> = declared
        .iter()
        .filter_map(|p| p.default.filter(|_| p.is_param && !params.contains_key(p.name)).map(|d| (p.name, d())))
        .collect();
    if defaults.is_empty() {
        canonical_object(params, out);
    } else {
        let given = params.iter().map(|(name, value)| (name.as_str(), value));
        canonical_members(given.chain(defaults.iter().map(|(name, value)| (*name, value))), out);
    }
}

/// The keys of a call's cache entry: the caller's entry and, for a method
/// some relation invalidates, the generation key (the same without the
/// caller, under `rpc:cgen:`: an invalidation writes a new stamp there,
/// making every caller's entry for these parameters stale). Both from one
/// canonical rendering of the parameters, written into the key itself.
pub(crate) fn entry_keys(
    method: &crate::registry::Method,
    version: u32,
    params: &Map<String, Value>,
    identity: Option<&Identity>,
    with_generation: bool,
) -> (String, Option<String>) {
    entry_keys_of(method.name(), version, |out| write_canonical_params(method, params, out), identity, with_generation)
}

/// [`entry_keys`] with the parameters written by `render`.
fn entry_keys_of(
    method: &str,
    version: u32,
    render: impl FnOnce(&mut Vec<u8>),
    identity: Option<&Identity>,
    with_generation: bool,
) -> (String, Option<String>) {
    let mut key = request_key_of("rpc:cache:", method, version, render, identity.map(|i| i.subject.len()));
    let generation = with_generation.then(|| {
        let mut generation = Vec::with_capacity(key.len());
        generation.extend_from_slice(b"rpc:cgen:");
        generation.extend_from_slice(&key["rpc:cache:".len()..]);
        into_string(generation)
    });
    if let Some(identity) = identity {
        push_subject(&mut key, &identity.subject);
    }
    (into_string(key), generation)
}

/// The generation key of a call of `method` (see [`entry_keys`]).
pub(crate) fn generation_key(method: &crate::registry::Method, version: u32, params: &Map<String, Value>) -> String {
    let render = |out: &mut Vec<u8>| write_canonical_params(method, params, out);
    into_string(request_key_of("rpc:cgen:", method.name(), version, render, None))
}

/// The cache key of one caller's entry for a call of `method` with `params`
/// (defaults filled in, as the executor keys it).
pub(crate) fn caller_key(
    method: &crate::registry::Method,
    version: u32,
    params: &Map<String, Value>,
    identity: Option<&Identity>,
) -> String {
    entry_keys(method, version, params, identity, false).0
}

/// The prefix every caller's entry for a call of `method` with `params`
/// starts with: the anonymous caller's key, which an identified caller's
/// key extends with `@<subject>`. No other call's key starts with it: the
/// parameters end with their JSON object's `}` or a hash of fixed length.
pub(crate) fn request_prefix(method: &crate::registry::Method, version: u32, params: &Map<String, Value>) -> String {
    let render = |out: &mut Vec<u8>| write_canonical_params(method, params, out);
    into_string(request_key_of("rpc:cache:", method.name(), version, render, None))
}

/// The prefix of every cache entry of `method` in `version`:
/// `rpc:cache:<method>:v<version>:` (the closing `:` keeps `Catalog.get`
/// apart from `Catalog.getAll`).
pub(crate) fn method_prefix(method: &str, version: u32) -> String {
    let mut prefix = Vec::with_capacity("rpc:cache:".len() + method.len() + 13);
    push_head(&mut prefix, "rpc:cache:", method, version);
    into_string(prefix)
}

/// `<prefix><method>:v<version>:`, appended to `out`.
fn push_head(out: &mut Vec<u8>, prefix: &str, method: &str, version: u32) {
    out.extend_from_slice(prefix.as_bytes());
    out.extend_from_slice(method.as_bytes());
    out.extend_from_slice(b":v");
    push_decimal(out, version);
    out.push(b':');
}

/// The cache key of a call: `rpc:cache:<method>:v<version>:` and the
/// parameters in canonical form (so their order does not matter): as they
/// are (`j:{"id":7}`) when short, else their SHA-256 (`h:<hex>`); then
/// `@` and the caller's subject, when the access policy gave one (an
/// identified caller never gets another's results; a subject longer than
/// [`INLINE_SUBJECT`] bytes is its SHA-256, `h:<hex>`). Every caller's key
/// for one call starts with the same text, so they can be deleted together.
#[cfg(test)]
pub(crate) fn cache_key(
    method: &str,
    version: u32,
    params: &Map<String, Value>,
    identity: Option<&Identity>,
) -> String {
    entry_keys_of(method, version, |out| canonical_object(params, out), identity, false).0
}

/// Subjects up to this many bytes are written into keys as they are;
/// longer ones are hashed (so a key stays short whoever calls).
const INLINE_SUBJECT: usize = 64;

/// `<prefix><method>:v<version>:` and the canonical parameters `render`
/// writes (or their hash), with room for a subject of `subject` bytes: see
/// `cache_key`. The parameters are written into the key itself; only
/// parameters too long to be the key are hashed away again.
fn request_key_of(
    prefix: &str,
    method: &str,
    version: u32,
    render: impl FnOnce(&mut Vec<u8>),
    subject: Option<usize>,
) -> Vec<u8> {
    let subject = subject.map_or(0, |len| 1 + len.min(INLINE_SUBJECT + 2));
    let mut key = Vec::with_capacity(prefix.len() + method.len() + 16 + INLINE_PARAMS + 2 + subject);
    push_head(&mut key, prefix, method, version);
    key.extend_from_slice(b"j:");
    let start = key.len();
    render(&mut key);
    if key.len() - start > INLINE_PARAMS {
        let digest = Sha256::digest(&key[start..]);
        key.truncate(start - 2);
        key.extend_from_slice(b"h:");
        push_hex(&mut key, &digest);
    }
    key
}

/// `@` and the caller's `subject` (its hash when long), appended to `key`.
/// A subject written as it is has at most [`INLINE_SUBJECT`] bytes, a
/// hashed one 66 (`h:` and 64 digits): one never passes for the other.
fn push_subject(key: &mut Vec<u8>, subject: &str) {
    key.push(b'@');
    if subject.len() <= INLINE_SUBJECT {
        key.extend_from_slice(subject.as_bytes());
    } else {
        key.extend_from_slice(b"h:");
        push_hex(key, &Sha256::digest(subject.as_bytes()));
    }
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
            let mut key = format!("rpc:lock:{method}:").into_bytes();
            push_hex(&mut key, &digest[..16]);
            into_string(key)
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
    fn short_parameters_are_the_key_long_ones_are_hashed() {
        assert_eq!(cache_key("m", 1, &map(json!({"b": 1, "a": "x"})), None), r#"rpc:cache:m:v1:j:{"a":"x","b":1}"#);
        assert_eq!(
            cache_key("m", 1, &map(json!({"a": 1})), Some(&Identity::new("t"))),
            r#"rpc:cache:m:v1:j:{"a":1}@t"#
        );
        let long = map(json!({"q": "x".repeat(200)}));
        let key = cache_key("m", 1, &long, None);
        assert!(key.starts_with("rpc:cache:m:v1:h:") && key.len() == "rpc:cache:m:v1:h:".len() + 64, "{key}");
        let mut longer = long.clone();
        longer.insert("r".into(), json!(1));
        assert_ne!(key, cache_key("m", 1, &longer, None));
        // A subject cannot pass for parameters.
        assert_ne!(
            cache_key("m", 1, &map(json!({"a": "1}@t"})), None),
            cache_key("m", 1, &map(json!({"a": "1"})), Some(&Identity::new("t")))
        );
    }

    #[test]
    fn entry_keys_share_one_rendering() {
        let p = map(json!({"b": 1, "a": "x"}));
        let text = |out: &mut Vec<u8>| canonical_object(&p, out);
        let (key, generation) = entry_keys_of("m", 12, text, None, true);
        assert_eq!(key, r#"rpc:cache:m:v12:j:{"a":"x","b":1}"#);
        assert_eq!(generation.as_deref(), Some(r#"rpc:cgen:m:v12:j:{"a":"x","b":1}"#));
        let (key, generation) = entry_keys_of("m", 0, text, Some(&Identity::new("t")), true);
        assert_eq!(key, r#"rpc:cache:m:v0:j:{"a":"x","b":1}@t"#);
        assert_eq!(generation.as_deref(), Some(r#"rpc:cgen:m:v0:j:{"a":"x","b":1}"#), "no caller in a generation");
        assert_eq!(entry_keys_of("m", u32::MAX, text, None, false).1, None);
        assert!(entry_keys_of("m", u32::MAX, text, None, false).0.starts_with("rpc:cache:m:v4294967295:"));
    }

    #[test]
    fn every_callers_key_starts_with_the_requests_prefix() {
        let long_subject = Identity::new("s".repeat(200));
        for params in [json!({"a": 1}), json!({"q": "x".repeat(200)})] {
            let p = map(params);
            let anonymous = cache_key("m", 1, &p, None);
            for caller in [Identity::new("t"), Identity::new("x".repeat(90)), long_subject.clone()] {
                let key = cache_key("m", 1, &p, Some(&caller));
                assert!(key.starts_with(&format!("{anonymous}@")), "{key} extends {anonymous}");
            }
        }
        // Another call's key never starts with it.
        let one = cache_key("m", 1, &map(json!({"a": 1})), None);
        assert!(!cache_key("m", 1, &map(json!({"a": 10})), None).starts_with(&one));
        // A long subject is hashed; a subject that looks hashed is not taken for one.
        let hashed = cache_key("m", 1, &map(json!({})), Some(&long_subject));
        assert_eq!(hashed.len(), r#"rpc:cache:m:v1:j:{}@h:"#.len() + 64, "{hashed}");
        let lookalike = Identity::new(hashed[hashed.len() - 66..].to_owned());
        assert_ne!(cache_key("m", 1, &map(json!({})), Some(&lookalike)), hashed);
    }

    #[test]
    fn method_prefixes_end_at_the_version() {
        let prefix = method_prefix("Catalog.get", 1);
        assert_eq!(prefix, "rpc:cache:Catalog.get:v1:");
        assert!(cache_key("Catalog.get", 1, &map(json!({"id": 1})), None).starts_with(&prefix));
        assert!(!cache_key("Catalog.getAll", 1, &map(json!({})), None).starts_with(&prefix));
        assert!(!cache_key("Catalog.get", 12, &map(json!({})), None).starts_with(&prefix));
    }

    #[test]
    fn lock_keys() {
        assert_eq!(lock_key("m", None), "rpc:lock:m");
        assert_eq!(lock_key("m", Some(&json!(7))), lock_key("m", Some(&json!(7))));
        assert_ne!(lock_key("m", Some(&json!(7))), lock_key("m", Some(&json!(8))));
        assert_ne!(lock_key("m", Some(&json!(7))), lock_key("n", Some(&json!(7))));
    }
}
