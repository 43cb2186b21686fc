//! The 2024-11-05 HTTP+SSE client: `GET` the SSE URL, wait for the
//! `endpoint` event, `POST` every message to that URL (resolved against the
//! SSE URL, same origin only), and read every answer from the event stream.
//!
//! When the server closes the event stream, the session is over (in this
//! transport the stream is the session): the requests still waiting for an
//! answer fail, messages sent afterwards are refused unsent (marked
//! [`session_lost`](super::failure::TransportFailure::session_lost)), and
//! the connection ends as lost
//! ([`SessionLost`](tessera_runtime::SessionLost)). The transport never
//! opens a session by itself: a client with a connector
//! ([`connect_transports`](tessera_client::ClientBuilder::connect_transports))
//! connects again, with its own handshake, and restores what the session
//! had.
//!
//! [`LegacySseClientTransport`] speaks it directly; [`HttpClientTransport`]
//! falls back to it when a server refuses Streamable HTTP
//! (see [`super::detect`]).
//!
//! [`HttpClientTransport`]: super::HttpClientTransport

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Method, Uri};
use http_body_util::{BodyExt, Limited};
use serde_json::Value;
use tessera_proto::Transmit;
use tessera_runtime::{Incoming, Transport};
use tessera_types::RequestId;
use tokio::sync::{mpsc, watch};
use tokio::task::{AbortHandle, JoinSet};

use super::envelope::{Envelope, object_view};
use super::shared::{Outgoing, Shared, lock};
use super::streamable::handle_body;
use crate::sse::{SseDecoder, SseFrame};

/// How long the server may take to name its message endpoint.
pub(crate) const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where messages go, as the reader task knows it.
#[derive(Debug, Clone)]
enum Link {
    /// POST to this endpoint, of the event stream of this generation.
    Ready(Uri, u64),
    /// The event stream ended: the session is over.
    Gone,
}

/// An open HTTP+SSE connection: the event stream is being read (and
/// reopened), and messages go to the endpoint it named.
pub(crate) struct LegacyConn {
    link: watch::Receiver<Link>,
    /// Requests sent and not answered yet (failed if the stream ends).
    pending: Arc<Mutex<Pending>>,
    reader: AbortHandle,
}

/// The requests waiting for an answer on the current event stream.
#[derive(Default)]
struct Pending {
    /// Which event stream is current (incremented when one ends).
    generation: u64,
    ids: HashSet<RequestId>,
}

/// Why a request failed when the stream it waited on ended.
const STREAM_CLOSED: &str =
    "the server closed its event stream before answering: the HTTP+SSE session is over";

/// Why a message was not sent.
const SESSION_OVER: &str =
    "the server closed its event stream: the HTTP+SSE session is over; the request was not sent";

