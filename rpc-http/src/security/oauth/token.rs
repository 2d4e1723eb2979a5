//! Checking one access token: a JWT (RFC 7519, RFC 9068) signed with one of
//! the issuer's keys, in a pinned algorithm, for this resource (`aud`, RFC
//! 8707), from this issuer, not expired and already valid (a small leeway
//! for clocks), naming a subject; its scopes become the caller's. The
//! identity is built here for introspected tokens too ([`identity`]).

use std::borrow::Cow;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation, decode, decode_header};
use serde::Deserialize;

use super::keys::{Key, Lookup};
use super::{Inner, OAuthError};
use crate::security::{BearerError, Identity};

/// The longest token looked at (a JWT with a few dozen scopes is 1-2 KiB).
const MAX_TOKEN: usize = 16 * 1024;
/// The longest subject or client id taken as an identity.
const MAX_SUBJECT: usize = 256;
/// The most scopes a token may carry.
const MAX_SCOPES: usize = 256;

/// What checking a token found.
#[derive(Debug, Clone)]
pub(super) enum Verdict {
    /// A valid token: the caller.
    Valid(Identity),
    /// Refused.
    Refused(BearerError, Cow<'static, str>),
    /// The token names a key the set does not have (yet): fetch the set
    /// again (a rotation) and check once more.
    UnknownKey,
    /// The token is not a JWT: refused, or introspected when that is on.
    NotJwt,
    /// The authorization server could not say (introspection failed): the
    /// client should retry later.
    Unavailable,
}

/// The refusal of a token that is not a JWT, when introspection is off.
pub(super) const NOT_JWT: &str = "the token is not a JWT signed with an algorithm this resource accepts";

pub(super) fn invalid(message: impl Into<Cow<'static, str>>) -> Verdict {
    Verdict::Refused(BearerError::InvalidToken, message.into())
}

/// The validation rules of tokens signed with `algorithm`.
pub(super) fn validation(algorithm: Algorithm, issuer: &str, audience: &str, leeway: u64) -> Validation {
    let mut validation = Validation::new(algorithm);
    validation.set_issuer(&[issuer]);
    validation.set_audience(&[audience]);
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    validation.validate_nbf = true;
    validation.leeway = leeway;
    validation
}

/// The claims read besides those the validation checks (of a JWT, or of
/// an introspection answer): who the caller is and what it may do.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Claims {
    pub(super) sub: Option<String>,
    pub(super) client_id: Option<String>,
    pub(super) azp: Option<String>,
    /// Space-separated scopes (RFC 8693 §4.2, RFC 7662 §2.2).
    pub(super) scope: Option<String>,
    /// Scopes as some issuers name them (`scp`: a string or a list).
    pub(super) scp: Option<Scopes>,
}

/// Scopes as one space-separated string or as a list.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum Scopes {
    One(String),
    Many(Vec<String>),
}

/// Checks `token` with the keys known now.
pub(super) fn check(inner: &Inner, token: &str) -> Verdict {
    if token.len() > MAX_TOKEN {
        return invalid(format!("the token is longer than {} KiB", MAX_TOKEN / 1024));
    }
    let Ok(header) = decode_header(token) else {
        return Verdict::NotJwt;
    };
    let Some((algorithm, validation)) = inner.validations.iter().find(|(a, _)| *a == header.alg) else {
        return invalid(format!("the token is signed with {:?}, which this resource does not accept", header.alg));
    };
    let key = match inner.keys.find(header.kid.as_deref(), *algorithm) {
        Lookup::Found(key) => key,
        Lookup::Unknown => return Verdict::UnknownKey,
    };
    verify(token, *algorithm, validation, &key, inner)
}

/// The verdict on a token whose key was not found even after a fetch.
pub(super) fn unknown_key(token: &str) -> Verdict {
    match decode_header(token).ok().and_then(|h| h.kid) {
        Some(_) => invalid("the token is signed with a key the issuer does not publish"),
        None => invalid("the token names no key (`kid`) and the issuer has several"),
    }
}

