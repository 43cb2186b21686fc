//! A legacy session's state moves from one engine to a fresh one.

use std::time::Instant;

use tessera_proto::{Engine, EngineConfig, Event, ServerIdentity};

fn server() -> Engine {
    let mut identity = ServerIdentity::default();
    identity.capabilities.logging = Some(Default::default());
    Engine::new(EngineConfig::server(identity).with_methods(["echo"]))
}

fn answer(e: &mut Engine) -> String {
    String::from_utf8(e.poll_transmit().expect("an answer").message.to_bytes()).unwrap()
}

#[test]
fn snapshot_then_restore_carries_the_session_on() {
    let now = Instant::now();
    let mut a = server();
    assert!(
        a.session_snapshot().is_none(),
        "nothing before the handshake"
    );
    let r0 = a.session_revision();
    a.handle_bytes(now, br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"c","version":"1"}}}"#);
    answer(&mut a);
    let r1 = a.session_revision();
    assert!(r1 > r0, "the handshake is a change");
    a.handle_bytes(
        now,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert!(matches!(a.poll_event(), Some(Event::Initialized { .. })));
    a.handle_bytes(
        now,
        br#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"error"}}"#,
    );
    answer(&mut a);
    assert!(
        a.session_revision() > r1 + 1,
        "initialized and setLevel are changes"
    );
    let snap = a.session_snapshot().unwrap();
    assert!(snap.initialized);
    assert_eq!(snap.log_level.as_deref(), Some("error"));
    assert_eq!(snap.peer_info.as_ref().unwrap()["name"], "c");
    drop(a);

    let mut b = server();
    b.restore_session(snap.clone());
    assert!(b.poll_event().is_none(), "no second Initialized");
    assert_eq!(b.session_snapshot(), Some(snap));
    b.handle_bytes(now, br#"{"jsonrpc":"2.0","id":3,"method":"echo"}"#);
    assert!(matches!(b.poll_event(), Some(Event::Request(r)) if r.method == "echo"));
    assert!(
        !b.notify_log("info", None, serde_json::json!("x"), None),
        "level kept"
    );
    assert!(b.notify_log("error", None, serde_json::json!("x"), None));
    b.set_request_id_base(1 << 40);
    let id = b
        .send_request(now, "roots/list", None, Default::default())
        .unwrap();
    assert_eq!(id, tessera_types::RequestId::Number((1 << 40) + 1));
}
