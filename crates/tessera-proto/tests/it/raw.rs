//! Results passed on as JSON text: a client-role engine hands the answer to
//! a raw request over without building a tree, and a server-role engine
//! writes such a text as it is, unless it must add to it.

use crate::harness;

use std::time::{Duration, Instant};

use harness::*;
use serde_json::json;
use serde_json::value::RawValue;
use tessera_proto::{
    CallError, Engine, EngineConfig, Event, Outbound, RawResult, RequestOptions, ResultShape,
};
use tessera_types::{ErrorObject, RequestId};

fn raw(s: &str) -> RawResult {
    RawResult::new(RawValue::from_string(s.to_owned()).unwrap()).unwrap()
}

/// A client engine with one raw request (id 1) and one ordinary one (id 2)
/// in flight.
fn client_with_requests(now: Instant) -> Engine {
    let mut c = Engine::new(client_config());
    let options = RequestOptions {
        timeout: Some(Duration::from_secs(5)),
        ..RequestOptions::default()
    };
    let raw_id = c
        .send_request_raw(now, "tools/call", None, options.clone())
        .unwrap();
    let plain_id = c.send_request(now, "tools/list", None, options).unwrap();
    assert_eq!(
        (raw_id, plain_id),
        (RequestId::Number(1), RequestId::Number(2))
    );
    drain(&mut c);
    c
}

#[test]
fn a_raw_request_gets_the_result_text_as_the_peer_wrote_it() {
    let now = Instant::now();
    let mut c = client_with_requests(now);
    let text = r#"{ "content" : [ {"type":"text","text":"hi"} ], "z": 1, "a": 2 }"#;
    let line = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{text}}}"#);
    c.handle_bytes(now, line.as_bytes());
    match events(&mut c).as_slice() {
        [Event::RawResponse { id, result }] => {
            assert_eq!(*id, RequestId::Number(1));
            assert_eq!(result.get(), text, "not a byte changed");
        }
        other => panic!("expected a raw response, got {other:?}"),
    }
    // The ordinary request still gets an object.
    c.handle_bytes(now, br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#);
    assert!(matches!(
        events(&mut c).as_slice(),
        [Event::Response { id, outcome: Ok(r) }] if *id == RequestId::Number(2) && r["tools"] == json!([])
    ));
    assert_eq!(c.pending_requests(), 0);
}

