//! MCP Apps (`io.modelcontextprotocol/ui`): interactive HTML views a host
//! renders for a tool. A tool names its view in `_meta.ui.resourceUri` (a
//! `ui://` resource served with MIME type `text/html;profile=mcp-app`) and
//! who may call it in `_meta.ui.visibility`; the view's resource carries
//! its Content Security Policy and permission requests in `_meta.ui`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::JsonObject;
use crate::extension::ExtensionSettings;
use crate::tool::Tool;

/// The extension identifier.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an HTML view.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The `_meta` key under which a tool or a view resource carries its Apps
/// metadata ([`ToolUiMeta`], [`UiResourceMeta`]).
pub const UI_META: &str = "ui";

/// A client's settings: the view content types it renders.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiSettings {
    /// Content types the host renders (`text/html;profile=mcp-app`).
    #[serde(default)]
    pub mime_types: Vec<String>,
}

impl UiSettings {
    /// A host that renders HTML views.
    pub fn html() -> Self {
        UiSettings {
            mime_types: vec![APP_MIME_TYPE.to_owned()],
        }
    }

    /// Whether HTML views are rendered.
    pub fn renders_html(&self) -> bool {
        self.mime_types.iter().any(|m| m == APP_MIME_TYPE)
    }
}

impl ExtensionSettings for UiSettings {
    const ID: &'static str = UI_EXTENSION;
}

/// Who may call a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UiVisibility {
    /// The model (the agent's tool list).
    Model,
    /// Views of the same server.
    App,
}

/// The `_meta` members of a tool that say its UI: [`UI_META`], else the
/// deprecated flat `ui/resourceUri`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct UiKeys {
    /// [`UI_META`].
    ui: crate::Loose<ToolUiMeta>,
    #[serde(rename = "ui/resourceUri")]
    resource_uri: crate::Loose<String>,
}

/// A tool's `_meta.ui`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUiMeta {
    /// The `ui://` resource that renders the tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call the tool (default: model and app).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<UiVisibility>>,
}

impl ToolUiMeta {
    /// A tool rendered by the view at `resource_uri`, callable by both.
    pub fn view(resource_uri: impl Into<String>) -> Self {
        ToolUiMeta {
            resource_uri: Some(resource_uri.into()),
            visibility: None,
        }
    }

    /// Restricts who may call the tool.
    pub fn visible_to(mut self, who: impl IntoIterator<Item = UiVisibility>) -> Self {
        self.visibility = Some(who.into_iter().collect());
        self
    }

    /// Whether `who` may call the tool (both may when nothing is said).
    pub fn allows(&self, who: UiVisibility) -> bool {
        self.visibility.as_ref().is_none_or(|v| v.contains(&who))
    }

    /// Writes this under `_meta.ui` of a tool (keeping its other `_meta`).
    pub fn apply(&self, tool: &mut Tool) {
        let meta = tool.meta.get_or_insert_with(JsonObject::new);
        meta.insert(
            UI_META.into(),
            serde_json::to_value(self).unwrap_or(Value::Null),
        );
    }

    /// The `_meta.ui` of a tool, also from the deprecated flat
    /// `_meta["ui/resourceUri"]`; `None` when it has neither.
    pub fn of(tool: &Tool) -> Option<ToolUiMeta> {
        let meta: UiKeys = crate::params::decode_tree(tool.meta.as_ref()?).ok()?;
        match meta.ui {
            crate::Loose::Valid(ui) => Some(ui),
            crate::Loose::Malformed(_) => None,
            crate::Loose::Absent => meta.resource_uri.into_valid().map(ToolUiMeta::view),
        }
    }
}

/// The Content Security Policy a view needs (origins it may reach).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiCsp {
    /// Origins for fetch, XHR and WebSocket (`connect-src`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_domains: Option<Vec<String>>,
    /// Origins for scripts, images, styles, fonts and media.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_domains: Option<Vec<String>>,
    /// Origins for nested frames (`frame-src`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_domains: Option<Vec<String>>,
    /// Allowed base URIs (`base-uri`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_uri_domains: Option<Vec<String>>,
}

/// Browser permissions a view asks for (hosts may grant them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiPermissions {
    /// Camera.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<JsonObject>,
    /// Microphone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microphone: Option<JsonObject>,
    /// Geolocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<JsonObject>,
    /// Clipboard write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clipboard_write: Option<JsonObject>,
}

/// A view resource's `_meta.ui`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiResourceMeta {
    /// The CSP it needs (none: the host's restrictive default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<UiCsp>,
    /// Permissions it asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<UiPermissions>,
    /// A dedicated sandbox origin (host-specific format).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the host should draw a border and background.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
}

impl UiResourceMeta {
    /// The `_meta.ui` of a view resource's `_meta` (the default when it has
    /// none); an error when it is there but malformed.
    pub fn of(meta: Option<&JsonObject>) -> Result<UiResourceMeta, serde_json::Error> {
        match meta.and_then(|m| m.get(UI_META)) {
            Some(ui) => UiResourceMeta::deserialize(ui),
            None => Ok(UiResourceMeta::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tool_meta_round_trip_and_visibility() {
        let mut tool: Tool = serde_json::from_value(
            json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": {"x": 1}}),
        )
        .unwrap();
        assert!(ToolUiMeta::of(&tool).is_none());
        ToolUiMeta::view("ui://a/b")
            .visible_to([UiVisibility::App])
            .apply(&mut tool);
        let v = serde_json::to_value(&tool).unwrap();
        assert_eq!(
            v["_meta"],
            json!({"x": 1, "ui": {"resourceUri": "ui://a/b", "visibility": ["app"]}})
        );
        let back = ToolUiMeta::of(&tool).unwrap();
        assert!(back.allows(UiVisibility::App) && !back.allows(UiVisibility::Model));
        assert!(ToolUiMeta::view("ui://x").allows(UiVisibility::Model));
        let flat: Tool = serde_json::from_value(json!({"name": "t",
            "inputSchema": {"type": "object"}, "_meta": {"ui/resourceUri": "ui://old"}}))
        .unwrap();
        assert_eq!(
            ToolUiMeta::of(&flat).unwrap().resource_uri.as_deref(),
            Some("ui://old")
        );
        assert!(UiSettings::html().renders_html());
        assert!(!UiSettings::default().renders_html());
    }
}
