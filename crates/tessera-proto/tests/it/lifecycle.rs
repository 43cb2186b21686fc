//! The lifecycle: the legacy `initialize` handshake, version negotiation, and
//! the client's `server/discover` era probe with its fallbacks.

use crate::harness;

use std::time::{Duration, Instant};

use harness::*;
use serde_json::{Value, json};
use tessera_proto::{
    CallError, ConnectMode, Connected, Engine, Era, Event, ProtocolVersion, RequestOptions,
    SendError,
};
use tessera_types::{ErrorCode, RequestId};

const LEGACY: [ProtocolVersion; 4] = [
    ProtocolVersion::V2024_11_05,
    ProtocolVersion::V2025_03_26,
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_11_25,
];

fn connected(events: &[Event]) -> Vec<&Connected> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Connected(c) => Some(c),
            _ => None,
        })
        .collect()
}

fn connect_failed(events: &[Event]) -> Vec<&CallError> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ConnectFailed(c) => Some(c),
            _ => None,
        })
        .collect()
}

fn methods(wire: &[Value]) -> Vec<&str> {
    wire.iter().filter_map(|m| m["method"].as_str()).collect()
}

// ------------------------------------------------------------------ legacy

#[test]
fn legacy_handshake_for_each_legacy_version() {
    for v in LEGACY {
        let mut p = Pair::new();
        p.connect(ConnectMode::Legacy(v));

        let init = p.client_sent("initialize");
        assert_eq!(init.len(), 1, "{v}");
        assert_eq!(init[0]["params"]["protocolVersion"], json!(v.as_str()));
        assert_eq!(
            init[0]["params"]["clientInfo"],
            json!({"name":"test-client","version":"0.0.1"})
        );
        assert_eq!(
            init[0]["params"]["capabilities"],
            json!({"roots":{"listChanged":true}})
        );
        assert!(
            init[0]["params"].get("_meta").is_none(),
            "no modern _meta in a legacy initialize"
        );

        // The server echoes the version it was asked for.
        let answer = &p.server_wire[0];
        assert_eq!(answer["id"], init[0]["id"]);
        assert_eq!(answer["result"]["protocolVersion"], json!(v.as_str()));
        assert_eq!(
            answer["result"]["serverInfo"],
            json!({"name":"test-server","version":"1.2.3"})
        );
        assert_eq!(
            answer["result"]["capabilities"]["tools"]["listChanged"],
            json!(true)
        );
        assert_eq!(answer["result"]["instructions"], json!("be nice"));
        assert!(
            answer["result"].get("resultType").is_none(),
            "no resultType in the legacy era"
        );

        // No probe in legacy mode; the client finishes with notifications/initialized.
        assert_eq!(
            methods(&p.client_wire),
            ["initialize", "notifications/initialized"]
        );

        let c = connected(&p.client_events);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].era, Era::Legacy);
        assert_eq!(c[0].version, v);
        assert_eq!(c[0].server_info.name, "test-server");
        assert_eq!(c[0].instructions.as_deref(), Some("be nice"));
        assert_eq!(p.client.connection(), Some((Era::Legacy, v)));
        assert_eq!(p.client.negotiated_version(), Some(v));

        assert_eq!(p.server_events, [Event::Initialized { version: v }]);
        assert_eq!(p.server.negotiated_version(), Some(v));
        assert_eq!(p.client.pending_requests(), 0);
        assert_eq!(
            p.client.poll_timeout(),
            None,
            "no deadline left after connecting"
        );
    }
}

#[test]
fn server_answers_its_latest_legacy_version_for_unknown_or_modern_requests() {
    let now = Instant::now();
    for asked in ["1999-01-01", "2026-07-28", "not a date", ""] {
        let mut s = Engine::new(server_config());
        let answer = only(exchange(&mut s, now, initialize_request(json!(1), asked)));
        assert_eq!(answer["id"], json!(1));
        assert_eq!(
            answer["result"]["protocolVersion"],
            json!("2025-11-25"),
            "{asked}"
        );
        assert_eq!(s.negotiated_version(), Some(ProtocolVersion::V2025_11_25));
    }

    // A server restricted to older legacy versions answers its own newest one.
    let cfg =
        server_config().with_versions([ProtocolVersion::V2024_11_05, ProtocolVersion::V2025_06_18]);
    let mut s = Engine::new(cfg.clone());
    let answer = only(exchange(
        &mut s,
        now,
        initialize_request(json!(1), "1999-01-01"),
    ));
    assert_eq!(answer["result"]["protocolVersion"], json!("2025-06-18"));
    // ... and for a known version it does not speak.
    let mut s = Engine::new(cfg);
    let answer = only(exchange(
        &mut s,
        now,
        initialize_request(json!(1), "2025-11-25"),
    ));
    assert_eq!(answer["result"]["protocolVersion"], json!("2025-06-18"));
}

