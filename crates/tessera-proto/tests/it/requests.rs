//! Requests this side sends and receives: ids, response matching,
//! cancellation both ways, progress, timeouts and close.

use crate::harness;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use harness::*;
use serde_json::{Value, json};
use tessera_proto::{
    CallError, Engine, EngineConfig, Event, ProtocolVersion, RequestOptions, SendError, Timeouts,
};
use tessera_types::{ErrorObject, RequestId};

fn opts() -> RequestOptions {
    RequestOptions::default()
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn idv(id: &RequestId) -> Value {
    serde_json::to_value(id).unwrap()
}

/// A legacy pair at 2025-11-25 whose application holds every request.
fn pair() -> Pair {
    legacy_pair(ProtocolVersion::V2025_11_25)
}

fn progress_events(events: &[Event]) -> Vec<(RequestId, f64)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Progress { id, params } => {
                Some((id.clone(), params["progress"].as_f64().unwrap()))
            }
            _ => None,
        })
        .collect()
}

// --------------------------------------------------------------------- ids

#[test]
fn ids_are_never_reused_while_in_flight() {
    let mut p = pair();
    let mut all = HashSet::new();
    let mut live = Vec::new();
    for round in 0..50 {
        let id = p.request("tools/list", None, opts());
        assert!(all.insert(id.clone()), "id {id} reused");
        live.push(id);
        // Answer some, cancel some, keep the rest in flight.
        if round % 3 == 0 {
            let held = p.app.held.remove(0);
            assert!(p.server.respond(&held, Ok(obj(json!({})))));
            p.pump();
            live.retain(|l| *l != held);
        } else if round % 5 == 0 {
            let victim = live.remove(0);
            assert!(p.client.cancel(&victim, None));
            p.pump();
        }
    }
    assert_eq!(p.client.pending_requests(), live.len());
    // The ids on the wire are the ones handed out, all distinct.
    let wire_ids: Vec<Value> = p
        .client_sent("tools/list")
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    assert_eq!(wire_ids.len(), 50);
    assert_eq!(
        wire_ids
            .iter()
            .map(Value::to_string)
            .collect::<HashSet<_>>()
            .len(),
        50
    );
}

