//! The queue message of one asynchronous call: a JSON body and its
//! HMAC-SHA256 signature (lowercase hex) in the `x-rpc-signature` header.
//!
//! ```json
//! {"v": 1, "dedup": "9f2c…", "issuedAt": 1767225600000,
//!  "method": "Catalog.reindex", "version": 1, "params": {"pause_ms": 10}, "id": "7",
//!  "callback": "http://127.0.0.1:9000/hooks/done", "headers": {"x-request-id": "r-1"},
//!  "identity": {"subject": "alice", "scopes": ["catalog:read"], "scoped": true, "clientId": null, "attributes": {}},
//!  "ignoreCache": false, "timeoutMs": null, "rayId": null}
//! ```
//!
//! `id` holds the request id's JSON text (`"7"`, `"\"a\""`); absent for a
//! notification. The signature covers the body's exact bytes, so a message
//! written by anyone without the secret is refused, and so is one whose
//! body was changed; [`open`] checks it in constant time before reading
//! the JSON.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit, Mac};
use http::{HeaderMap, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use sha2::Sha256;

use super::AmqpConfig;
use crate::jsonrpc::callback::FORWARDED_HEADERS;
use crate::jsonrpc::{Job, JsonRpcService};
use crate::security::Identity;
use rpc_core::executor::Params;
use rpc_core::jsonrpc::special::MAX_TIMEOUT_SECS;

/// The header carrying the signature.
pub const SIGNATURE_HEADER: &str = "x-rpc-signature";
/// The message format's version.
pub const FORMAT: u8 = 1;
/// How far in the future a message's `issuedAt` may be (clock skew).
const MAX_SKEW: Duration = Duration::from_secs(300);

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Message {
    v: u8,
    dedup: String,
    issued_at: u64,
    method: String,
    version: u32,
    params: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    callback: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    identity: Option<Identity>,
    #[serde(default)]
    ignore_cache: bool,
    timeout_ms: Option<u64>,
    ray_id: Option<String>,
}

/// Why a message was refused (it is dead-lettered, never run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Larger than [`AmqpConfig::max_message_bytes`].
    TooLarge(usize),
    /// No signature, or one that does not match the body.
    BadSignature,
    /// Not a message of this format.
    Unreadable(String),
    /// Older than [`AmqpConfig::max_age`], or from the future.
    Expired,
    /// Its callback URL is not allowed by the worker's policy.
    CallbackRefused(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::TooLarge(n) => write!(f, "message of {n} bytes is over the limit"),
            Refusal::BadSignature => f.write_str("missing or wrong signature (not published with this secret)"),
            Refusal::Unreadable(why) => write!(f, "unreadable message: {why}"),
            Refusal::Expired => f.write_str("message too old (or from the future)"),
            Refusal::CallbackRefused(why) => write!(f, "callback refused by the worker's policy: {why}"),
        }
    }
}

fn mac(secret: &[u8], body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length: this cannot fail.
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret).unwrap_or_else(|_| unreachable!());
    mac.update(body);
    mac
}

/// The signature of `body` under `secret` (lowercase hex).
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    mac(secret, body).finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &[u8]) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16);
    text.chunks(2).map(|pair| Some((digit(pair[0])? * 16 + digit(pair[1])?) as u8)).collect()
}

