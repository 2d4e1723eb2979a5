//! Localised titles and descriptions: translation files, language
//! negotiation, and the fallback chain every text goes through.
//!
//! Translation files are YAML, in a directory the application names:
//!
//! ```text
//! translations/rpc.en.yaml         base translation: every group
//! translations/rpc.uk.yaml
//! translations/rpc/mcp.uk.yaml     only the `mcp` group (texts for an AI agent)
//! ```
//!
//! Keys are method names (a key applies to every version of the method);
//! values have a `title` and a `description`. The reserved key `$server`
//! holds the endpoint's own texts: `title`, `description` and (MCP)
//! `instructions`.
//!
//! ```yaml
//! Catalog.search:
//!   title: Search products
//!   description: Search products by name. Returns up to `limit` products.
//! $server:
//!   title: Product catalog
//!   instructions: Use Catalog.search to find products, then Catalog.get.
//! ```
//!
//! Each field has its own fallback chain: the group's file in the client's
//! language, the group's file in the default language, the base file in
//! the client's language, the base file in the default language, then the
//! doc comment / `#[rpc::info]` (see [`Translations::text`]). The
//! client's language comes from `Accept-Language` (`LanguageHeaders::negotiate` in `rpc-http`),
//! q-values, ranges and `*` included, matched against the languages that
//! have files; the default language is configurable (English unless set).
//!
//! Endpoints build their documents (MCP tool lists, OpenRPC) once per
//! (group, version, language) and serve the prebuilt bytes.

#[cfg(feature = "translations")]
mod files;
mod negotiate;
pub mod tag;
mod translations;

pub use tag::LanguageTag;
pub use translations::{Field, SERVER_KEY, TranslationError, Translations};

/// A language an endpoint serves: an index into its [`Translations`]'
/// languages ([`Language::DEFAULT`] is the default language).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Language(pub(crate) usize);

impl Language {
    /// The default language.
    pub const DEFAULT: Language = Language(0);

    /// The position of the language in [`Translations::languages`].
    pub fn index(self) -> usize {
        self.0
    }
}
