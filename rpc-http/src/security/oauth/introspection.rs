//! Opaque access tokens, checked by asking the authorization server (token
//! introspection, RFC 7662), when [`OAuthSettings::introspection`](super::OAuthSettings::introspection)
//! turns it on: tokens that are not JWTs are POSTed to its
//! `introspection_endpoint` (`token=…&token_type_hint=access_token`, the
//! resource server authenticating with `client_secret_basic`, RFC 6749
//! §2.3.1), and the answer is judged as a JWT's claims are: `active`, not
//! expired (`exp`, `nbf`, with the leeway), from this issuer when it says
//! (`iss`), for this resource (`aud`, required: RFC 8707), an access token
//! (`token_type`); the caller is its `sub` (else its `client_id`) with its
//! `scope`.
//!
//! Answers are kept by the SHA-256 of the token (never the token itself):
//! an active token's until it expires but a minute at most, a refusal's
//! 10 s, 10,000 at most (expired ones are dropped when full; then new
//! answers are not kept). At most 16 requests go to the authorization
//! server at once; requests for the same token share one; a request that
//! cannot get a slot within 5 s, and any answer that is not a usable
//! introspection answer (an error status, not JSON, too large, too late),
//! is refused with 503 (retry later), logged, and not kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rpc_core::clock::{Clock, SystemClock};
use rpc_core::logged::logged_up_to;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::{Semaphore, watch};
use url::Url;

use super::fetch::post_form;
use super::token::{self, Claims, Verdict, invalid};
use super::{OAuthError, OAuthSettings};

/// The most bytes an introspection answer may have.
const MAX_ANSWER: usize = 64 * 1024;
/// The most introspection requests in flight at once.
const MAX_IN_FLIGHT: usize = 16;
/// How long a request may wait for one of those slots.
const SLOT_WAIT: Duration = Duration::from_secs(5);
/// How long an active token's answer is kept at most.
const POSITIVE_TTL: Duration = Duration::from_secs(60);
/// How long a refusal is kept.
const NEGATIVE_TTL: Duration = Duration::from_secs(10);
/// The most answers kept.
const MAX_CACHED: usize = 10_000;
/// How often a full cache may be swept of expired answers.
const SWEEP_EVERY: Duration = Duration::from_secs(1);
/// How often a failing authorization server is logged as a warning (in
/// between: at debug level).
const WARN_EVERY: Duration = Duration::from_secs(10);

/// The message of the 503 answering a token the authorization server
/// could not check.
pub(super) const UNAVAILABLE: &str = "the authorization server could not check the token; retry later";

/// The resource server's client credentials at the authorization server
/// (the secret is never shown by `Debug`).
#[derive(Clone)]
pub(super) struct Credentials {
    client_id: String,
    secret: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials").field("client_id", &self.client_id).field("secret", &"<redacted>").finish()
    }
}

impl Credentials {
    /// The client `client_id` authenticating with `secret`.
    pub(super) fn new(client_id: &str, secret: &str) -> Self {
        Credentials { client_id: client_id.to_owned(), secret: secret.to_owned() }
    }

    /// Whether the credentials can be used (both non-empty), or why not.
    pub(super) fn check(&self) -> Result<(), OAuthError> {
        if self.client_id.is_empty() || self.secret.is_empty() {
            return Err(OAuthError::new(
                "token introspection needs this resource server's client id and secret at the authorization server (both non-empty)",
            ));
        }
        Ok(())
    }

    /// User and password of the Basic header: each form-urlencoded first
    /// (RFC 6749 §2.3.1).
    fn basic(&self) -> (String, String) {
        let encode = |text: &str| url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
        (encode(&self.client_id), encode(&self.secret))
    }
}

/// What an answer is judged by: the policy's issuer, audience, required
/// scopes and leeway.
#[derive(Debug, Clone)]
struct Rules {
    issuer: String,
    audience: String,
    required_scopes: Vec<String>,
    leeway: Duration,
}