/// Milliseconds since the epoch, now.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// The message of `job`: its body and signature. Fails for a body over
/// the size limit.
pub fn seal(job: &Job, config: &AmqpConfig) -> Result<(Vec<u8>, String), String> {
    let params = match &job.params {
        Params::None => Value::Null,
        Params::Named(map) => Value::Object(map.clone()),
        Params::Positional(list) => Value::Array(list.clone()),
    };
    let headers = job
        .headers
        .iter()
        .filter_map(|(name, value)| Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned())))
        .collect();
    let message = Message {
        v: FORMAT,
        dedup: job.dedup.clone(),
        issued_at: now_ms(),
        method: job.method.clone(),
        version: job.version,
        params,
        id: job.id.as_ref().map(|id| id.get().to_owned()),
        callback: job.url.as_str().to_owned(),
        headers,
        identity: job.identity.as_deref().cloned(),
        ignore_cache: job.ignore_cache,
        timeout_ms: job.timeout.map(|t| t.as_millis() as u64),
        ray_id: job.ray_id.clone(),
    };
    let body = serde_json::to_vec(&message).map_err(|e| format!("cannot serialise the call: {e}"))?;
    if body.len() > config.max_message_bytes {
        return Err(format!(
            "the call's message ({} bytes) is over the limit of {}",
            body.len(),
            config.max_message_bytes
        ));
    }
    let signature = sign(&config.secret, &body);
    Ok((body, signature))
}

/// Checks that `body` is within the size limit and `signature` (lowercase
/// hex, from the [`SIGNATURE_HEADER`]) is its signature under the shared
/// secret, in constant time: what every consumer does before reading a
/// message.
pub fn verify(body: &[u8], signature: Option<&[u8]>, config: &AmqpConfig) -> Result<(), Refusal> {
    if body.len() > config.max_message_bytes {
        return Err(Refusal::TooLarge(body.len()));
    }
    let signature = signature.and_then(unhex).ok_or(Refusal::BadSignature)?;
    mac(&config.secret, body).verify_slice(&signature).map_err(|_| Refusal::BadSignature)
}

/// Whether a message issued at `issued_at` (milliseconds since the epoch)
/// is fresh: not older than [`AmqpConfig::max_age`], not from the future
/// (beyond a clock skew of 5 minutes).
pub fn check_age(issued_at: u64, config: &AmqpConfig) -> Result<(), Refusal> {
    let now = now_ms();
    let max_age = u64::try_from(config.max_age.as_millis()).unwrap_or(u64::MAX);
    if issued_at.saturating_add(max_age) < now || issued_at > now.saturating_add(MAX_SKEW.as_millis() as u64) {
        return Err(Refusal::Expired);
    }
    Ok(())
}

/// The job in a message, if it is signed with the secret, fresh, readable,
/// and its callback is allowed by `service`'s policy.
pub fn open(
    body: &[u8],
    signature: Option<&[u8]>,
    config: &AmqpConfig,
    service: &JsonRpcService,
) -> Result<Job, Refusal> {
    verify(body, signature, config)?;
    read(body, config, service)
}