impl Drop for LegacyConn {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// Resolves the `endpoint` event's URI against the SSE URL; another origin
/// is refused (the messages would go to a server the user did not name).
pub(crate) fn resolve_endpoint(sse: &Uri, data: &str) -> Result<Uri, String> {
    let base = url::Url::parse(&sse.to_string()).map_err(|e| format!("bad SSE URL: {e}"))?;
    let joined = base
        .join(data.trim())
        .map_err(|e| format!("bad endpoint {data:?}: {e}"))?;
    if joined.origin() != base.origin() {
        return Err(format!(
            "the endpoint {joined} is on another origin than {base}"
        ));
    }
    joined
        .as_str()
        .parse()
        .map_err(|_| format!("bad endpoint {joined}"))
}

/// An event stream that has named its endpoint: the body, the decoder's
/// state and the events that came after the endpoint event.
struct Stream {
    body: super::body::AnswerBody,
    decoder: SseDecoder,
    early: Vec<SseFrame>,
    endpoint: Uri,
}

/// GETs the event stream at the user's URL and waits (at most `wait`) for the
/// `endpoint` event.
async fn connect_stream(shared: &Arc<Shared>, wait: Duration) -> Result<Stream, String> {
    let deadline = tokio::time::Instant::now() + wait;
    let build = || shared.request_to(&shared.url, Method::GET, None, "text/event-stream", None);
    let r = tokio::time::timeout_at(deadline, shared.exchange(build))
        .await
        .map_err(|_| "the SSE request timed out".to_owned())??;
    let is_sse = r
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !r.status().is_success() || !is_sse {
        return Err(format!(
            "GET {} answered HTTP {} without an event stream",
            shared.url,
            r.status()
        ));
    }
    let mut body = r.into_body();
    let mut decoder = SseDecoder::with_limit(shared.max_message);
    let mut early = Vec::new();
    let mut endpoint = None;
    while endpoint.is_none() {
        let frame = tokio::time::timeout_at(deadline, body.frame())
            .await
            .map_err(|_| "no endpoint event from the server in time".to_owned())?
            .ok_or("the event stream ended before the endpoint event")?
            .map_err(|e| format!("reading the event stream failed: {e}"))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let events = decoder.feed(&data).map_err(|e| {
            format!("{e} (the client's limit: HttpClientBuilder::max_message_bytes)")
        })?;
        for ev in events {
            if endpoint.is_some() {
                early.push(ev);
            } else if ev.event.as_deref() == Some("endpoint") {
                endpoint = Some(resolve_endpoint(&shared.url, &ev.data)?);
            }
        }
    }
    let endpoint = endpoint.ok_or("no endpoint event")?;
    Ok(Stream {
        body,
        decoder,
        early,
        endpoint,
    })
}

/// Opens the event stream at the user's URL and waits (at most `wait`) for
/// the `endpoint` event; the stream is then read (and reopened when the
/// server closes it) in the background.
pub(crate) async fn open(shared: &Arc<Shared>, wait: Duration) -> Result<LegacyConn, String> {
    let stream = connect_stream(shared, wait).await?;
    let (tx, link) = watch::channel(Link::Ready(stream.endpoint.clone(), 0));
    let pending = Arc::new(Mutex::new(Pending::default()));
    let reader = tokio::spawn(run(shared.clone(), stream, pending.clone(), tx));
    Ok(LegacyConn {
        link,
        pending,
        reader: reader.abort_handle(),
    })
}

/// Reads the event stream; when the server closes it, fails the unanswered
/// requests and ends the connection as lost (see the module documentation).
async fn run(
    shared: Arc<Shared>,
    stream: Stream,
    pending: Arc<Mutex<Pending>>,
    link: watch::Sender<Link>,
) {
    let endpoint = stream.endpoint.clone();
    read(&shared, stream, &pending).await;
    link.send_replace(Link::Gone);
    // Every request waiting on this stream fails now; one being posted
    // right now sees the new generation and is refused unsent.
    let unanswered: Vec<RequestId> = {
        let mut p = lock(&pending);
        p.generation += 1;
        p.ids.drain().collect()
    };
    for id in unanswered {
        shared.fail(&id, STREAM_CLOSED.into()).await;
    }
    tracing::info!(
        "the server closed the HTTP+SSE event stream of {endpoint}; the session is over"
    );
    if !shared.lost.send_replace(true) {
        tracing::debug!("the HTTP+SSE connection ends");
    }
}

/// Reads the event stream to its end, handing every message to the engine.
async fn read(shared: &Shared, stream: Stream, pending: &Mutex<Pending>) {
    let Stream {
        mut body,
        mut decoder,
        early,
        ..
    } = stream;
    for ev in early {
        take(shared, pending, ev).await;
    }
    while let Some(Ok(frame)) = body.frame().await {
        let Ok(data) = frame.into_data() else {
            continue;
        };
        match decoder.feed(&data) {
            Ok(events) => {
                for ev in events {
                    take(shared, pending, ev).await;
                }
            }
            Err(e) => {
                // The stream ends here, as when the server closes it.
                tracing::warn!(
                    "{e} (the client's limit: HttpClientBuilder::max_message_bytes): \
                     the HTTP+SSE event stream is given up"
                );
                return;
            }
        }
    }
}

async fn take(shared: &Shared, pending: &Mutex<Pending>, ev: SseFrame) {
    if !matches!(ev.event.as_deref(), None | Some("message")) || ev.data.is_empty() {
        return;
    }
    if let Ok(v) = serde_json::from_str::<Value>(&ev.data) {
        if let Some(id) = object_view::<Envelope>(&v).answers() {
            lock(pending).ids.remove(&id);
        }
    }
    shared.deliver(ev.data.as_bytes()).await;
}

impl LegacyConn {
    /// POSTs one message to the endpoint. The answer comes on the event
    /// stream; an HTTP error answers the request here.
    pub(crate) fn post(
        &self,
        shared: Arc<Shared>,
        out: Outgoing,
    ) -> impl Future<Output = ()> + Send + 'static {
        let link = self.link.clone();
        let pending = self.pending.clone();
        async move {
            let _in_flight = shared.post_started();
            let Some((endpoint, generation)) = endpoint(&link) else {
                if let Some(id) = &out.request_id {
                    shared.fail_lost(id, SESSION_OVER.into()).await;
                }
                return;
            };
            if let Some(id) = &out.request_id {
                let current = {
                    let mut p = lock(&pending);
                    let current = p.generation == generation;
                    if current {
                        p.ids.insert(id.clone());
                    }
                    current
                };
                if !current {
                    // The stream this endpoint belongs to has just ended.
                    shared.fail_lost(id, SESSION_OVER.into()).await;
                    return;
                }
            }
            let build = || {
                shared.request_to(
                    &endpoint,
                    Method::POST,
                    Some(out.body.clone()),
                    "application/json, text/event-stream",
                    None,
                )
            };
            let result = shared.exchange(build).await;
            let forget = || {
                if let Some(id) = &out.request_id {
                    lock(&pending).ids.remove(id);
                }
            };
            match result {
                Err(e) => {
                    forget();
                    if let Some(id) = &out.request_id {
                        shared.fail(id, e).await;
                    }
                }
                Ok(r) if r.status().is_success() => {
                    let _ = Limited::new(r.into_body(), shared.max_message)
                        .collect()
                        .await;
                }
                // The server does not know the session: not served.
                Ok(r) if r.status() == http::StatusCode::NOT_FOUND => {
                    forget();
                    let _ = Limited::new(r.into_body(), shared.max_message)
                        .collect()
                        .await;
                    if let Some(id) = &out.request_id {
                        let why = format!("POST {endpoint} answered HTTP 404: {SESSION_OVER}");
                        shared.fail_lost(id, why).await;
                    }
                    shared.lost.send_replace(true);
                }
                Ok(r) => {
                    forget();
                    let status = r.status();
                    let body = Limited::new(r.into_body(), shared.max_message)
                        .collect()
                        .await
                        .map(|b| b.to_bytes())
                        .unwrap_or_default();
                    handle_body(&shared, &out, status, &body).await;
                }
            }
        }
    }
}

