//! `subscriptions/listen` streams: demultiplexing concurrent subscriptions,
//! cancellation by drop, graceful end, re-subscription after reconnecting.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tessera_client::{ClientEvent, ListenEnd};
use tessera_server::hub::ListKind;
use tessera_server::{Server, prompt, resource, tool};
use tessera_testkit::prelude::*;
use tessera_types::{JsonObject, ProtocolVersion, SubscriptionFilter};
use tokio_util::sync::CancellationToken;

const MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;

async fn ok() -> &'static str {
    "ok"
}

fn subscription_of(n: &ClientEvent) -> Value {
    let id = n.subscription_id().expect("a subscription id");
    // The id is also in the wire form, `_meta` included.
    assert_eq!(
        n.params().unwrap()["_meta"]["io.modelcontextprotocol/subscriptionId"],
        serde_json::to_value(&id).unwrap()
    );
    serde_json::to_value(id).unwrap()
}

#[tokio::test]
async fn two_subscriptions_get_only_their_own_notifications() {
    let server = Server::builder()
        .tool(tool("t").handler(ok))
        .prompt(prompt("p").handler(ok))
        .resource(resource("docs://readme", "readme").handler(ok))
        .build()
        .unwrap();
    let client = in_process(&server, builder(MODERN)).await;
    let mut events = client.events();
    let mut tools = client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut other = client
        .listen(SubscriptionFilter {
            prompts_list_changed: Some(true),
            resource_subscriptions: Some(vec!["docs://readme".into(), "docs://nothing".into()]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(tools.acknowledged().tools_list_changed, Some(true));
    assert_eq!(other.acknowledged().prompts_list_changed, Some(true));
    assert!(other.acknowledged().tools_list_changed.is_none());

    server.add_tool(tool("t2").handler(ok)).unwrap();
    server.notify_list_changed(ListKind::Prompts);
    server.notify_resource_updated("docs://readme");
    server.remove_tool("t2");

    let a1 = bounded("tools 1", tools.recv()).await.unwrap();
    let a2 = bounded("tools 2", tools.recv()).await.unwrap();
    assert!(matches!(a1, ClientEvent::ToolListChanged(_)), "{a1:?}");
    assert_eq!(
        a2.method(),
        Some("notifications/tools/list_changed"),
        "no prompt change in between"
    );
    let b1 = bounded("prompts", other.recv()).await.unwrap();
    let b2 = bounded("update", other.recv()).await.unwrap();
    assert_eq!(b1.method(), Some("notifications/prompts/list_changed"));
    match &b2 {
        ClientEvent::ResourceUpdated(p) => {
            assert_eq!(p.uri, "docs://readme");
            assert!(p.meta.is_some(), "the typed value keeps _meta");
        }
        other => panic!("not an update: {other:?}"),
    }
    assert_ne!(subscription_of(&a1), subscription_of(&b1));
    assert_eq!(subscription_of(&a1), subscription_of(&a2));

    // Everything also reaches the event stream.
    let mut kinds = Vec::new();
    while kinds.len() < 4 {
        let e = bounded("events", events.recv()).await.unwrap();
        if matches!(
            e,
            ClientEvent::ToolListChanged(_)
                | ClientEvent::PromptListChanged(_)
                | ClientEvent::ResourceUpdated(_)
        ) {
            kinds.push(e);
        }
    }
    assert_eq!(kinds[0], a1, "the same typed value, _meta included");
    client.close().await;
}

/// A scripted `subscriptions/listen`: acknowledges at once, then either
/// waits to be cancelled (recording its token) or, for a prompts filter,
/// sends one notification and ends gracefully.
async fn scripted_listener() -> (tessera_client::Client, Arc<Mutex<Vec<CancellationToken>>>) {
    let tokens = Arc::new(Mutex::new(Vec::new()));
    let t = tokens.clone();
    let (client, _peer, _notes) = scripted(
        builder(MODERN),
        json!({"tools": {"listChanged": true}, "prompts": {"listChanged": true}}),
        &["subscriptions/listen"],
        move |r| {
            let tokens = t.clone();
            async move {
                let filter = r.params.clone().unwrap_or_default()["notifications"].clone();
                let tag = |mut p: JsonObject| {
                    p.insert(
                        "_meta".into(),
                        json!({"io.modelcontextprotocol/subscriptionId": r.id.clone()}),
                    );
                    p
                };
                let _ = r.peer.notify(
                    "notifications/subscriptions/acknowledged",
                    Some(tag(obj(json!({"notifications": filter.clone()})))),
                    Some(r.id.clone()),
                );
                if filter.get("promptsListChanged").is_some() {
                    let _ = r.peer.notify(
                        "notifications/prompts/list_changed",
                        Some(tag(JsonObject::new())),
                        Some(r.id.clone()),
                    );
                    return Ok(tag(JsonObject::new()));
                }
                tokens.lock().unwrap().push(r.cancel.clone());
                r.cancel.cancelled().await;
                Ok(JsonObject::new())
            }
        },
    )
    .await;
    (client, tokens)
}

#[tokio::test]
async fn dropping_the_stream_cancels_the_subscription() {
    let (client, tokens) = scripted_listener().await;
    let stream = client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(stream.end(), None);
    let token = tokens.lock().unwrap()[0].clone();
    assert!(!token.is_cancelled());
    drop(stream);
    bounded("the server to see the cancellation", token.cancelled()).await;
}

#[tokio::test]
async fn a_server_may_end_a_subscription_gracefully() {
    let (client, _) = scripted_listener().await;
    let mut stream = client
        .listen(SubscriptionFilter {
            prompts_list_changed: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let n = bounded("the notification", stream.recv()).await.unwrap();
    assert!(matches!(n, ClientEvent::PromptListChanged(_)), "{n:?}");
    assert!(bounded("the end", stream.recv()).await.is_none());
    assert_eq!(stream.end(), Some(ListenEnd::Graceful));
}
