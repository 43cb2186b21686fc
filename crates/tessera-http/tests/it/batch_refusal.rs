//! Issue 27: a batch over `--max-batch` is refused as soon as its element
//! past the limit arrives, before the rest of its body is read; the rest is
//! read and dropped within the body limits, so the connection serves the
//! next request, and a body that goes on past them is cut off.

use crate::common;
use crate::connections::read_response;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::{Request, StatusCode};
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tower::ServiceExt;

use common::{Flags, TestServer, fixture, within};

/// One batch element (a `tools/list` request), with its comma.
const ELEMENT: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"},"#;

/// Says when it is dropped.
struct Dropped(Option<oneshot::Sender<()>>);

impl Drop for Dropped {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

/// A request body fed by a stream.
type Streamed =
    StreamBody<futures::stream::BoxStream<'static, Result<Frame<Bytes>, std::io::Error>>>;

/// A request body that yields `first`, then nothing until `release` fires,
/// then elements for ever. Every byte it yields is added to `pulled`; the
/// returned receiver fires when the body is dropped.
fn endless_batch(
    first: String,
    release: oneshot::Receiver<()>,
    pulled: Arc<AtomicUsize>,
) -> (Streamed, oneshot::Receiver<()>) {
    let (dropped_tx, dropped_rx) = oneshot::channel();
    let guard = Dropped(Some(dropped_tx));
    let chunk = Bytes::from(ELEMENT.repeat(16));
    let head = futures::stream::once(async move { Bytes::from(first) });
    let rest = futures::stream::once(release).flat_map(move |_| {
        let chunk = chunk.clone();
        futures::stream::repeat_with(move || chunk.clone())
    });
    let frames = head.chain(rest).map(move |b| {
        let _keep = &guard;
        pulled.fetch_add(b.len(), Ordering::SeqCst);
        Ok(Frame::data(b))
    });
    (StreamBody::new(frames.boxed()), dropped_rx)
}

fn batch_post<B>(body: B) -> Request<B> {
    Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-session-id", "no-such-session")
        .header("mcp-protocol-version", "2025-03-26")
        .body(body)
        .unwrap()
}

/// The batch is refused with the first part of its body in, while the rest
/// has not been sent; then the rest is read only up to the body limit and
/// the body dropped.
#[tokio::test(start_paused = true)]
async fn an_over_limit_batch_is_refused_before_its_body_ends() {
    const MAX_BODY: usize = 64 * 1024;
    let app = tessera_http::McpHttp::builder(fixture(Arc::new(Flags::default())))
        .max_batch(3)
        .max_body_bytes(MAX_BODY)
        .build();
    let (release_tx, release_rx) = oneshot::channel();
    let pulled = Arc::new(AtomicUsize::new(0));
    let first = format!("[{}", ELEMENT.repeat(4));
    let first_len = first.len();
    let (body, dropped) = endless_batch(first, release_rx, pulled.clone());

    // Nothing past the first part is sent until the answer is in: the old
    // server, which read the whole body first, never answers here (until a
    // body timeout, 30 s, past this bound).
    let r = tokio::time::timeout(
        Duration::from_secs(5),
        app.clone().oneshot(batch_post(body)),
    )
    .await
    .expect("answered while the body was still arriving")
    .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let body: Value =
        serde_json::from_slice(&r.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(body["error"]["code"], -32600);
    assert_eq!(body["id"], Value::Null);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("a batch of at least 4 messages exceeds the limit of 3")
            && message.contains("--max-batch"),
        "{message}"
    );
    assert_eq!(app.stats().refused_by(tessera_http::limit::MAX_BATCH), 1);
    assert_eq!(pulled.load(Ordering::SeqCst), first_len, "no more was read");

    // The body goes on for ever: it is read up to the body limit, then dropped.
    release_tx.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), dropped)
        .await
        .expect("the endless body was dropped")
        .unwrap();
    let total = pulled.load(Ordering::SeqCst);
    assert!(
        total <= MAX_BODY + ELEMENT.len() * 16,
        "read {total} bytes of an endless body (limit {MAX_BODY})"
    );
}

/// A batch at the limit, cut into small chunks, is read and answered as before.
#[tokio::test(start_paused = true)]
async fn a_batch_at_the_limit_streamed_in_pieces_is_read_whole() {
    let app = tessera_http::McpHttp::builder(fixture(Arc::new(Flags::default())))
        .max_batch(3)
        .build();
    let text = format!("[{}]", ELEMENT.repeat(3).trim_end_matches(','));
    let pieces: Vec<Result<Frame<Bytes>, std::io::Error>> = text
        .as_bytes()
        .chunks(5)
        .map(|c| Ok(Frame::data(Bytes::copy_from_slice(c))))
        .collect();
    let body = StreamBody::new(futures::stream::iter(pieces));
    let r = app.clone().oneshot(batch_post(body)).await.unwrap();
    // Counted within the limit, so the session is looked up (and missing).
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    assert_eq!(app.stats().refused_by(tessera_http::limit::MAX_BATCH), 0);
}

