//! Aggregation: the reference server over stdio and an in-process server over
//! HTTP behind one endpoint, prefixed names, a deny list, and the stdio
//! upstream killed mid-test (its tools disappear, the other upstream keeps
//! working, and they come back when it has been restarted, with the resource
//! subscriptions sessions made through it). It lives with the
//! CLI so that Cargo builds the `tessera` binary it runs as the stdio upstream.

use crate::common;

use std::time::Duration;

use serde::Deserialize;
use tessera::client::{Client, ClientEvent};
use tessera::server::{Args, Server, tool};
use tessera::types::ProtocolVersion;
use tessera_http::HttpClientTransport;
use tessera_proxy::{Aggregator, UpstreamConfig, UpstreamOptions, UpstreamSpec};
use tessera_testkit::bounded;
use tokio_util::sync::CancellationToken;

#[derive(Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

async fn echo(Args(a): Args<Text>) -> String {
    format!("web says {}", a.text)
}

async fn secret() -> &'static str {
    "should not be reachable"
}

async fn serve_web(stop: &CancellationToken) -> String {
    let server = Server::builder()
        .name_version("web", "1.0.0")
        .tool(tool("echo").description("Echoes").handler(echo))
        .tool(
            tool("secret")
                .description("Denied by the proxy")
                .handler(secret),
        )
        .build()
        .expect("builds");
    common::serve_loopback(server, stop).await
}

async fn tool_names(c: &Client) -> Vec<String> {
    let mut v: Vec<String> = bounded("tools/list", c.list_tools())
        .await
        .expect("lists tools")
        .into_iter()
        .map(|t| t.name)
        .collect();
    v.sort();
    v
}

async fn text_of(c: &Client, name: &str, args: serde_json::Value) -> String {
    let r = bounded(name, c.call_tool(name, args)).await.expect(name);
    assert_ne!(r.is_error, Some(true), "{name}: {:?}", r.content);
    r.content[0].as_text().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_upstreams_one_killed_and_back() {
    let stop = CancellationToken::new();
    let web_url = serve_web(&stop).await;
    let local = common::Killable::new(
        "proxy-agg",
        &format!("'{}' serve --stdio", env!("CARGO_BIN_EXE_tessera")),
    );
    let mut web = UpstreamConfig::new("web", UpstreamSpec::http(web_url, Default::default()));
    web.deny_tools = vec!["secret".into()];
    web.timeout = Some(Duration::from_secs(5));
    let agg = Aggregator::start(
        vec![
            UpstreamConfig::new("local", UpstreamSpec::Stdio(local.command.clone())),
            web,
        ],
        UpstreamOptions::default(),
    )
    .expect("starts");
    assert!(bounded("local connects", agg.wait_connected("local", true)).await);
    assert!(bounded("web connects", agg.wait_connected("web", true)).await);

    let url = common::serve_loopback(agg.clone(), &stop).await;
    let connect = |v: ProtocolVersion| {
        let url = url.clone();
        async move {
            bounded(
                "connecting to the aggregator",
                Client::builder("agg-test", "1.0")
                    .protocol_version(v)
                    .connect_transport(HttpClientTransport::new(&url).expect("transport")),
            )
            .await
            .expect("connects")
        }
    };
    let legacy = connect(ProtocolVersion::V2025_11_25).await;
    let modern = connect(ProtocolVersion::V2026_07_28).await;
    assert_eq!(legacy.server_info().name, "tessera-proxy");

    for c in [&legacy, &modern] {
        let names = tool_names(c).await;
        assert!(names.contains(&"local__echo".to_owned()), "{names:?}");
        assert!(names.contains(&"local__add".to_owned()), "{names:?}");
        assert!(names.contains(&"web__echo".to_owned()), "{names:?}");
        assert!(
            !names.iter().any(|n| n == "web__secret"),
            "denied tool listed: {names:?}"
        );
        assert!(
            names
                .iter()
                .all(|n| n.starts_with("local__") || n.starts_with("web__"))
        );
        assert_eq!(
            text_of(c, "local__add", serde_json::json!({"a": 2, "b": 3})).await,
            "5"
        );
        assert_eq!(
            text_of(c, "web__echo", serde_json::json!({"text": "hi"})).await,
            "web says hi"
        );
        // Denied and unknown names are refused with -32602.
        for bad in ["web__secret", "nowhere__echo", "echo"] {
            let e = bounded(bad, c.call_tool(bad, serde_json::json!({})))
                .await
                .expect_err(bad);
            assert_eq!(e.remote().map(|r| r.code), Some(-32602), "{bad}: {e}");
        }
    }

    // Resources are prefixed NAME+URI and read back through the same name.
    let resources = bounded("resources/list", legacy.list_resources())
        .await
        .expect("lists resources");
    let uri = resources
        .iter()
        .map(|r| r.uri.clone())
        .find(|u| u == "local+test://static-text")
        .unwrap_or_else(|| panic!("no local+test://static-text in {resources:?}"));
    let read = bounded("resources/read", legacy.read_resource(&uri))
        .await
        .expect("reads");
    let first = serde_json::to_value(&read.contents[0]).expect("json");
    assert_eq!(first["uri"], "local+test://static-text");

    // A legacy session subscribes to a resource of the stdio upstream.
    let watched = "local+test://watched-resource";
    bounded("resources/subscribe", legacy.subscribe(watched))
        .await
        .expect("subscribes");

    // Kill the stdio upstream, and keep it from restarting for now.
    let mut events = legacy.events();
    local.kill_and_hold();
    assert!(bounded("local seen dead", agg.wait_connected("local", false)).await);
    // A legacy session hears that the tool list changed.
    bounded("the list_changed notification", async {
        loop {
            match events.recv().await {
                Some(ClientEvent::ToolListChanged(_)) => break,
                Some(_) => continue,
                None => panic!("event stream ended"),
            }
        }
    })
    .await;
    // While it is down its tools are gone, calls to them fail at once, and
    // the other upstream is untouched.
    assert!(!agg.is_connected("local"));
    for c in [&legacy, &modern] {
        assert_eq!(tool_names(c).await, ["web__echo"]);
        let e = bounded(
            "a call to the dead upstream",
            c.call_tool("local__add", serde_json::json!({"a": 1, "b": 1})),
        )
        .await
        .expect_err("local is down");
        assert!(e.to_string().contains("unavailable"), "{e}");
        assert_eq!(
            text_of(c, "web__echo", serde_json::json!({"text": "still"})).await,
            "web says still"
        );
    }
    local.release();

    // It is restarted, and its tools come back.
    assert!(bounded("local back", agg.wait_connected("local", true)).await);
    assert_eq!(
        text_of(&legacy, "local__add", serde_json::json!({"a": 20, "b": 22})).await,
        "42"
    );
    assert!(
        tool_names(&modern)
            .await
            .contains(&"local__echo".to_owned())
    );
    // The subscription was made again on the new connection: an update of
    // the resource still reaches the session.
    assert!(
        text_of(
            &legacy,
            "local__test_trigger_resource_update",
            serde_json::json!({})
        )
        .await
        .contains("test://watched-resource")
    );
    bounded("the resource update after the restart", async {
        loop {
            match events.recv().await {
                Some(ClientEvent::ResourceUpdated(p)) => {
                    assert_eq!(p.uri, watched);
                    break;
                }
                Some(_) => continue,
                None => panic!("event stream ended"),
            }
        }
    })
    .await;

    legacy.close().await;
    modern.close().await;
    agg.close();
    stop.cancel();
}
