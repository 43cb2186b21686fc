//! The modern era (2026-07-28): per-request `_meta` checks, the methods that
//! do not exist any more, result shaping, per-request log levels, and the
//! client adding `_meta` on its own.

use crate::harness;

use std::time::Instant;

use harness::*;
use serde_json::{Value, json};
use tessera_proto::{
    Engine, EngineConfig, Era, Event, ProtocolVersion, RequestOptions, SendError, ServerIdentity,
};
use tessera_types::{
    ClientCapabilities, ElicitationCapability, ErrorCode, ErrorObject, RequestId,
    SamplingCapability,
};

fn server() -> (Engine, Instant) {
    (Engine::new(server_config()), Instant::now())
}

fn request_with_meta(id: Value, method: &str, meta: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"_meta":meta}})
}

/// Serves one modern request to the application and returns its id.
fn served(s: &mut Engine, now: Instant, req: Value) -> tessera_proto::IncomingRequest {
    assert!(
        exchange(s, now, req).is_empty(),
        "handed to the application"
    );
    match events(s).as_slice() {
        [Event::Request(r)] => r.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_client_pinned_to_the_modern_era_reports_the_probe_error() {
    // No fallback to initialize: the connection fails with the server's own
    // reason (say, a refused token) instead of a generic one.
    let now = Instant::now();
    let mut c = Engine::new(client_config());
    c.connect(
        now,
        tessera_proto::ConnectMode::Modern(ProtocolVersion::V2026_07_28),
    );
    let probe = only(drain(&mut c));
    assert_eq!(probe["method"], json!("server/discover"));
    feed(
        &mut c,
        now,
        &json!({"jsonrpc":"2.0","id":probe["id"],"error":{
            "code": -32001, "message": "HTTP 401: invalid_token"
        }}),
    );
    assert!(drain(&mut c).is_empty(), "no initialize");
    let failed: Vec<_> = events(&mut c)
        .into_iter()
        .filter_map(|e| match e {
            Event::ConnectFailed(tessera_proto::CallError::Remote(e)) => Some(e),
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].code, -32001);
    assert!(
        failed[0].message.contains("invalid_token"),
        "{}",
        failed[0].message
    );
}

#[test]
fn missing_protocol_version_before_initialize_is_invalid_params() {
    let (mut s, now) = server();
    let req = request_with_meta(
        json!(1),
        "tools/list",
        json!({"io.modelcontextprotocol/clientCapabilities": {}}),
    );
    let answer = only(exchange(&mut s, now, req));
    assert_eq!(answer["id"], json!(1));
    assert_eq!(error_code(&answer), ErrorCode::INVALID_PARAMS.0);

    // No params at all, and a `_meta` that is not an object.
    for req in [
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":"2026-07-28"}}),
    ] {
        let answer = only(exchange(&mut s, now, req.clone()));
        assert_eq!(answer["id"], req["id"]);
        assert_eq!(error_code(&answer), ErrorCode::INVALID_PARAMS.0);
    }
    assert!(events(&mut s).is_empty());
}

#[test]
fn protocol_version_must_be_a_string() {
    let (mut s, now) = server();
    for v in [
        json!(20260728),
        json!(null),
        json!(["2026-07-28"]),
        json!({}),
    ] {
        let req = request_with_meta(
            json!("v"),
            "tools/list",
            json!({"io.modelcontextprotocol/protocolVersion": v, "io.modelcontextprotocol/clientCapabilities": {}}),
        );
        let answer = only(exchange(&mut s, now, req));
        assert_eq!(error_code(&answer), ErrorCode::INVALID_PARAMS.0, "{v}");
        assert_eq!(answer["id"], json!("v"));
    }
}

#[test]
fn unknown_version_is_unsupported_protocol_version_with_the_list() {
    let (mut s, now) = server();
    for (id, requested) in [
        (json!(7), "1900-01-01"),
        (json!("abc"), "2026-07-29"),
        (json!(-1), ""),
    ] {
        let answer = only(exchange(
            &mut s,
            now,
            request_with_meta(id.clone(), "tools/list", modern_meta(requested)),
        ));
        assert_eq!(answer["id"], id);
        assert_eq!(error_code(&answer), -32022);
        assert_eq!(
            answer["error"]["data"],
            json!({
                "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
                "requested": requested
            })
        );
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains(requested)
        );
    }

    // A known version the server chose not to support gets the same error.
    let cfg = server_config().with_versions([ProtocolVersion::V2025_11_25]);
    let mut s = Engine::new(cfg);
    let answer = only(exchange(
        &mut s,
        now,
        modern_request(json!(1), "tools/list"),
    ));
    assert_eq!(error_code(&answer), -32022);
    assert_eq!(
        answer["error"]["data"],
        json!({"supported": ["2025-11-25"], "requested": "2026-07-28"})
    );
}

#[test]
fn missing_or_malformed_client_capabilities_is_invalid_params() {
    let (mut s, now) = server();
    for meta in [
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}),
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": null}),
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": []}),
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": "all"}),
    ] {
        for method in ["tools/list", "server/discover"] {
            let answer = only(exchange(
                &mut s,
                now,
                request_with_meta(json!(5), method, meta.clone()),
            ));
            assert_eq!(answer["id"], json!(5));
            assert_eq!(
                error_code(&answer),
                ErrorCode::INVALID_PARAMS.0,
                "{method} {meta}"
            );
        }
    }
    assert!(events(&mut s).is_empty());
}