/// The endpoint to POST to and its stream's generation, while the stream
/// is open.
fn endpoint(link: &watch::Receiver<Link>) -> Option<(Uri, u64)> {
    match &*link.borrow() {
        Link::Ready(u, g) => Some((u.clone(), *g)),
        Link::Gone => None,
    }
}

/// A 2024-11-05 HTTP+SSE connection, as a runtime [`Transport`]. The event
/// stream is opened when the first message goes out.
pub struct LegacySseClientTransport {
    shared: Arc<Shared>,
    inbound: mpsc::Receiver<Incoming>,
    conn: Option<LegacyConn>,
    tasks: JoinSet<()>,
}

impl std::fmt::Debug for LegacySseClientTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacySseClientTransport")
            .field("url", &self.shared.url)
            .field("endpoint", &self.endpoint())
            .finish_non_exhaustive()
    }
}

impl LegacySseClientTransport {
    pub(crate) fn from_parts(shared: Arc<Shared>, inbound: mpsc::Receiver<Incoming>) -> Self {
        LegacySseClientTransport {
            shared,
            inbound,
            conn: None,
            tasks: JoinSet::new(),
        }
    }

    /// A transport for the SSE URL `url` (for example
    /// `http://127.0.0.1:8000/sse`); see [`super::HttpClientBuilder`] for
    /// headers, TLS roots and auth.
    pub fn new(url: &str) -> Result<Self, super::HttpClientError> {
        super::HttpClientTransport::builder(url).build_legacy()
    }

    /// The URL messages are posted to, once the server named it.
    pub fn endpoint(&self) -> Option<String> {
        self.conn.as_ref().and_then(|c| match &*c.link.borrow() {
            Link::Ready(u, _) => Some(u.to_string()),
            _ => None,
        })
    }
}

/// Sends every message through `conn`, opening it first if need be.
pub(crate) async fn send_all(
    shared: &Arc<Shared>,
    conn: &mut Option<LegacyConn>,
    tasks: &mut JoinSet<()>,
    out: &mut Vec<Transmit>,
) {
    for t in out.drain(..) {
        let o = Outgoing::describe(&t, shared);
        if conn.is_none() {
            match open(shared, ENDPOINT_TIMEOUT).await {
                Ok(c) => *conn = Some(c),
                Err(e) => {
                    if let Some(id) = &o.request_id {
                        shared.fail(id, e).await;
                    }
                    continue;
                }
            }
        }
        if let Some(c) = conn.as_ref() {
            // Requests in the background (their answers come on the stream);
            // notifications and responses in order (their POSTs are answered
            // at once).
            if o.request_id.is_some() {
                tasks.spawn(c.post(shared.clone(), o));
            } else {
                c.post(shared.clone(), o).await;
            }
        }
    }
}

impl Transport for LegacySseClientTransport {
    /// The next message from the server; the end
    /// ([`SessionLost`](tessera_runtime::SessionLost)) once the event stream
    /// closed and every POST on its way has its outcome read.
    async fn recv(&mut self) -> std::io::Result<Option<Incoming>> {
        self.shared.next_incoming(&mut self.inbound).await
    }

    async fn send(&mut self, out: &mut Vec<Transmit>) -> std::io::Result<()> {
        super::shared::reap(&mut self.tasks);
        send_all(&self.shared, &mut self.conn, &mut self.tasks, out).await;
        Ok(())
    }

    async fn close(&mut self) {
        self.tasks.abort_all();
        self.conn = None;
    }
}