/// What a transport read of an answer ([`RawResult::read_response`]) is
/// taken as it is for a raw request, and the same answer as bytes for any
/// other; text that is not a well-formed result response is not read as one.
#[test]
fn an_answer_the_transport_read_is_taken_as_read() {
    let now = Instant::now();
    let mut c = client_with_requests(now);
    let text = r#"{ "content" : [ {"type":"text","text":"hi"} ] }"#;
    let line = format!(r#" {{"jsonrpc":"2.0","result":{text},"id":1}}"#);
    let (id, result) = RawResult::read_response(line.as_bytes()).expect("a result response");
    assert_eq!((&id, result.get()), (&RequestId::Number(1), text));
    c.handle_result(now, line.as_bytes(), id, result);
    match events(&mut c).as_slice() {
        [Event::RawResponse { id, result }] => {
            assert_eq!(*id, RequestId::Number(1));
            assert_eq!(result.get(), text, "not a byte changed");
        }
        other => panic!("expected a raw response, got {other:?}"),
    }
    let line = br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#;
    let (id, result) = RawResult::read_response(line).expect("a result response");
    c.handle_result(now, line, id, result);
    assert!(matches!(
        events(&mut c).as_slice(),
        [Event::Response { id, outcome: Ok(r) }] if *id == RequestId::Number(2) && r["tools"] == json!([])
    ));
    assert_eq!(c.pending_requests(), 0);
    for not_one in [
        &br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#[..],
        br#"{"jsonrpc":"2.0","id":1,"result":[1]}"#,
        br#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
        br#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
        br#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#,
        br#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
        br#"{"jsonrpc":"2.0","id":1,"result":{"#,
    ] {
        assert!(
            RawResult::read_response(not_one).is_none(),
            "{}",
            String::from_utf8_lossy(not_one)
        );
    }
}

#[test]
fn errors_and_bad_answers_to_a_raw_request_go_the_ordinary_way() {
    let now = Instant::now();
    let mut c = client_with_requests(now);
    // Not JSON: answered with a parse error, as ever; the request waits.
    c.handle_bytes(now, br#"{"jsonrpc":"2.0","id":1,"result":{"#);
    assert_eq!(error_code(&only(drain(&mut c))), -32700);
    // A result that is not an object: dropped and reported, never answered.
    c.handle_bytes(now, br#"{"jsonrpc":"2.0","id":1,"result":[1]}"#);
    assert!(drain(&mut c).is_empty());
    assert!(matches!(
        events(&mut c).as_slice(),
        [Event::ProtocolViolation(_)]
    ));
    assert_eq!(c.pending_requests(), 2);
    // An error answer is an error outcome.
    c.handle_bytes(
        now,
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#,
    );
    assert!(matches!(
        events(&mut c).as_slice(),
        [Event::Response { id, outcome: Err(CallError::Remote(e)) }]
            if *id == RequestId::Number(1) && e.code == -32602
    ));
    // A late answer to it is dropped as an answer to an unknown id.
    c.handle_bytes(now, br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    assert!(matches!(
        events(&mut c).as_slice(),
        [Event::ProtocolViolation(_)]
    ));
    // The other one times out as usual.
    c.handle_timeout(now + Duration::from_secs(5));
    assert!(matches!(
        events(&mut c).as_slice(),
        [Event::Response {
            outcome: Err(CallError::Timeout(_)),
            ..
        }]
    ));
}

#[test]
fn a_cancelled_raw_request_drops_its_late_answer() {
    let now = Instant::now();
    let mut c = client_with_requests(now);
    assert!(c.cancel(&RequestId::Number(1), None));
    drain(&mut c);
    c.handle_bytes(now, br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    assert!(events(&mut c).is_empty(), "dropped quietly");
}

#[test]
fn an_answer_already_decoded_arrives_as_an_object() {
    let now = Instant::now();
    let mut c = client_with_requests(now);
    let decoded = tessera_proto::decode::decode(br#"{"jsonrpc":"2.0","id":1,"result":{"a":1}}"#);
    c.handle_inbound(now, decoded);
    assert!(matches!(
        events(&mut c).as_slice(),
        [Event::Response { outcome: Ok(r), .. }] if r["a"] == 1
    ));
}

/// A modern server engine with `tools/call` id 5 in progress.
fn modern_server(now: Instant) -> Engine {
    let mut s = Engine::new(server_config());
    feed(&mut s, now, &modern_request(json!(5), "tools/call"));
    assert!(matches!(events(&mut s).as_slice(), [Event::Request(_)]));
    s
}

#[test]
fn a_modern_result_with_everything_is_written_as_it_is() {
    let now = Instant::now();
    let mut s = modern_server(now);
    let text = r#"{"content":[],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}}}"#;
    assert!(s.respond_raw(&RequestId::Number(5), raw(text)));
    let t = s.poll_transmit().expect("an answer");
    assert_eq!(t.related, Some(RequestId::Number(5)));
    assert!(matches!(&t.message, Outbound::Raw(r) if r.id == RequestId::Number(5)));
    assert_eq!(
        String::from_utf8(t.message.to_bytes()).unwrap(),
        format!(r#"{{"jsonrpc":"2.0","id":5,"result":{text}}}"#)
    );
    // Answered once only.
    assert!(!s.respond_raw(&RequestId::Number(5), raw("{}")));
    assert!(s.poll_transmit().is_none());
}

#[test]
fn a_modern_result_missing_what_the_engine_adds_is_completed() {
    let now = Instant::now();
    let mut s = modern_server(now);
    assert!(s.respond_raw(&RequestId::Number(5), raw(r#"{"content":[]}"#)));
    let answer = only(drain(&mut s));
    assert_eq!(answer["result"]["resultType"], "complete");
    assert_eq!(
        answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "test-server"
    );
}

#[test]
fn a_legacy_result_is_written_as_it_is_and_a_cancelled_one_not_at_all() {
    let now = Instant::now();
    let mut s = legacy_server(server_config(), now, "2025-11-25");
    for id in [1, 2] {
        feed(
            &mut s,
            now,
            &json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"x"}}),
        );
    }
    events(&mut s);
    assert!(s.respond_reply(
        &RequestId::Number(1),
        Ok(tessera_proto::Reply::Raw(raw("{}")))
    ));
    assert_eq!(
        s.poll_transmit().unwrap().message.to_bytes(),
        br#"{"jsonrpc":"2.0","id":1,"result":{}}"#
    );
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}),
    );
    events(&mut s);
    assert!(!s.respond_raw(&RequestId::Number(2), raw("{}")));
    assert!(s.poll_transmit().is_none());
    // An error through the same door is an ordinary error response.
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}),
    );
    events(&mut s);
    assert!(s.respond_reply(
        &RequestId::Number(3),
        Err(ErrorObject::invalid_params("no"))
    ));
    assert_eq!(error_code(&only(drain(&mut s))), -32602);
}

#[test]
fn a_raw_result_in_a_batch_joins_the_batch() {
    let now = Instant::now();
    let mut s = legacy_server(server_config(), now, "2025-03-26");
    feed(
        &mut s,
        now,
        &json!([
            {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}},
            {"jsonrpc":"2.0","id":2,"method":"tools/list"}
        ]),
    );
    events(&mut s);
    assert!(s.respond_raw(&RequestId::Number(1), raw(r#"{"a": 1}"#)));
    assert!(
        s.poll_transmit().is_none(),
        "the batch waits for its other answer"
    );
    assert!(s.respond(&RequestId::Number(2), Ok(Default::default())));
    let t = s.poll_transmit().unwrap();
    assert!(matches!(t.message, Outbound::Batch(_)));
    let batch = wire(&t);
    assert_eq!(batch[0], json!({"jsonrpc":"2.0","id":1,"result":{"a":1}}));
}

/// A modern server engine with `tools/call` id 5 in progress, and what it
/// told the handler to shape its result with.
fn modern_server_shape(config: EngineConfig, now: Instant) -> (Engine, ResultShape) {
    let mut s = Engine::new(config);
    feed(&mut s, now, &modern_request(json!(5), "tools/call"));
    let shape = match events(&mut s).as_slice() {
        [Event::Request(r)] => r.context.result_shape.clone().expect("a shape"),
        other => panic!("expected the request, got {other:?}"),
    };
    (s, shape)
}

/// The bytes an engine writes for `result` given as text (the old path:
/// read again, `resultType` and `_meta` added when missing).
fn written_from_text(config: EngineConfig, result: &serde_json::Value) -> Vec<u8> {
    let (mut s, _) = modern_server_shape(config, Instant::now());
    let text = serde_json::to_string(result).unwrap();
    assert!(s.respond_raw(&RequestId::Number(5), raw(&text)));
    s.poll_transmit().expect("an answer").message.to_bytes()
}

/// A typed result written with `resultType` and the server's `_meta` in one
/// pass is written byte for byte as the engine wrote it by reading the
/// result's text again; a result with a `_meta` or a `resultType` of its
/// own is not written so (the server's rule), and keeps the old path.
#[test]
fn a_shaped_result_is_written_as_the_result_text_was_completed() {
    let mut nameless = server_config();
    nameless.server.info.name = String::new();
    let plain = [
        json!({}),
        json!({"content": []}),
        json!({"content": [{"type": "text", "text": "h\u{e9} \"q\" \u{1}"}], "isError": false,
               "structuredContent": {"b": 1, "a": [null, 1.5]}}),
    ];
    let own = [
        json!({"content": [], "_meta": {"k": 1}}),
        json!({"content": [], "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "up"}}}),
        json!({"content": [], "resultType": "complete"}),
        json!({"resultType": "task", "task": {"taskId": "t"}}),
    ];
    for config in [server_config(), nameless] {
        for result in &plain {
            let (mut s, shape) = modern_server_shape(config.clone(), Instant::now());
            let shaped = RawResult::shaped(result, &shape).expect("an object");
            assert!(s.respond_raw(&RequestId::Number(5), shaped));
            let new = s.poll_transmit().expect("an answer").message.to_bytes();
            let old = written_from_text(config.clone(), result);
            assert_eq!(
                String::from_utf8(new).unwrap(),
                String::from_utf8(old).unwrap(),
                "{result}"
            );
        }
        for result in &own {
            // Written as text, as before: the engine completes it as ever.
            let old = written_from_text(config.clone(), result);
            let answer: serde_json::Value = serde_json::from_slice(&old).unwrap();
            assert!(answer["result"]["resultType"].is_string(), "{result}");
        }
    }
}

/// A result shaped as the engine shapes it is written as it is, not read
/// again: even one nested deeper than serde_json reads is written.
#[test]
fn a_shaped_result_is_not_read_again() {
    let (mut s, shape) = modern_server_shape(server_config(), Instant::now());
    let mut deep = json!(1);
    for _ in 0..200 {
        deep = json!([deep]);
    }
    let deep = json!({ "deep": deep });
    let shaped = RawResult::shaped(&deep, &shape).unwrap();
    let text = shaped.get().to_owned();
    assert!(s.respond_raw(&RequestId::Number(5), shaped));
    assert_eq!(
        String::from_utf8(s.poll_transmit().unwrap().message.to_bytes()).unwrap(),
        format!(r#"{{"jsonrpc":"2.0","id":5,"result":{text}}}"#)
    );
    assert!(
        serde_json::from_str::<serde_json::Value>(&text).is_err(),
        "reading it again would have failed"
    );
    // Shaped for another identity: completed as a text (here: as it is, its
    // `_meta` has an identity), never with the wrong shape taken for this one.
    let (mut s, _) = modern_server_shape(server_config(), Instant::now());
    let other = ResultShape::new(Some(
        RawValue::from_string(r#"{"name":"other","version":"1"}"#.into())
            .unwrap()
            .into(),
    ));
    let shaped = RawResult::shaped(&json!({"content": []}), &other).unwrap();
    assert!(s.respond_raw(&RequestId::Number(5), shaped));
    let answer = only(drain(&mut s));
    assert_eq!(
        answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "other"
    );
}