#[test]
fn legacy_only_methods_do_not_exist_in_a_modern_request() {
    let (mut s, now) = server();
    for (i, method) in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ]
    .into_iter()
    .enumerate()
    {
        let id = json!(format!("r{i}"));
        let answer = only(exchange(&mut s, now, modern_request(id.clone(), method)));
        assert_eq!(answer["id"], id, "{method}");
        assert_eq!(
            error_code(&answer),
            ErrorCode::METHOD_NOT_FOUND.0,
            "{method}"
        );
    }
    // None of these opened a legacy session on the way.
    assert_eq!(s.negotiated_version(), None);
    assert!(events(&mut s).is_empty());

    // Even when the application claims to serve them.
    let cfg = server_config().with_methods(["ping", "resources/subscribe"]);
    let mut s = Engine::new(cfg);
    for method in ["ping", "resources/subscribe"] {
        let answer = only(exchange(&mut s, now, modern_request(json!(1), method)));
        assert_eq!(error_code(&answer), ErrorCode::METHOD_NOT_FOUND.0);
    }
}

#[test]
fn unknown_method_is_method_not_found_with_the_id_preserved() {
    let (mut s, now) = server();
    for id in [
        json!(0),
        json!(i64::MAX),
        json!(i64::MIN),
        json!("a-string-id"),
        json!(""),
    ] {
        let answer = only(exchange(&mut s, now, modern_request(id.clone(), "no/such")));
        assert_eq!(answer["id"], id);
        assert_eq!(answer["jsonrpc"], json!("2.0"));
        assert_eq!(error_code(&answer), ErrorCode::METHOD_NOT_FOUND.0);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no/such")
        );
        assert!(answer.get("result").is_none());
    }
}

#[test]
fn server_discover_needs_no_session() {
    let (mut s, now) = server();
    let answer = only(exchange(
        &mut s,
        now,
        modern_request(json!("d"), "server/discover"),
    ));
    assert_eq!(answer["id"], json!("d"));
    let r = &answer["result"];
    assert_eq!(r["resultType"], json!("complete"));
    assert_eq!(r["supportedVersions"][0], json!("2026-07-28"));
    assert_eq!(r["ttlMs"], json!(60_000));
    assert_eq!(r["cacheScope"], json!("public"));
    assert_eq!(s.negotiated_version(), None);

    // Without an identity: no serverInfo, no instructions, a zero ttl.
    let mut s = Engine::new(EngineConfig::server(ServerIdentity::default()));
    let answer = only(exchange(
        &mut s,
        now,
        modern_request(json!(1), "server/discover"),
    ));
    let r = answer["result"].as_object().unwrap();
    assert_eq!(r["resultType"], json!("complete"));
    assert_eq!(r["capabilities"], json!({}));
    assert_eq!(r["ttlMs"], json!(0));
    assert!(!r.contains_key("instructions"));
    assert!(
        r.get("_meta")
            .is_none_or(|m| m.get("io.modelcontextprotocol/serverInfo").is_none())
    );
}

