//! Results passed on as JSON text through the connection core: a client's
//! [`Peer::request_raw`] gets the peer's result as it was written, and a
//! service answering with a [`Reply::Raw`] has its text written as it
//! is. A client core over a duplex pipe whose other end the test plays;
//! a server core driven in the test's task.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use serde_json::value::RawValue;
use tessera_proto::{ClientIdentity, EngineConfig, Outbound, RequestOptions, ServerIdentity};
use tessera_runtime::{
    Connection, ConnectionOptions, HandlerResult, NoService, Peer, PeerError, RawResult, Reply,
    ReplyResult, Request, Service,
};
use tessera_types::{JsonObject, JsonRpcMessage, RequestId};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::oneshot;

const BOUND: Duration = Duration::from_secs(10);

/// A client connection whose server the test plays on the returned ends.
fn client() -> (Peer, BufReader<DuplexStream>, DuplexStream) {
    let (to_server, from_client) = tokio::io::duplex(64 * 1024);
    let (to_client, from_server) = tokio::io::duplex(64 * 1024);
    let config = EngineConfig::client(ClientIdentity::default());
    let (peer, _task) = tessera_runtime::spawn(
        config,
        from_server,
        to_server,
        NoService,
        ConnectionOptions::default(),
    );
    (peer, BufReader::new(from_client), to_client)
}

/// The id of the next request line the client wrote.
async fn next_request(lines: &mut BufReader<DuplexStream>) -> serde_json::Value {
    let mut line = String::new();
    tokio::time::timeout(BOUND, lines.read_line(&mut line))
        .await
        .expect("a request in time")
        .expect("reads");
    serde_json::from_str(&line).expect("a JSON request")
}

#[tokio::test]
async fn a_raw_request_gets_the_result_as_written_and_errors_as_errors() {
    let (peer, mut lines, mut out) = client();
    let p = peer.clone();
    let call = tokio::spawn(async move {
        p.request_raw("tools/call", None, RequestOptions::default())
            .await
    });
    let req = next_request(&mut lines).await;
    assert_eq!(req["method"], "tools/call");
    let text = r#"{"z" : [1, 2],  "a":{"b":"\u00e9"}}"#;
    let answer = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{text}}}"#, req["id"]);
    out.write_all(format!("{answer}\n").as_bytes())
        .await
        .unwrap();
    let got = tokio::time::timeout(BOUND, call)
        .await
        .expect("in time")
        .unwrap()
        .expect("a result");
    assert_eq!(got.get(), text);

    // An error answer is the peer's error.
    let p = peer.clone();
    let call = tokio::spawn(async move {
        p.request_raw("tools/call", None, RequestOptions::default())
            .await
    });
    let req = next_request(&mut lines).await;
    let answer = json!({"jsonrpc":"2.0","id":req["id"],"error":{"code":-32602,"message":"no"}});
    out.write_all(format!("{answer}\n").as_bytes())
        .await
        .unwrap();
    let err = tokio::time::timeout(BOUND, call)
        .await
        .expect("in time")
        .unwrap()
        .expect_err("an error");
    assert_eq!(err.remote().map(|e| e.code), Some(-32602));

    // An ordinary request beside it still gets an object.
    let p = peer.clone();
    let call =
        tokio::spawn(async move { p.request("ping", None, RequestOptions::default()).await });
    let req = next_request(&mut lines).await;
    let answer = json!({"jsonrpc":"2.0","id":req["id"],"result":{"ok":true}});
    out.write_all(format!("{answer}\n").as_bytes())
        .await
        .unwrap();
    let got = tokio::time::timeout(BOUND, call).await.unwrap().unwrap();
    assert_eq!(got.expect("a result")["ok"], true);

    // The connection closing fails a raw request like any other.
    let p = peer.clone();
    let call = tokio::spawn(async move {
        p.request_raw("tools/call", None, RequestOptions::default())
            .await
    });
    next_request(&mut lines).await;
    drop(out);
    let err = tokio::time::timeout(BOUND, call).await.unwrap().unwrap();
    assert!(
        matches!(err, Err(PeerError::Call(_) | PeerError::Closed)),
        "{err:?}"
    );
}

/// Answers `tools/call` with its `text` param as a raw result, and
/// `tools/list` the ordinary way.
struct Passer;

impl Service for Passer {
    fn methods(&self) -> Vec<String> {
        vec!["tools/call".into(), "tools/list".into()]
    }

    async fn handle_request(self: Arc<Self>, _r: Request) -> HandlerResult {
        Ok(JsonObject::new())
    }

    async fn handle(self: Arc<Self>, r: Request) -> ReplyResult {
        if r.method != "tools/call" {
            return self.handle_request(r).await.map(Reply::Object);
        }
        let text = r
            .params
            .as_ref()
            .and_then(|p| p.get("text"))
            .and_then(|t| t.as_str())
            .unwrap_or("{}")
            .to_owned();
        let raw = RawValue::from_string(text).expect("valid JSON");
        Ok(Reply::Raw(RawResult::new(raw).expect("an object")))
    }
}

