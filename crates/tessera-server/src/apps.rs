//! MCP Apps (`io.modelcontextprotocol/ui`) on the server: [`Apps`] serves
//! HTML views as `ui://` resources (MIME type `text/html;profile=mcp-app`,
//! CSP and permissions in `_meta.ui`) and applies the visibility rules of
//! tools that name a view in `_meta.ui`.
//!
//! A tool is linked to a view with [`ToolBuilder::ui`](crate::ToolBuilder::ui).
//! A client that declares the extension (with the HTML MIME type among its
//! `mimeTypes`) sees every tool and filters by visibility itself; a client
//! that does not is never shown app-only tools (`visibility: ["app"]`), and
//! its calls to them are refused with `-32602`.
//!
//! ```
//! use tessera_server::apps::{Apps, UiView};
//! use tessera_server::{Server, tool};
//! use tessera_types::{ToolUiMeta, UiVisibility};
//!
//! async fn count() -> String { "1".into() }
//!
//! let server = Server::builder()
//!     .extension(Apps::new().view(UiView::new(
//!         "ui://demo/counter",
//!         "counter",
//!         "<!DOCTYPE html><html><body>…</body></html>",
//!     )))
//!     .tool(tool("show_counter").ui(ToolUiMeta::view("ui://demo/counter")).handler(count))
//!     .tool(
//!         tool("increment")
//!             .ui(ToolUiMeta::view("ui://demo/counter").visible_to([UiVisibility::App]))
//!             .handler(count),
//!     )
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```

use std::sync::Arc;

use serde_json::Value;
use tessera_types::{
    APP_MIME_TYPE, ErrorObject, JsonObject, ListToolsResult, ReadResourceResult, Resource,
    ResourceContents, TextResourceContents, Tool, ToolUiMeta, UI_EXTENSION, UiResourceMeta,
    UiSettings, UiVisibility,
};

use crate::context::RequestContext;
use crate::extension::ServerExtension;
use crate::resource::{ResourceError, ResourceProvider, SharedProvider};
use crate::tool::ToolBuilder;

/// One HTML view.
#[derive(Debug, Clone, PartialEq)]
pub struct UiView {
    /// The `ui://` URI.
    pub uri: String,
    /// The resource name.
    pub name: String,
    /// What the view shows.
    pub description: Option<String>,
    /// The HTML document.
    pub html: String,
    /// CSP, permissions, domain and border preference.
    pub meta: UiResourceMeta,
}

impl UiView {
    /// A view at `uri` (which must start with `ui://`) serving `html`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>, html: impl Into<String>) -> Self {
        UiView {
            uri: uri.into(),
            name: name.into(),
            description: None,
            html: html.into(),
            meta: UiResourceMeta::default(),
        }
    }

    /// Sets the description.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }

    /// Sets the `_meta.ui` of the resource (CSP, permissions, …).
    pub fn meta(mut self, meta: UiResourceMeta) -> Self {
        self.meta = meta;
        self
    }

    fn ui_meta(&self) -> JsonObject {
        let mut m = JsonObject::new();
        m.insert(
            "ui".into(),
            serde_json::to_value(&self.meta).unwrap_or(Value::Null),
        );
        m
    }
}

/// The MCP Apps extension: the views, and the visibility rules.
#[derive(Debug, Default)]
pub struct Apps {
    views: Arc<Vec<UiView>>,
}

impl Apps {
    /// No views yet.
    pub fn new() -> Self {
        Apps::default()
    }

    /// Adds a view. A URI that does not start with `ui://` is refused when
    /// the view is read; views are listed in `resources/list`.
    pub fn view(mut self, view: UiView) -> Self {
        Arc::make_mut(&mut self.views).push(view);
        self
    }
}

/// Whether the client renders HTML views (declared the extension with the
/// HTML MIME type).
pub fn client_renders_apps(context: &RequestContext) -> bool {
    matches!(context.client_extension::<UiSettings>(), Some(Ok(s)) if s.renders_html())
}

fn app_only(meta: Option<ToolUiMeta>) -> bool {
    meta.is_some_and(|m| !m.allows(UiVisibility::Model))
}

impl ServerExtension for Apps {
    fn id(&self) -> &str {
        UI_EXTENSION
    }

    fn resources(&self) -> Option<SharedProvider> {
        Some(SharedProvider::new(Views(self.views.clone())))
    }

    fn on_tools_list(&self, context: &RequestContext, result: &mut ListToolsResult) {
        // A client that renders no views never gets app-only tools.
        if !client_renders_apps(context) {
            result.tools.retain(|t| !app_only(ToolUiMeta::of(t)));
        }
    }

    fn check_tool_call(&self, context: &RequestContext, tool: &Tool) -> Result<(), ErrorObject> {
        if !app_only(ToolUiMeta::of(tool)) || client_renders_apps(context) {
            return Ok(());
        }
        let name = tool.name.as_str();
        Err(ErrorObject::invalid_params(format!(
            "Tool {name} is only callable from an app view (visibility [\"app\"]); this \
             client did not declare {UI_EXTENSION} with {APP_MIME_TYPE}"
        ))
        .with_data(serde_json::to_value(RefusedTool { name }).unwrap_or_default()))
    }
}

struct Views(Arc<Vec<UiView>>);

impl ResourceProvider for Views {
    async fn list(&self) -> Result<Vec<Resource>, ResourceError> {
        let listed = self
            .0
            .iter()
            .map(|v| Resource {
                uri: v.uri.clone(),
                name: v.name.clone(),
                description: v.description.clone(),
                mime_type: Some(APP_MIME_TYPE.into()),
                meta: Some(v.ui_meta()),
                ..Resource::default()
            })
            .collect();
        Ok(listed)
    }

    async fn read(
        &self,
        uri: &str,
        _context: &RequestContext,
    ) -> Option<Result<ReadResourceResult, ResourceError>> {
        let view = self.0.iter().find(|v| v.uri == uri)?;
        if !view.uri.starts_with("ui://") {
            return Some(Err(ResourceError::internal(format!(
                "view {} does not use the ui:// scheme",
                view.uri
            ))));
        }
        let mut text =
            TextResourceContents::new(&view.uri, view.html.clone()).with_mime_type(APP_MIME_TYPE);
        text.meta = Some(view.ui_meta());
        Some(Ok(ReadResourceResult::new(vec![ResourceContents::Text(
            text,
        )])))
    }
}

impl ToolBuilder {
    /// Links the tool to an app view and says who may call it (`_meta.ui`;
    /// see [`Apps`]).
    pub fn ui(self, ui: ToolUiMeta) -> Self {
        self.edit(|t| ui.apply(t))
    }
}

/// The data of a refused app-only tool call: the tool's name.
#[derive(serde::Serialize)]
struct RefusedTool<'a> {
    name: &'a str,
}