/// The job in a message whose signature was [verified](verify).
pub(crate) fn read(body: &[u8], config: &AmqpConfig, service: &JsonRpcService) -> Result<Job, Refusal> {
    let message: Message = serde_json::from_slice(body).map_err(|e| Refusal::Unreadable(e.to_string()))?;
    if message.v != FORMAT {
        return Err(Refusal::Unreadable(format!("format {} (this worker reads {FORMAT})", message.v)));
    }
    check_age(message.issued_at, config)?;
    let dedup = message.dedup;
    if dedup.len() != 32 || !dedup.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Refusal::Unreadable("the deduplication id is not 32 hex digits".to_owned()));
    }
    let params = match message.params {
        Value::Null => Params::None,
        Value::Object(map) => Params::Named(map),
        Value::Array(list) => Params::Positional(list),
        _ => return Err(Refusal::Unreadable("params are neither an object nor an array".to_owned())),
    };
    let id = match message.id {
        Some(text) => Some(RawValue::from_string(text).map_err(|e| Refusal::Unreadable(format!("id: {e}")))?),
        None => None,
    };
    let timeout = match message.timeout_ms {
        Some(ms) if ms == 0 || ms as f64 > MAX_TIMEOUT_SECS * 1000.0 => {
            return Err(Refusal::Unreadable("timeout out of range".to_owned()));
        }
        ms => ms.map(Duration::from_millis),
    };
    let mut headers = HeaderMap::new();
    for (name, value) in message.headers {
        let allowed = FORWARDED_HEADERS.iter().find(|h| h.eq_ignore_ascii_case(&name));
        let (Some(allowed), Ok(value)) = (allowed, HeaderValue::from_str(&value)) else {
            return Err(Refusal::Unreadable(format!("header `{}` is not forwarded", name.escape_debug())));
        };
        headers.insert(HeaderName::from_static(allowed), value);
    }
    let url =
        service.check_callback(&message.callback).map_err(|e| Refusal::CallbackRefused(e.message().to_owned()))?;
    Ok(Job {
        method: message.method,
        version: message.version,
        params,
        ignore_cache: message.ignore_cache,
        timeout,
        ray_id: message.ray_id,
        identity: message.identity.map(Arc::new),
        id,
        url,
        headers,
        dedup,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::Callbacks;
    use serde_json::Map;

    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";

    fn service(allow: &str) -> JsonRpcService {
        let registry = rpc_core::Registry::builder().build().unwrap();
        let executor = rpc_core::Executor::new(registry, rpc_core::Environment::Dev);
        JsonRpcService::builder(executor).callbacks(Callbacks::allow([allow]).unwrap()).build()
    }

    fn config() -> AmqpConfig {
        AmqpConfig::new("amqp://127.0.0.1:5672/%2f", SECRET).unwrap()
    }

    fn job(service: &JsonRpcService) -> Job {
        let mut params = Map::new();
        params.insert("id".into(), Value::from(7));
        let mut headers = HeaderMap::new();
        headers.insert("x-request-id", HeaderValue::from_static("r-1"));
        let identity = Identity::new("alice").with_scopes(["a:read"]).with_client_id("app").with("tenant", "t1");
        Job {
            method: "Catalog.get".into(),
            version: 2,
            params: Params::Named(params),
            ignore_cache: true,
            timeout: Some(Duration::from_millis(2500)),
            ray_id: Some("ray".into()),
            identity: Some(Arc::new(identity)),
            id: Some(RawValue::from_string("\"x\"".into()).unwrap()),
            url: service.check_callback("http://127.0.0.1:9000/hooks/done?k=1").unwrap(),
            headers,
            dedup: crate::jsonrpc::queue::dedup_id().unwrap(),
        }
    }

    #[test]
    fn a_sealed_job_opens_as_it_was() {
        let service = service("http://127.0.0.1:9000/hooks");
        let job = job(&service);
        let (body, signature) = seal(&job, &config()).unwrap();
        let back = open(&body, Some(signature.as_bytes()), &config(), &service).unwrap();
        assert_eq!((back.method(), back.version(), back.dedup_id()), (job.method(), 2, job.dedup_id()));
        assert_eq!(back.identity(), job.identity());
        assert_eq!(back.callback().as_str(), job.callback().as_str());
        assert_eq!(back.headers, job.headers);
        assert_eq!(back.id.as_ref().map(|id| id.get()), Some("\"x\""));
        assert_eq!((back.ignore_cache, back.timeout, back.ray_id()), (true, job.timeout, Some("ray")));
        let Params::Named(params) = &back.params else { panic!("named params") };
        assert_eq!(params.get("id"), Some(&Value::from(7)));
        let notification = Job { id: None, params: Params::Positional(vec![Value::from(1)]), ..job };
        let (body, signature) = seal(&notification, &config()).unwrap();
        let back = open(&body, Some(signature.as_bytes()), &config(), &service).unwrap();
        assert!(back.is_notification() && matches!(back.params, Params::Positional(ref p) if p.len() == 1));
    }

    #[test]
    fn forged_changed_large_old_and_unreadable_messages_are_refused() {
        let service = service("http://127.0.0.1:9000/hooks");
        let (body, signature) = seal(&job(&service), &config()).unwrap();
        let refused = |body: &[u8], signature: Option<&str>| {
            open(body, signature.map(str::as_bytes), &config(), &service).map(|_| ()).unwrap_err()
        };
        assert_eq!(refused(&body, None), Refusal::BadSignature);
        assert_eq!(refused(&body, Some("zz")), Refusal::BadSignature);
        assert_eq!(refused(&body, Some(&sign(b"another secret of 32 bytes......", &body))), Refusal::BadSignature);
        let mut changed = body.clone();
        let at = changed.windows(5).position(|w| w == b"alice").unwrap();
        changed[at] = b'A';
        assert_eq!(refused(&changed, Some(&signature)), Refusal::BadSignature);
        let small = config().max_message_bytes(64);
        assert_eq!(
            open(&body, Some(signature.as_bytes()), &small, &service).map(|_| ()).unwrap_err(),
            Refusal::TooLarge(body.len())
        );
        assert!(seal(&job(&service), &small).is_err());
        // Signed with the secret, but not acceptable.
        let mut message: Value = serde_json::from_slice(&body).unwrap();
        let signed = |message: &Value| {
            let body = serde_json::to_vec(message).unwrap();
            let signature = sign(SECRET, &body);
            refused(&body, Some(&signature))
        };
        message["issuedAt"] = Value::from(1_000);
        assert_eq!(signed(&message), Refusal::Expired);
        message["issuedAt"] = Value::from(now_ms() + 3_600_000);
        assert_eq!(signed(&message), Refusal::Expired);
        message["issuedAt"] = Value::from(now_ms());
        message["extra"] = Value::from(1);
        assert!(matches!(signed(&message), Refusal::Unreadable(_)));
        message.as_object_mut().unwrap().remove("extra");
        message["headers"]["cookie"] = Value::from("session=1");
        assert!(matches!(signed(&message), Refusal::Unreadable(_)));
        message["headers"] = Value::Object(Map::new());
        message["timeoutMs"] = Value::from(600_000);
        assert!(matches!(signed(&message), Refusal::Unreadable(_)));
        message["timeoutMs"] = Value::Null;
        message["dedup"] = Value::from("x");
        assert!(matches!(signed(&message), Refusal::Unreadable(_)));
        message["dedup"] = Value::from("0".repeat(32));
        message["callback"] = Value::from("http://169.254.169.254/latest");
        assert!(matches!(signed(&message), Refusal::CallbackRefused(_)));
        assert!(matches!(refused(b"\x00\xff", Some(&sign(SECRET, b"\x00\xff"))), Refusal::Unreadable(_)));
    }

    #[test]
    fn verify_checks_size_and_signature_and_check_age_freshness() {
        let body = br#"{"v":1,"taskId":"t"}"#;
        let signature = sign(SECRET, body);
        assert_eq!(verify(body, Some(signature.as_bytes()), &config()), Ok(()));
        assert_eq!(verify(body, None, &config()), Err(Refusal::BadSignature));
        let other = sign(b"another secret of 32 bytes......", body);
        assert_eq!(verify(body, Some(other.as_bytes()), &config()), Err(Refusal::BadSignature));
        assert_eq!(verify(b"{}", Some(signature.as_bytes()), &config()), Err(Refusal::BadSignature));
        let small = config().max_message_bytes(8);
        assert_eq!(verify(body, Some(signature.as_bytes()), &small), Err(Refusal::TooLarge(body.len())));
        assert_eq!(check_age(now_ms(), &config()), Ok(()));
        assert_eq!(check_age(now_ms() - 60_000, &config()), Ok(()));
        assert_eq!(check_age(1_000, &config()), Err(Refusal::Expired));
        assert_eq!(check_age(now_ms() + 3_600_000, &config()), Err(Refusal::Expired));
        let short = config().max_age(Duration::from_secs(10));
        assert_eq!(check_age(now_ms() - 60_000, &short), Err(Refusal::Expired));
    }

    #[test]
    fn signatures_are_hex_of_hmac_sha256() {
        // RFC 4231, test case 2.
        assert_eq!(
            sign(b"Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(unhex(b"0aff"), Some(vec![10, 255]));
        assert_eq!(unhex(b"0g"), None);
        assert_eq!(unhex(b"abc"), None);
    }
}
