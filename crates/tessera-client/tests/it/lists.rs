//! Pagination (with loop guards) and the response cache (hits, `ttlMs` on the
//! virtual clock, invalidation by notifications, a refused cursor).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use tessera_client::ClientError;
use tessera_server::{Server, Vars, prompt, resource, resource_template, tool};
use tessera_testkit::prelude::*;
use tessera_types::{ErrorObject, ProtocolVersion, SubscriptionFilter};

const MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;

async fn ok() -> &'static str {
    "ok"
}

async fn body() -> &'static str {
    "contents"
}

#[derive(Deserialize)]
struct Id {
    id: String,
}

async fn note(Vars(i): Vars<Id>) -> String {
    format!("note {}", i.id)
}

fn paged_server(ttl: Duration) -> Server {
    let mut b = Server::builder().page_size(2).cache_ttl(ttl);
    for i in 0..5 {
        b = b.tool(tool(format!("t{i}")).handler(ok));
    }
    for i in 0..3 {
        b = b
            .prompt(prompt(format!("p{i}")).handler(ok))
            .resource(resource(format!("docs://r{i}"), format!("r{i}")).handler(body));
    }
    for i in 0..3 {
        b = b.resource_template(
            resource_template(format!("notes{i}://{{id}}"), format!("n{i}")).handler(note),
        );
    }
    b.build().unwrap()
}

#[tokio::test]
async fn lists_follow_every_page() {
    for v in ERAS {
        let client = in_process(&paged_server(Duration::from_secs(60)), builder(v)).await;
        let names: Vec<String> = client
            .list_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["t0", "t1", "t2", "t3", "t4"], "{v}");
        let first = client.list_tools_page(None).await.unwrap();
        assert_eq!(first.tools.len(), 2);
        let second = client
            .list_tools_page(first.next_cursor.as_deref())
            .await
            .unwrap();
        assert_eq!(second.tools[0].name, "t2");
        assert_eq!(client.list_prompts().await.unwrap().len(), 3);
        assert_eq!(client.list_resources().await.unwrap().len(), 3);
        assert_eq!(client.list_resource_templates().await.unwrap().len(), 3);
        client.close().await;
    }
}

#[tokio::test]
async fn a_repeated_cursor_or_too_many_pages_stop_the_walk() {
    let (client, _, _) = scripted(
        builder(MODERN),
        json!({"tools": {}}),
        &["tools/list"],
        |_| async { Ok(obj(json!({"tools": [], "nextCursor": "same"}))) },
    )
    .await;
    match client.list_tools().await.unwrap_err() {
        ClientError::CursorLoop { method, cursor } => {
            assert_eq!((method.as_str(), cursor.as_str()), ("tools/list", "same"))
        }
        other => panic!("unexpected {other}"),
    }

    let n = Arc::new(AtomicUsize::new(0));
    let (client, _, _) = scripted(
        builder(MODERN).max_pages(3),
        json!({"tools": {}}),
        &["tools/list"],
        move |_| {
            let i = n.fetch_add(1, Ordering::SeqCst);
            async move { Ok(obj(json!({"tools": [], "nextCursor": format!("c{i}")}))) }
        },
    )
    .await;
    assert!(matches!(
        client.list_tools().await.unwrap_err(),
        ClientError::TooManyPages { pages: 3, .. }
    ));
}

#[tokio::test]
async fn cached_lists_are_served_until_a_change_is_announced() {
    let server = paged_server(Duration::from_secs(600));
    let client = in_process(&server, builder(MODERN).cache(true)).await;
    assert_eq!(client.list_tools().await.unwrap().len(), 5);
    let cold = client.cache_stats();
    assert_eq!(
        (cold.hits, cold.misses, cold.entries),
        (0, 3, 3),
        "three pages"
    );
    assert_eq!(client.list_tools().await.unwrap().len(), 5);
    assert_eq!(client.cache_stats().hits, 3);

    // A change nobody announces: the fresh cache still answers.
    server.add_tool(tool("late").handler(ok)).unwrap();
    assert_eq!(client.list_tools().await.unwrap().len(), 5);

    // Announced on a subscription: the cached pages are dropped.
    let mut changes = client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    server.add_tool(tool("later").handler(ok)).unwrap();
    let n = bounded("the change", changes.recv()).await.unwrap();
    assert!(
        matches!(n, tessera_client::ClientEvent::ToolListChanged(_)),
        "{n:?}"
    );
    assert_eq!(client.list_tools().await.unwrap().len(), 7);

    // Resource reads: cached per URI, dropped by resources/updated.
    let _updates = client
        .listen(SubscriptionFilter {
            resource_subscriptions: Some(vec!["docs://r1".into()]),
            ..Default::default()
        })
        .await
        .unwrap();
    client.read_resource("docs://r1").await.unwrap();
    client.read_resource("docs://r2").await.unwrap();
    let before = client.cache_stats();
    client.read_resource("docs://r1").await.unwrap();
    assert_eq!(client.cache_stats().hits, before.hits + 1);
    let mut events = client.events();
    server.notify_resource_updated("docs://r1");
    loop {
        if let Some(tessera_client::ClientEvent::ResourceUpdated(p)) =
            bounded("the update", events.recv()).await
        {
            assert_eq!(p.uri, "docs://r1");
            break;
        }
    }
    let before = client.cache_stats();
    client.read_resource("docs://r1").await.unwrap();
    client.read_resource("docs://r2").await.unwrap();
    let after = client.cache_stats();
    assert_eq!(
        (after.misses - before.misses, after.hits - before.hits),
        (1, 1)
    );
    client.close().await;
}