#[test]
fn results_get_result_type_and_server_info() {
    let (mut s, now) = server();
    let r = served(&mut s, now, modern_request(json!(1), "tools/list"));
    assert!(s.respond(&r.id, Ok(obj(json!({"tools": []})))));
    let answer = only(drain(&mut s));
    assert_eq!(
        answer,
        json!({"jsonrpc":"2.0","id":1,"result":{
            "tools": [],
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name":"test-server","version":"1.2.3"}}
        }})
    );

    // An explicit resultType and existing _meta keys are kept.
    let r = served(&mut s, now, modern_request(json!(2), "tools/call"));
    assert!(s.respond(
        &r.id,
        Ok(obj(json!({
            "resultType": "input_required",
            "_meta": {"com.example/x": 1, "io.modelcontextprotocol/serverInfo": {"name":"override"}}
        })))
    ));
    let answer = only(drain(&mut s));
    assert_eq!(answer["result"]["resultType"], json!("input_required"));
    assert_eq!(
        answer["result"]["_meta"],
        json!({"com.example/x": 1, "io.modelcontextprotocol/serverInfo": {"name":"override"}})
    );

    // Errors are not shaped.
    let r = served(&mut s, now, modern_request(json!(3), "tools/call"));
    assert!(s.respond(&r.id, Err(ErrorObject::invalid_params("bad tool"))));
    assert_eq!(
        only(drain(&mut s)),
        json!({"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad tool"}})
    );
}

#[test]
fn legacy_results_are_not_shaped() {
    let now = Instant::now();
    let mut s = legacy_server(server_config(), now, "2025-11-25");
    let r = served(
        &mut s,
        now,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
    );
    assert!(s.respond(&r.id, Ok(obj(json!({"tools": []})))));
    assert_eq!(
        only(drain(&mut s)),
        json!({"jsonrpc":"2.0","id":1,"result":{"tools":[]}})
    );
}

#[test]
fn request_context_carries_the_modern_meta() {
    let (mut s, now) = server();
    let req = json!({"jsonrpc":"2.0","id":"ctx","method":"tools/call","params":{
        "name": "t",
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "9"},
            "io.modelcontextprotocol/logLevel": "notice",
            "progressToken": "tok",
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
        }
    }});
    let r = served(&mut s, now, req);
    assert_eq!(r.id, RequestId::from("ctx"));
    assert_eq!(r.method, "tools/call");
    assert_eq!(r.params.as_ref().unwrap()["name"], json!("t"));
    let c = &r.context;
    assert_eq!(c.era, Era::Modern);
    assert_eq!(c.version, ProtocolVersion::V2026_07_28);
    assert_eq!(c.progress_token, Some(RequestId::from("tok")));
    let elicitation = c.peer_capabilities.client().unwrap().elicitation.as_ref();
    assert_eq!(elicitation, Some(&ElicitationCapability::default()));
    assert_eq!(c.peer_info.as_ref().unwrap()["version"], json!("9"));
    assert_eq!(c.log_level.as_deref(), Some("notice"));
    assert!(c.meta.as_ref().unwrap().contains_key("traceparent"));
}

