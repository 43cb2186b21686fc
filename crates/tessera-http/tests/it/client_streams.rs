//! The HTTP client's long-lived streams against scripted servers:
//!
//! - Streamable HTTP: the standalone GET stream is reopened (with
//!   `Last-Event-ID`) when the server ends it, and a `404` there (the server
//!   forgot the session) ends the connection; the client's next request
//!   connects again (a new session) and the stream opens in it;
//! - 2024-11-05 HTTP+SSE: when the server closes the event stream, the
//!   session is over and the connection ends; the client's next request
//!   opens a new one (its own handshake, a new session), with the client's
//!   backoff and a bounded number of attempts.
//!
//! Every wait is for a recorded event, with a deadline.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use futures::channel::mpsc::{UnboundedSender, unbounded};
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tessera_client::{Client, ClientEvent, ReconnectPolicy};
use tessera_http::{HttpClientTransport, LegacySseClientTransport};
use tessera_types::ProtocolVersion;

type Body = BoxBody<Bytes, Infallible>;

const DEADLINE: Duration = Duration::from_secs(20);

/// A request as the script sees it.
struct Req {
    method: http::Method,
    path_and_query: String,
    session: Option<String>,
    last_event_id: Option<String>,
    body: Value,
}

/// What the scripted server records and holds.
#[derive(Default)]
struct State {
    log: Vec<String>,
    /// Open event streams by key (session id).
    streams: HashMap<String, UnboundedSender<Bytes>>,
    next_session: u32,
    /// GETs of the event stream (HTTP+SSE) still to refuse with 503.
    refuse_sse: u32,
}

struct Mock {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    changed: Arc<tokio::sync::Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Mock {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Mock {
    fn log(&self) -> Vec<String> {
        self.state.lock().unwrap().log.clone()
    }

    /// Waits (bounded) until the log has an entry equal to `entry`.
    async fn wait_for(&self, entry: &str) {
        let until = Instant::now() + DEADLINE;
        loop {
            let notified = self.changed.notified();
            if self.log().iter().any(|e| e == entry) {
                return;
            }
            let left = until.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "no {entry:?} within {DEADLINE:?}; log: {:#?}",
                self.log()
            );
            let _ = tokio::time::timeout(left, notified).await;
        }
    }

    /// Ends the event stream of `key`.
    fn close_stream(&self, key: &str) {
        self.state.lock().unwrap().streams.remove(key);
    }
}

fn sse_frame(data: &Value, id: Option<&str>) -> Bytes {
    let mut s = String::new();
    if let Some(id) = id {
        s.push_str(&format!("id: {id}\n"));
    }
    s.push_str(&format!("data: {data}\n\n"));
    Bytes::from(s)
}

/// An event stream starting with `first`, and its sender (dropping it ends
/// the stream).
fn stream(first: Bytes) -> (Response<Body>, UnboundedSender<Bytes>) {
    let (tx, rx) = unbounded::<Bytes>();
    let _ = tx.unbounded_send(first);
    let body = StreamBody::new(rx.map(|b| Ok::<_, Infallible>(Frame::data(b))));
    let resp = Response::builder()
        .header("content-type", "text/event-stream")
        .body(BodyExt::boxed(body))
        .unwrap();
    (resp, tx)
}

/// An event stream kept open under `key` until [`Mock::close_stream`].
fn open_stream(state: &mut State, key: String, first: Bytes) -> Response<Body> {
    let (resp, tx) = stream(first);
    state.streams.insert(key, tx);
    resp
}

fn json_response(v: Value, session: Option<&str>) -> Response<Body> {
    let mut b = Response::builder().header("content-type", "application/json");
    if let Some(s) = session {
        b = b.header("mcp-session-id", s);
    }
    b.body(Full::new(Bytes::from(v.to_string())).boxed())
        .unwrap()
}

fn status(code: StatusCode) -> Response<Body> {
    Response::builder()
        .status(code)
        .body(Full::new(Bytes::new()).boxed())
        .unwrap()
}

fn init_result(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "scripted", "version": "1"}
    }})
}

fn tools_result(id: &Value, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
        {"name": name, "inputSchema": {"type": "object"}}
    ]}})
}

type Script = fn(&mut State, Req) -> Response<Body>;

async fn start(script: Script) -> Mock {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = Arc::new(Mutex::new(State::default()));
    let changed = Arc::new(tokio::sync::Notify::new());
    let (st, ch) = (state.clone(), changed.clone());
    let task = tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (st, ch) = (st.clone(), ch.clone());
            let svc = hyper::service::service_fn(move |r: Request<Incoming>| {
                let (st, ch) = (st.clone(), ch.clone());
                async move {
                    let (parts, body) = r.into_parts();
                    let bytes = body
                        .collect()
                        .await
                        .map(|b| b.to_bytes())
                        .unwrap_or_default();
                    let header = |n: &str| {
                        parts
                            .headers
                            .get(n)
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned)
                    };
                    let req = Req {
                        method: parts.method.clone(),
                        path_and_query: parts
                            .uri
                            .path_and_query()
                            .map(|p| p.to_string())
                            .unwrap_or_default(),
                        session: header("mcp-session-id"),
                        last_event_id: header("last-event-id"),
                        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
                    };
                    let resp = script(&mut st.lock().unwrap(), req);
                    ch.notify_waiters();
                    Ok::<_, Infallible>(resp)
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), svc)
                    .await;
            });
        }
    });
    Mock {
        addr,
        state,
        changed,
        task,
    }
}

