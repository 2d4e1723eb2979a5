//! MCP content blocks a method can return instead of a plain value.
//!
//! A method returning [`Content`] or `Vec<Content>` has its result passed
//! through as the tool result's `content`, without `structuredContent` and
//! without an `outputSchema`. Over JSON-RPC the same method returns the
//! blocks as JSON.
//!
//! ```
//! let text = mcp::Content::text("hello");
//! assert_eq!(serde_json::to_value(&text).unwrap(), serde_json::json!({"type": "text", "text": "hello"}));
//! ```

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// The schema extension key that marks a schema as MCP content.
pub const CONTENT_MARKER: &str = "x-mcp-content";

/// One MCP content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 data.
        data: String,
        /// MIME type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A resource embedded in the result.
    Resource {
        /// The resource contents.
        resource: ResourceContents,
    },
    /// A link to a resource the client can read.
    ResourceLink {
        /// The resource URI.
        uri: String,
        /// The resource name.
        name: String,
        /// Human-readable title.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        title: Option<String>,
        /// Description.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        description: Option<String>,
        /// MIME type.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none", default)]
        mime_type: Option<String>,
    },
}

/// The contents of an embedded resource: text or a base64 blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text contents.
    Text {
        /// The resource URI.
        uri: String,
        /// MIME type.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none", default)]
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// Binary contents.
    Blob {
        /// The resource URI.
        uri: String,
        /// MIME type.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none", default)]
        mime_type: Option<String>,
        /// Base64 data.
        blob: String,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image block from base64 data.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image { data: data.into(), mime_type: mime_type.into() }
    }

    /// An audio block from base64 data.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio { data: data.into(), mime_type: mime_type.into() }
    }

    /// An embedded text resource.
    pub fn embedded_text(uri: impl Into<String>, mime_type: impl Into<String>, text: impl Into<String>) -> Self {
        Content::Resource {
            resource: ResourceContents::Text { uri: uri.into(), mime_type: Some(mime_type.into()), text: text.into() },
        }
    }

    /// A link to a resource.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink { uri: uri.into(), name: name.into(), title: None, description: None, mime_type: None }
    }
}

impl JsonSchema for Content {
    fn schema_name() -> Cow<'static, str> {
        "McpContent".into()
    }

    fn schema_id() -> Cow<'static, str> {
        "mcp::Content".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "An MCP content block (text, image, audio, resource or resource_link).",
            "type": "object",
            "properties": {
                "type": {"enum": ["text", "image", "audio", "resource", "resource_link"]}
            },
            "required": ["type"],
            "x-mcp-content": true
        })
    }
}