/// The head of a POST of `len` bytes of JSON.
fn head(server: &TestServer, len: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMcp-Session-Id: no-such-session\r\n\
         Mcp-Protocol-Version: 2025-03-26\r\nContent-Length: {len}\r\n\r\n",
        server.host(),
    )
}

/// Over a socket: the refusal arrives before the client has sent the rest of
/// the body; the rest is read and dropped, and the connection serves the
/// next request.
#[tokio::test]
async fn a_refused_batch_leaves_its_connection_usable() {
    let server = TestServer::start(|b| b.max_batch(3)).await;
    let elements = ELEMENT.repeat(2_000);
    let (mut s, refused, rest) = refused_after_eight(&server, &elements).await;
    assert!(refused.contains("--max-batch"), "{refused}");
    s.write_all(rest.as_bytes()).await.unwrap();

    initialize_on(&mut s, &server).await;
    assert_eq!(
        server
            .mcp
            .stats()
            .refused_by(tessera_http::limit::MAX_BATCH),
        1
    );
}

/// Over a socket: a chunked body that never ends is answered, then read no
/// further than the body limit before the connection is closed.
#[tokio::test]
async fn an_endless_refused_batch_is_cut_off_at_the_body_limit() {
    const MAX_BODY: usize = 64 * 1024;
    let server = TestServer::start(|b| b.max_batch(3).max_body_bytes(MAX_BODY)).await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMcp-Session-Id: no-such-session\r\n\
         Mcp-Protocol-Version: 2025-03-26\r\nTransfer-Encoding: chunked\r\n\r\n",
        server.host(),
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let chunk = |text: &str| format!("{:x}\r\n{text}\r\n", text.len()).into_bytes();
    s.write_all(&chunk(&format!("[{}", ELEMENT.repeat(8))))
        .await
        .unwrap();
    let refused = within(read_response(&mut s)).await;
    assert!(refused.starts_with("HTTP/1.1 400"), "{refused}");

    // Keep sending: the server stops reading at the body limit and closes.
    let (mut rd, mut wr) = s.into_split();
    let more = chunk(&ELEMENT.repeat(64));
    let writer = tokio::spawn(async move {
        let mut sent = 0usize;
        // Far past the limit and any socket buffers: a write fails first.
        while sent < 256 * 1024 * 1024 {
            if wr.write_all(&more).await.is_err() {
                return Some(sent);
            }
            sent += more.len();
        }
        None
    });
    let mut buf = [0u8; 1024];
    let closed = within(async {
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => return true,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(closed);
    let sent = within(writer).await.unwrap();
    assert!(sent.is_some(), "the server kept reading an endless body");
}

/// Over a socket: the rest of a refused body arriving slowly, after its
/// answer, is a request in progress, not a slow request head: the header
/// timeout does not close the connection under it.
#[tokio::test]
async fn a_slowly_drained_body_is_not_taken_for_a_slow_head() {
    let server = TestServer::start(|b| {
        b.max_batch(3)
            .header_read_timeout(Some(Duration::from_millis(200)))
    })
    .await;
    let elements = ELEMENT.repeat(64);
    let (mut s, _, rest) = refused_after_eight(&server, &elements).await;
    // The rest in eight pieces over four header timeouts (the client's
    // pace, not a wait for the server).
    for piece in rest.as_bytes().chunks(rest.len().div_ceil(8)) {
        s.write_all(piece).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    initialize_on(&mut s, &server).await;
    assert_eq!(
        server
            .mcp
            .stats()
            .refused_by(tessera_http::limit::HEADER_READ_TIMEOUT),
        0
    );
}

/// Sends an `initialize` on `s` and checks that it is answered with 200:
/// the connection still serves.
async fn initialize_on(s: &mut TcpStream, server: &TestServer) {
    let next = serde_json::to_vec(&common::initialize(1, common::LEGACY)).unwrap();
    s.write_all(&server.raw_post(&next)).await.unwrap();
    let answered = within(read_response(s)).await;
    assert!(
        answered.starts_with("HTTP/1.1 200"),
        "the same connection: {answered}"
    );
}

/// Posts a batch of `elements` over a socket, sending only its first eight
/// elements, and reads the refusal (400): the socket, the refusal, and the
/// rest of the body, not yet sent.
async fn refused_after_eight(server: &TestServer, elements: &str) -> (TcpStream, String, String) {
    let body = format!("[{}]", elements.trim_end_matches(','));
    let (first, rest) = body.split_at(ELEMENT.len() * 8);
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    s.write_all(head(server, body.len()).as_bytes())
        .await
        .unwrap();
    s.write_all(first.as_bytes()).await.unwrap();
    let refused = within(read_response(&mut s)).await;
    assert!(refused.starts_with("HTTP/1.1 400"), "{refused}");
    (s, refused, rest.to_owned())
}