/// Streamable HTTP, stateful: sessions `s1`, `s2`, …. Session `s1` forgets
/// itself once its GET stream was reopened after an event: that GET, and
/// everything after it with `s1`, gets 404.
fn streamable_script(st: &mut State, r: Req) -> Response<Body> {
    let method = r.body["method"].as_str().unwrap_or("").to_owned();
    let session = r.session.clone().unwrap_or_else(|| "-".into());
    let forgotten = st.log.iter().any(|e| e == "GET s1 last=ev-1");
    match r.method.as_str() {
        "POST" => {
            st.log.push(format!("POST {method} {session}"));
            if session == "s1" && forgotten {
                return status(StatusCode::NOT_FOUND);
            }
            match method.as_str() {
                "initialize" => {
                    st.next_session += 1;
                    let sid = format!("s{}", st.next_session);
                    json_response(init_result(&r.body["id"]), Some(&sid))
                }
                "tools/list" => json_response(tools_result(&r.body["id"], &session), None),
                _ if r.body.get("id").is_none() => status(StatusCode::ACCEPTED),
                _ => status(StatusCode::BAD_REQUEST),
            }
        }
        "GET" => {
            let last = r
                .last_event_id
                .as_deref()
                .map(|l| format!(" last={l}"))
                .unwrap_or_default();
            st.log.push(format!("GET {session}{last}"));
            let forgotten = st.log.iter().any(|e| e == "GET s1 last=ev-1");
            if session == "s1" && forgotten {
                return status(StatusCode::NOT_FOUND);
            }
            if session == "s1" && last.is_empty() {
                // One event (and a short retry), then the stream ends.
                let note = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
                let (resp, tx) = stream(Bytes::from("retry: 20\n\n"));
                let _ = tx.unbounded_send(sse_frame(&note, Some("ev-1")));
                return resp;
            }
            open_stream(st, session, Bytes::from(": open\n\n"))
        }
        "DELETE" => {
            st.log.push(format!("DELETE {session}"));
            status(StatusCode::OK)
        }
        _ => status(StatusCode::METHOD_NOT_ALLOWED),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_stream_is_reopened_and_a_forgotten_session_renewed() {
    let mock = start(streamable_script).await;
    let url = format!("http://{}/mcp", mock.addr);
    let client = Client::builder("streams-test", "1")
        .protocol_version(ProtocolVersion::V2025_11_25)
        .connect_transports(move || HttpClientTransport::new(&url).map_err(std::io::Error::other))
        .await
        .unwrap();

    // The first stream ends after one event; the client reopens it with
    // Last-Event-ID and gets 404: the session is lost, and the transport
    // ends without writing anything of its own.
    mock.wait_for("GET s1 last=ev-1").await;

    // The next request finds the connection ended by the lost session: the
    // client connects again (a new initialize, session s2, its GET stream)
    // and the request goes to the new session.
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools[0].name, "s2");
    mock.wait_for("GET s2").await;
    let log = mock.log();
    let pos = |e: &str| log.iter().position(|x| x == e).unwrap_or(usize::MAX);
    assert!(pos("GET s1") < pos("GET s1 last=ev-1"), "{log:#?}");
    let last_init = log.iter().rposition(|x| x == "POST initialize -");
    assert!(Some(pos("GET s1 last=ev-1")) < last_init, "{log:#?}");
    assert_eq!(
        log.iter().filter(|e| *e == "POST initialize -").count(),
        2,
        "{log:#?}"
    );
    assert!(
        pos("POST notifications/initialized s2") < pos("GET s2"),
        "{log:#?}"
    );
    assert!(
        !log.iter().any(|e| e.starts_with("DELETE s1")),
        "no DELETE for a session the server forgot: {log:#?}"
    );
    client.close().await;
    mock.wait_for("DELETE s2").await;
}

/// HTTP+SSE: each `GET /sse` is a new session `k` whose endpoint is
/// `/message?k=N`; answers go on that session's stream. While `refuse_sse`
/// is positive, `GET /sse` gets 503.
fn legacy_script(st: &mut State, r: Req) -> Response<Body> {
    let method = r.body["method"].as_str().unwrap_or("").to_owned();
    match (r.method.as_str(), r.path_and_query.as_str()) {
        ("GET", "/sse") => {
            if st.refuse_sse > 0 {
                st.refuse_sse -= 1;
                st.log.push("GET /sse refused".into());
                return status(StatusCode::SERVICE_UNAVAILABLE);
            }
            st.next_session += 1;
            let k = format!("k{}", st.next_session);
            st.log.push(format!("GET /sse {k}"));
            let first = format!("event: endpoint\ndata: /message?k={k}\n\n");
            open_stream(st, k, Bytes::from(first))
        }
        ("POST", pq) if pq.starts_with("/message?k=") => {
            let k = pq.trim_start_matches("/message?k=").to_owned();
            st.log.push(format!("POST {method} {k}"));
            let answer = match method.as_str() {
                "initialize" => Some(init_result(&r.body["id"])),
                "tools/list" => Some(tools_result(&r.body["id"], &k)),
                _ => None,
            };
            let Some(tx) = st.streams.get(&k) else {
                return status(StatusCode::NOT_FOUND);
            };
            if let Some(a) = answer {
                let _ = tx.unbounded_send(sse_frame(&a, None));
            }
            status(StatusCode::ACCEPTED)
        }
        _ => status(StatusCode::NOT_FOUND),
    }
}

/// A client over HTTP+SSE that makes a new transport for each connection,
/// trying `attempts` times with short waits.
async fn legacy_client(mock: &Mock, attempts: u32) -> Client {
    let url = format!("http://{}/sse", mock.addr);
    Client::builder("streams-test", "1")
        .protocol_version(ProtocolVersion::V2024_11_05)
        .reconnect_policy(ReconnectPolicy {
            max_attempts: attempts,
            initial_delay: Duration::from_millis(20),
            ..ReconnectPolicy::default()
        })
        .connect_transports(move || {
            LegacySseClientTransport::new(&url).map_err(std::io::Error::other)
        })
        .await
        .unwrap()
}

/// Waits until the client's connection ended.
async fn disconnected(events: &mut tessera_client::EventStream) {
    tokio::time::timeout(DEADLINE, async {
        loop {
            match events.recv().await {
                Some(ClientEvent::Disconnected) => return,
                Some(_) => continue,
                None => panic!("the client is gone"),
            }
        }
    })
    .await
    .expect("the connection ends");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_a_closed_event_stream_ends_the_session_and_the_client_opens_a_new_one() {
    let mock = start(legacy_script).await;
    let client = legacy_client(&mock, 5).await;
    let mut events = client.events();
    assert_eq!(client.list_tools().await.unwrap()[0].name, "k1");

    // The server drops the stream: the session is over, and the transport
    // ends without opening anything by itself.
    mock.state.lock().unwrap().refuse_sse = 1;
    mock.close_stream("k1");
    disconnected(&mut events).await;
    assert!(
        !mock
            .log()
            .iter()
            .any(|e| e.starts_with("GET /sse") && e != "GET /sse k1"),
        "{:#?}",
        mock.log()
    );

    // The next request makes the client connect again (the first try is
    // refused), with its own handshake in session k2.
    assert_eq!(client.list_tools().await.unwrap()[0].name, "k2");
    let log = mock.log();
    let pos = |e: &str| log.iter().position(|x| x == e).unwrap_or(usize::MAX);
    assert!(pos("GET /sse refused") < pos("GET /sse k2"), "{log:#?}");
    assert!(pos("POST initialize k2") < pos("POST notifications/initialized k2"));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_reconnection_is_bounded() {
    let mock = start(legacy_script).await;
    let client = legacy_client(&mock, 3).await;
    let mut events = client.events();
    mock.state.lock().unwrap().refuse_sse = u32::MAX;
    mock.close_stream("k1");
    disconnected(&mut events).await;
    // The next request tries the client's reconnection policy, and fails
    // once it gives up, saying why.
    let err = tokio::time::timeout(DEADLINE, client.list_tools())
        .await
        .expect("the client gives up in bounded time")
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("could not reconnect after 3 attempt(s)"),
        "{err}"
    );
    let refused = mock
        .log()
        .iter()
        .filter(|e| *e == "GET /sse refused")
        .count();
    assert_eq!(refused, 3, "{:#?}", mock.log());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_requests_in_flight_fail_at_once_when_the_stream_drops() {
    let mock = start(legacy_script).await;
    let client = Arc::new(legacy_client(&mock, 5).await);
    // The mock never answers tools/call: the call waits on the stream.
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("hang", json!({})).await });
    mock.wait_for("POST tools/call k1").await;
    let dropped = Instant::now();
    mock.close_stream("k1");
    let err = tokio::time::timeout(DEADLINE, call)
        .await
        .expect("the call does not hang")
        .unwrap()
        .unwrap_err();
    assert!(err.to_string().contains("session is over"), "{err}");
    // Failed as soon as the stream ended, not after a request timeout.
    assert!(
        dropped.elapsed() < Duration::from_secs(5),
        "{:?}",
        dropped.elapsed()
    );
    // The client reconnected; the next request goes to the new session.
    assert_eq!(client.list_tools().await.unwrap()[0].name, "k2");
}
