//! Token security: clients send one of a set of static tokens in a header
//! (`Ufo-RPC-Token` by default) or as `Authorization: Bearer <token>`.
//! API requests and document requests are protected separately.
//!
//! Tokens are kept as SHA-256 digests and compared in constant time
//! (`subtle`), against every configured token, so neither the position of
//! the first wrong byte nor the length of a configured token shows in the
//! time an answer takes.
//!
//! A caller's [`Identity`] comes from its credential, never from where the
//! token stands in the configuration: a label given with
//! [`TokenPolicy::named_token`], else `token:` and a digest of the token
//! (HMAC-SHA-256, keyed with [`TokenPolicy::identity_key`] when one is
//! set). Two instances configured with the same tokens in another order,
//! or an instance restarted after a token was revoked, agree on who is who:
//! sessions, cached results and locks of one token are never reached with
//! another.

use std::path::Path;

use hmac::{Hmac, KeyInit, Mac};
use http::HeaderName;
use http::header::AUTHORIZATION;
use sha2::{Digest, Sha256};
use subtle::{ConditionallySelectable, ConstantTimeEq};

use super::access::{Access, AccessPolicy, AccessRequest, Identity, Resource};
use rpc_core::future::MaybeReady;

/// The default token header, as the design reference's core names it.
pub const DEFAULT_TOKEN_HEADER: &str = "ufo-rpc-token";

/// Static client tokens, checked on API and/or document requests.
#[derive(Clone)]
pub struct TokenPolicy {
    header: HeaderName,
    /// The header's name as configured (`Ufo-RPC-Token`), for messages.
    spelling: String,
    tokens: Vec<Token>,
    /// The key of the digests that name unnamed tokens (empty: none).
    identity_key: Vec<u8>,
    protect_api: bool,
    protect_docs: bool,
}

impl std::fmt::Debug for TokenPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenPolicy")
            .field("header", &self.header)
            .field("tokens", &self.tokens.len())
            .field("protect_api", &self.protect_api)
            .field("protect_docs", &self.protect_docs)
            .finish()
    }
}

impl Default for TokenPolicy {
    fn default() -> Self {
        TokenPolicy::new()
    }
}

/// One accepted token: its digest, and the subject of its callers.
#[derive(Clone)]
struct Token {
    digest: [u8; 32],
    /// A label given with the token (`named_token`), else `None`.
    name: Option<String>,
    /// The subject of the identity: the name, or the token's derived label.
    subject: String,
}

/// The number of hex digits of a derived token label (96 bits).
const DERIVED_LABEL_HEX: usize = 24;

/// The label of an unnamed token: `token:` and the start of
/// HMAC-SHA-256(key, SHA-256(token)) in hex; the same on every instance
/// configured with the same key, whatever the order of its tokens.
fn derived_label(key: &[u8], digest: &[u8; 32]) -> String {
    const DOMAIN: &[u8] = b"rpc-core token identity v1";
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(if key.is_empty() { DOMAIN } else { key })
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(DOMAIN);
    mac.update(digest);
    let tag = mac.finalize().into_bytes();
    let mut label = String::with_capacity(6 + DERIVED_LABEL_HEX);
    label.push_str("token:");
    for byte in &tag[..DERIVED_LABEL_HEX / 2] {
        label.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
        label.push(char::from(b"0123456789abcdef"[usize::from(byte & 15)]));
    }
    label
}

/// A token source could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum TokenError {
    /// The token file could not be read.
    File(std::io::Error),
    /// A token is empty or has characters a header cannot carry.
    Invalid(String),
}

