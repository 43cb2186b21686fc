//! Resources: listing, templates, reading, subscriptions and their
//! notifications.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Deserializer, Serialize};

use crate::JsonObject;
use crate::cache::CacheScope;
use crate::content::Annotations;
use crate::lifecycle::Icon;
use crate::macros::{notifications, requests};
use crate::method::NotificationParams;
use crate::mrtr::InputResponses;
use crate::pagination::{Cursor, PaginatedRequestParams};
use crate::result::{EmptyResult, ResultType};

/// A resource the server can read.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// The programmatic name.
    pub name: String,
    /// A human-readable title. Since 2025-06-18.
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
    /// Reserved metadata (`_meta`). Since 2025-06-18.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl Resource {
    /// A resource at `uri` called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            ..Resource::default()
        }
    }
}

/// A family of resources described by a URI template (RFC 6570).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template.
    pub uri_template: String,
    /// The programmatic name.
    pub name: String,
    /// A human-readable title. Since 2025-06-18.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of every matching resource, if they share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons. Since 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Reserved metadata (`_meta`). Since 2025-06-18.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ResourceTemplate {
    /// A template `uri_template` called `name`.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            ..ResourceTemplate::default()
        }
    }
}

/// Text contents of a resource.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// The MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Reserved metadata (`_meta`). Since 2025-06-18.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl TextResourceContents {
    /// The text `text` of `uri`.
    pub fn new(uri: impl Into<String>, text: impl Into<String>) -> Self {
        TextResourceContents {
            uri: uri.into(),
            text: text.into(),
            ..TextResourceContents::default()
        }
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// Binary contents of a resource, base64-encoded.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// The MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The base64-encoded data.
    pub blob: String,
    /// Reserved metadata (`_meta`). Since 2025-06-18.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl BlobResourceContents {
    /// Contents of `uri` from already base64-encoded data.
    pub fn new(uri: impl Into<String>, blob_base64: impl Into<String>) -> Self {
        BlobResourceContents {
            uri: uri.into(),
            blob: blob_base64.into(),
            ..BlobResourceContents::default()
        }
    }

    /// Contents of `uri` from raw bytes (encoded here).
    pub fn from_bytes(uri: impl Into<String>, bytes: &[u8]) -> Self {
        BlobResourceContents::new(uri, BASE64.encode(bytes))
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The decoded bytes.
    pub fn decode(&self) -> Result<Vec<u8>, base64::DecodeError> {
        BASE64.decode(&self.blob)
    }
}

/// The contents of a resource, text or binary (schema `ResourceContents`
/// and its two refinements, told apart by a `text` or `blob` member).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// The resource's URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let p = crate::probe::Probe::of(&v);
        let r = if p.blob.0 && !p.text.0 {
            serde_json::from_value(v).map(ResourceContents::Blob)
        } else if p.text.0 {
            serde_json::from_value(v).map(ResourceContents::Text)
        } else {
            return Err(serde::de::Error::custom(
                "resource contents need a `text` or a `blob` member",
            ));
        };
        r.map_err(serde::de::Error::custom)
    }
}

impl From<TextResourceContents> for ResourceContents {
    fn from(v: TextResourceContents) -> Self {
        ResourceContents::Text(v)
    }
}

impl From<BlobResourceContents> for ResourceContents {
    fn from(v: BlobResourceContents) -> Self {
        ResourceContents::Blob(v)
    }
}

/// Result of `resources/list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// The resources on this page.
    pub resources: Vec<Resource>,
    /// The cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The result type. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Cache lifetime hint in milliseconds. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope hint. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

/// Result of `resources/templates/list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// The templates on this page.
    pub resource_templates: Vec<ResourceTemplate>,
    /// The cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The result type. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Cache lifetime hint in milliseconds. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope hint. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

/// Parameters of `resources/read`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceRequestParams {
    /// Reserved metadata (`_meta`); required in 2026-07-28.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The resource to read.
    pub uri: String,
    /// Responses to the input requests of a previous attempt. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// Opaque state echoed from a previous `InputRequiredResult`. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl ReadResourceRequestParams {
    /// Parameters reading `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        ReadResourceRequestParams {
            uri: uri.into(),
            ..ReadResourceRequestParams::default()
        }
    }
}

/// Result of `resources/read`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// The contents (a resource may have several parts).
    pub contents: Vec<ResourceContents>,
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The result type. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Cache lifetime hint in milliseconds. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope hint. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

impl ReadResourceResult {
    /// A result with the given contents.
    pub fn new(contents: Vec<ResourceContents>) -> Self {
        ReadResourceResult {
            contents,
            ..ReadResourceResult::default()
        }
    }
}

/// Parameters naming one resource (schema `ResourceRequestParams`; also the
/// parameters of `resources/subscribe` and `resources/unsubscribe`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResourceRequestParams {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The resource's URI.
    pub uri: String,
}

impl ResourceRequestParams {
    /// Parameters naming `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        ResourceRequestParams {
            meta: None,
            uri: uri.into(),
        }
    }
}

/// Parameters of `resources/subscribe`. 2024-11-05 through 2025-11-25.
pub type SubscribeRequestParams = ResourceRequestParams;

/// Parameters of `resources/unsubscribe`. 2024-11-05 through 2025-11-25.
pub type UnsubscribeRequestParams = ResourceRequestParams;

/// Parameters of `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResourceUpdatedNotificationParams {
    /// Reserved metadata (`_meta`); in 2026-07-28 it carries the subscription id.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The URI of the updated resource.
    pub uri: String,
}

impl ResourceUpdatedNotificationParams {
    /// Parameters for an update of `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        ResourceUpdatedNotificationParams {
            meta: None,
            uri: uri.into(),
        }
    }
}

crate::result::impl_result_fields!(
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult
);
crate::cache::impl_cacheable!(
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult
);

requests! {
    /// `resources/list`.
    ListResourcesRequest: crate::methods::RESOURCES_LIST, PaginatedRequestParams => ListResourcesResult;
    /// `resources/templates/list`.
    ListResourceTemplatesRequest: crate::methods::RESOURCES_TEMPLATES_LIST, PaginatedRequestParams => ListResourceTemplatesResult;
    /// `resources/read`. In 2026-07-28 it may be answered with an
    /// `InputRequiredResult`.
    ReadResourceRequest: crate::methods::RESOURCES_READ, ReadResourceRequestParams => ReadResourceResult;
    /// `resources/subscribe`. 2024-11-05 through 2025-11-25 (replaced by
    /// `subscriptions/listen`).
    SubscribeRequest: crate::methods::RESOURCES_SUBSCRIBE, SubscribeRequestParams => EmptyResult;
    /// `resources/unsubscribe`. 2024-11-05 through 2025-11-25.
    UnsubscribeRequest: crate::methods::RESOURCES_UNSUBSCRIBE, UnsubscribeRequestParams => EmptyResult;
}

notifications! {
    /// `notifications/resources/list_changed`.
    ResourceListChangedNotification: crate::methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED, NotificationParams;
    /// `notifications/resources/updated`.
    ResourceUpdatedNotification: crate::methods::NOTIFICATIONS_RESOURCES_UPDATED, ResourceUpdatedNotificationParams;
}
