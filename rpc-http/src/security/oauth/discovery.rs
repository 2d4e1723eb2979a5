//! Finding the authorization server's key set from its issuer URL:
//! RFC 8414 metadata (`/.well-known/oauth-authorization-server`, the
//! issuer's path after it), else OpenID Connect discovery
//! (`/.well-known/openid-configuration`, inserted and then appended), as the
//! MCP authorization spec orders them. The document must name the issuer
//! exactly as configured (RFC 8414 §3.3).

use serde::Deserialize;
use url::Url;

use super::OAuthError;
use super::fetch::{Fetched, get_json};

/// The parts of the authorization server's metadata the resource server uses.
#[derive(Debug, Deserialize)]
pub(super) struct ServerMetadata {
    pub(super) issuer: String,
    pub(super) jwks_uri: Option<String>,
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

/// Reads the issuer's metadata and returns its `jwks_uri`.
pub(super) async fn discover_jwks_uri(
    client: &reqwest::Client,
    issuer: &Url,
    issuer_text: &str,
) -> Result<Url, OAuthError> {
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
                return Url::parse(&jwks).map_err(|e| {
                    OAuthError::new(format!("the `jwks_uri` of {url} (`{}`) is not a URL: {e}", jwks.escape_debug()))
                });
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