#[test]
fn modern_requests_are_stateless() {
    // Each request brings its own capabilities; nothing leaks between them.
    let (mut s, now) = server();
    let a = served(
        &mut s,
        now,
        request_with_meta(
            json!(1),
            "tools/list",
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                   "io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}),
        ),
    );
    let b = served(&mut s, now, modern_request(json!(2), "tools/list"));
    let sampling = a
        .context
        .peer_capabilities
        .client()
        .unwrap()
        .sampling
        .as_ref();
    assert_eq!(sampling, Some(&SamplingCapability::default()));
    assert_eq!(
        b.context.peer_capabilities.client(),
        Some(&ClientCapabilities::default())
    );
    assert!(b.context.peer_info.is_none());
    assert!(b.context.log_level.is_none());
}

#[test]
fn per_request_log_level_filters_notify_log() {
    let (mut s, now) = server();
    let mut meta = modern_meta("2026-07-28");
    meta["io.modelcontextprotocol/logLevel"] = json!("warning");
    let loud = served(&mut s, now, request_with_meta(json!(1), "tools/call", meta));
    let quiet = served(&mut s, now, modern_request(json!(2), "tools/call"));

    assert!(!s.notify_log("info", None, json!("too low"), Some(&loud.id)));
    assert!(!s.notify_log("debug", None, json!("too low"), Some(&loud.id)));
    assert!(s.notify_log("warning", Some("db"), json!({"k": 1}), Some(&loud.id)));
    assert!(s.notify_log("emergency", None, json!("!"), Some(&loud.id)));
    assert!(!s.notify_log("bogus", None, json!("?"), Some(&loud.id)));
    let sent = drain_tagged(&mut s);
    assert_eq!(sent.len(), 2);
    assert_eq!(
        sent[0].0,
        json!({"jsonrpc":"2.0","method":"notifications/message","params":{
            "level":"warning","logger":"db","data":{"k":1}
        }})
    );
    assert_eq!(
        sent[0].1,
        Some(RequestId::Number(1)),
        "tagged with its request"
    );
    assert_eq!(sent[1].0["params"]["level"], json!("emergency"));
    assert!(sent[1].0["params"].get("logger").is_none());

    // No logLevel in the request: no log at all.
    for level in ["debug", "info", "error", "emergency"] {
        assert!(
            !s.notify_log(level, None, json!("x"), Some(&quiet.id)),
            "{level}"
        );
    }
    assert!(drain(&mut s).is_empty());

    // Not after the response.
    assert!(s.respond(&loud.id, Ok(obj(json!({})))));
    drain(&mut s);
    assert!(!s.notify_log("error", None, json!("late"), Some(&loud.id)));
    assert!(drain(&mut s).is_empty());
}

#[test]
fn invalid_log_level_is_invalid_params() {
    let (mut s, now) = server();
    for level in [json!("loud"), json!(3), json!(null), json!("WARNING")] {
        let mut meta = modern_meta("2026-07-28");
        meta["io.modelcontextprotocol/logLevel"] = level.clone();
        let answer = only(exchange(
            &mut s,
            now,
            request_with_meta(json!(1), "tools/list", meta),
        ));
        assert_eq!(error_code(&answer), ErrorCode::INVALID_PARAMS.0, "{level}");
    }
}