impl std::fmt::Display for TokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenError::File(e) => write!(f, "cannot read the token file: {e}"),
            TokenError::Invalid(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for TokenError {}

impl TokenPolicy {
    /// No tokens yet; API requests protected, documents public, header
    /// [`DEFAULT_TOKEN_HEADER`].
    pub fn new() -> Self {
        TokenPolicy {
            header: HeaderName::from_static(DEFAULT_TOKEN_HEADER),
            spelling: "Ufo-RPC-Token".to_owned(),
            tokens: Vec::new(),
            identity_key: Vec::new(),
            protect_api: true,
            protect_docs: false,
        }
    }

    /// Accepts `token`; the caller's identity is derived from the token
    /// itself: `token:` and 24 hex digits of its keyed digest (see
    /// [`identity_key`](Self::identity_key)), the same on every instance
    /// and after every restart, whatever the order tokens are listed in.
    pub fn token(self, token: impl AsRef<str>) -> Result<Self, TokenError> {
        self.add(None, token.as_ref())
    }

    /// Accepts `token`; the caller's identity is `label` (a client's name,
    /// a tenant id). Labels must be unique: one label for two tokens would
    /// give both the same sessions and cached results.
    pub fn named_token(self, label: impl Into<String>, token: impl AsRef<str>) -> Result<Self, TokenError> {
        let label = label.into();
        if label.is_empty() || label.len() > 128 || label.chars().any(char::is_control) {
            return Err(TokenError::Invalid(
                "a token's label must be 1 to 128 characters without control characters".into(),
            ));
        }
        if self.tokens.iter().any(|t| t.name.as_deref() == Some(label.as_str())) {
            return Err(TokenError::Invalid(format!(
                "the label `{}` is given to two tokens; each token needs its own",
                label.escape_default()
            )));
        }
        self.add(Some(label), token.as_ref())
    }

    fn add(mut self, name: Option<String>, token: &str) -> Result<Self, TokenError> {
        if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(TokenError::Invalid(
                "a token must be non-empty visible ASCII (no spaces or control characters)".into(),
            ));
        }
        let digest = digest(token.as_bytes());
        if let Some(known) = self.tokens.iter().find(|t| t.digest == digest) {
            if name.is_some() && known.name != name {
                return Err(TokenError::Invalid("a token is given twice, with different labels".into()));
            }
            // The same token twice (a list and a file): one identity.
            return Ok(self);
        }
        let subject = name.clone().unwrap_or_else(|| derived_label(&self.identity_key, &digest));
        self.tokens.push(Token { digest, name, subject });
        Ok(self)
    }

    /// Keys the digests that name unnamed tokens (HMAC-SHA-256), so that
    /// the identities in logs and in a shared store's keys cannot be used
    /// to test guesses of a token. Every instance sharing a store needs the
    /// same key (changing it gives every unnamed token a new identity: its
    /// sessions and cached results are left behind). Without a key, the
    /// digest is still one-way and keyed with a fixed domain string.
    pub fn identity_key(mut self, key: impl AsRef<[u8]>) -> Self {
        self.identity_key = key.as_ref().to_vec();
        for token in &mut self.tokens {
            if token.name.is_none() {
                token.subject = derived_label(&self.identity_key, &token.digest);
            }
        }
        self
    }

    /// Accepts every token of a comma-separated list (an environment
    /// variable's value); blanks around commas are ignored.
    pub fn tokens_from_list(mut self, list: &str) -> Result<Self, TokenError> {
        for token in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            self = self.token(token)?;
        }
        Ok(self)
    }

    /// Accepts every token in the file at `path`: one per line, blank lines
    /// and lines starting with `#` skipped.
    pub fn tokens_from_file(mut self, path: impl AsRef<Path>) -> Result<Self, TokenError> {
        let text = std::fs::read_to_string(path).map_err(TokenError::File)?;
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            self = self.token(line)?;
        }
        Ok(self)
    }

    /// The header carrying the token (besides `Authorization: Bearer`),
    /// e.g. `X-Api-Key`; the spelling given is the one messages show.
    pub fn header(mut self, name: &str) -> Result<Self, TokenError> {
        let header = HeaderName::from_bytes(name.as_bytes()).ok().filter(|h| *h != AUTHORIZATION).ok_or_else(|| {
            TokenError::Invalid(format!("`{}` is not a header name for tokens", name.escape_default()))
        })?;
        self.header = header;
        self.spelling = name.to_owned();
        Ok(self)
    }

    /// The identity callers presenting `token` get, if it is accepted (to
    /// find a token's callers in logs, listeners or a shared store).
    pub fn identity_for(&self, token: &str) -> Option<Identity> {
        let digest = digest(token.as_bytes());
        self.tokens.iter().find(|t| bool::from(t.digest.ct_eq(&digest))).map(|t| Identity::new(t.subject.clone()))
    }

    /// Whether API requests need a token (default: yes).
    pub fn protect_api(mut self, on: bool) -> Self {
        self.protect_api = on;
        self
    }

    /// Whether document requests (OpenRPC, ...) need a token (default: no).
    pub fn protect_docs(mut self, on: bool) -> Self {
        self.protect_docs = on;
        self
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether no token is configured (then every protected request is refused).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The header name clients send the token in.
    pub fn header_name(&self) -> &HeaderName {
        &self.header
    }

    fn protects(&self, resource: Resource) -> bool {
        match resource {
            Resource::Api => self.protect_api,
            Resource::Docs => self.protect_docs,
        }
    }

    /// The decision for these headers, for a protected resource.
    fn decide(&self, headers: &http::HeaderMap) -> Access {
        let presented = match presented_token(headers, &self.header) {
            Presented::One(token) => token,
            Presented::None => {
                return Access::Unauthorized(
                    format!("Unauthorized: send a token in the {} header or as a Bearer token", self.spelling).into(),
                );
            }
            Presented::Several => return Access::Unauthorized("Unauthorized: send exactly one token".into()),
        };
        let presented = digest(presented);
        let mut found = subtle::Choice::from(0);
        let mut index = 0u32;
        for (i, token) in self.tokens.iter().enumerate() {
            let matches = token.digest.ct_eq(&presented);
            index = u32::conditional_select(&index, &(i as u32), matches);
            found |= matches;
        }
        if bool::from(found) {
            Access::Allow(self.tokens.get(index as usize).map(|token| Identity::new(token.subject.clone())))
        } else {
            Access::Forbidden("Forbidden: invalid token".into())
        }
    }
}

