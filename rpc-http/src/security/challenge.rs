//! Refusals that tell the client how to authenticate: a status, a message
//! and a `WWW-Authenticate` challenge (RFC 9110 §11.6.1), e.g. an OAuth
//! bearer challenge (RFC 6750 §3) naming the protected-resource metadata
//! (RFC 9728 §5.1) and the scope a request lacks.

use std::borrow::Cow;

use http::{HeaderValue, StatusCode};

/// A refusal with a `WWW-Authenticate` challenge, from an
/// [`AccessPolicy`](super::AccessPolicy) (see [`Access::Challenge`](super::Access::Challenge)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Challenge {
    /// 401 (no or a bad credential), 403 (a credential without the rights
    /// the request needs) or 400 (a malformed request).
    pub status: StatusCode,
    /// The message of the body (`{"error": "..."}`).
    pub message: Cow<'static, str>,
    /// The `WWW-Authenticate` header of the response.
    pub www_authenticate: HeaderValue,
}

impl Challenge {
    /// A refusal with `status`, `message` and the challenge `www_authenticate`.
    pub fn new(status: StatusCode, message: impl Into<Cow<'static, str>>, www_authenticate: HeaderValue) -> Self {
        Challenge { status, message: message.into(), www_authenticate }
    }
}

/// The error codes of a bearer challenge (RFC 6750 §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BearerError {
    /// A malformed request (several credentials, a bad header): 400.
    InvalidRequest,
    /// The token is expired, revoked, malformed or not for this resource: 401.
    InvalidToken,
    /// The token lacks a scope the request needs: 403.
    InsufficientScope,
}

impl BearerError {
    /// The code as the header spells it.
    pub fn code(self) -> &'static str {
        match self {
            BearerError::InvalidRequest => "invalid_request",
            BearerError::InvalidToken => "invalid_token",
            BearerError::InsufficientScope => "insufficient_scope",
        }
    }

    /// The status RFC 6750 §3.1 gives the code.
    pub fn status(self) -> StatusCode {
        match self {
            BearerError::InvalidRequest => StatusCode::BAD_REQUEST,
            BearerError::InvalidToken => StatusCode::UNAUTHORIZED,
            BearerError::InsufficientScope => StatusCode::FORBIDDEN,
        }
    }
}

/// A `Bearer` challenge with `params` as quoted strings, in order; a value's
/// characters outside what a quoted string may carry (control characters,
/// non-ASCII) become `?`, and `"` and `\` are escaped, so that no value can
/// break the header or add a parameter.
pub fn bearer_challenge(params: &[(&str, &str)]) -> HeaderValue {
    let mut text = String::from("Bearer");
    for (i, (name, value)) in params.iter().enumerate() {
        text.push_str(if i == 0 { " " } else { ", " });
        text.push_str(name);
        text.push_str("=\"");
        for c in value.chars() {
            match c {
                '"' | '\\' => {
                    text.push('\\');
                    text.push(c);
                }
                ' '..='~' => text.push(c),
                _ => text.push('?'),
            }
        }
        text.push('"');
    }
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_cannot_break_the_header() {
        assert_eq!(bearer_challenge(&[]), "Bearer");
        assert_eq!(
            bearer_challenge(&[("error", "invalid_token"), ("resource_metadata", "http://h/.well-known/x")]),
            r#"Bearer error="invalid_token", resource_metadata="http://h/.well-known/x""#
        );
        assert_eq!(
            bearer_challenge(&[("error_description", "a \"quoted\" \\ x\r\nSet-Cookie: y\u{e9}")]),
            r#"Bearer error_description="a \"quoted\" \\ x??Set-Cookie: y?""#
        );
    }

    #[test]
    fn codes_and_statuses() {
        assert_eq!(BearerError::InvalidToken.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(BearerError::InsufficientScope.status(), StatusCode::FORBIDDEN);
        assert_eq!(BearerError::InvalidRequest.code(), "invalid_request");
    }
}