#[test]
fn legacy_log_level_comes_from_set_level() {
    let now = Instant::now();
    let mut s = legacy_server(server_config(), now, "2025-11-25");
    let r = served(
        &mut s,
        now,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call"}),
    );
    // No level set: everything passes.
    assert!(s.notify_log("debug", None, json!("a"), Some(&r.id)));
    assert!(s.notify_log("debug", None, json!("b"), None));
    drain(&mut s);

    let answer = only(exchange(
        &mut s,
        now,
        json!({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"error"}}),
    ));
    assert_eq!(answer, json!({"jsonrpc":"2.0","id":2,"result":{}}));
    assert!(!s.notify_log("warning", None, json!("c"), Some(&r.id)));
    assert!(!s.notify_log("warning", None, json!("c"), None));
    assert!(s.notify_log("critical", None, json!("d"), None));
    assert_eq!(drain(&mut s).len(), 1);

    for bad in [json!({"level":"nope"}), json!({}), json!({"level": 1})] {
        let answer = only(exchange(
            &mut s,
            now,
            json!({"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":bad}),
        ));
        assert_eq!(error_code(&answer), ErrorCode::INVALID_PARAMS.0, "{bad}");
    }

    // A server without the logging capability does not answer setLevel itself.
    let mut ident = server_identity();
    ident.capabilities.logging = None;
    let mut s = legacy_server(
        EngineConfig::server(ident).with_methods(APP_METHODS),
        now,
        "2025-11-25",
    );
    let answer = only(exchange(
        &mut s,
        now,
        json!({"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"error"}}),
    ));
    assert_eq!(error_code(&answer), ErrorCode::METHOD_NOT_FOUND.0);
}

#[test]
fn modern_client_adds_meta_to_every_request() {
    let mut p = modern_pair();
    p.reply("tools/list", Reply::Result(obj(json!({"tools": []}))));
    p.reply("tools/call", Reply::Result(obj(json!({"content": []}))));

    let a = p.request("tools/list", None, RequestOptions::default());
    let b = p.request(
        "tools/call",
        Some(obj(json!({"name": "x", "_meta": {"com.example/k": "v"}}))),
        RequestOptions::default(),
    );
    let c = p.request(
        "tools/call",
        Some(obj(json!({"name": "y", "_meta": "not an object"}))),
        RequestOptions {
            progress: true,
            ..RequestOptions::default()
        },
    );

    let sent: Vec<&Value> = p
        .client_wire
        .iter()
        .filter(|m| m["method"] == json!("tools/list") || m["method"] == json!("tools/call"))
        .collect();
    assert_eq!(sent.len(), 3);
    for m in &sent {
        let meta = &m["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            json!("2026-07-28"),
            "{m}"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientCapabilities"],
            json!({"roots":{"listChanged":true}}),
            "{m}"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"],
            json!({"name":"test-client","version":"0.0.1"}),
            "{m}"
        );
    }
    assert_eq!(sent[1]["params"]["_meta"]["com.example/k"], json!("v"));
    assert_eq!(sent[1]["params"]["name"], json!("x"));
    assert_eq!(
        sent[2]["params"]["_meta"]["progressToken"],
        serde_json::to_value(&c).unwrap()
    );

    // Every one was served in the modern era with the client's identity.
    assert_eq!(p.app.seen.len(), 3);
    for r in &p.app.seen {
        assert_eq!(r.context.era, Era::Modern);
        assert_eq!(
            r.context.peer_info.as_ref().unwrap()["name"],
            json!("test-client")
        );
    }
    for id in [&a, &b, &c] {
        match p.outcomes(id).as_slice() {
            [Ok(r)] => {
                assert_eq!(r["resultType"], json!("complete"));
                assert_eq!(
                    r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
                    json!("test-server")
                );
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn caller_supplied_meta_values_win_except_the_version() {
    let mut p = modern_pair();
    p.reply("tools/list", Reply::Result(obj(json!({}))));
    p.request(
        "tools/list",
        Some(obj(json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "1900-01-01",
            "io.modelcontextprotocol/clientCapabilities": {"sampling": {}}
        }}))),
        RequestOptions::default(),
    );
    let sent = p.client_sent("tools/list")[0].clone();
    let meta = &sent["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        json!("2026-07-28"),
        "the connection's version is always used"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"sampling": {}}),
        "per-request capabilities may be narrowed by the caller"
    );
}

