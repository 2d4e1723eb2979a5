//! The documents of the JSON-RPC endpoint for people (feature `docs`): the
//! HTML page of a version and its Postman collection, in the negotiated
//! language.

use http::{HeaderValue, Request, Response, StatusCode, header};

use super::service::JsonRpcService;
use crate::i18n::LanguageHeaders;
use crate::server::body::{ResponseBody, json_response, status_response};
use crate::server::route::{inner_path, mount_path, original_path, public_url};

impl JsonRpcService {
    /// The HTML page of `version`, in the negotiated language.
    pub(super) fn page<B: 'static>(&self, version: u32, request: &Request<B>) -> Response<ResponseBody> {
        let inner = &self.inner;
        let translations = &inner.translations;
        let language = translations.negotiate(request.headers());
        let Some(doc) = inner.docs.get(&version).and_then(|docs| docs.get(language.index())) else {
            return status_response(StatusCode::NOT_FOUND);
        };
        let context = crate::docs::PageContext {
            endpoint: public_url(request, inner.public_url.as_ref()),
            mount: mount_path(original_path(request), inner_path(request)),
            version,
            versions: self.available_versions(),
            protected: inner.security.has_access_policy(),
            language: translations.tag(language),
        };
        let mut response = crate::docs::page::response(&crate::docs::jsonrpc_page(doc, context));
        translations.mark_response(response.headers_mut(), language);
        response
    }

    /// The Postman collection of `version`, in the negotiated language.
    pub(super) fn postman<B: 'static>(&self, version: u32, request: &Request<B>) -> Response<ResponseBody> {
        let inner = &self.inner;
        let translations = &inner.translations;
        let language = translations.negotiate(request.headers());
        let Some(doc) = inner.docs.get(&version).and_then(|docs| docs.get(language.index())) else {
            return status_response(StatusCode::NOT_FOUND);
        };
        let original = original_path(request);
        let url = public_url(request, inner.public_url.as_ref());
        let base_url = url.strip_suffix(original).unwrap_or("");
        let path = format!("{}/v{version}", mount_path(original, inner_path(request)));
        let target =
            crate::docs::postman::Target { base_url, path: &path, protected: inner.security.has_access_policy() };
        let collection = crate::docs::postman::collection(doc, target);
        let mut response = json_response(StatusCode::OK, serde_json::to_vec_pretty(&collection).unwrap_or_default());
        let file: String = crate::docs::postman::collection_name(doc)
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '_' { c } else { '-' })
            .collect();
        let disposition = format!("attachment; filename=\"{file}.postman_collection.json\"");
        if let Ok(value) = HeaderValue::from_str(&disposition) {
            response.headers_mut().insert(header::CONTENT_DISPOSITION, value);
        }
        response.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        translations.mark_response(response.headers_mut(), language);
        response
    }
}