#[test]
fn negotiation_across_restricted_engines_lands_on_a_common_version() {
    let client = client_config().with_versions([
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ]);
    let server =
        server_config().with_versions([ProtocolVersion::V2024_11_05, ProtocolVersion::V2025_06_18]);
    let mut p = Pair::with(client, server);
    p.connect(ConnectMode::Legacy(ProtocolVersion::V2025_11_25));
    assert_eq!(
        p.client.connection(),
        Some((Era::Legacy, ProtocolVersion::V2025_06_18))
    );
    assert_eq!(
        p.server_events,
        [Event::Initialized {
            version: ProtocolVersion::V2025_06_18
        }]
    );
}

#[test]
fn client_fails_when_the_server_picks_a_version_it_does_not_speak() {
    let client = client_config().with_versions([ProtocolVersion::V2025_11_25]);
    let server = server_config().with_versions([ProtocolVersion::V2024_11_05]);
    let mut p = Pair::with(client, server);
    p.connect(ConnectMode::Legacy(ProtocolVersion::V2025_11_25));

    assert_eq!(
        p.server_wire[0]["result"]["protocolVersion"],
        json!("2024-11-05")
    );
    let failed = connect_failed(&p.client_events);
    assert_eq!(failed.len(), 1);
    match failed[0] {
        CallError::Remote(e) => assert!(e.message.contains("2024-11-05"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert!(connected(&p.client_events).is_empty());
    assert_eq!(p.client.connection(), None);
    assert!(
        p.client_sent("notifications/initialized").is_empty(),
        "no initialized notification after a failed negotiation"
    );
    assert!(p.server_events.is_empty());

    // The same against a raw server that answers with a made-up version.
    let now = Instant::now();
    let mut c = Engine::new(client_config());
    c.connect(now, ConnectMode::Legacy(ProtocolVersion::V2025_11_25));
    let init = only(drain(&mut c));
    let mut result = json!({"protocolVersion":"2030-01-01","capabilities":{},"serverInfo":{"name":"x","version":"1"}});
    feed(
        &mut c,
        now,
        &json!({"jsonrpc":"2.0","id":init["id"],"result":result.take()}),
    );
    assert!(drain(&mut c).is_empty());
    let ev = events(&mut c);
    assert_eq!(connect_failed(&ev).len(), 1);
}

#[test]
fn client_fails_when_initialize_gets_an_error_or_times_out() {
    let now = Instant::now();
    let mut c = Engine::new(client_config());
    c.connect(now, ConnectMode::Legacy(ProtocolVersion::V2025_06_18));
    let init = only(drain(&mut c));
    feed(
        &mut c,
        now,
        &json!({"jsonrpc":"2.0","id":init["id"],"error":{"code":-32603,"message":"boom"}}),
    );
    match events(&mut c).as_slice() {
        [Event::ConnectFailed(CallError::Remote(e))] => assert_eq!(e.code, -32603),
        other => panic!("{other:?}"),
    }

    // initialize uses the default request timeout; on expiry the connection
    // fails and, as initialize must never be cancelled, nothing is sent.
    let mut c = Engine::new(client_config());
    c.connect(now, ConnectMode::Legacy(ProtocolVersion::V2025_06_18));
    drain(&mut c);
    let deadline = c.poll_timeout().expect("initialize has a deadline");
    assert_eq!(deadline, now + Duration::from_secs(60));
    c.handle_timeout(deadline - Duration::from_millis(1));
    assert!(events(&mut c).is_empty());
    c.handle_timeout(deadline);
    assert!(
        drain(&mut c).is_empty(),
        "no notifications/cancelled for initialize"
    );
    assert_eq!(
        events(&mut c),
        [Event::ConnectFailed(CallError::Timeout(
            Duration::from_secs(60)
        ))]
    );
}

#[test]
fn legacy_client_against_a_modern_only_server_fails_with_the_supported_versions() {
    let server = server_config().with_versions([ProtocolVersion::V2026_07_28]);
    let mut p = Pair::with(client_config(), server);
    p.connect(ConnectMode::Legacy(ProtocolVersion::V2025_11_25));
    let answer = &p.server_wire[0];
    assert!(answer.get("error").is_some(), "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2026-07-28"),
        "names the versions it supports: {answer}"
    );
    assert_eq!(connect_failed(&p.client_events).len(), 1);
    assert_eq!(p.server.negotiated_version(), None);
}

#[test]
fn ping_before_initialize_works_both_ways() {
    let now = Instant::now();
    let mut s = Engine::new(server_config());
    let answer = only(exchange(
        &mut s,
        now,
        json!({"jsonrpc":"2.0","id":"p1","method":"ping"}),
    ));
    assert_eq!(answer, json!({"jsonrpc":"2.0","id":"p1","result":{}}));
    assert!(events(&mut s).is_empty(), "the engine answers ping itself");
    assert_eq!(s.negotiated_version(), None);

    let mut c = Engine::new(client_config());
    let answer = only(exchange(
        &mut c,
        now,
        json!({"jsonrpc":"2.0","id":9,"method":"ping"}),
    ));
    assert_eq!(answer, json!({"jsonrpc":"2.0","id":9,"result":{}}));

    // A server may ping before the handshake is complete.
    let mut s = Engine::new(server_config());
    let id = s
        .send_request(now, "ping", None, RequestOptions::default())
        .expect("ping is always allowed");
    assert_eq!(
        only(drain(&mut s)),
        json!({"jsonrpc":"2.0","id":serde_json::to_value(&id).unwrap(),"method":"ping"})
    );
}

#[test]
fn request_before_initialize_is_invalid_params() {
    let now = Instant::now();
    let mut s = Engine::new(server_config());
    for (id, method) in [(json!(1), "tools/list"), (json!("x"), "unknown/method")] {
        let answer = only(exchange(
            &mut s,
            now,
            json!({"jsonrpc":"2.0","id":id,"method":method}),
        ));
        assert_eq!(answer["id"], id);
        assert_eq!(error_code(&answer), ErrorCode::INVALID_PARAMS.0, "{answer}");
    }
    assert!(events(&mut s).is_empty(), "nothing reaches the application");
}

#[test]
fn initialize_twice_is_an_invalid_request() {
    let now = Instant::now();
    let mut s = Engine::new(server_config());
    let first = only(exchange(
        &mut s,
        now,
        initialize_request(json!(1), "2025-06-18"),
    ));
    assert!(first.get("result").is_some());
    let second = only(exchange(
        &mut s,
        now,
        initialize_request(json!(2), "2025-11-25"),
    ));
    assert_eq!(second["id"], json!(2));
    assert_eq!(error_code(&second), ErrorCode::INVALID_REQUEST.0);
    assert_eq!(
        s.negotiated_version(),
        Some(ProtocolVersion::V2025_06_18),
        "the first negotiation stands"
    );
}

#[test]
fn initialize_with_bad_params_is_invalid_params() {
    let now = Instant::now();
    for params in [
        json!(null),
        json!({}),
        json!({"protocolVersion": 5}),
        json!({"protocolVersion": "2025-06-18", "capabilities": []}),
    ] {
        let mut s = Engine::new(server_config());
        let mut req = json!({"jsonrpc":"2.0","id":1,"method":"initialize"});
        if !params.is_null() {
            req["params"] = params.clone();
        }
        let answer = only(exchange(&mut s, now, req));
        assert_eq!(error_code(&answer), ErrorCode::INVALID_PARAMS.0, "{params}");
        assert_eq!(s.negotiated_version(), None, "{params}");
    }
}

#[test]
fn initialized_notification_raises_one_event() {
    let now = Instant::now();
    let mut s = Engine::new(server_config());
    let initialized = json!({"jsonrpc":"2.0","method":"notifications/initialized"});

    // Before initialize: ignored.
    feed(&mut s, now, &initialized);
    assert!(events(&mut s).is_empty());
    assert!(drain(&mut s).is_empty());

    exchange(&mut s, now, initialize_request(json!(1), "2025-03-26"));
    feed(&mut s, now, &initialized);
    feed(&mut s, now, &initialized);
    assert_eq!(
        events(&mut s),
        [Event::Initialized {
            version: ProtocolVersion::V2025_03_26
        }]
    );
    assert!(drain(&mut s).is_empty(), "notifications are never answered");
}

#[test]
fn server_requests_wait_for_the_initialized_notification() {
    let now = Instant::now();
    let mut s = Engine::new(server_config());
    assert!(matches!(
        s.send_request(now, "roots/list", None, RequestOptions::default()),
        Err(SendError::NotReady(_))
    ));
    exchange(&mut s, now, initialize_request(json!(1), "2025-11-25"));
    // Answered initialize, but the client has not said it is ready.
    assert!(matches!(
        s.send_request(now, "roots/list", None, RequestOptions::default()),
        Err(SendError::NotReady(_))
    ));
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
    events(&mut s);
    let id = s
        .send_request(now, "roots/list", None, RequestOptions::default())
        .expect("ready after notifications/initialized");
    let sent = only(drain(&mut s));
    assert_eq!(sent["method"], json!("roots/list"));
    assert_eq!(sent["id"], serde_json::to_value(&id).unwrap());
}

#[test]
fn server_to_client_request_over_a_pair() {
    let mut p = legacy_pair(ProtocolVersion::V2025_11_25);
    // The client does not serve roots/list: -32601 comes back to the server.
    let id = p
        .server
        .send_request(p.now, "roots/list", None, RequestOptions::default())
        .unwrap();
    p.pump();
    match p.server_events.as_slice() {
        [
            Event::Response {
                id: got,
                outcome: Err(CallError::Remote(e)),
            },
        ] => {
            assert_eq!(got, &id);
            assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND.0);
        }
        other => panic!("{other:?}"),
    }

    // A client serving roots/list hands it to its application.
    let mut p = Pair::with(
        client_config().with_methods(["roots/list"]),
        server_config(),
    );
    p.connect(ConnectMode::Legacy(ProtocolVersion::V2025_06_18));
    let id = p
        .server
        .send_request(p.now, "roots/list", None, RequestOptions::default())
        .unwrap();
    p.pump();
    let req = p
        .client_events
        .iter()
        .find_map(|e| match e {
            Event::Request(r) => Some(r.clone()),
            _ => None,
        })
        .expect("the client application gets the request");
    assert_eq!(req.id, id);
    assert_eq!(req.context.era, Era::Legacy);
    assert_eq!(req.context.version, ProtocolVersion::V2025_06_18);
    assert_eq!(
        req.context.peer_info.as_ref().unwrap()["name"],
        json!("test-server")
    );
    assert!(p.client.respond(&req.id, Ok(obj(json!({"roots": []})))));
    p.pump();
    assert!(p.server_events.iter().any(|e| matches!(
        e,
        Event::Response { id: got, outcome: Ok(r) } if *got == id && r["roots"] == json!([])
    )));
}

// ------------------------------------------------------------------- probe

#[test]
fn auto_connect_against_a_dual_era_server_goes_modern() {
    let mut p = Pair::new();
    p.connect(ConnectMode::Auto);

    assert_eq!(
        methods(&p.client_wire),
        ["server/discover"],
        "no initialize"
    );
    let probe = &p.client_wire[0];
    let meta = &probe["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        json!("2026-07-28")
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"roots":{"listChanged":true}})
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"],
        json!({"name":"test-client","version":"0.0.1"})
    );

    let result = &p.server_wire[0]["result"];
    assert_eq!(p.server_wire[0]["id"], probe["id"]);
    assert_eq!(
        result["supportedVersions"],
        json!([
            "2026-07-28",
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ])
    );
    assert_eq!(
        result["capabilities"],
        json!({"tools":{"listChanged":true},"logging":{}})
    );
    assert_eq!(result["resultType"], json!("complete"));
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name":"test-server","version":"1.2.3"})
    );
    assert_eq!(result["ttlMs"], json!(60_000));
    assert_eq!(result["cacheScope"], json!("public"));
    assert_eq!(result["instructions"], json!("be nice"));

    let c = connected(&p.client_events);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].era, Era::Modern);
    assert_eq!(c[0].version, ProtocolVersion::V2026_07_28);
    assert_eq!(
        c[0].server_info,
        tessera_types::Implementation::new("test-server", "1.2.3")
    );
    assert_eq!(
        c[0].server_capabilities.tools,
        Some(tessera_types::ToolsCapability {
            list_changed: Some(true),
            ..Default::default()
        })
    );
    assert_eq!(c[0].instructions.as_deref(), Some("be nice"));
    assert_eq!(&Value::Object(c[0].result.clone()), result);
    assert_eq!(
        p.client.connection(),
        Some((Era::Modern, ProtocolVersion::V2026_07_28))
    );
    assert_eq!(p.client.negotiated_version(), None, "no legacy session");
    assert!(
        p.server_events.is_empty(),
        "discover is answered by the engine"
    );
    assert_eq!(p.server.negotiated_version(), None);
    assert_eq!(p.client.poll_timeout(), None);
}

