//! Identity and the legacy session handshake: [`Implementation`], [`Icon`],
//! `initialize`, `notifications/initialized` and `ping`.
//!
//! The handshake exists in 2024-11-05 through 2025-11-25 only. In
//! 2026-07-28 the same information travels in every request's `_meta`
//! (see [`RequestMeta`](crate::meta::RequestMeta)) and in
//! [`DiscoverResult`](crate::discover::DiscoverResult).

use serde::{Deserialize, Serialize};

use crate::JsonObject;
use crate::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::macros::{notifications, requests};
use crate::method::{NotificationParams, RequestParams};
use crate::result::EmptyResult;
use crate::version::ProtocolVersion;

/// The light or dark theme an icon is designed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// For light backgrounds.
    Light,
    /// For dark backgrounds.
    Dark,
}

/// An icon a client may display. Since 2025-11-25.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// An `http(s):` or `data:` URI of the image.
    pub src: String,
    /// The MIME type, if the server's is missing or too generic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme the icon is designed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon at `src` with nothing else specified.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            ..Icon::default()
        }
    }
}

/// The `Icons` mixin: an optional list of icons. Since 2025-11-25.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Icons {
    /// The icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
}

/// The `BaseMetadata` mixin: a programmatic name and a display title.
/// Since 2025-06-18 (`name` alone before).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BaseMetadata {
    /// The programmatic name.
    pub name: String,
    /// A human-readable title. Since 2025-06-18.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// The name and version of an MCP client or server implementation.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// The programmatic name.
    pub name: String,
    /// A human-readable title. Since 2025-06-18.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The version.
    pub version: String,
    /// A human-readable description. Since 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons. Since 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// The implementation's website. Since 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            ..Implementation::default()
        }
    }

    /// Reads an `Implementation` object as a peer sent it, never failing:
    /// when the object does not fit, the `name` and `version` strings that
    /// can be read (empty otherwise).
    pub fn from_object(raw: &JsonObject) -> Self {
        Implementation::deserialize(raw).unwrap_or_else(|_| {
            let text = |k: &str| {
                raw.get(k)
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("")
                    .to_owned()
            };
            Implementation::new(text("name"), text("version"))
        })
    }

    /// Sets the title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the website URL.
    pub fn with_website_url(mut self, url: impl Into<String>) -> Self {
        self.website_url = Some(url.into());
        self
    }

    /// Sets the icons.
    pub fn with_icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }
}

/// Parameters of `initialize`. 2024-11-05 through 2025-11-25.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequestParams {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The newest version the client supports (kept as a string: it may be
    /// one this crate does not know).
    pub protocol_version: String,
    /// The client's capabilities.
    pub capabilities: ClientCapabilities,
    /// The client's identity.
    pub client_info: Implementation,
}

impl InitializeRequestParams {
    /// Parameters proposing `version`.
    pub fn new(
        version: ProtocolVersion,
        capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> Self {
        InitializeRequestParams {
            meta: None,
            protocol_version: version.as_str().to_owned(),
            capabilities,
            client_info,
        }
    }

    /// The requested version, if this crate knows it.
    pub fn version(&self) -> Option<ProtocolVersion> {
        ProtocolVersion::parse(&self.protocol_version)
    }
}

/// Result of `initialize`. 2024-11-05 through 2025-11-25.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The version the server chose.
    pub protocol_version: String,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// The server's identity.
    pub server_info: Implementation,
    /// How to use the server, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

impl InitializeResult {
    /// A result choosing `version`.
    pub fn new(
        version: ProtocolVersion,
        capabilities: ServerCapabilities,
        server_info: Implementation,
    ) -> Self {
        InitializeResult {
            meta: None,
            protocol_version: version.as_str().to_owned(),
            capabilities,
            server_info,
            instructions: None,
        }
    }

    /// The chosen version, if this crate knows it.
    pub fn version(&self) -> Option<ProtocolVersion> {
        ProtocolVersion::parse(&self.protocol_version)
    }
}

requests! {
    /// `initialize`: opens a session. 2024-11-05 through 2025-11-25.
    InitializeRequest: crate::methods::INITIALIZE, InitializeRequestParams => InitializeResult;
    /// `ping`: liveness check, either direction. 2024-11-05 through 2025-11-25.
    PingRequest: crate::methods::PING, RequestParams => EmptyResult;
}

notifications! {
    /// `notifications/initialized`: the client finished initialising.
    /// 2024-11-05 through 2025-11-25.
    InitializedNotification: crate::methods::NOTIFICATIONS_INITIALIZED, NotificationParams;
}
