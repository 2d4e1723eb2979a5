//! Documents for people: an HTML page describing an endpoint (its
//! versions, methods or tools, schemas, with a try-it form), and a Postman
//! collection of a JSON-RPC version.
//!
//! The page is self-contained (inline CSS and JavaScript, no external URL)
//! and served with a strict `Content-Security-Policy`; every text from
//! method docs or translations reaches it as JSON data that the page's
//! script puts into the DOM as text, never as markup.

pub mod accept;
pub mod example;
pub mod openrpc_page;
pub mod page;
pub mod postman;

pub use accept::{asks_for_event_stream, prefers_html};
pub use example::{example, params_example};
pub use openrpc_page::{PageContext, jsonrpc_page};
pub use page::{Entry, ErrorDoc, ErrorUse, Page, PageKind, Param, Tag, VersionLink};