/// The SHA-256 of a token: how its answer is kept.
type Key = [u8; 32];

/// Checks opaque tokens at the authorization server; clones share the
/// cache, the slots and the requests in flight.
#[derive(Clone)]
pub(super) struct Introspector {
    shared: Arc<Shared>,
}

struct Shared {
    client: reqwest::Client,
    endpoint: Url,
    /// Form-urlencoded client id and secret.
    basic: (String, String),
    rules: Rules,
    cache: Mutex<Cache>,
    /// The tokens being introspected now, and where their verdict will be.
    flights: Mutex<HashMap<Key, watch::Receiver<Option<Verdict>>>>,
    slots: Semaphore,
    clock: Arc<dyn Clock>,
    warned_at: Mutex<Option<Instant>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes a flight when its task ends, however it ends (the waiters then
/// see the verdict, or a closed channel if the task panicked).
struct Landing<'a> {
    shared: &'a Shared,
    key: Key,
}

impl Drop for Landing<'_> {
    fn drop(&mut self) {
        lock(&self.shared.flights).remove(&self.key);
    }
}

impl Introspector {
    fn new(client: reqwest::Client, endpoint: Url, credentials: &Credentials, rules: Rules) -> Self {
        Introspector {
            shared: Arc::new(Shared {
                client,
                endpoint,
                basic: credentials.basic(),
                rules,
                cache: Mutex::new(Cache::new(MAX_CACHED)),
                flights: Mutex::new(HashMap::new()),
                slots: Semaphore::new(MAX_IN_FLIGHT),
                clock: Arc::new(SystemClock),
                warned_at: Mutex::new(None),
            }),
        }
    }

    /// The introspector of `settings` (`None` when introspection is off),
    /// asking at `endpoint`.
    pub(super) fn of(settings: &OAuthSettings, client: reqwest::Client, endpoint: Url) -> Option<Self> {
        let credentials = settings.introspection.as_ref()?;
        let rules = Rules {
            issuer: settings.issuer_text.clone(),
            audience: settings.audience_text.clone(),
            required_scopes: settings.required_scopes.clone(),
            leeway: settings.leeway,
        };
        Some(Introspector::new(client, endpoint, credentials, rules))
    }

    /// The introspection endpoint.
    pub(super) fn endpoint(&self) -> &Url {
        &self.shared.endpoint
    }

    /// How many answers are kept now.
    pub(super) fn cached(&self) -> usize {
        lock(&self.shared.cache).entries.len()
    }

    /// The verdict on the opaque `token`: kept, being asked already (then
    /// shared), or asked now.
    pub(super) async fn check(&self, token: &str) -> Verdict {
        if !is_b64token(token) {
            // Not a bearer token at all: not worth asking about.
            return invalid("the token is malformed (RFC 6750 §2.1: letters, digits and -._~+/, then =)");
        }
        let key: Key = Sha256::digest(token.as_bytes()).into();
        let now = self.shared.clock.now();
        if let Some(verdict) = lock(&self.shared.cache).get(&key, now) {
            return verdict;
        }
        let mut receiver = {
            let mut flights = lock(&self.shared.flights);
            // A flight may have landed since the cache was read.
            if let Some(verdict) = lock(&self.shared.cache).get(&key, now) {
                return verdict;
            }
            match flights.get(&key) {
                Some(receiver) => receiver.clone(),
                None => {
                    let (sender, receiver) = watch::channel(None);
                    flights.insert(key, receiver.clone());
                    // A task of its own: a client that goes away does not
                    // cancel what others wait for.
                    let this = self.clone();
                    let token = token.to_owned();
                    tokio::spawn(async move {
                        let _landing = Landing { shared: &this.shared, key };
                        let (verdict, keep) = this.introspect(&token).await;
                        let now = this.shared.clock.now();
                        lock(&this.shared.cache).put(key, &verdict, keep, now);
                        let _ = sender.send(Some(verdict));
                    });
                    receiver
                }
            }
        };
        match receiver.wait_for(Option::is_some).await {
            Ok(verdict) => verdict.clone().unwrap_or(Verdict::Unavailable),
            Err(_) => Verdict::Unavailable,
        }
    }

