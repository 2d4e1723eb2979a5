//! The documents below a version, over HTTP: `GET /v{N}/server.json` (the
//! MCP Registry's [`server_json`]) and `GET /v{N}/manifests/{client}` (a
//! [`manifest`](crate::documents::manifest) per AI client). Both are
//! documents for the endpoint's security (a token when documents are
//! protected), localised like the endpoint (`Accept-Language`), and name
//! the endpoint by its public URL: the configured base, else `http://` and
//! the request's checked `Host` (forwarding headers are never trusted).

use http::{HeaderValue, Method as HttpMethod, Request, StatusCode, header};
use rpc::i18n::LanguageHeaders;
use rpc::security::{Resource, Target};
use rpc::server::body::json_response;
use rpc::server::route::public_url;
use serde_json::{Value, json};

use super::McpEndpoint;
use super::response::HttpResponse;
use crate::documents::manifest::{ManifestServer, credential_env, manifest_key};
use crate::documents::server_json;

/// A document below a version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Document {
    /// `server.json`.
    ServerJson,
    /// `manifests/{client}`.
    Manifest(String),
}

impl Document {
    /// The path below the version, as the client sent it.
    fn suffix_len(&self) -> usize {
        match self {
            Document::ServerJson => "/server.json".len(),
            Document::Manifest(client) => "/manifests/".len() + client.len(),
        }
    }
}

/// Splits `/v2/server.json` into version 2 and [`Document::ServerJson`]
/// (`/server.json` is version 1); `None` for any other path.
pub(crate) fn document_path(path: &str) -> Option<(u32, Document)> {
    let (version_part, document) = if let Some(rest) = path.strip_suffix("/server.json") {
        (rest, Document::ServerJson)
    } else {
        // `<version part>/manifests/<client>`, split at slashes (no
        // substring search on the path of every request).
        let (rest, client) = path.rsplit_once('/')?;
        let rest = rest.strip_suffix("/manifests")?;
        if client.is_empty() {
            return None;
        }
        (rest, Document::Manifest(client.to_owned()))
    };
    let version = rpc::server::route::version_from_path(version_part)?;
    // `version_from_path` takes `""`, `/` and a trailing `/`; a document
    // path has exactly `""` or `/vN` before it.
    (version_part.is_empty() || !version_part.ends_with('/')).then_some((version, document))
}

fn refusal(status: StatusCode, message: String) -> HttpResponse {
    json_response(status, json!({ "error": message }).to_string())
}

/// Serves `document` of API `version`.
pub(crate) async fn serve<B>(
    endpoint: &McpEndpoint,
    version: u32,
    document: Document,
    request: Request<B>,
) -> HttpResponse
where
    B: Send + 'static,
{
    let inner = &*endpoint.server.inner;
    let security = &endpoint.edge.security;
    let group = Some(inner.group.as_str());
    let Some(tools) = inner.tools.version(version).filter(|_| security.is_available(group, version)) else {
        return refusal(StatusCode::NOT_FOUND, format!("group `{}` has no MCP endpoint at this path", inner.group));
    };
    let target = Target::new(group, version, Resource::Docs, "GET, HEAD, OPTIONS");
    security
        .guard(request, target, |request, _identity| async move {
            if !matches!(*request.method(), HttpMethod::GET | HttpMethod::HEAD) {
                let mut response = rpc::server::body::status_response(StatusCode::METHOD_NOT_ALLOWED);
                response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD, OPTIONS"));
                return response;
            }
            let language = inner.translations.negotiate(request.headers());
            let info = &inner.texts(language).server_info;
            let page = public_url(&request, inner.config.public_url.as_ref());
            let url = page.get(..page.len().saturating_sub(document.suffix_len())).unwrap_or(&page);
            let credential_header = security.credential_header();
            let body: Result<Value, (StatusCode, String)> = match &document {
                Document::ServerJson => match &inner.config.registry {
                    None => Err((
                        StatusCode::NOT_FOUND,
                        "this endpoint has no MCP Registry listing: configure its registry name \
                         (McpEndpointBuilder::registry, or `server.registry_name` in the configuration)"
                            .to_owned(),
                    )),
                    Some(listing) => match listing.check(info) {
                        Ok(()) => Ok(server_json::server_json(
                            listing,
                            info,
                            version,
                            url,
                            credential_header,
                            security.oauth_resource_metadata(),
                        )),
                        Err(why) => {
                            tracing::error!(%why, "server.json cannot be published");
                            Err((StatusCode::INTERNAL_SERVER_ERROR, why.to_string()))
                        }
                    },
                },
                Document::Manifest(client) => match inner.config.manifests.get(client) {
                    None => {
                        let known: Vec<&str> = inner.config.manifests.names().collect();
                        Err((
                            StatusCode::NOT_FOUND,
                            format!("no manifest for this client; manifests exist for: {}", known.join(", ")),
                        ))
                    }
                    Some(client) => {
                        let key = manifest_key(&info.name);
                        let env = credential_env(&key);
                        let mut tools_by_name: Vec<(&str, bool)> = tools
                            .tools()
                            .map(|t| (t.method.name(), t.method.descriptor().tool.read_only_hint == Some(true)))
                            .collect();
                        tools_by_name.sort_unstable();
                        let names: Vec<String> = tools_by_name.iter().map(|(n, _)| (*n).to_owned()).collect();
                        let read_only: Vec<String> =
                            tools_by_name.iter().filter(|(_, ro)| *ro).map(|(n, _)| (*n).to_owned()).collect();
                        let server = ManifestServer {
                            key: &key,
                            title: info.title.as_deref(),
                            description: info.description.as_deref(),
                            url,
                            credential_header,
                            credential_env: &env,
                            tools: &names,
                            read_only_tools: &read_only,
                        };
                        Ok(client.render(&server))
                    }
                },
            };
            let mut response = match body {
                Ok(doc) => {
                    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
                    json_response(StatusCode::OK, text)
                }
                Err((status, message)) => refusal(status, message),
            };
            inner.translations.mark_response(response.headers_mut(), language);
            response
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(document_path("/server.json"), Some((1, Document::ServerJson)));
        assert_eq!(document_path("/v2/server.json"), Some((2, Document::ServerJson)));
        assert_eq!(document_path("/v2/manifests/cursor"), Some((2, Document::Manifest("cursor".into()))));
        assert_eq!(document_path("/manifests/claude-code"), Some((1, Document::Manifest("claude-code".into()))));
        for other in [
            "/v2",
            "/v2/",
            "/v2//server.json",
            "/v2/manifests/",
            "/v2/manifests/a/b",
            "/v0/server.json",
            "/x/server.json",
            "/v2/server.jsonx",
            "/v2/manifests",
            "//server.json",
        ] {
            assert_eq!(document_path(other), None, "{other}");
        }
    }
}