#[test]
fn responses_are_matched_by_id_in_any_order() {
    let mut p = pair();
    let a = p.request("tools/list", None, opts());
    let b = p.request("tools/call", Some(obj(json!({"name": "b"}))), opts());
    let c = p.request("resources/read", None, opts());
    assert_eq!(p.app.held, [a.clone(), b.clone(), c.clone()]);
    assert_eq!(p.client.pending_requests(), 3);
    assert_eq!(p.server.inflight_requests(), 3);

    assert!(p.server.respond(&c, Ok(obj(json!({"which": "c"})))));
    assert!(p.server.respond(&a, Err(ErrorObject::new(-1, "a failed"))));
    assert!(p.server.respond(&b, Ok(obj(json!({"which": "b"})))));
    p.pump();

    assert!(matches!(p.outcomes(&c).as_slice(), [Ok(r)] if r["which"] == json!("c")));
    assert!(matches!(p.outcomes(&b).as_slice(), [Ok(r)] if r["which"] == json!("b")));
    match p.outcomes(&a).as_slice() {
        [Err(CallError::Remote(e))] => {
            assert_eq!(e.code, -1);
            assert_eq!(e.message, "a failed");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(p.client.pending_requests(), 0);
    assert_eq!(p.server.inflight_requests(), 0);
    assert_eq!(p.client.poll_timeout(), None);
    // Answering again does nothing.
    assert!(!p.server.respond(&a, Ok(obj(json!({})))));
    assert!(p.server.poll_transmit().is_none());
}

#[test]
fn application_replies_through_the_pair() {
    let mut p = pair();
    p.reply("tools/list", Reply::Result(obj(json!({"tools": [1]}))));
    p.reply(
        "tools/call",
        Reply::Error(ErrorObject::invalid_params("no such tool")),
    );
    let a = p.request("tools/list", None, opts());
    let b = p.request("tools/call", None, opts());
    let c = p.request("unknown/thing", None, opts());
    assert!(matches!(p.outcomes(&a).as_slice(), [Ok(r)] if r["tools"] == json!([1])));
    assert!(matches!(p.outcomes(&b).as_slice(), [Err(CallError::Remote(e))] if e.code == -32602));
    assert!(matches!(p.outcomes(&c).as_slice(), [Err(CallError::Remote(e))] if e.code == -32601));
    // The application never saw the unknown method.
    assert_eq!(p.app.seen.len(), 2);
}

#[test]
fn response_for_an_unknown_id_is_a_violation_and_sends_nothing() {
    let mut p = pair();
    let now = p.now;
    let a = p.request("tools/list", None, opts());
    for msg in [
        json!({"jsonrpc":"2.0","id":999,"result":{}}),
        json!({"jsonrpc":"2.0","id":"1","result":{}}),
        json!({"jsonrpc":"2.0","id":12345,"error":{"code":-32603,"message":"x"}}),
    ] {
        feed(&mut p.client, now, &msg);
        assert!(drain(&mut p.client).is_empty(), "{msg}");
        assert!(
            matches!(events(&mut p.client).as_slice(), [Event::ProtocolViolation(m)] if !m.is_empty()),
            "{msg}"
        );
    }
    assert_eq!(p.client.pending_requests(), 1, "{a} still pending");

    // The real answer, then the same answer again: the second is unknown.
    let answer = json!({"jsonrpc":"2.0","id":idv(&a),"result":{}});
    feed(&mut p.client, now, &answer);
    assert!(matches!(
        events(&mut p.client).as_slice(),
        [Event::Response { outcome: Ok(_), .. }]
    ));
    feed(&mut p.client, now, &answer);
    assert!(matches!(
        events(&mut p.client).as_slice(),
        [Event::ProtocolViolation(_)]
    ));
    assert!(drain(&mut p.client).is_empty());
}

// ------------------------------------------------------------ cancellation

#[test]
fn cancel_sends_notifications_cancelled_and_drops_the_late_answer() {
    let mut p = pair();
    let a = p.request("tools/call", None, opts());
    let b = p.request("tools/call", None, opts());
    assert!(p.client.cancel(&a, Some("user pressed stop")));
    let sent = drain_tagged(&mut p.client);
    assert_eq!(
        sent,
        [(
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":idv(&a),"reason":"user pressed stop"}}),
            None
        )]
    );
    assert!(
        events(&mut p.client).is_empty(),
        "cancelling raises no event"
    );
    assert_eq!(p.client.pending_requests(), 1);

    // Deliver the notification: the server's application hears about it.
    let now = p.now;
    feed(&mut p.server, now, &sent[0].0);
    assert_eq!(
        events(&mut p.server),
        [Event::Cancelled {
            id: a.clone(),
            reason: Some("user pressed stop".into())
        }]
    );

    // The answer crossed the cancellation on the wire: dropped silently.
    feed(
        &mut p.client,
        now,
        &json!({"jsonrpc":"2.0","id":idv(&a),"result":{}}),
    );
    feed(
        &mut p.client,
        now,
        &json!({"jsonrpc":"2.0","id":idv(&a),"error":{"code":-1,"message":"late"}}),
    );
    assert!(events(&mut p.client).is_empty());
    assert!(drain(&mut p.client).is_empty());

    // Cancelling again, or something unknown, does nothing.
    assert!(!p.client.cancel(&a, None));
    assert!(!p.client.cancel(&RequestId::from("nope"), None));
    assert!(drain(&mut p.client).is_empty());

    // Without a reason, the params carry only the id.
    assert!(p.client.cancel(&b, None));
    assert_eq!(
        only(drain(&mut p.client)),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":idv(&b)}})
    );
    assert_eq!(p.client.poll_timeout(), None);
}

#[test]
fn a_user_initialize_request_is_never_cancelled_on_the_wire() {
    let now = Instant::now();
    let mut c = Engine::new(client_config());
    let id = c
        .send_request(
            now,
            "initialize",
            Some(obj(json!({"protocolVersion":"2025-11-25"}))),
            opts(),
        )
        .unwrap();
    drain(&mut c);
    assert!(c.cancel(&id, None));
    assert!(drain(&mut c).is_empty());
    // ... nor on timeout.
    let id = c.send_request(now, "initialize", None, opts()).unwrap();
    drain(&mut c);
    let t = c.poll_timeout().unwrap();
    c.handle_timeout(t);
    assert!(drain(&mut c).is_empty());
    assert!(matches!(
        events(&mut c).as_slice(),
        [Event::Response { id: got, outcome: Err(CallError::Timeout(_)) }] if *got == id
    ));
}

#[test]
fn incoming_cancellation_silences_the_request() {
    let mut p = pair();
    let a = p.request(
        "tools/call",
        None,
        RequestOptions {
            progress: true,
            ..opts()
        },
    );
    assert!(p.client.cancel(&a, Some("why not")));
    p.pump();
    assert_eq!(p.app.cancelled, std::slice::from_ref(&a));
    assert!(p.app.held.is_empty());
    let cancelled: Vec<&Event> = p
        .server_events
        .iter()
        .filter(|e| matches!(e, Event::Cancelled { .. }))
        .collect();
    assert_eq!(
        cancelled,
        [&Event::Cancelled {
            id: a.clone(),
            reason: Some("why not".into())
        }]
    );

    // The handler finishes anyway: nothing is sent.
    assert!(!p.server.notify_progress(&a, 0.5, None, None));
    assert!(!p.server.notify_log("error", None, json!("x"), Some(&a)));
    assert!(matches!(
        p.server
            .notify("notifications/message", None, Some(a.clone())),
        Err(SendError::NotAllowed(_))
    ));
    assert!(!p.server.respond(&a, Ok(obj(json!({})))));
    assert!(p.server.poll_transmit().is_none());
    assert_eq!(p.server.inflight_requests(), 0);
    assert!(p.server_responses(&a).is_empty());
}

#[test]
fn odd_cancellations_are_ignored() {
    let now = Instant::now();
    let mut s = legacy_server(server_config(), now, "2025-11-25");
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
    );
    events(&mut s);
    for params in [
        json!({"requestId": 2}),
        json!({"requestId": "1"}),
        json!({"requestId": null}),
        json!({"requestId": 1.0}),
        json!({"reason": "no id"}),
        json!({}),
    ] {
        feed(
            &mut s,
            now,
            &json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":params}),
        );
        assert!(events(&mut s).is_empty(), "{params}");
        assert!(drain(&mut s).is_empty(), "{params}");
    }
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","method":"notifications/cancelled"}),
    );
    assert!(events(&mut s).is_empty());

    // Twice: one event.
    let cancel =
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}});
    feed(&mut s, now, &cancel);
    feed(&mut s, now, &cancel);
    assert_eq!(
        events(&mut s),
        [Event::Cancelled {
            id: RequestId::Number(1),
            reason: None
        }]
    );
    // A reason that is not a string is left out.
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
    );
    events(&mut s);
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":5}}),
    );
    assert_eq!(
        events(&mut s),
        [Event::Cancelled {
            id: RequestId::Number(2),
            reason: None
        }]
    );
}