impl AccessPolicy for TokenPolicy {
    fn check<'a>(&'a self, request: &'a AccessRequest<'a>) -> MaybeReady<'a, Access> {
        if !self.protects(request.resource) {
            return MaybeReady::ready(Access::allow());
        }
        MaybeReady::ready(self.decide(request.headers))
    }

    fn credential_header(&self) -> Option<&str> {
        self.protect_api.then_some(self.spelling.as_str())
    }

    fn limits_scopes(&self) -> bool {
        false
    }
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

enum Presented<'a> {
    None,
    One(&'a [u8]),
    Several,
}

/// The token a request carries: the token header, else `Authorization:
/// Bearer`; several values (or both headers with different tokens) are
/// ambiguous.
fn presented_token<'a>(headers: &'a http::HeaderMap, name: &HeaderName) -> Presented<'a> {
    let mut own = headers.get_all(name).iter();
    let first = own.next();
    if own.next().is_some() {
        return Presented::Several;
    }
    let mut auth = headers.get_all(AUTHORIZATION).iter();
    let bearer = auth.next().and_then(|v| {
        let v = v.as_bytes();
        (v.len() > 7 && v[..7].eq_ignore_ascii_case(b"bearer ")).then(|| v[7..].trim_ascii())
    });
    if auth.next().is_some() {
        return Presented::Several;
    }
    match (first.map(|v| v.as_bytes().trim_ascii()), bearer) {
        (Some(a), Some(b)) if a != b => Presented::Several,
        (Some(token), _) | (None, Some(token)) if !token.is_empty() => Presented::One(token),
        _ => Presented::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::request_headers::header_map as headers;

    fn policy() -> TokenPolicy {
        TokenPolicy::new().token("s3cret").unwrap().named_token("ci", "other-token").unwrap()
    }

    /// The identity of the unnamed token `s3cret`.
    fn s3cret() -> Identity {
        Identity::new(derived_label(&[], &digest(b"s3cret")))
    }

    #[test]
    fn identities_come_from_the_token_not_its_position() {
        let ab = TokenPolicy::new().token("alpha-token").unwrap().token("beta-token").unwrap();
        let ba = TokenPolicy::new().token("beta-token").unwrap().token("alpha-token").unwrap();
        let only_b = TokenPolicy::new().token("beta-token").unwrap();
        let alpha = headers(&[("ufo-rpc-token", "alpha-token")]);
        let beta = headers(&[("ufo-rpc-token", "beta-token")]);
        assert_eq!(ab.decide(&alpha), ba.decide(&alpha), "another order, the same identity");
        assert_eq!(ab.decide(&beta), ba.decide(&beta));
        assert_eq!(ab.decide(&beta), only_b.decide(&beta), "a revoked token does not shift the others");
        assert_ne!(ab.decide(&alpha), ab.decide(&beta));
        let Access::Allow(Some(identity)) = ab.decide(&alpha) else { panic!("allowed") };
        assert!(identity.subject.starts_with("token:") && identity.subject.len() == 6 + DERIVED_LABEL_HEX);
        assert!(!identity.subject.contains("alpha"), "the token does not show in its identity");
        // A key changes every unnamed identity, the same way on every instance.
        let keyed = ab.clone().identity_key("k1");
        let keyed_first = TokenPolicy::new().identity_key("k1").token("alpha-token").unwrap();
        assert_ne!(keyed.decide(&alpha), ab.decide(&alpha));
        assert_eq!(keyed.decide(&alpha), keyed_first.decide(&alpha), "before or after the tokens");
        // Labels: unique, and one per token.
        assert!(TokenPolicy::new().named_token("a", "t1").unwrap().named_token("a", "t2").is_err());
        assert!(TokenPolicy::new().named_token("a", "t1").unwrap().named_token("b", "t1").is_err());
        assert!(TokenPolicy::new().named_token("", "t1").is_err());
        assert!(TokenPolicy::new().named_token("a\nb", "t1").is_err());
        assert_eq!(TokenPolicy::new().token("t1").unwrap().token("t1").unwrap().len(), 1);
    }

    #[test]
    fn header_and_bearer() {
        let p = policy();
        assert_eq!(p.decide(&headers(&[("ufo-rpc-token", "s3cret")])), Access::allow_as(s3cret()));
        assert_eq!(
            p.decide(&headers(&[("authorization", "Bearer other-token")])),
            Access::allow_as(Identity::new("ci"))
        );
        assert_eq!(p.decide(&headers(&[("authorization", "bearer  s3cret ")])), Access::allow_as(s3cret()));
        assert!(matches!(p.decide(&headers(&[])), Access::Unauthorized(_)));
        assert!(matches!(p.decide(&headers(&[("authorization", "Basic czNjcmV0")])), Access::Unauthorized(_)));
        assert!(matches!(p.decide(&headers(&[("ufo-rpc-token", "s3cre")])), Access::Forbidden(_)));
        assert!(matches!(p.decide(&headers(&[("ufo-rpc-token", "s3cret0")])), Access::Forbidden(_)));
        assert!(matches!(p.decide(&headers(&[("ufo-rpc-token", "")])), Access::Unauthorized(_)));
    }

    #[test]
    fn ambiguity_is_refused() {
        let p = policy();
        let two = headers(&[("ufo-rpc-token", "s3cret"), ("ufo-rpc-token", "nope")]);
        assert!(matches!(p.decide(&two), Access::Unauthorized(_)));
        let both = headers(&[("ufo-rpc-token", "s3cret"), ("authorization", "Bearer other-token")]);
        assert!(matches!(p.decide(&both), Access::Unauthorized(_)));
        let same = headers(&[("ufo-rpc-token", "s3cret"), ("authorization", "Bearer s3cret")]);
        assert_eq!(p.decide(&same), Access::allow_as(s3cret()));
    }

    #[test]
    fn sources_and_protection() {
        let p = TokenPolicy::new().tokens_from_list(" a1 , b2,,").unwrap();
        assert_eq!(p.len(), 2);
        assert!(TokenPolicy::new().token("has space").is_err());
        assert!(TokenPolicy::new().token("").is_err());
        let dir = std::env::temp_dir().join(format!("rpc-tokens-{}", std::process::id()));
        std::fs::write(&dir, "# clients\nfirst\n\n  second  \n").unwrap();
        let p = TokenPolicy::new().tokens_from_file(&dir).unwrap();
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(p.len(), 2);
        assert!(p.protects(Resource::Api) && !p.protects(Resource::Docs));
        let p = p.protect_api(false).protect_docs(true);
        assert!(!p.protects(Resource::Api) && p.protects(Resource::Docs));
        let custom = policy().header("X-Api-Key").unwrap();
        assert!(policy().header("bad header").is_err() && policy().header("Authorization").is_err());
        assert_eq!(custom.decide(&headers(&[("x-api-key", "s3cret")])), Access::allow_as(s3cret()));
    }
}