#[tokio::test(start_paused = true)]
async fn entries_expire_after_their_ttl() {
    let server = paged_server(Duration::from_secs(30));
    let client = in_process(&server, builder(MODERN).cache(true)).await;
    client.list_prompts().await.unwrap();
    let misses = client.cache_stats().misses;
    tokio::time::advance(Duration::from_secs(29)).await;
    client.list_prompts().await.unwrap();
    assert_eq!(client.cache_stats().misses, misses, "still fresh");
    tokio::time::advance(Duration::from_secs(1)).await;
    client.list_prompts().await.unwrap();
    assert_eq!(
        client.cache_stats().misses,
        misses * 2,
        "stale: fetched again"
    );
    // The discover result is cacheable too.
    client.discover().await.unwrap();
    let hits = client.cache_stats().hits;
    client.discover().await.unwrap();
    assert_eq!(client.cache_stats().hits, hits + 1);
    // Without the cache nothing is counted.
    let plain = in_process(&server, builder(MODERN)).await;
    plain.list_prompts().await.unwrap();
    assert_eq!(plain.cache_stats(), Default::default());
}

#[tokio::test]
async fn a_refused_cursor_restarts_the_list_from_the_top() {
    let epoch = Arc::new(AtomicUsize::new(0));
    let e = epoch.clone();
    let (client, _, _) = scripted(
        builder(MODERN).cache(true),
        json!({"tools": {}}),
        &["tools/list"],
        move |r| {
            let now = e.load(Ordering::SeqCst);
            let cursor = r
                .params
                .as_ref()
                .and_then(|p| p.get("cursor"))
                .and_then(|c| c.as_str())
                .map(str::to_owned);
            async move {
                let tool = |n: &str| json!({"name": n, "inputSchema": {"type": "object"}});
                match cursor {
                    None => Ok(obj(
                        json!({"tools": [tool("a")], "nextCursor": format!("c{now}"),
                    "ttlMs": 60_000, "cacheScope": "public"}),
                    )),
                    Some(c) if c == format!("c{now}") => Ok(obj(
                        json!({"tools": [tool("b")], "ttlMs": 0, "cacheScope": "public"}),
                    )),
                    Some(c) => Err(ErrorObject::invalid_params(format!(
                        "Invalid params: stale cursor {c}"
                    ))),
                }
            }
        },
    )
    .await;
    let names = |v: Vec<tessera_types::Tool>| v.into_iter().map(|t| t.name).collect::<Vec<_>>();
    assert_eq!(names(client.list_tools().await.unwrap()), ["a", "b"]);
    // The server forgets its cursors; the cached first page holds a dead one.
    epoch.fetch_add(1, Ordering::SeqCst);
    assert_eq!(names(client.list_tools().await.unwrap()), ["a", "b"]);
    let s = client.cache_stats();
    assert_eq!(s.hits, 1, "the first page came from the cache once");
}

#[tokio::test]
async fn completion_and_ping_in_both_eras() {
    for v in ERAS {
        let (client, _, _) = scripted(
            builder(v),
            json!({"completions": {}, "prompts": {}}),
            &["completion/complete"],
            |r| async move {
                let p = r.params.unwrap_or_default();
                assert_eq!(p["ref"], json!({"type": "ref/prompt", "name": "code"}));
                let prefix = p["argument"]["value"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let values: Vec<String> = ["python", "pytorch", "rust"]
                    .into_iter()
                    .filter(|l| l.starts_with(&prefix))
                    .map(str::to_owned)
                    .collect();
                Ok(obj(
                    json!({"completion": {"values": values, "hasMore": false}}),
                ))
            },
        )
        .await;
        let params = serde_json::from_value(json!({
            "ref": {"type": "ref/prompt", "name": "code"},
            "argument": {"name": "language", "value": "py"}
        }))
        .unwrap();
        let r = client.complete(params).await.unwrap();
        assert_eq!(r.completion.values, ["python", "pytorch"], "{v}");
        bounded("ping", client.ping()).await.unwrap();
        client.close().await;
    }
}