#[test]
fn cancelling_initialize_is_ignored_by_the_server() {
    let now = Instant::now();
    let mut s = Engine::new(server_config());
    exchange(&mut s, now, initialize_request(json!(1), "2025-11-25"));
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}),
    );
    assert!(events(&mut s).is_empty());
    assert_eq!(s.negotiated_version(), Some(ProtocolVersion::V2025_11_25));
}

#[test]
fn duplicate_incoming_id_while_in_flight_is_an_invalid_request() {
    let now = Instant::now();
    let mut s = legacy_server(server_config(), now, "2025-11-25");
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","id":"dup","method":"tools/list"}),
    );
    assert_eq!(events(&mut s).len(), 1);
    for method in ["tools/list", "ping", "tools/call"] {
        let answer = only(exchange(
            &mut s,
            now,
            json!({"jsonrpc":"2.0","id":"dup","method":method}),
        ));
        assert_eq!(answer["id"], json!("dup"));
        assert_eq!(error_code(&answer), -32600, "{method}");
        assert!(events(&mut s).is_empty());
    }
    // A number id 1 and a string id "1" are different ids.
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
    );
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","id":"1","method":"tools/list"}),
    );
    assert_eq!(events(&mut s).len(), 2);
    assert!(drain(&mut s).is_empty());

    // Once answered, the id is free again.
    assert!(s.respond(&RequestId::from("dup"), Ok(obj(json!({})))));
    drain(&mut s);
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","id":"dup","method":"tools/list"}),
    );
    assert_eq!(events(&mut s).len(), 1);
    assert!(drain(&mut s).is_empty());
}

