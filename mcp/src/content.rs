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
pub const CONTENT_MARKER: &str = crate::markers::CONTENT;

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

impl ResourceContents {
    /// Text contents of the resource at `uri`.
    pub fn text(uri: impl Into<String>, mime_type: Option<&str>, text: impl Into<String>) -> Self {
        ResourceContents::Text { uri: uri.into(), mime_type: mime_type.map(str::to_owned), text: text.into() }
    }

    /// Binary contents of the resource at `uri`, base64-encoded here.
    pub fn blob(uri: impl Into<String>, mime_type: Option<&str>, bytes: &[u8]) -> Self {
        use base64::Engine as _;
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            blob: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }
}

impl JsonSchema for ResourceContents {
    fn schema_name() -> Cow<'static, str> {
        "McpResourceContents".into()
    }

    fn schema_id() -> Cow<'static, str> {
        "mcp::ResourceContents".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "The contents of a resource: `uri`, `mimeType`, and `text` or a base64 `blob`.",
            "type": "object",
            "properties": {
                "uri": {"type": "string"},
                "mimeType": {"type": "string"},
                "text": {"type": "string"},
                "blob": {"type": "string", "contentEncoding": "base64"}
            },
            "required": ["uri"],
            "x-mcp-resource-contents": true
        })
    }
}

/// Binary contents a `#[mcp_resource]` method returns: sent as the
/// resource's base64 `blob`, with its MIME type (else the resource's).
/// Over JSON-RPC it is `{"blob": "<base64>", "mimeType": ...}`.
///
/// ```
/// let png = mcp::Blob::new(vec![0x89, b'P', b'N', b'G']).mime_type("image/png");
/// assert_eq!(serde_json::to_value(&png).unwrap(), serde_json::json!({"blob": "iVBORw==", "mimeType": "image/png"}));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Blob {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Their MIME type.
    pub mime_type: Option<String>,
}

impl Blob {
    /// `bytes`, of the resource's MIME type.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Self {
        Blob { bytes: bytes.into(), mime_type: None }
    }

    /// With MIME type `mime_type`.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

impl Serialize for Blob {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use base64::Engine as _;
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1 + usize::from(self.mime_type.is_some())))?;
        map.serialize_entry("blob", &base64::engine::general_purpose::STANDARD.encode(&self.bytes))?;
        if let Some(mime) = &self.mime_type {
            map.serialize_entry("mimeType", mime)?;
        }
        map.end()
    }
}

impl JsonSchema for Blob {
    fn schema_name() -> Cow<'static, str> {
        "McpBlob".into()
    }

    fn schema_id() -> Cow<'static, str> {
        "mcp::Blob".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Binary contents, base64-encoded.",
            "type": "object",
            "properties": {
                "blob": {"type": "string", "contentEncoding": "base64"},
                "mimeType": {"type": "string"}
            },
            "required": ["blob"],
            "x-mcp-blob": true
        })
    }
}
