//! Content blocks: what tools return, prompts contain and sampling exchanges.
//!
//! Each block type is a struct that writes its own `type` member, so it
//! serialises correctly on its own; the unions ([`ContentBlock`],
//! [`SamplingMessageContentBlock`]) choose the struct by `type` when
//! reading. A standalone struct does not check `type` when read on its own.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};

use crate::JsonObject;
use crate::lifecycle::Icon;
use crate::macros::tagged_union;
use crate::resource::{BlobResourceContents, ResourceContents, TextResourceContents};

/// The sender or recipient of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant (model).
    Assistant,
}

/// Hints for the client about how to use or display an object.
///
/// 2024-11-05 embedded these inline (the `Annotated` mixin); the standalone
/// `Annotations` definition exists since 2025-03-26.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the object is intended for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (optional) to 1 (required).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::number::ser_opt_f64"
    )]
    pub priority: Option<f64>,
    /// ISO 8601 time of the last modification. Since 2025-06-18.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// Text (`type: "text"`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "text", rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Reserved metadata (`_meta`). Since 2025-06-18.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl TextContent {
    /// A text block.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent {
            text: text.into(),
            ..TextContent::default()
        }
    }
}

/// An image (`type: "image"`), base64-encoded.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "image", rename_all = "camelCase")]
pub struct ImageContent {
    /// The base64-encoded image data.
    pub data: String,
    /// The image's MIME type.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Reserved metadata (`_meta`). Since 2025-06-18.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ImageContent {
    /// An image from already base64-encoded data.
    pub fn new(data_base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ImageContent {
            data: data_base64.into(),
            mime_type: mime_type.into(),
            ..ImageContent::default()
        }
    }

    /// An image from raw bytes (encoded here).
    pub fn from_bytes(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        ImageContent::new(BASE64.encode(bytes), mime_type)
    }

    /// The decoded bytes.
    pub fn decode(&self) -> Result<Vec<u8>, base64::DecodeError> {
        BASE64.decode(&self.data)
    }
}

/// Audio (`type: "audio"`), base64-encoded. Since 2025-03-26.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "audio", rename_all = "camelCase")]
pub struct AudioContent {
    /// The base64-encoded audio data.
    pub data: String,
    /// The audio's MIME type.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Reserved metadata (`_meta`). Since 2025-06-18.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl AudioContent {
    /// Audio from already base64-encoded data.
    pub fn new(data_base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        AudioContent {
            data: data_base64.into(),
            mime_type: mime_type.into(),
            ..AudioContent::default()
        }
    }

    /// Audio from raw bytes (encoded here).
    pub fn from_bytes(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        AudioContent::new(BASE64.encode(bytes), mime_type)
    }

    /// The decoded bytes.
    pub fn decode(&self) -> Result<Vec<u8>, base64::DecodeError> {
        BASE64.decode(&self.data)
    }
}

/// A link to a resource the client may read (`type: "resource_link"`).
/// Since 2025-06-18.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "resource_link", rename_all = "camelCase")]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// The programmatic name.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The size in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons. Since 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ResourceLink {
    /// A link to `uri` called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            ..ResourceLink::default()
        }
    }
}

/// A resource's contents embedded in a message (`type: "resource"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "resource", rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Reserved metadata (`_meta`). Since 2025-06-18.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl EmbeddedResource {
    /// Embeds `resource`.
    pub fn new(resource: impl Into<ResourceContents>) -> Self {
        EmbeddedResource {
            resource: resource.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// A model's request to call a tool (`type: "tool_use"`), in sampling.
/// Since 2025-11-25.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "tool_use", rename_all = "camelCase")]
pub struct ToolUseContent {
    /// Identifies this call; the matching [`ToolResultContent`] repeats it.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments.
    pub input: JsonObject,
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The result of a tool call (`type: "tool_result"`), in sampling.
/// Since 2025-11-25.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "tool_result", rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The `id` of the [`ToolUseContent`] this answers.
    pub tool_use_id: String,
    /// The unstructured result.
    pub content: Vec<ContentBlock>,
    /// The structured result: an object in 2025-11-25, any JSON value in 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<serde_json::Value>,
    /// Whether the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

tagged_union! {
    /// Any content block of tool results, prompt messages and resources
    /// (schema `ContentBlock`, a named union since 2025-06-18; earlier
    /// versions list the members inline, without `resource_link`).
    pub enum ContentBlock (tag = "type") {
        /// Text.
        "text" => Text(TextContent),
        /// An image.
        "image" => Image(ImageContent),
        /// Audio. Since 2025-03-26.
        "audio" => Audio(AudioContent),
        /// A resource link. Since 2025-06-18.
        "resource_link" => ResourceLink(ResourceLink),
        /// An embedded resource.
        "resource" => Resource(EmbeddedResource),
    }
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// An image block from base64 data.
    pub fn image(data_base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(ImageContent::new(data_base64, mime_type))
    }

    /// An audio block from base64 data.
    pub fn audio(data_base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(AudioContent::new(data_base64, mime_type))
    }

    /// A resource link block.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ContentBlock::ResourceLink(ResourceLink::new(uri, name))
    }

    /// An embedded text resource.
    pub fn embedded_text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ContentBlock::Resource(EmbeddedResource::new(TextResourceContents::new(uri, text)))
    }

    /// An embedded binary resource from raw bytes.
    pub fn embedded_blob(uri: impl Into<String>, bytes: &[u8]) -> Self {
        ContentBlock::Resource(EmbeddedResource::new(BlobResourceContents::from_bytes(
            uri, bytes,
        )))
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

tagged_union! {
    /// A content block of a sampling message (schema
    /// `SamplingMessageContentBlock`, since 2025-11-25; earlier versions
    /// allow text, image and, since 2025-03-26, audio).
    pub enum SamplingMessageContentBlock (tag = "type") {
        /// Text.
        "text" => Text(TextContent),
        /// An image.
        "image" => Image(ImageContent),
        /// Audio. Since 2025-03-26.
        "audio" => Audio(AudioContent),
        /// A tool call by the model. Since 2025-11-25.
        "tool_use" => ToolUse(ToolUseContent),
        /// A tool result. Since 2025-11-25.
        "tool_result" => ToolResult(ToolResultContent),
    }
}

impl SamplingMessageContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingMessageContentBlock::Text(TextContent::new(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_carry_their_type() {
        let b = ContentBlock::text("hi");
        assert_eq!(
            serde_json::to_value(&b).unwrap(),
            json!({"type": "text", "text": "hi"})
        );
        let t = TextContent::new("hi");
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({"type": "text", "text": "hi"})
        );
        let back: ContentBlock =
            serde_json::from_value(json!({"type": "text", "text": "hi"})).unwrap();
        assert_eq!(back, b);
        assert_eq!(back.tag(), "text");
    }

    #[test]
    fn unknown_type_is_rejected() {
        let e = serde_json::from_value::<ContentBlock>(json!({"type": "video", "data": ""}));
        assert!(e.unwrap_err().to_string().contains("video"));
    }

    #[test]
    fn bytes_round_trip() {
        let img = ImageContent::from_bytes(b"\x89PNG", "image/png");
        assert_eq!(img.decode().unwrap(), b"\x89PNG");
    }
}