// ---------------------------------------------------------------- progress

#[test]
fn progress_token_is_added_and_progress_routed_to_its_request() {
    let mut p = pair();
    let plain = p.request("tools/call", None, opts());
    let a = p.request(
        "tools/call",
        Some(obj(json!({"name": "a"}))),
        RequestOptions {
            progress: true,
            ..opts()
        },
    );
    let b = p.request(
        "tools/call",
        None,
        RequestOptions {
            progress: true,
            ..opts()
        },
    );
    let sent = p.client_sent("tools/call");
    assert!(sent[0].get("params").is_none(), "no token unless asked");
    assert_eq!(sent[1]["params"]["_meta"]["progressToken"], idv(&a));
    assert_eq!(sent[1]["params"]["name"], json!("a"));
    assert_eq!(sent[2]["params"]["_meta"]["progressToken"], idv(&b));

    let ctx: Vec<Option<RequestId>> = p
        .app
        .seen
        .iter()
        .map(|r| r.context.progress_token.clone())
        .collect();
    assert_eq!(ctx, [None, Some(a.clone()), Some(b.clone())]);

    assert!(
        !p.server.notify_progress(&plain, 0.1, None, None),
        "no token"
    );
    assert!(p.server.notify_progress(&b, 1.0, Some(4.0), Some("one")));
    assert!(p.server.notify_progress(&a, 0.5, None, None));
    assert!(p.server.notify_progress(&b, 2.5, Some(4.0), None));
    // Transmits are tagged with the request they are about.
    let tagged: Vec<Option<RequestId>> = {
        let mut v = Vec::new();
        while let Some(t) = p.server.poll_transmit() {
            v.push(t.related.clone());
            p.client.handle_bytes(p.now, &t.message.to_bytes());
        }
        v
    };
    assert_eq!(tagged, [Some(b.clone()), Some(a.clone()), Some(b.clone())]);
    let ev = events(&mut p.client);
    assert_eq!(
        progress_events(&ev),
        [(b.clone(), 1.0), (a.clone(), 0.5), (b.clone(), 2.5)]
    );
    match &ev[0] {
        Event::Progress { params, .. } => {
            assert_eq!(
                Value::Object(params.clone()),
                json!({"progressToken": idv(&b), "progress": 1.0, "total": 4.0, "message": "one"})
            );
        }
        other => panic!("{other:?}"),
    }

    // After the response, progress for that token (and for any token this
    // side did not send) is handed up as a plain notification: a task's
    // token outlives the request that created it.
    assert!(p.server.respond(&a, Ok(obj(json!({})))));
    p.pump();
    let now = p.now;
    feed(
        &mut p.client,
        now,
        &json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":idv(&a),"progress":9}}),
    );
    feed(
        &mut p.client,
        now,
        &json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken": "zzz", "progress": 1}}),
    );
    let late: Vec<Value> = events(&mut p.client)
        .into_iter()
        .map(|e| match e {
            Event::Notification { method, params } => {
                assert_eq!(method, "notifications/progress");
                params.map(Value::Object).unwrap_or_default()["progressToken"].clone()
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(late, [idv(&a), json!("zzz")]);
    // Malformed progress is ignored.
    for params in [json!({"progress": 1}), json!({"progressToken": null})] {
        feed(
            &mut p.client,
            now,
            &json!({"jsonrpc":"2.0","method":"notifications/progress","params":params}),
        );
    }
    feed(
        &mut p.client,
        now,
        &json!({"jsonrpc":"2.0","method":"notifications/progress"}),
    );
    assert!(events(&mut p.client).is_empty());
    assert!(drain(&mut p.client).is_empty());
}

#[test]
fn notify_progress_rules() {
    let mut p = pair();
    let a = p.request(
        "tools/call",
        None,
        RequestOptions {
            progress: true,
            ..opts()
        },
    );
    let s = &mut p.server;
    assert!(s.notify_progress(&a, 1.0, None, None));
    assert!(
        !s.notify_progress(&a, 1.0, None, None),
        "equal is not increasing"
    );
    assert!(!s.notify_progress(&a, 0.5, None, None), "decreasing");
    assert!(!s.notify_progress(&a, f64::NAN, None, None));
    assert!(!s.notify_progress(&a, f64::INFINITY, None, None));
    assert!(s.notify_progress(&a, 1.000_001, Some(2.0), None));
    assert!(!s.notify_progress(&RequestId::from("unknown"), 5.0, None, None));
    assert_eq!(drain(s).len(), 2);
    assert!(s.respond(&a, Ok(obj(json!({})))));
    drain(s);
    assert!(
        !s.notify_progress(&a, 100.0, None, None),
        "never after the response"
    );
    assert!(s.poll_transmit().is_none());
}

#[test]
fn progress_restarts_the_timeout_but_the_maximum_holds() {
    let mut p = pair();
    let a = p.request(
        "slow/op",
        None,
        RequestOptions {
            timeout: Some(ms(1_000)),
            max_timeout: Some(ms(3_000)),
            progress: true,
            ..opts()
        },
    );
    assert_eq!(p.client.poll_timeout(), Some(p.t0 + ms(1_000)));
    let mut last = 0.0;
    for _ in 0..3 {
        p.advance(ms(900));
        last += 1.0;
        assert!(p.server.notify_progress(&a, last, None, None));
        p.pump();
    }
    // t = 2.7 s: three progress notifications kept the request alive past
    // its 1 s timeout; the next deadline is the hard maximum at 3 s.
    assert_eq!(progress_events(&p.client_events).len(), 3);
    assert!(p.outcomes(&a).is_empty());
    assert_eq!(p.client.poll_timeout(), Some(p.t0 + ms(3_000)));
    p.advance(ms(299));
    assert!(p.outcomes(&a).is_empty());
    p.advance(ms(1));
    assert_eq!(p.elapsed_ms(), 3_000);
    assert_eq!(
        p.outcomes(&a),
        [&Err(CallError::Timeout(ms(3_000)))],
        "the hard maximum fires whatever the progress"
    );
    assert_eq!(p.client_sent("notifications/cancelled").len(), 1);
    assert_eq!(p.app.cancelled, [a]);
}

#[test]
fn progress_does_not_restart_the_timeout_unless_asked() {
    let mut p = pair();
    let a = p.request(
        "slow/op",
        None,
        RequestOptions {
            timeout: Some(ms(1_000)),
            progress: true,
            reset_on_progress: false,
            ..opts()
        },
    );
    p.advance(ms(900));
    assert!(p.server.notify_progress(&a, 1.0, None, None));
    p.pump();
    assert_eq!(progress_events(&p.client_events).len(), 1, "still routed");
    p.advance(ms(100));
    assert_eq!(p.outcomes(&a), [&Err(CallError::Timeout(ms(1_000)))]);
}

// ---------------------------------------------------------------- timeouts

#[test]
fn timeout_fails_the_request_and_cancels_it_on_the_wire() {
    let mut p = pair();
    let a = p.request(
        "tools/call",
        None,
        RequestOptions {
            timeout: Some(ms(250)),
            ..opts()
        },
    );
    let b = p.request("tools/call", None, opts()); // default: 60 s
    p.advance(ms(249));
    assert!(p.outcomes(&a).is_empty());
    p.advance(ms(1));
    assert_eq!(p.outcomes(&a), [&Err(CallError::Timeout(ms(250)))]);
    let cancels = p.client_sent("notifications/cancelled");
    assert_eq!(cancels.len(), 1);
    assert_eq!(cancels[0]["params"]["requestId"], idv(&a));
    assert_eq!(cancels[0]["params"]["reason"], json!("request timed out"));
    assert_eq!(p.app.cancelled, std::slice::from_ref(&a));
    // The server's late answer is not sent; a forged late answer is dropped.
    assert!(!p.server.respond(&a, Ok(obj(json!({})))));
    let now = p.now;
    feed(
        &mut p.client,
        now,
        &json!({"jsonrpc":"2.0","id":idv(&a),"result":{}}),
    );
    assert!(events(&mut p.client).is_empty());

    assert_eq!(
        p.client.poll_timeout(),
        Some(p.t0 + Duration::from_secs(60))
    );
    p.advance(Duration::from_secs(60));
    assert_eq!(
        p.outcomes(&b),
        [&Err(CallError::Timeout(Duration::from_secs(60)))],
        "b was sent at t = 0; the clock stops at its deadline on the way to 60.25 s"
    );
}

#[test]
fn several_requests_expiring_at_once_come_out_in_id_order() {
    let now = Instant::now();
    let mut c = Engine::new(client_config());
    let ids: Vec<RequestId> = (0..20)
        .map(|_| {
            c.send_request(
                now,
                "x",
                None,
                RequestOptions {
                    timeout: Some(ms(10)),
                    ..opts()
                },
            )
            .unwrap()
        })
        .collect();
    drain(&mut c);
    c.handle_timeout(now + ms(50));
    let got: Vec<RequestId> = events(&mut c)
        .into_iter()
        .map(|e| match e {
            Event::Response {
                id,
                outcome: Err(CallError::Timeout(d)),
            } => {
                assert_eq!(d, ms(50));
                id
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(got, ids);
    let cancelled: Vec<Value> = drain(&mut c)
        .into_iter()
        .map(|m| m["params"]["requestId"].clone())
        .collect();
    assert_eq!(cancelled, ids.iter().map(idv).collect::<Vec<_>>());
}

#[test]
fn timeout_defaults_and_overrides() {
    let now = Instant::now();
    let mut cfg = client_config();
    cfg.timeouts = Timeouts {
        request: Some(ms(100)),
        maximum: Some(ms(150)),
    };
    let mut c = Engine::new(cfg);
    c.send_request(now, "a", None, opts()).unwrap();
    assert_eq!(c.poll_timeout(), Some(now + ms(100)));

    // no_timeout: no deadline at all.
    let mut c = Engine::new(client_config());
    c.send_request(
        now,
        "a",
        None,
        RequestOptions {
            no_timeout: true,
            timeout: Some(ms(1)),
            ..opts()
        },
    )
    .unwrap();
    assert_eq!(c.poll_timeout(), None);
    c.handle_timeout(now + Duration::from_secs(1_000_000));
    assert!(events(&mut c).is_empty());

    // Only a maximum.
    let mut cfg = client_config();
    cfg.timeouts = Timeouts {
        request: None,
        maximum: Some(ms(500)),
    };
    let mut c = Engine::new(cfg);
    c.send_request(now, "a", None, opts()).unwrap();
    assert_eq!(c.poll_timeout(), Some(now + ms(500)));

    // Neither.
    let mut cfg = client_config();
    cfg.timeouts = Timeouts {
        request: None,
        maximum: None,
    };
    let mut c = Engine::new(cfg);
    c.send_request(now, "a", None, opts()).unwrap();
    assert_eq!(c.poll_timeout(), None);

    // Calling handle_timeout early does nothing.
    let mut c = Engine::new(client_config());
    c.send_request(now, "a", None, opts()).unwrap();
    drain(&mut c);
    c.handle_timeout(now);
    c.handle_timeout(now + Duration::from_secs(59));
    assert!(events(&mut c).is_empty());
    assert!(drain(&mut c).is_empty());
}

#[test]
fn cancelled_ids_are_remembered_up_to_the_configured_number() {
    let now = Instant::now();
    let mut cfg: EngineConfig = client_config();
    cfg.cancelled_memory = 2;
    let mut c = Engine::new(cfg);
    let ids: Vec<RequestId> = (0..3)
        .map(|_| c.send_request(now, "x", None, opts()).unwrap())
        .collect();
    for id in &ids {
        assert!(c.cancel(id, None));
    }
    drain(&mut c);
    // The oldest was forgotten: its late answer is now a violation.
    for (i, id) in ids.iter().enumerate() {
        feed(
            &mut c,
            now,
            &json!({"jsonrpc":"2.0","id":idv(id),"result":{}}),
        );
        let ev = events(&mut c);
        if i == 0 {
            assert!(matches!(ev.as_slice(), [Event::ProtocolViolation(_)]));
        } else {
            assert!(ev.is_empty(), "{id}");
        }
    }
}

// ------------------------------------------------------------------- close

#[test]
fn close_fails_every_pending_request() {
    let mut p = pair();
    let ids: Vec<RequestId> = (0..5)
        .map(|_| p.request("tools/call", None, opts()))
        .collect();
    p.client.close();
    assert!(p.client.is_closed());
    let ev = events(&mut p.client);
    let closed: Vec<RequestId> = ev
        .iter()
        .map(|e| match e {
            Event::Response {
                id,
                outcome: Err(CallError::Closed),
            } => id.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(closed, ids, "each once, in id order");
    assert!(drain(&mut p.client).is_empty(), "nothing sent on close");
    assert_eq!(p.client.pending_requests(), 0);
    assert_eq!(p.client.poll_timeout(), None);

    // Closed for good.
    let now = p.now;
    assert_eq!(
        p.client.send_request(now, "x", None, opts()),
        Err(SendError::Closed)
    );
    assert_eq!(p.client.notify("x", None, None), Err(SendError::Closed));
    assert!(!p.client.notify_log("error", None, json!("x"), None));
    assert!(!p.client.cancel(&ids[0], None));
    p.client.close();
    assert!(
        events(&mut p.client).is_empty(),
        "closing twice does nothing"
    );
    feed(
        &mut p.client,
        now,
        &json!({"jsonrpc":"2.0","id":idv(&ids[0]),"result":{}}),
    );
    assert!(events(&mut p.client).is_empty());
    assert!(drain(&mut p.client).is_empty());
}

#[test]
fn server_close_drops_its_inflight_requests() {
    let mut p = pair();
    let a = p.request("tools/call", None, opts());
    p.server.close();
    assert_eq!(p.server.inflight_requests(), 0);
    assert!(!p.server.respond(&a, Ok(obj(json!({})))));
    assert!(!p.server.notify_log("error", None, json!("bye"), None));
    assert!(p.server.poll_transmit().is_none());
}

/// A batch is answered once every request in it is: cancelling the request
/// it waits for, in a later batch, releases its answer there, before the
/// later batch's own.
#[test]
fn a_cancellation_releases_the_batch_that_waited_for_the_request() {
    let t0 = Instant::now();
    let mut s = legacy_server(server_config(), t0, "2025-03-26");
    feed(
        &mut s,
        t0,
        &json!([
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
        ]),
    );
    assert!(drain(&mut s).is_empty(), "the batch waits for tools/list");
    assert!(matches!(&events(&mut s)[..], [Event::Request(r)] if r.id == RequestId::Number(2)));
    let answered = exchange(
        &mut s,
        t0 + ms(10),
        json!([
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
        ]),
    );
    let ids = |b: &Value| {
        b.as_array()
            .map(|a| a.iter().map(|m| m["id"].clone()).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    // The first batch without the cancelled request, then the second's.
    assert_eq!(answered.len(), 2, "{answered:?}");
    assert_eq!(ids(&answered[0]), vec![json!(0)], "{answered:?}");
    assert_eq!(ids(&answered[1]), vec![json!(1)], "{answered:?}");
}
