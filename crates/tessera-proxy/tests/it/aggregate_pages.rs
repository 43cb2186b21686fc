//! The aggregator's combined lists are paginated: the upstreams' lists one
//! after the other (each upstream itself paginating, one with a deny list),
//! cut into pages of the aggregator's size, with cursors that only the list
//! they came from accepts; 2026-07-28 pages carry the combined caching hints.

use tessera_client::Client;
use tessera_http::HttpClientTransport;
use tessera_proxy::{Aggregator, UpstreamConfig, UpstreamOptions, UpstreamSpec};
use tessera_server::{Server, tool};
use tessera_testkit::bounded;
use tessera_types::ProtocolVersion;
use tokio_util::sync::CancellationToken;

async fn done() -> &'static str {
    "done"
}

/// A server with tools `PREFIX0`..`PREFIX{count-1}`, listing `page_size` a page.
async fn serve(stop: &CancellationToken, prefix: &str, count: usize, page_size: usize) -> String {
    let mut b = Server::builder()
        .name_version(prefix, "1.0.0")
        .page_size(page_size);
    for i in 0..count {
        b = b.tool(
            tool(format!("{prefix}{i}"))
                .description("Says done")
                .handler(done),
        );
    }
    let server = b.build().expect("builds");
    crate::bridge::serve(server, stop).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn combined_lists_come_in_pages() {
    let stop = CancellationToken::new();
    let mut a = UpstreamConfig::new(
        "a",
        UpstreamSpec::http(serve(&stop, "t", 5, 2).await, Default::default()),
    );
    a.deny_tools = vec!["t2".into()];
    let b = UpstreamConfig::new(
        "b",
        UpstreamSpec::http(serve(&stop, "u", 3, 10).await, Default::default()),
    );
    let agg = Aggregator::start(vec![a, b], UpstreamOptions::default()).expect("starts");
    agg.set_page_size(3);
    assert!(bounded("a connects", agg.wait_connected("a", true)).await);
    assert!(bounded("b connects", agg.wait_connected("b", true)).await);
    let url = crate::bridge::serve(agg.clone(), &stop).await;

    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let client = bounded(
            "connecting",
            Client::builder("pages-test", "1.0")
                .protocol_version(version)
                .connect_transport(HttpClientTransport::new(&url).expect("transport")),
        )
        .await
        .expect("connects");

        // Page by page: 7 tools (a's t2 denied), 3 a page.
        let mut pages: Vec<Vec<String>> = Vec::new();
        let mut cursor: Option<String> = None;
        let mut first_cursor = None;
        loop {
            let page = bounded("a page", client.list_tools_page(cursor.as_deref()))
                .await
                .expect("lists a page");
            // 2026-07-28 pages carry the upstreams' caching hints combined
            // (both are Tessera servers: 60 s, public); legacy pages none.
            if version == ProtocolVersion::V2026_07_28 {
                assert_eq!(page.ttl_ms, Some(60_000), "{version}");
                assert_eq!(
                    serde_json::to_value(page.cache_scope).expect("serialises"),
                    serde_json::json!("public")
                );
            } else {
                assert_eq!(page.ttl_ms, None, "{version}");
            }
            pages.push(page.tools.into_iter().map(|t| t.name).collect());
            match page.next_cursor {
                Some(c) => {
                    first_cursor.get_or_insert_with(|| c.clone());
                    cursor = Some(c);
                }
                None => break,
            }
            assert!(pages.len() < 10, "{version}: pages never end: {pages:?}");
        }
        assert_eq!(
            pages,
            vec![
                vec!["a__t0", "a__t1", "a__t3"],
                vec!["a__t4", "b__u0", "b__u1"],
                vec!["b__u2"],
            ],
            "{version}"
        );

        // The client's own pagination sees the same list, each tool once.
        let all: Vec<String> = bounded("every page", client.list_tools())
            .await
            .expect("lists")
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(all, pages.concat(), "{version}");

        // A cursor is refused by another list, and a made-up one by its own.
        let cursor = first_cursor.expect("a first cursor");
        let e = bounded("prompts page", client.list_prompts_page(Some(&cursor)))
            .await
            .expect_err("a tools cursor is not a prompts cursor");
        assert_eq!(e.remote().map(|r| r.code), Some(-32602), "{version}: {e}");
        let e = bounded("bad cursor", client.list_tools_page(Some("no-such-cursor")))
            .await
            .expect_err("a made-up cursor");
        assert_eq!(e.remote().map(|r| r.code), Some(-32602), "{version}: {e}");
        client.close().await;
    }
    agg.close();
    stop.cancel();
}