#[test]
fn modern_mode_connects_to_a_modern_server() {
    let mut p = Pair::new();
    p.connect(ConnectMode::Modern(ProtocolVersion::V2026_07_28));
    assert_eq!(methods(&p.client_wire), ["server/discover"]);
    assert_eq!(
        p.client.connection(),
        Some((Era::Modern, ProtocolVersion::V2026_07_28))
    );
}

#[test]
fn auto_connect_against_a_legacy_only_engine_falls_back_to_initialize() {
    let server = server_config().with_versions(LEGACY);
    let mut p = Pair::with(client_config(), server);
    p.connect(ConnectMode::Auto);

    assert_eq!(
        methods(&p.client_wire),
        ["server/discover", "initialize", "notifications/initialized"]
    );
    // The legacy-only engine refuses the modern version, listing its own.
    let refusal = &p.server_wire[0];
    assert_eq!(
        error_code(refusal),
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0
    );
    assert_eq!(
        refusal["error"]["data"],
        json!({"supported":["2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"requested":"2026-07-28"})
    );
    let c = connected(&p.client_events);
    assert_eq!(c.len(), 1);
    assert_eq!(
        (c[0].era, c[0].version),
        (Era::Legacy, ProtocolVersion::V2025_11_25)
    );
    assert_eq!(
        p.server_events,
        [Event::Initialized {
            version: ProtocolVersion::V2025_11_25
        }]
    );
}

#[test]
fn fallback_initialize_asks_for_a_legacy_version_the_server_listed() {
    let server =
        server_config().with_versions([ProtocolVersion::V2024_11_05, ProtocolVersion::V2025_06_18]);
    let mut p = Pair::with(client_config(), server);
    p.connect(ConnectMode::Auto);
    let init = p.client_sent("initialize");
    assert_eq!(init[0]["params"]["protocolVersion"], json!("2025-06-18"));
    assert_eq!(
        p.client.connection(),
        Some((Era::Legacy, ProtocolVersion::V2025_06_18))
    );
}

/// A client engine that has sent its probe, and the probe.
fn probing_client(mode: ConnectMode) -> (Engine, Instant, Value) {
    let now = Instant::now();
    let mut c = Engine::new(client_config());
    c.connect(now, mode);
    let probe = only(drain(&mut c));
    assert_eq!(probe["method"], json!("server/discover"));
    (c, now, probe)
}

fn answer_initialize(c: &mut Engine, now: Instant, init: &Value, version: &str) {
    feed(
        c,
        now,
        &json!({"jsonrpc":"2.0","id":init["id"],"result":{
            "protocolVersion": version,
            "capabilities": {"prompts": {}},
            "serverInfo": {"name": "old", "version": "0.1"}
        }}),
    );
}

#[test]
fn probe_answered_with_method_not_found_falls_back() {
    for code in [-32601, -32602, -32600, -32603, -1, 12345] {
        let (mut c, now, probe) = probing_client(ConnectMode::Auto);
        feed(
            &mut c,
            now,
            &json!({"jsonrpc":"2.0","id":probe["id"],"error":{"code":code,"message":"no"}}),
        );
        let init = only(drain(&mut c));
        assert_eq!(init["method"], json!("initialize"), "code {code}");
        assert_eq!(init["params"]["protocolVersion"], json!("2025-11-25"));
        assert!(events(&mut c).is_empty(), "not connected yet");
        answer_initialize(&mut c, now, &init, "2025-11-25");
        assert_eq!(
            only(drain(&mut c)),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"})
        );
        let ev = events(&mut c);
        let conn = connected(&ev);
        assert_eq!(conn.len(), 1);
        assert_eq!(conn[0].era, Era::Legacy);
        assert_eq!(conn[0].server_info.name, "old");
    }
}

#[test]
fn probe_answered_with_a_non_discover_result_falls_back() {
    let (mut c, now, probe) = probing_client(ConnectMode::Auto);
    feed(
        &mut c,
        now,
        &json!({"jsonrpc":"2.0","id":probe["id"],"result":{}}),
    );
    assert_eq!(only(drain(&mut c))["method"], json!("initialize"));
}

#[test]
fn silent_legacy_server_probe_times_out_then_initialize() {
    let (mut c, now, probe) = probing_client(ConnectMode::Auto);
    let probe_timeout = c.config().probe_timeout;
    assert_eq!(c.poll_timeout(), Some(now + probe_timeout));

    c.handle_timeout(now + probe_timeout - Duration::from_millis(1));
    assert!(
        drain(&mut c).is_empty(),
        "nothing before the probe deadline"
    );

    c.handle_timeout(now + probe_timeout);
    let out = drain(&mut c);
    assert_eq!(out.len(), 2, "{out:#?}");
    assert_eq!(out[0]["method"], json!("notifications/cancelled"));
    assert_eq!(out[0]["params"]["requestId"], probe["id"]);
    assert_eq!(out[1]["method"], json!("initialize"));
    assert!(
        events(&mut c).is_empty(),
        "the probe timeout is not an error"
    );

    // The legacy server wakes up and answers the probe late: dropped quietly.
    let later = now + probe_timeout + Duration::from_millis(5);
    feed(
        &mut c,
        later,
        &json!({"jsonrpc":"2.0","id":probe["id"],"error":{"code":-32601,"message":"no"}}),
    );
    assert!(
        events(&mut c).is_empty(),
        "no ProtocolViolation for a late probe answer"
    );
    assert!(drain(&mut c).is_empty());

    answer_initialize(&mut c, later, &out[1], "2025-11-25");
    drain(&mut c);
    let ev = events(&mut c);
    assert_eq!(connected(&ev).len(), 1);
    assert_eq!(
        c.connection(),
        Some((Era::Legacy, ProtocolVersion::V2025_11_25))
    );
}

#[test]
fn silent_server_over_a_pair_on_the_virtual_clock() {
    // The probe is lost on the way (a legacy server that ignores it); the
    // client falls back on the virtual clock and a legacy engine takes over.
    let mut p = Pair::with(
        client_config(),
        server_config().with_versions([ProtocolVersion::V2025_06_18]),
    );
    p.client.connect(p.now, ConnectMode::Auto);
    let probe = only(drain(&mut p.client)); // lost on the way
    assert_eq!(probe["method"], json!("server/discover"));
    p.advance(Duration::from_millis(4_999));
    assert!(p.client_wire.is_empty());
    p.advance(Duration::from_millis(1));
    assert_eq!(p.elapsed_ms(), 5_000);
    assert_eq!(
        methods(&p.client_wire),
        [
            "notifications/cancelled",
            "initialize",
            "notifications/initialized"
        ]
    );
    assert_eq!(
        p.client.connection(),
        Some((Era::Legacy, ProtocolVersion::V2025_06_18))
    );
}

#[test]
fn unsupported_version_with_a_modern_version_reprobes() {
    // Modern mode at a version this server refuses; the server lists the one
    // it speaks and the client probes again with it.
    let (mut c, now, probe) = probing_client(ConnectMode::Modern(ProtocolVersion::V2025_11_25));
    assert_eq!(
        probe["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        json!("2025-11-25")
    );
    feed(
        &mut c,
        now,
        &json!({"jsonrpc":"2.0","id":probe["id"],"error":{
            "code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28", "1900-01-01"], "requested": "2025-11-25"}
        }}),
    );
    let reprobe = only(drain(&mut c));
    assert_eq!(reprobe["method"], json!("server/discover"));
    assert_ne!(reprobe["id"], probe["id"], "a fresh id");
    assert_eq!(
        reprobe["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        json!("2026-07-28")
    );
    feed(
        &mut c,
        now,
        &json!({"jsonrpc":"2.0","id":reprobe["id"],"result":{
            "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}
        }}),
    );
    let ev = events(&mut c);
    let conn = connected(&ev);
    assert_eq!(conn.len(), 1);
    assert_eq!(
        (conn[0].era, conn[0].version),
        (Era::Modern, ProtocolVersion::V2026_07_28)
    );
}

#[test]
fn unsupported_version_with_only_legacy_in_common_initializes() {
    let (mut c, now, probe) = probing_client(ConnectMode::Auto);
    feed(
        &mut c,
        now,
        &json!({"jsonrpc":"2.0","id":probe["id"],"error":{
            "code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2025-03-26", "2024-11-05", "3000-01-01"], "requested": "2026-07-28"}
        }}),
    );
    let init = only(drain(&mut c));
    assert_eq!(init["method"], json!("initialize"));
    assert_eq!(init["params"]["protocolVersion"], json!("2025-03-26"));
    answer_initialize(&mut c, now, &init, "2025-03-26");
    drain(&mut c);
    let ev = events(&mut c);
    assert_eq!(connected(&ev)[0].version, ProtocolVersion::V2025_03_26);
}

#[test]
fn unsupported_version_without_anything_in_common_fails() {
    for data in [
        json!({"supported": ["3000-01-01"], "requested": "2026-07-28"}),
        json!({"requested": "2026-07-28"}),
        json!(null),
    ] {
        let (mut c, now, probe) = probing_client(ConnectMode::Auto);
        let mut error = json!({"code": -32022, "message": "Unsupported protocol version"});
        if !data.is_null() {
            error["data"] = data.clone();
        }
        feed(
            &mut c,
            now,
            &json!({"jsonrpc":"2.0","id":probe["id"],"error":error}),
        );
        assert!(drain(&mut c).is_empty(), "{data}");
        let ev = events(&mut c);
        match connect_failed(&ev).as_slice() {
            [CallError::Remote(e)] => {
                assert_eq!(e.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0, "{data}")
            }
            other => panic!("{data}: {other:?}"),
        }
        assert_eq!(c.connection(), None);
    }
}

#[test]
fn reprobe_happens_at_most_once() {
    let (mut c, now, probe) = probing_client(ConnectMode::Modern(ProtocolVersion::V2025_11_25));
    let refuse = |id: &Value| {
        json!({"jsonrpc":"2.0","id":id,"error":{
            "code": -32022, "message": "no",
            "data": {"supported": ["2026-07-28"], "requested": "x"}
        }})
    };
    feed(&mut c, now, &refuse(&probe["id"]));
    let reprobe = only(drain(&mut c));
    feed(&mut c, now, &refuse(&reprobe["id"]));
    assert!(drain(&mut c).is_empty(), "no third probe");
    let ev = events(&mut c);
    assert_eq!(connect_failed(&ev).len(), 1);
}

#[test]
fn discover_result_with_only_legacy_versions_in_common_initializes() {
    let (mut c, now, probe) = probing_client(ConnectMode::Auto);
    feed(
        &mut c,
        now,
        &json!({"jsonrpc":"2.0","id":probe["id"],"result":{
            "supportedVersions": ["2025-06-18", "2099-01-01"], "capabilities": {}
        }}),
    );
    let init = only(drain(&mut c));
    assert_eq!(init["params"]["protocolVersion"], json!("2025-06-18"));

    let (mut c, now, probe) = probing_client(ConnectMode::Auto);
    feed(
        &mut c,
        now,
        &json!({"jsonrpc":"2.0","id":probe["id"],"result":{
            "supportedVersions": ["2099-01-01"], "capabilities": {}
        }}),
    );
    assert!(drain(&mut c).is_empty());
    let ev = events(&mut c);
    assert_eq!(connect_failed(&ev).len(), 1);
}

#[test]
fn modern_mode_against_a_legacy_server_fails() {
    let server = server_config().with_versions(LEGACY);
    let mut p = Pair::with(client_config(), server);
    p.connect(ConnectMode::Modern(ProtocolVersion::V2026_07_28));
    assert_eq!(
        methods(&p.client_wire),
        ["server/discover"],
        "never initialize"
    );
    assert_eq!(connect_failed(&p.client_events).len(), 1);
    assert_eq!(p.client.connection(), None);

    // ... and when the legacy server is silent.
    let (mut c, now, _) = probing_client(ConnectMode::Modern(ProtocolVersion::V2026_07_28));
    let t = c.poll_timeout().unwrap();
    c.handle_timeout(t);
    let out = drain(&mut c);
    assert_eq!(methods(&out), ["notifications/cancelled"]);
    let ev = events(&mut c);
    assert_eq!(connect_failed(&ev).len(), 1);
    let _ = now;
}

#[test]
fn client_without_modern_versions_goes_straight_to_initialize() {
    let client = client_config().with_versions(LEGACY);
    let mut p = Pair::with(client, server_config());
    p.connect(ConnectMode::Auto);
    assert_eq!(
        methods(&p.client_wire),
        ["initialize", "notifications/initialized"]
    );
    assert_eq!(
        p.client.connection(),
        Some((Era::Legacy, ProtocolVersion::V2025_11_25))
    );
}

#[test]
fn cancelling_the_connection_requests_fails_the_connection() {
    // Cancelling initialize: nothing is sent (it must never be cancelled on
    // the wire), and the connection attempt fails instead of hanging.
    let now = Instant::now();
    let mut c = Engine::new(client_config());
    c.connect(now, ConnectMode::Legacy(ProtocolVersion::V2025_11_25));
    let init = only(drain(&mut c));
    let id: RequestId = serde_json::from_value(init["id"].clone()).unwrap();
    assert!(c.cancel(&id, Some("changed my mind")));
    assert!(
        drain(&mut c).is_empty(),
        "no notifications/cancelled for initialize"
    );
    assert_eq!(events(&mut c), [Event::ConnectFailed(CallError::Cancelled)]);
    assert_eq!(c.poll_timeout(), None);
    // A late answer is dropped.
    answer_initialize(&mut c, now, &init, "2025-11-25");
    assert!(events(&mut c).is_empty());
    assert!(drain(&mut c).is_empty());
    assert_eq!(c.connection(), None);

    // Cancelling the probe.
    let (mut c, _now, probe) = probing_client(ConnectMode::Auto);
    let id: RequestId = serde_json::from_value(probe["id"].clone()).unwrap();
    assert!(c.cancel(&id, None));
    assert_eq!(methods(&drain(&mut c)), ["notifications/cancelled"]);
    assert_eq!(events(&mut c), [Event::ConnectFailed(CallError::Cancelled)]);
}

#[test]
fn close_while_connecting_fails_the_connection() {
    let (mut c, now, _) = probing_client(ConnectMode::Auto);
    c.close();
    assert_eq!(events(&mut c), [Event::ConnectFailed(CallError::Closed)]);
    assert!(drain(&mut c).is_empty());
    // Connecting a closed engine fails at once and sends nothing.
    c.connect(now, ConnectMode::Auto);
    assert!(drain(&mut c).is_empty());
    assert_eq!(events(&mut c), [Event::ConnectFailed(CallError::Closed)]);
}

#[test]
fn a_legacy_session_and_modern_requests_coexist_on_a_dual_era_server() {
    let now = Instant::now();
    let mut s = legacy_server(server_config(), now, "2025-06-18");
    // A modern request is served statelessly on the same connection.
    feed(&mut s, now, &modern_request(json!("m"), "tools/list"));
    match events(&mut s).as_slice() {
        [Event::Request(r)] => {
            assert_eq!(r.context.era, Era::Modern);
            assert_eq!(r.context.version, ProtocolVersion::V2026_07_28);
        }
        other => panic!("{other:?}"),
    }
    // A plain request uses the session.
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","id":"l","method":"tools/list"}),
    );
    match events(&mut s).as_slice() {
        [Event::Request(r)] => {
            assert_eq!(r.context.era, Era::Legacy);
            assert_eq!(r.context.version, ProtocolVersion::V2025_06_18);
            assert!(r.context.peer_capabilities.declares("sampling"));
            assert_eq!(r.context.peer_info.as_ref().unwrap()["name"], json!("raw"));
        }
        other => panic!("{other:?}"),
    }
    // server/discover is not part of a legacy version.
    let answer = only(exchange(
        &mut s,
        now,
        json!({"jsonrpc":"2.0","id":3,"method":"server/discover"}),
    ));
    assert_eq!(error_code(&answer), ErrorCode::METHOD_NOT_FOUND.0);
}

#[test]
fn a_refusal_that_lists_the_refused_version_is_retried_once() {
    let (mut c, now, probe) = probing_client(ConnectMode::Auto);
    let refuse = |id: &Value| {
        json!({"jsonrpc":"2.0","id":id,"error":{"code":-32022,"message":"Unsupported protocol version",
            "data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}})
    };
    feed(&mut c, now, &refuse(&probe["id"]));
    // One second probe at the same version (no loop after that).
    let again = only(drain(&mut c));
    assert_eq!(again["method"], json!("server/discover"));
    assert_ne!(again["id"], probe["id"]);
    feed(&mut c, now, &refuse(&again["id"]));
    assert!(drain(&mut c).is_empty());
    let ev = events(&mut c);
    assert_eq!(connect_failed(&ev).len(), 1);
    assert_eq!(c.connection(), None);
}
