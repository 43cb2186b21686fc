//! MCP Apps: a tool's `_meta.ui` and its view round trip, and app-only tools
//! are shown to (and callable by) clients that render views only — both eras.

use serde_json::json;
use tessera_client::apps::visible_to_model;
use tessera_server::apps::{Apps, UiView};
use tessera_server::{Server, tool};
use tessera_testkit::prelude::{ERAS, builder, in_process};
use tessera_types::{
    APP_MIME_TYPE, ToolUiMeta, UiCsp, UiPermissions, UiResourceMeta, UiSettings, UiVisibility,
};

async fn show() -> &'static str {
    "counter: 1"
}

fn server() -> Server {
    let meta = UiResourceMeta {
        csp: Some(UiCsp {
            connect_domains: Some(vec!["https://api.example.com".into()]),
            ..UiCsp::default()
        }),
        permissions: Some(UiPermissions {
            clipboard_write: Some(Default::default()),
            ..UiPermissions::default()
        }),
        prefers_border: Some(true),
        ..UiResourceMeta::default()
    };
    Server::builder()
        .extension(
            Apps::new().view(
                UiView::new("ui://demo/counter", "counter", "<!DOCTYPE html><p>1</p>")
                    .description("A counter")
                    .meta(meta),
            ),
        )
        .tool(
            tool("show_counter")
                .ui(ToolUiMeta::view("ui://demo/counter"))
                .handler(show),
        )
        .tool(
            tool("increment")
                .ui(ToolUiMeta::view("ui://demo/counter").visible_to([UiVisibility::App]))
                .handler(show),
        )
        .build()
        .unwrap()
}

#[tokio::test]
async fn metadata_round_trip_and_visibility_in_both_eras() {
    let server = server();
    for version in ERAS {
        // A host that renders views sees both tools and fetches the view.
        let host = in_process(
            &server,
            builder(version).declare_extension(&UiSettings::html()),
        )
        .await;
        let tools = host.list_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["show_counter", "increment"], "{version}");
        let show_tool = &tools[0];
        assert_eq!(
            ToolUiMeta::of(show_tool).unwrap().resource_uri.as_deref(),
            Some("ui://demo/counter")
        );
        assert!(visible_to_model(show_tool) && !visible_to_model(&tools[1]));
        let view = host.read_app_view(show_tool).await.unwrap();
        assert_eq!(view.html, "<!DOCTYPE html><p>1</p>");
        assert_eq!(view.meta.prefers_border, Some(true));
        assert_eq!(
            view.meta.csp.unwrap().connect_domains.unwrap(),
            ["https://api.example.com"]
        );
        assert!(view.meta.permissions.unwrap().clipboard_write.is_some());
        // The view is listed with the Apps MIME type.
        let listed = host.list_resources().await.unwrap();
        let r = listed
            .iter()
            .find(|r| r.uri == "ui://demo/counter")
            .unwrap();
        assert_eq!(r.mime_type.as_deref(), Some(APP_MIME_TYPE));
        // Apps may call app-only tools.
        host.call_tool("increment", json!({})).await.unwrap();
        host.close().await;

        // A client that renders nothing never sees or calls app-only tools.
        let plain = in_process(&server, builder(version)).await;
        let names: Vec<String> = plain
            .list_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["show_counter"], "{version}");
        let e = plain.call_tool("increment", json!({})).await.unwrap_err();
        assert_eq!(e.remote().map(|r| r.code), Some(-32602), "{version}");
        let refusal = e.remote().unwrap();
        assert!(
            refusal.message.contains("only callable from an app view"),
            "{version}: {refusal:?}"
        );
        assert_eq!(
            refusal.data.as_ref().and_then(|d| d.get("name")),
            Some(&json!("increment")),
            "{version}"
        );
        // Tools for the model still work, with their text fallback.
        plain.call_tool("show_counter", json!({})).await.unwrap();
        plain.close().await;
    }
}
