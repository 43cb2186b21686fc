//! Capabilities are typed at the edges and lose nothing: what a server or a
//! client declares (members Tessera does not model included) reaches the
//! peer, shaped per version only where the protocol says so.

use crate::harness;

use std::time::Instant;

use harness::*;
use serde_json::json;
use tessera_proto::{ConnectMode, Engine, EngineConfig, Era, Event, ServerIdentity};
use tessera_types::{
    ClientCapabilities, ProtocolVersion, ServerCapabilities, ServerTasksCapability,
};

/// Server capabilities with tasks and two members Tessera does not model.
fn declared() -> ServerCapabilities {
    let mut caps: ServerCapabilities = serde_json::from_value(json!({
        "tools": {"listChanged": true, "com.example/streaming": true},
        "logging": {},
        "com.example/holograms": {"depth": 3}
    }))
    .unwrap();
    caps.tasks = Some(ServerTasksCapability {
        list: Some(Default::default()),
        ..Default::default()
    });
    caps
}

fn server_config_with(caps: ServerCapabilities) -> EngineConfig {
    let mut identity = server_identity();
    identity.capabilities = caps;
    EngineConfig::server(identity).with_methods(APP_METHODS)
}

#[test]
fn initialize_and_discover_carry_every_declared_member() {
    let now = Instant::now();
    let expected = |tasks: bool| {
        let mut v = json!({
            "tools": {"listChanged": true, "com.example/streaming": true},
            "logging": {},
            "com.example/holograms": {"depth": 3}
        });
        if tasks {
            v["tasks"] = json!({"list": {}});
        }
        v
    };
    for (version, tasks) in [
        ("2024-11-05", false),
        ("2025-06-18", false),
        ("2025-11-25", true),
    ] {
        let mut s = Engine::new(server_config_with(declared()));
        let answer = only(exchange(&mut s, now, initialize_request(json!(1), version)));
        let r = &answer["result"];
        assert_eq!(r["protocolVersion"], json!(version));
        assert_eq!(r["capabilities"], expected(tasks), "{version}");
        assert_eq!(
            r["serverInfo"],
            json!({"name": "test-server", "version": "1.2.3"})
        );
        assert_eq!(r["instructions"], json!("be nice"));
    }
    // 2026-07-28 has the tasks extension instead of `tasks`.
    let mut s = Engine::new(server_config_with(declared()));
    let answer = only(exchange(
        &mut s,
        now,
        modern_request(json!(1), "server/discover"),
    ));
    assert_eq!(answer["result"]["capabilities"], expected(false));
    assert_eq!(answer["result"]["cacheScope"], json!("public"));
}

#[test]
fn setlevel_is_answered_when_logging_is_declared() {
    let now = Instant::now();
    for (logging, code) in [(true, None), (false, Some(-32601))] {
        let mut caps = declared();
        if !logging {
            caps.logging = None;
        }
        let mut s = legacy_server(server_config_with(caps), now, "2025-11-25");
        let answer = only(exchange(
            &mut s,
            now,
            json!({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}),
        ));
        assert_eq!(answer["error"]["code"].as_i64(), code, "{answer}");
    }
}

fn request_capabilities(s: &mut Engine) -> ClientCapabilities {
    match events(s).as_slice() {
        [Event::Request(r)] => r
            .context
            .peer_capabilities
            .client()
            .expect("a server's peer is a client")
            .clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_clients_capabilities_reach_handlers_typed_and_whole() {
    let now = Instant::now();
    let sent = json!({
        "sampling": {"tools": {}},
        "roots": "not an object",
        "com.example/x": {"on": true}
    });
    // Legacy: from `initialize`, for every request of the session.
    let mut s = Engine::new(server_config());
    let mut init = initialize_request(json!(0), "2025-11-25");
    init["params"]["capabilities"] = sent.clone();
    let _ = exchange(&mut s, now, init);
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
    let _ = events(&mut s);
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
    );
    let legacy = request_capabilities(&mut s);
    // Modern: from the request's own `_meta`.
    let mut meta = modern_meta("2026-07-28");
    meta["io.modelcontextprotocol/clientCapabilities"] = sent.clone();
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta": meta}}),
    );
    let modern = request_capabilities(&mut s);
    for caps in [legacy, modern] {
        assert!(caps.sampling.as_ref().unwrap().tools.is_some());
        // A member whose value does not fit its type is kept as sent.
        assert!(caps.roots.is_none() && caps.declares("roots"));
        assert!(caps.declares("com.example/x") && !caps.declares("elicitation"));
        assert_eq!(serde_json::to_value(&caps).unwrap(), sent);
    }
    // The session snapshot keeps them too.
    let snap = s.session_snapshot().unwrap();
    assert_eq!(
        serde_json::to_value(&*snap.peer_capabilities).unwrap(),
        sent
    );
}

#[test]
fn a_client_sends_and_learns_capabilities_whole() {
    let client_caps = json!({"roots": {"listChanged": true}, "com.example/y": [1, 2]});
    let mut client = client_config();
    client.client.capabilities = serde_json::from_value(client_caps.clone()).unwrap();
    let server = server_config_with(declared());
    for (mode, era) in [
        (
            ConnectMode::Legacy(ProtocolVersion::V2025_11_25),
            Era::Legacy,
        ),
        (
            ConnectMode::Modern(ProtocolVersion::V2026_07_28),
            Era::Modern,
        ),
    ] {
        let mut p = Pair::with(client.clone(), server.clone());
        p.connect(mode);
        let c = match p.client_events.as_slice() {
            [Event::Connected(c)] => c.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(c.era, era);
        assert_eq!(c.server_info.name, "test-server");
        assert!(c.server_capabilities.logging.is_some());
        assert!(c.server_capabilities.declares("com.example/holograms"));
        assert_eq!(
            c.server_capabilities.tasks.is_some(),
            era == Era::Legacy,
            "tasks only in 2025-11-25"
        );
        // Nothing the server declared is lost in the typed form.
        assert_eq!(
            serde_json::to_value(&*c.server_capabilities).unwrap(),
            c.result["capabilities"]
        );
        // What the server's handlers see of this client.
        p.reply("tools/list", Reply::Result(obj(json!({"tools": []}))));
        p.client
            .send_request(p.now, "tools/list", None, Default::default())
            .unwrap();
        p.pump();
        let seen = p.app.seen.last().expect("the request reached the app");
        assert_eq!(
            serde_json::to_value(seen.context.peer_capabilities.client().unwrap()).unwrap(),
            client_caps
        );
    }
}

#[test]
fn a_default_identity_declares_nothing() {
    let now = Instant::now();
    let mut s = Engine::new(EngineConfig::server(ServerIdentity::default()));
    let answer = only(exchange(
        &mut s,
        now,
        initialize_request(json!(1), "2025-11-25"),
    ));
    assert_eq!(answer["result"]["capabilities"], json!({}));
}