#[test]
fn a_request_whose_text_the_engine_writes_carries_the_mirrored_members() {
    let mut p = modern_pair();
    let text = r#"{"arguments":{"name":"inner"},"name":"echo","_meta":{"k":1}}"#;
    let params = tessera_types::Params::from_raw(
        serde_json::value::RawValue::from_string(text.to_owned()).unwrap(),
    );
    p.client
        .send_request_params(
            p.now,
            "tools/call",
            params,
            RequestOptions::default(),
            false,
        )
        .unwrap();
    let t = p.client.poll_transmit().expect("the request");
    let noted = t.mirrored.as_deref().expect("the engine wrote the text");
    assert_eq!(noted.name, Some(json!("echo")));
    assert_eq!(noted.uri, None);
    assert_eq!(noted.version.as_deref(), Some("2026-07-28"));
    // As the text written has them.
    let sent: Value = serde_json::from_slice(&t.message.to_bytes()).unwrap();
    assert_eq!(sent["params"]["name"], json!("echo"));
    assert_eq!(
        sent["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        json!("2026-07-28")
    );
    // Params built as a tree are the transport's to look up.
    p.client
        .send_request(
            p.now,
            "tools/call",
            Some(obj(json!({"name": "echo"}))),
            RequestOptions::default(),
        )
        .unwrap();
    assert!(p.client.poll_transmit().unwrap().mirrored.is_none());
}

#[test]
fn legacy_client_adds_no_modern_meta() {
    let mut p = legacy_pair(ProtocolVersion::V2025_11_25);
    p.reply("tools/list", Reply::Result(obj(json!({}))));
    p.request("tools/list", None, RequestOptions::default());
    let sent = p.client_sent("tools/list")[0].clone();
    assert!(sent.get("params").is_none(), "{sent}");
    assert_eq!(p.app.seen[0].context.era, Era::Legacy);
}

#[test]
fn modern_server_cannot_send_requests_for_a_modern_request() {
    let (mut s, now) = server();
    let r = served(&mut s, now, modern_request(json!(1), "tools/call"));
    let e = s
        .send_request(
            now,
            "sampling/createMessage",
            None,
            RequestOptions {
                related: Some(r.id.clone()),
                ..RequestOptions::default()
            },
        )
        .unwrap_err();
    assert!(matches!(e, SendError::NotAllowed(_)), "{e:?}");
    assert!(drain(&mut s).is_empty());
}

#[test]
fn notify_for_a_request_is_tagged_and_refused_once_done() {
    let (mut s, now) = server();
    let r = served(&mut s, now, modern_request(json!("n"), "tools/call"));
    s.notify(
        "notifications/message",
        Some(obj(json!({"level":"info","data":1}))),
        Some(r.id.clone()),
    )
    .unwrap();
    let sent = drain_tagged(&mut s);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].1, Some(r.id.clone()));
    assert!(s.respond(&r.id, Ok(obj(json!({})))));
    let answer = drain_tagged(&mut s);
    assert_eq!(
        answer[0].1,
        Some(r.id.clone()),
        "the response is tagged too"
    );
    assert!(matches!(
        s.notify("notifications/message", None, Some(r.id.clone())),
        Err(SendError::NotAllowed(_))
    ));
    assert!(drain(&mut s).is_empty());
}

#[test]
fn a_request_tag_comes_back_on_what_relates_to_the_request() {
    let (mut s, now) = server();
    let tagged_meta = |tag: serde_json::Value| {
        let mut meta = modern_meta("2026-07-28");
        meta["io.modelcontextprotocol/logLevel"] = json!("debug");
        meta["io.tessera/requestTag"] = tag;
        meta
    };
    let a = served(
        &mut s,
        now,
        request_with_meta(json!(1), "tools/call", tagged_meta(json!(7))),
    );
    let b = served(
        &mut s,
        now,
        request_with_meta(json!(2), "tools/call", tagged_meta(json!("x".repeat(65)))),
    );
    assert!(s.notify_log("info", None, json!("from a"), Some(&a.id)));
    assert!(s.notify_log("info", None, json!("from b"), Some(&b.id)));
    s.notify("notifications/custom", None, Some(a.id.clone()))
        .expect("a is in progress");
    let sent = drain(&mut s);
    assert_eq!(sent.len(), 3);
    assert_eq!(
        sent[0]["params"]["_meta"],
        json!({"io.tessera/requestTag": 7})
    );
    // A tag longer than 64 bytes is not echoed.
    assert!(sent[1]["params"].get("_meta").is_none(), "{}", sent[1]);
    assert_eq!(
        sent[2]["params"],
        json!({"_meta": {"io.tessera/requestTag": 7}})
    );
}

