//! One notification API: every notification arrives on `Client::events()`
//! typed, with its `_meta`; unknown ones (and known ones with params that do
//! not fit) arrive as `ClientEvent::Other`, exactly as sent.

mod common;

use common::{bounded, builder, obj, scripted};
use serde_json::{Value, json};
use tessera_client::{ClientEvent, EventStream};
use tessera_types::{LoggingLevel, ProtocolVersion, RequestId, TaskStatus};

/// The next `n` notification events (connection events are not expected).
async fn next(events: &mut EventStream, n: usize) -> Vec<ClientEvent> {
    let mut out = Vec::new();
    while out.len() < n {
        out.push(bounded("an event", events.recv()).await.expect("open"));
    }
    out
}

#[tokio::test]
async fn notifications_are_typed_and_keep_their_meta() {
    let (client, server, _notes) = scripted(
        builder(ProtocolVersion::V2025_11_25),
        json!({"tools": {"listChanged": true}, "logging": {}, "resources": {"subscribe": true}}),
        &[],
        |_| async { unreachable!("no requests") },
    )
    .await;
    let mut events = client.events();
    let sent: Vec<(&str, Value)> = vec![
        (
            "notifications/tools/list_changed",
            json!({"_meta": {"com.example/why": "deploy"}}),
        ),
        (
            "notifications/message",
            json!({"_meta": {"com.example/trace": "t1"}, "level": "warning", "data": "careful"}),
        ),
        (
            "notifications/resources/updated",
            json!({"_meta": {"com.example/rev": 7}, "uri": "docs://a"}),
        ),
        (
            "notifications/tasks/status",
            json!({"_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t-1"}},
                   "taskId": "t-1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
                   "lastUpdatedAt": "2026-01-01T00:00:01Z", "ttl": null}),
        ),
        // An extension's notification: passed on as it arrived.
        (
            "com.example/heartbeat",
            json!({"_meta": {"com.example/seq": 3}, "beat": [1, 2]}),
        ),
        // A known method whose params do not fit its type: passed on as is.
        (
            "notifications/resources/updated",
            json!({"url": "docs://b"}),
        ),
        // The Tasks extension's status notification (2026-07-28).
        (
            "notifications/tasks",
            json!({"taskId": "t-2", "status": "failed", "statusMessage": "boom",
                   "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:02Z",
                   "ttlMs": null, "error": {"code": -32603, "message": "boom"}}),
        ),
    ];
    for (method, params) in &sent {
        server
            .notify(*method, Some(obj(params.clone())), None)
            .unwrap();
    }
    let got = next(&mut events, sent.len()).await;

    match &got[0] {
        ClientEvent::ToolListChanged(p) => {
            assert_eq!(p.meta.as_ref().unwrap()["com.example/why"], "deploy")
        }
        other => panic!("{other:?}"),
    }
    match &got[1] {
        ClientEvent::Log(p) => {
            assert_eq!(p.level, LoggingLevel::Warning);
            assert_eq!(got[1].meta().unwrap()["com.example/trace"], "t1");
        }
        other => panic!("{other:?}"),
    }
    match &got[2] {
        ClientEvent::ResourceUpdated(p) => assert_eq!(p.uri, "docs://a"),
        other => panic!("{other:?}"),
    }
    match &got[3] {
        ClientEvent::LegacyTaskStatus(p) => {
            assert_eq!(p.task.task_id, "t-1");
            assert_eq!(p.task.status, TaskStatus::Working);
            assert_eq!((p.task_id(), p.status()), ("t-1", TaskStatus::Working));
        }
        other => panic!("{other:?}"),
    }
    match &got[4] {
        ClientEvent::Other { method, params } => {
            assert_eq!(method, "com.example/heartbeat");
            assert_eq!(params.as_ref().unwrap()["beat"], json!([1, 2]));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&got[5], ClientEvent::Other { method, .. } if method == "notifications/resources/updated"),
        "{:?}",
        got[5]
    );

    // Both eras' status notifications read the same way.
    match &got[6] {
        ClientEvent::TaskStatus(p) => {
            assert_eq!(p.task.task.task_id, "t-2");
            assert_eq!(p.task.error.as_ref().unwrap().code, -32603);
            assert_eq!(
                (p.task_id(), p.status(), p.status_message()),
                ("t-2", TaskStatus::Failed, Some("boom"))
            );
        }
        other => panic!("{other:?}"),
    }

    // The wire form is reachable from every typed value, `_meta` included.
    for (event, (method, params)) in got.iter().zip(&sent) {
        assert_eq!(event.method(), Some(*method));
        assert_eq!(
            Value::Object(event.params().unwrap()),
            *params,
            "{method} round-trips"
        );
        assert_eq!(
            event.meta().map(|m| Value::Object(m.clone())),
            params.get("_meta").cloned()
        );
        assert_eq!(event.subscription_id(), None);
    }
    #[derive(serde::Deserialize)]
    struct Heartbeat {
        beat: Vec<u32>,
    }
    assert_eq!(got[4].params_as::<Heartbeat>().unwrap().beat, [1, 2]);
    client.close().await;
}

#[tokio::test]
async fn a_subscription_id_is_read_from_meta() {
    let (client, server, _notes) = scripted(
        builder(ProtocolVersion::V2026_07_28),
        json!({"prompts": {"listChanged": true}}),
        &[],
        |_| async { unreachable!("no requests") },
    )
    .await;
    let mut events = client.events();
    server
        .notify(
            "notifications/prompts/list_changed",
            Some(obj(
                json!({"_meta": {"io.modelcontextprotocol/subscriptionId": 41}}),
            )),
            None,
        )
        .unwrap();
    let e = &next(&mut events, 1).await[0];
    assert!(matches!(e, ClientEvent::PromptListChanged(_)), "{e:?}");
    assert_eq!(e.subscription_id(), Some(RequestId::Number(41)));
    client.close().await;
    assert!(
        bounded("the disconnection", async {
            loop {
                match events.recv().await {
                    Some(e @ ClientEvent::Disconnected) => {
                        return e.method().is_none() && e.params().is_none();
                    }
                    Some(_) => continue,
                    None => return false,
                }
            }
        })
        .await
    );
}
