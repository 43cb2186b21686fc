//! MCP Apps (`io.modelcontextprotocol/ui`) on the client: a tool's view
//! metadata and the view itself. Declare that the client renders views with
//! `ClientBuilder::declare_extension(&UiSettings::html())`; a server then
//! shows its app-only tools too (the host keeps them from the model).

use tessera_types::methods;
use tessera_types::{
    APP_MIME_TYPE, ResourceContents, Tool, ToolUiMeta, UiResourceMeta, UiVisibility,
};

use crate::client::Client;
use crate::error::ClientError;

/// A fetched view: its HTML and its `_meta.ui` (CSP, permissions, …).
#[derive(Debug, Clone, PartialEq)]
pub struct AppView {
    /// The `ui://` URI.
    pub uri: String,
    /// The HTML document.
    pub html: String,
    /// The resource's `_meta.ui` (defaults when absent).
    pub meta: UiResourceMeta,
}

/// Whether a tool belongs in the model's tool list (its visibility includes
/// `model`, or it says nothing).
pub fn visible_to_model(tool: &Tool) -> bool {
    ToolUiMeta::of(tool).is_none_or(|m| m.allows(UiVisibility::Model))
}

impl Client {
    /// Fetches the view of `tool` (its `_meta.ui.resourceUri`) with
    /// `resources/read`; the URI must be `ui://` and the content HTML with
    /// the Apps MIME type.
    pub async fn read_app_view(&self, tool: &Tool) -> Result<AppView, ClientError> {
        let uri = ToolUiMeta::of(tool)
            .and_then(|m| m.resource_uri)
            .ok_or_else(|| ClientError::Unsupported(format!("a view for tool {}", tool.name)))?;
        let bad = |reason: String| ClientError::Protocol {
            method: methods::RESOURCES_READ.into(),
            reason,
        };
        if !uri.starts_with("ui://") {
            return Err(bad(format!(
                "the view {uri} of {} is not a ui:// URI",
                tool.name
            )));
        }
        let read = self.read_resource(&uri).await?;
        let part = read
            .contents
            .iter()
            .find(|c| c.uri() == uri)
            .ok_or_else(|| bad(format!("no contents for {uri}")))?;
        let (html, mime, meta) = match part {
            ResourceContents::Text(t) => (t.text.clone(), t.mime_type.clone(), t.meta.clone()),
            ResourceContents::Blob(b) => {
                let bytes = b
                    .decode()
                    .map_err(|e| bad(format!("the blob of {uri} is not base64: {e}")))?;
                let html = String::from_utf8(bytes)
                    .map_err(|_| bad(format!("the view {uri} is not UTF-8")))?;
                (html, b.mime_type.clone(), b.meta.clone())
            }
        };
        if mime.as_deref() != Some(APP_MIME_TYPE) {
            return Err(bad(format!(
                "the view {uri} has MIME type {mime:?}, not {APP_MIME_TYPE}"
            )));
        }
        let meta = tessera_types::apps::UiResourceMeta::of(meta.as_ref())
            .map_err(|e| bad(format!("the _meta.ui of {uri} is invalid: {e}")))?;
        Ok(AppView { uri, html, meta })
    }
}