/// Feeds `text` as it is (key order, escapes and repeated keys kept) and
/// returns what the engine transmitted.
fn exchange_text(s: &mut Engine, now: Instant, text: &str) -> Vec<Value> {
    s.handle_bytes(now, text.as_bytes());
    drain(s)
}

#[test]
fn meta_read_from_its_text_answers_as_a_tree_would() {
    let (mut s, now) = server();
    // Escaped keys are the keys they spell: a modern request, served.
    let escaped = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t",
        "_meta":{"io.modelcontextprotocol\u002fprotocolVersion":"2026-07-28",
        "io.modelcontextprotocol/client\u0043apabilities":{"sampling":{}},
        "io.modelcontextprotocol/clientInfo":{"name":"c\u0031","version":"1"},
        "\u0070rogressToken":"p\u0031","io.modelcontextprotocol/logLevel":"warning"}}}"#;
    assert!(exchange_text(&mut s, now, escaped).is_empty());
    let r = match events(&mut s).as_slice() {
        [Event::Request(r)] => r.clone(),
        other => panic!("{other:?}"),
    };
    let c = &r.context;
    assert_eq!(c.era, Era::Modern);
    assert_eq!(c.progress_token, Some(RequestId::from("p1")));
    assert_eq!(c.peer_info.as_ref().unwrap()["name"], json!("c1"));
    assert_eq!(c.log_level.as_deref(), Some("warning"));
    assert!(c.peer_capabilities.declares("sampling"));
    assert_eq!(
        c.meta.as_ref().unwrap().object()["io.modelcontextprotocol/clientInfo"],
        json!({"name": "c1", "version": "1"})
    );

    // A repeated key counts with its last value, as in a tree: here the
    // capabilities end up a string, refused.
    let repeated = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{},
        "io.modelcontextprotocol/clientCapabilities":"all"}}}"#;
    let answer = only(exchange_text(&mut s, now, repeated));
    assert_eq!(error_code(&answer), ErrorCode::INVALID_PARAMS.0);
    let repeated = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":1,
        "io.modelcontextprotocol/protocolVersion":"1900-01-01",
        "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let answer = only(exchange_text(&mut s, now, repeated));
    assert_eq!(error_code(&answer), -32022);
    assert_eq!(answer["error"]["data"]["requested"], json!("1900-01-01"));

    // A `_meta` that is not an object is no `_meta`: a legacy request before
    // initialize.
    for meta in ["[]", "\"2026-07-28\"", "null", "7"] {
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{{"_meta":{meta}}}}}"#
        );
        let answer = only(exchange_text(&mut s, now, &text));
        assert_eq!(error_code(&answer), ErrorCode::INVALID_PARAMS.0, "{meta}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("before initialization"),
            "{answer}"
        );
    }

    // A huge `_meta`: its well-known members found among many others.
    let mut text = String::from(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","_meta":{"#,
    );
    for i in 0..3_000 {
        text.push_str(&format!(r#""com.example/k{i}":{{"v":[{i},"x"]}},"#));
    }
    text.push_str(
        r#""io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{},"progressToken":9}}}"#,
    );
    assert!(exchange_text(&mut s, now, &text).is_empty());
    let r = match events(&mut s).as_slice() {
        [Event::Request(r)] => r.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(r.context.progress_token, Some(RequestId::Number(9)));
    let meta = r.context.meta.as_ref().unwrap();
    assert_eq!(meta.object().len(), 3_003);
    assert_eq!(
        meta.member::<Value>("com.example/k2999").unwrap().unwrap(),
        json!({"v": [2999, "x"]})
    );
}