    /// Asks the authorization server about `token`: the verdict and how
    /// long it may be kept.
    async fn introspect(&self, token: &str) -> (Verdict, Duration) {
        let shared = &self.shared;
        let Ok(Ok(_slot)) = tokio::time::timeout(SLOT_WAIT, shared.slots.acquire()).await else {
            self.warn(&format!("{MAX_IN_FLIGHT} token introspections were in flight for {} s", SLOT_WAIT.as_secs()));
            return (Verdict::Unavailable, Duration::ZERO);
        };
        let form = [("token", token), ("token_type_hint", "access_token")];
        let basic = (shared.basic.0.as_str(), shared.basic.1.as_str());
        let answer =
            post_form::<Value>(&shared.client, "token introspection", &shared.endpoint, &form, basic, MAX_ANSWER).await;
        let judged = answer.map_err(|e| e.to_string()).and_then(|answer| judge(&answer, &shared.rules, unix_now()));
        judged.unwrap_or_else(|why| {
            self.warn(&why);
            (Verdict::Unavailable, Duration::ZERO)
        })
    }

    /// Logs an authorization server that cannot check tokens: a warning
    /// every [`WARN_EVERY`] at most, the rest at debug level.
    fn warn(&self, why: &str) {
        let now = self.shared.clock.now();
        let mut warned_at = lock(&self.shared.warned_at);
        let why = logged_up_to(why, 400);
        if warned_at.is_none_or(|at| now.saturating_duration_since(at) >= WARN_EVERY) {
            *warned_at = Some(now);
            tracing::warn!(why = %why, "OAuth: the authorization server cannot check tokens now; they are answered 503");
        } else {
            tracing::debug!(why = %why, "OAuth: token introspection failed");
        }
    }
}

/// Whether `token` has the syntax of a bearer token (RFC 6750 §2.1
/// `b64token`): `[A-Za-z0-9-._~+/]+=*`.
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty() && body.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

fn unix_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// A refusal kept for [`NEGATIVE_TTL`].
fn refused(message: impl Into<std::borrow::Cow<'static, str>>) -> Result<(Verdict, Duration), String> {
    Ok((invalid(message), NEGATIVE_TTL))
}

/// A time claim (seconds since the epoch), when present: `Err` if it is not a number.
fn time_claim(answer: &serde_json::Map<String, Value>, name: &str) -> Result<Option<f64>, ()> {
    match answer.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_f64().map(Some).ok_or(()),
        Some(_) => Err(()),
    }
}

/// A string claim, when present (a claim of another type is ignored).
fn text_claim(answer: &serde_json::Map<String, Value>, name: &str) -> Option<String> {
    answer.get(name).and_then(Value::as_str).map(str::to_owned)
}

