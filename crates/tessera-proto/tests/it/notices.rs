//! The notifications the engine acts on itself (`initialized`, `cancelled`,
//! progress), reported to the layers above when the connection asks.

use crate::harness;

use std::time::Instant;

use harness::*;
use serde_json::json;
use tessera_proto::{Engine, Event};

#[test]
fn the_notifications_the_engine_acts_on_are_reported_when_asked() {
    let now = Instant::now();
    let mut s = Engine::new(server_config());
    s.report_handled_notifications(true);
    exchange(&mut s, now, initialize_request(json!(1), "2025-06-18"));
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}),
    );
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","method":"notifications/roots/list_changed"}),
    );
    let seen: Vec<String> = events(&mut s)
        .into_iter()
        .map(|e| match e {
            Event::Initialized { .. } => "initialized event".to_owned(),
            Event::NotificationHandled { method, .. } => format!("handled {method}"),
            Event::Notification { method, .. } => format!("application {method}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        seen,
        [
            "initialized event",
            "handled notifications/initialized",
            "handled notifications/cancelled",
            "application notifications/roots/list_changed",
        ]
    );
    assert!(drain(&mut s).is_empty(), "notifications are never answered");
}