fn verify(token: &str, algorithm: Algorithm, validation: &Validation, key: &Key, inner: &Inner) -> Verdict {
    if key.algorithm.is_some_and(|a| a != algorithm) {
        return invalid("the token's algorithm is not the one its key is for");
    }
    let claims = match decode::<Claims>(token, &key.decoding, validation) {
        Ok(data) => data.claims,
        Err(e) => {
            return invalid(match e.kind() {
                ErrorKind::ExpiredSignature => Cow::Borrowed("the token has expired"),
                ErrorKind::ImmatureSignature => Cow::Borrowed("the token is not valid yet (`nbf`)"),
                ErrorKind::InvalidIssuer => Cow::Borrowed("the token was issued by another issuer"),
                ErrorKind::InvalidAudience => Cow::Owned(format!(
                    "the token is not for this resource: its `aud` does not name {}",
                    inner.audience
                )),
                ErrorKind::MissingRequiredClaim(claim) => Cow::Owned(format!("the token has no `{claim}` claim")),
                ErrorKind::InvalidClaimFormat(claim) => Cow::Owned(format!("the token's `{claim}` claim is malformed")),
                ErrorKind::InvalidSignature => Cow::Borrowed("the token's signature does not verify"),
                ErrorKind::InvalidAlgorithm => Cow::Borrowed("the token's algorithm does not fit its key"),
                _ => Cow::Borrowed("the token is malformed"),
            });
        }
    };
    identity(claims, &inner.issuer, &inner.required_scopes)
}

fn usable_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_SUBJECT && !name.chars().any(char::is_control)
}

/// The caller a valid token of `issuer` stands for: its `sub`, else its
/// client id (`client_id`, else `azp`), with its scopes (at most
/// [`MAX_SCOPES`]); refused without a usable subject, and with 403
/// `insufficient_scope` when it lacks one of `required`.
pub(super) fn identity(claims: Claims, issuer: &str, required: &[String]) -> Verdict {
    let client_id = claims.client_id.or(claims.azp).filter(|c| usable_name(c));
    let Some(subject) = claims.sub.filter(|s| usable_name(s)).or_else(|| client_id.clone()) else {
        return invalid("the token names no subject (`sub` or `client_id`)");
    };
    let scopes: Vec<String> = match (claims.scope, claims.scp) {
        (Some(scope), _) => scope.split_ascii_whitespace().take(MAX_SCOPES + 1).map(str::to_owned).collect(),
        (None, Some(Scopes::One(scope))) => {
            scope.split_ascii_whitespace().take(MAX_SCOPES + 1).map(str::to_owned).collect()
        }
        (None, Some(Scopes::Many(scopes))) => scopes,
        (None, None) => Vec::new(),
    };
    if scopes.len() > MAX_SCOPES {
        return invalid(format!("the token carries more than {MAX_SCOPES} scopes"));
    }
    let mut identity = Identity::new(subject).with_scopes(scopes).with("iss", issuer);
    if let Some(client_id) = client_id {
        identity = identity.with_client_id(client_id);
    }
    let missing: Vec<&str> = required.iter().map(String::as_str).filter(|s| !identity.has_scope(s)).collect();
    if !missing.is_empty() {
        return Verdict::Refused(
            BearerError::InsufficientScope,
            Cow::Owned(format!("the token lacks the scope {}", missing.join(" "))),
        );
    }
    Verdict::Valid(identity)
}

/// The names of the algorithms a resource may pin: asymmetric ones only.
pub(super) fn parse_algorithm(name: &str) -> Result<Algorithm, OAuthError> {
    let algorithm: Algorithm = name.parse().map_err(|_| {
        OAuthError::new(format!(
            "`{}` is not a JWS algorithm (RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA)",
            name.escape_debug()
        ))
    })?;
    if algorithm.family() == jsonwebtoken::AlgorithmFamily::Hmac {
        return Err(OAuthError::new(format!(
            "{name} is a shared-secret algorithm: a resource server checks tokens with the issuer's public keys (RS256, ES256, ...)"
        )));
    }
    Ok(algorithm)
}