/// The verdict on an introspection `answer` at `now` (seconds since the
/// epoch) and how long it may be kept; `Err` when the answer is not one
/// (the authorization server is at fault: 503, not kept).
fn judge(answer: &Value, rules: &Rules, now: f64) -> Result<(Verdict, Duration), String> {
    let Some(answer) = answer.as_object() else {
        return Err("the token introspection answer is not a JSON object".to_owned());
    };
    match answer.get("active") {
        Some(Value::Bool(true)) => {}
        Some(Value::Bool(false)) => return refused("the token is not active"),
        Some(_) => return Err("the token introspection answer's `active` is not a boolean".to_owned()),
        None => return Err("the token introspection answer has no `active` (RFC 7662 §2.2)".to_owned()),
    }
    if let Some(kind) = answer.get("token_type").filter(|kind| !kind.is_null()) {
        let bearer =
            kind.as_str().is_some_and(|k| k.eq_ignore_ascii_case("access_token") || k.eq_ignore_ascii_case("bearer"));
        if !bearer {
            return refused("the token is not a bearer access token (its `token_type`)");
        }
    }
    let leeway = rules.leeway.as_secs_f64();
    let Ok(exp) = time_claim(answer, "exp") else {
        return refused("the token's `exp` claim is malformed");
    };
    if exp.is_some_and(|exp| exp + leeway < now) {
        return refused("the token has expired");
    }
    match time_claim(answer, "nbf") {
        Err(()) => return refused("the token's `nbf` claim is malformed"),
        Ok(Some(nbf)) if nbf - leeway > now => return refused("the token is not valid yet (`nbf`)"),
        Ok(_) => {}
    }
    if answer.get("iss").is_some_and(|iss| !iss.is_null() && iss.as_str() != Some(rules.issuer.as_str())) {
        return refused("the token was issued by another issuer");
    }
    let for_us = match answer.get("aud") {
        None | Some(Value::Null) => {
            return refused(
                "the token introspection answer has no `aud`: the authorization server must return `aud` naming this resource (RFC 8707)",
            );
        }
        Some(Value::String(aud)) => *aud == rules.audience,
        Some(Value::Array(list)) => list.iter().any(|aud| aud.as_str() == Some(rules.audience.as_str())),
        Some(_) => return refused("the token's `aud` claim is malformed"),
    };
    if !for_us {
        return refused(format!("the token is not for this resource: its `aud` does not name {}", rules.audience));
    }
    let claims = Claims {
        sub: text_claim(answer, "sub"),
        client_id: text_claim(answer, "client_id"),
        scope: text_claim(answer, "scope"),
        ..Claims::default()
    };
    let verdict = token::identity(claims, &rules.issuer, &rules.required_scopes);
    let keep = match verdict {
        Verdict::Valid(_) => {
            let left = exp.map_or(f64::INFINITY, |exp| exp - now);
            if left >= POSITIVE_TTL.as_secs_f64() {
                POSITIVE_TTL
            } else if left > 0.0 {
                Duration::from_secs_f64(left)
            } else {
                Duration::ZERO
            }
        }
        _ => NEGATIVE_TTL,
    };
    Ok((verdict, keep))
}

/// The answers kept: by token digest, until when, at most `capacity`.
struct Cache {
    entries: HashMap<Key, (Instant, Verdict)>,
    capacity: usize,
    swept_at: Option<Instant>,
}

impl Cache {
    fn new(capacity: usize) -> Self {
        Cache { entries: HashMap::new(), capacity, swept_at: None }
    }