#[tokio::test]
async fn a_service_reply_is_written_as_it_is() {
    let config =
        EngineConfig::server(ServerIdentity::default()).with_methods(["tools/call", "tools/list"]);
    let mut core = Connection::new(Arc::new(config), Arc::new(Passer));
    core.restore_session(tessera_proto::SessionSnapshot::new(
        tessera_types::ProtocolVersion::V2025_11_25,
    ));
    let text = r#"{"content": [ ], "x":1}"#;
    let mut params = JsonObject::new();
    params.insert("text".into(), text.into());
    core.handle_message(
        JsonRpcMessage::request(RequestId::Number(1), "tools/call", Some(params)),
        Default::default(),
    );
    let t = tokio::time::timeout(BOUND, core.next())
        .await
        .unwrap()
        .expect("the answer");
    assert!(matches!(t.message, Outbound::Raw(_)));
    assert_eq!(
        String::from_utf8(t.message.to_bytes()).unwrap(),
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":{text}}}"#)
    );
    // Another method, the ordinary way.
    core.handle_message(
        JsonRpcMessage::request(RequestId::Number(2), "tools/list", None),
        Default::default(),
    );
    let t = tokio::time::timeout(BOUND, core.next())
        .await
        .unwrap()
        .expect("the answer");
    assert!(matches!(
        t.message,
        Outbound::Single(JsonRpcMessage::Result(_))
    ));
}

#[tokio::test]
async fn a_layer_that_reads_the_result_sees_an_object_and_others_keep_the_text() {
    use tessera_runtime::middleware::{Layered, MiddlewareStack, Next, from_fn};
    async fn mark(r: Request, next: Next) -> tessera_runtime::ReplyResult {
        let mut out = next.run(r).await?.into_object().expect("an object");
        out.insert("seen".into(), true.into());
        Ok(tessera_runtime::Reply::Object(out))
    }
    async fn look(r: Request, next: Next) -> tessera_runtime::ReplyResult {
        next.run(r).await
    }
    let config =
        Arc::new(EngineConfig::server(ServerIdentity::default()).with_methods(["tools/call"]));
    for (stack, raw) in [
        (MiddlewareStack::new(), true),
        (MiddlewareStack::new().layer(from_fn(mark)), false),
        // A layer that does not read the result keeps it as text.
        (MiddlewareStack::new().layer(from_fn(look)), true),
    ] {
        let service = Arc::new(Layered::new(Passer, stack));
        let mut core = Connection::new(config.clone(), service);
        core.restore_session(tessera_proto::SessionSnapshot::new(
            tessera_types::ProtocolVersion::V2025_11_25,
        ));
        let mut params = JsonObject::new();
        params.insert("text".into(), r#"{"a":1}"#.into());
        core.handle_message(
            JsonRpcMessage::request(RequestId::Number(1), "tools/call", Some(params)),
            Default::default(),
        );
        let t = tokio::time::timeout(BOUND, core.next())
            .await
            .unwrap()
            .expect("the answer");
        assert_eq!(matches!(t.message, Outbound::Raw(_)), raw);
    }
}

/// [`Peer::request_tracked`] tells a request that never reached the engine
/// (so was never written, and may be sent again elsewhere) from one that
/// was handed to it and may have run: the first never names its id, the
/// second has.
#[tokio::test]
async fn a_written_request_names_its_id_and_an_unsent_one_never_does() {
    // Written, then the connection ends before the answer: the id was given.
    let (peer, mut lines, out) = client();
    let (assigned, mut id) = oneshot::channel::<RequestId>();
    let p = peer.clone();
    let call = tokio::spawn(async move {
        p.request_tracked(
            "tools/call",
            None,
            RequestOptions::default(),
            None,
            assigned,
            true,
        )
        .await
    });
    let mut line = String::new();
    tokio::time::timeout(BOUND, lines.read_line(&mut line))
        .await
        .expect("the request is written in time")
        .expect("reads");
    assert!(line.contains("tools/call"), "{line}");
    drop((lines, out));
    let out = tokio::time::timeout(BOUND, call)
        .await
        .expect("the call ends")
        .expect("joins");
    assert!(out.is_err(), "no answer came");
    assert!(id.try_recv().is_ok(), "the engine took it: it may have run");

    // The connection is gone first: the request never reaches the engine.
    let (peer, _lines, _out) = client();
    peer.close();
    tokio::time::timeout(BOUND, peer.closed())
        .await
        .expect("closes");
    let (assigned, mut id) = oneshot::channel::<RequestId>();
    let out = peer
        .request_tracked(
            "tools/call",
            None,
            RequestOptions::default(),
            None,
            assigned,
            false,
        )
        .await;
    assert!(out.is_err());
    assert!(
        matches!(id.try_recv(), Err(oneshot::error::TryRecvError::Closed)),
        "never taken: nothing was written"
    );
}
