//! Finding the authorization server's key set (and its token introspection
//! endpoint, RFC 7662) from its issuer URL:
//! RFC 8414 metadata (`/.well-known/oauth-authorization-server`, the
//! issuer's path after it), else OpenID Connect discovery
//! (`/.well-known/openid-configuration`, inserted and then appended), as the
//! MCP authorization spec orders them. The document must name the issuer
//! exactly as configured (RFC 8414 §3.3).

use serde::Deserialize;
use url::Url;

use super::{OAuthError, OAuthSettings};

use super::fetch::{Fetched, check_fetchable, get_json};

/// The parts of the authorization server's metadata the resource server uses.
#[derive(Debug, Deserialize)]
pub(super) struct ServerMetadata {
    pub(super) issuer: String,
    pub(super) jwks_uri: Option<String>,
    pub(super) introspection_endpoint: Option<String>,
}

/// What the metadata gave.
#[derive(Debug)]
pub(super) struct Discovered {
    /// Where the metadata was read.
    pub(super) at: Url,
    /// The key set's address.
    pub(super) jwks_uri: Url,
    /// The `introspection_endpoint`, as the metadata gives it (checked by
    /// [`introspection_endpoint`](Self::introspection_endpoint) when used).
    introspection_endpoint: Option<String>,
}

impl Discovered {
    /// The metadata's `introspection_endpoint`, when it has one: a URL
    /// this server may post to (`https`, `http` on loopback only).
    pub(super) fn introspection_endpoint(&self) -> Result<Option<Url>, OAuthError> {
        let Some(text) = &self.introspection_endpoint else {
            return Ok(None);
        };
        let url = Url::parse(text).map_err(|e| {
            OAuthError::new(format!(
                "the `introspection_endpoint` of {} (`{}`) is not a URL: {e}",
                self.at,
                text.escape_debug()
            ))
        })?;
        check_fetchable("the issuer's `introspection_endpoint`", &url)?;
        Ok(Some(url))
    }
}

/// The addresses the metadata of `issuer` may be at, in the order to try.
pub(super) fn metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let at = |well_known: &str, path: &str| {
        let mut url = issuer.clone();
        url.set_path(&format!("{well_known}{path}"));
        url.set_query(None);
        url.set_fragment(None);
        url
    };
    let mut urls =
        vec![at("/.well-known/oauth-authorization-server", path), at("/.well-known/openid-configuration", path)];
    if !path.is_empty() {
        urls.push(at(path, "/.well-known/openid-configuration"));
    }
    urls
}

/// The key set's address and, when introspection is on, the introspection
/// endpoint: as given in `settings`, else from the metadata (read unless
/// the key set's address is given).
pub(super) async fn addresses(
    settings: &OAuthSettings,
    client: &reqwest::Client,
) -> Result<(Url, Option<Url>), OAuthError> {
    if let Some(credentials) = &settings.introspection {
        credentials.check()?;
    } else if let Some(url) = &settings.introspection_endpoint {
        return Err(OAuthError::new(format!(
            "the introspection endpoint {url} is given but introspection is not on: give this resource server's client credentials (`OAuthSettings::introspection`, --oauth-introspection-client-id and --oauth-introspection-secret)"
        )));
    }
    let on = settings.introspection.is_some();
    let given = settings.introspection_endpoint.clone();
    if let Some(jwks_uri) = settings.jwks_uri.clone() {
        if on && given.is_none() {
            return Err(OAuthError::new(
                "token introspection is on and the key set address is given, so no metadata is read: give the introspection endpoint too (`OAuthSettings::introspection_endpoint`, --oauth-introspection-endpoint)",
            ));
        }
        return Ok((jwks_uri, given));
    }
    let found = discover(client, &settings.issuer, &settings.issuer_text).await?;
    let endpoint = match given {
        Some(url) => Some(url),
        None if on => Some(found.introspection_endpoint()?.ok_or_else(|| {
            OAuthError::new(format!(
                "token introspection is on but the authorization server's metadata at {} has no `introspection_endpoint`: give it (`OAuthSettings::introspection_endpoint`, --oauth-introspection-endpoint)",
                found.at
            ))
        })?),
        None => None,
    };
    Ok((found.jwks_uri, endpoint))
}

/// Reads the issuer's metadata: its `jwks_uri` (required) and its
/// `introspection_endpoint` (when it has one).
pub(super) async fn discover(
    client: &reqwest::Client,
    issuer: &Url,
    issuer_text: &str,
) -> Result<Discovered, OAuthError> {
    let mut tried = Vec::new();
    for url in metadata_urls(issuer) {
        match get_json::<ServerMetadata>(client, "the authorization server's metadata", &url).await? {
            Fetched::NotFound => tried.push(url.to_string()),
            Fetched::Found(metadata) => {
                if metadata.issuer != issuer_text {
                    return Err(OAuthError::new(format!(
                        "the authorization server's metadata at {url} names the issuer `{}`, not `{issuer_text}`: give --oauth-issuer exactly as the server names itself (RFC 8414 §3.3)",
                        metadata.issuer.escape_debug()
                    )));
                }
                let Some(jwks) = metadata.jwks_uri else {
                    return Err(OAuthError::new(format!(
                        "the authorization server's metadata at {url} has no `jwks_uri`: its tokens cannot be checked here (give the key set's address with --oauth-jwks-uri)"
                    )));
                };
                let jwks_uri = Url::parse(&jwks).map_err(|e| {
                    OAuthError::new(format!("the `jwks_uri` of {url} (`{}`) is not a URL: {e}", jwks.escape_debug()))
                })?;
                return Ok(Discovered { at: url, jwks_uri, introspection_endpoint: metadata.introspection_endpoint });
            }
        }
    }
    Err(OAuthError::new(format!(
        "no authorization server metadata for the issuer `{issuer_text}` (404 at {})",
        tried.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(issuer: &str) -> Vec<String> {
        metadata_urls(&Url::parse(issuer).unwrap()).into_iter().map(String::from).collect()
    }

    #[test]
    fn the_introspection_endpoint_is_checked_when_used() {
        let discovered = |endpoint: Option<&str>| Discovered {
            at: Url::parse("https://as.example/.well-known/oauth-authorization-server").unwrap(),
            jwks_uri: Url::parse("https://as.example/jwks").unwrap(),
            introspection_endpoint: endpoint.map(str::to_owned),
        };
        assert_eq!(discovered(None).introspection_endpoint(), Ok(None));
        let found = discovered(Some("https://as.example/introspect")).introspection_endpoint();
        assert_eq!(found.unwrap().map(String::from).as_deref(), Some("https://as.example/introspect"));
        let message = |e: Result<Option<Url>, OAuthError>| e.unwrap_err().to_string();
        assert!(message(discovered(Some("not a url")).introspection_endpoint()).contains("is not a URL"));
        assert!(message(discovered(Some("http://as.example/i")).introspection_endpoint()).contains("plain http"));
    }

    #[test]
    fn the_well_known_addresses_of_an_issuer() {
        assert_eq!(
            urls("https://as.example"),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            urls("https://as.example/tenant/one/"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant/one",
                "https://as.example/.well-known/openid-configuration/tenant/one",
                "https://as.example/tenant/one/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            urls("http://127.0.0.1:9000/?q#f")[0],
            "http://127.0.0.1:9000/.well-known/oauth-authorization-server"
        );
    }
}