    /// The verdict kept for `key`, if still good at `now`.
    fn get(&mut self, key: &Key, now: Instant) -> Option<Verdict> {
        match self.entries.get(key) {
            Some((until, verdict)) if *until > now => Some(verdict.clone()),
            Some(_) => {
                self.entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Keeps `verdict` for `keep` (nothing for zero, or an unavailable
    /// server); when full, drops what has expired (once per
    /// [`SWEEP_EVERY`] at most), and if still full keeps nothing.
    fn put(&mut self, key: Key, verdict: &Verdict, keep: Duration, now: Instant) -> bool {
        if keep.is_zero() || matches!(verdict, Verdict::Unavailable) {
            return false;
        }
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
            if self.swept_at.is_none_or(|at| now.saturating_duration_since(at) >= SWEEP_EVERY) {
                self.swept_at = Some(now);
                self.entries.retain(|_, (until, _)| *until > now);
            }
            if self.entries.len() >= self.capacity {
                return false;
            }
        }
        self.entries.insert(key, (now + keep, verdict.clone()));
        true
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::security::BearerError;

    const NOW: f64 = 1_800_000_000.0;

    fn rules() -> Rules {
        Rules {
            issuer: "https://as.example".into(),
            audience: "https://api.example/".into(),
            required_scopes: vec!["read".into()],
            leeway: Duration::from_secs(30),
        }
    }

    fn good() -> Value {
        json!({"active": true, "aud": "https://api.example/", "iss": "https://as.example", "sub": "alice",
               "client_id": "app", "scope": "read write", "exp": NOW + 600.0, "token_type": "Bearer"})
    }

    /// `good()` with `changes` merged in (`null` removes a member).
    fn with(changes: Value) -> Value {
        let mut answer = good();
        for (k, v) in changes.as_object().unwrap() {
            if v.is_null() {
                answer.as_object_mut().unwrap().remove(k);
            } else {
                answer[k] = v.clone();
            }
        }
        answer
    }

    fn refusal(answer: Value) -> String {
        match judge(&answer, &rules(), NOW) {
            Ok((Verdict::Refused(_, message), keep)) => {
                assert_eq!(keep, NEGATIVE_TTL);
                message.into_owned()
            }
            other => panic!("refusal expected: {other:?}"),
        }
    }

    fn identity(answer: Value) -> (rpc_core::Identity, Duration) {
        match judge(&answer, &rules(), NOW) {
            Ok((Verdict::Valid(identity), keep)) => (identity, keep),
            other => panic!("an identity expected: {other:?}"),
        }
    }

    #[test]
    fn an_active_token_for_this_resource_is_its_subject_with_its_scopes() {
        let (id, keep) = identity(good());
        assert_eq!((id.subject.as_str(), id.client_id.as_deref()), ("alice", Some("app")));
        assert_eq!(id.scopes, ["read", "write"]);
        assert!(id.scoped);
        assert_eq!(id.attributes["iss"], "https://as.example");
        assert_eq!(keep, POSITIVE_TTL);
        // `aud` as a list; no `sub`: the client; no `iss`, `exp` or `token_type`: fine.
        let (id, keep) = identity(with(
            json!({"aud": ["x", "https://api.example/"], "sub": null, "iss": null, "exp": null, "token_type": null}),
        ));
        assert_eq!((id.subject.as_str(), keep), ("app", POSITIVE_TTL));
        // Kept until it expires when that is sooner than a minute; within the leeway: accepted, not kept.
        assert_eq!(identity(with(json!({"exp": NOW + 12.0}))).1, Duration::from_secs(12));
        assert_eq!(identity(with(json!({"exp": NOW - 5.0}))).1, Duration::ZERO);
        assert_eq!(identity(with(json!({"token_type": "access_token", "exp": NOW + 1e3}))).1, POSITIVE_TTL);
    }

    #[test]
    fn refusals_say_why() {
        assert_eq!(refusal(json!({"active": false, "aud": "https://api.example/"})), "the token is not active");
        assert!(refusal(with(json!({"aud": null}))).contains("must return `aud`"));
        assert!(refusal(with(json!({"aud": "https://other.example/"}))).contains("not for this resource"));
        assert!(refusal(with(json!({"aud": ["https://other.example/", 7]}))).contains("not for this resource"));
        assert!(refusal(with(json!({"aud": 7}))).contains("`aud` claim is malformed"));
        assert_eq!(refusal(with(json!({"exp": NOW - 60.0}))), "the token has expired");
        assert!(refusal(with(json!({"exp": "soon"}))).contains("`exp` claim is malformed"));
        assert!(refusal(with(json!({"nbf": NOW + 60.0}))).contains("not valid yet"));
        assert_eq!(identity(with(json!({"nbf": NOW + 10.0}))).0.subject, "alice");
        assert!(refusal(with(json!({"iss": "https://as.example/"}))).contains("another issuer"));
        assert!(refusal(with(json!({"iss": 1}))).contains("another issuer"));
        assert_eq!(identity(with(json!({"iss": null, "token_type": null}))).0.subject, "alice");
        assert!(refusal(with(json!({"token_type": "refresh_token"}))).contains("not a bearer access token"));
        assert!(refusal(with(json!({"sub": null, "client_id": null}))).contains("no subject"));
        assert!(refusal(with(json!({"sub": "x".repeat(300), "client_id": null}))).contains("no subject"));
        match judge(&with(json!({"scope": "write"})), &rules(), NOW) {
            Ok((Verdict::Refused(BearerError::InsufficientScope, message), _)) => {
                assert!(message.contains("lacks the scope read"), "{message}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_huge_scope_list_is_refused() {
        let many: Vec<String> = (0..5_000).map(|i| format!("s{i}")).collect();
        assert!(refusal(with(json!({"scope": format!("read {}", many.join(" "))}))).contains("more than 256 scopes"));
        let (id, _) = identity(with(json!({"scope": format!("read {}", many[..255].join(" "))})));
        assert_eq!(id.scopes.len(), 256);
    }

    #[test]
    fn answers_that_are_not_introspection_answers_are_errors() {
        let error = |answer: Value| judge(&answer, &rules(), NOW).map(|_| ()).unwrap_err();
        assert!(error(json!([1, 2])).contains("not a JSON object"));
        assert!(error(with(json!({"active": null}))).contains("no `active`"));
        assert!(error(json!({"aud": "https://api.example/"})).contains("no `active`"));
        assert!(error(with(json!({"active": "true"}))).contains("not a boolean"));
    }

    #[test]
    fn only_bearer_token_syntax_is_asked_about() {
        assert!(is_b64token("abc-._~+/09XYZ") && is_b64token("abc==") && is_b64token("a.b.c"));
        assert!(!is_b64token("") && !is_b64token("==") && !is_b64token("a b") && !is_b64token("a=b"));
        assert!(!is_b64token("tok\u{e9}n") && !is_b64token("a\"b") && !is_b64token("a,b"));
    }

    #[test]
    fn client_credentials_are_form_encoded_before_basic() {
        let credentials = Credentials::new("rs client:1", "p@ss/w+rd é");
        assert_eq!(credentials.basic(), ("rs+client%3A1".into(), "p%40ss%2Fw%2Brd+%C3%A9".into()));
        assert!(!format!("{credentials:?}").contains("p@ss"));
        assert!(Credentials::new("", "x").check().is_err() && Credentials::new("a", "b").check().is_ok());
    }

    #[test]
    fn the_cache_expires_and_stays_bounded() {
        let start = Instant::now();
        let mut cache = Cache::new(3);
        let valid = Verdict::Valid(rpc_core::Identity::new("a"));
        let key = |i: u8| [i; 32];
        assert!(cache.put(key(1), &valid, Duration::from_secs(60), start));
        assert!(cache.get(&key(1), start + Duration::from_secs(59)).is_some());
        assert!(cache.get(&key(1), start + Duration::from_secs(60)).is_none());
        assert!(cache.entries.is_empty(), "an expired answer is dropped when read");
        assert!(!cache.put(key(2), &valid, Duration::ZERO, start), "nothing kept for zero");
        assert!(!cache.put(key(2), &Verdict::Unavailable, NEGATIVE_TTL, start), "outages are not kept");
        for i in 0..3 {
            assert!(cache.put(key(i), &invalid("no"), NEGATIVE_TTL, start));
        }
        assert!(!cache.put(key(9), &valid, POSITIVE_TTL, start), "full: nothing more is kept");
        assert!(cache.put(key(1), &valid, POSITIVE_TTL, start), "a kept answer may be replaced");
        assert_eq!(cache.entries.len(), 3);
        // Later, the refusals have expired: dropped to make room.
        let later = start + NEGATIVE_TTL + Duration::from_secs(1);
        assert!(cache.put(key(9), &valid, POSITIVE_TTL, later));
        assert_eq!(cache.entries.len(), 2);
        // A flood: the size never passes the capacity.
        for i in 10..200 {
            cache.put(key(i), &invalid("no"), NEGATIVE_TTL, later);
            assert!(cache.entries.len() <= 3);
        }
    }
}
