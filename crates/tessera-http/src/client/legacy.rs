//! The 2024-11-05 HTTP+SSE client: `GET` the SSE URL, wait for the
//! `endpoint` event, `POST` every message to that URL (resolved against the
//! SSE URL, same origin only), and read every answer from the event stream.
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
use http_body_util::BodyExt;
use serde_json::Value;
use tessera_proto::Transmit;
use tessera_runtime::{Incoming, Transport};
use tessera_types::RequestId;
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

use super::shared::{Outgoing, Shared, lock};
use super::streamable::handle_body;
use crate::sse::{SseDecoder, SseFrame};

/// How long the server may take to name its message endpoint.
pub(crate) const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(10);

/// An open HTTP+SSE connection: the event stream is being read, and
/// messages go to `endpoint`.
pub(crate) struct LegacyConn {
    endpoint: Uri,
    /// Requests sent and not answered yet (failed if the stream ends).
    pending: Arc<Mutex<HashSet<RequestId>>>,
    reader: AbortHandle,
}

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

/// Opens the event stream at the user's URL and waits (at most `wait`) for
/// the `endpoint` event; the stream is then read in the background.
pub(crate) async fn open(shared: &Arc<Shared>, wait: Duration) -> Result<LegacyConn, String> {
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
    let mut decoder = SseDecoder::new();
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
        for ev in decoder.feed(&data) {
            if endpoint.is_some() {
                early.push(ev);
            } else if ev.event.as_deref() == Some("endpoint") {
                endpoint = Some(resolve_endpoint(&shared.url, &ev.data)?);
            }
        }
    }
    let endpoint = endpoint.ok_or("no endpoint event")?;
    let pending = Arc::new(Mutex::new(HashSet::new()));
    let reader = tokio::spawn(read(shared.clone(), body, decoder, early, pending.clone()));
    Ok(LegacyConn {
        endpoint,
        pending,
        reader: reader.abort_handle(),
    })
}

/// Reads the event stream to its end; then fails every unanswered request.
async fn read(
    shared: Arc<Shared>,
    mut body: hyper::body::Incoming,
    mut decoder: SseDecoder,
    early: Vec<SseFrame>,
    pending: Arc<Mutex<HashSet<RequestId>>>,
) {
    for ev in early {
        take(&shared, &pending, ev).await;
    }
    while let Some(Ok(frame)) = body.frame().await {
        let Ok(data) = frame.into_data() else {
            continue;
        };
        for ev in decoder.feed(&data) {
            take(&shared, &pending, ev).await;
        }
    }
    let unanswered: Vec<RequestId> = lock(&pending).drain().collect();
    for id in unanswered {
        shared
            .fail(&id, "the server closed its event stream".into())
            .await;
    }
}

async fn take(shared: &Shared, pending: &Mutex<HashSet<RequestId>>, ev: SseFrame) {
    if !matches!(ev.event.as_deref(), None | Some("message")) || ev.data.is_empty() {
        return;
    }
    if let Ok(v) = serde_json::from_str::<Value>(&ev.data) {
        if v.get("method").is_none() {
            if let Some(id) = v
                .get("id")
                .and_then(|i| serde_json::from_value::<RequestId>(i.clone()).ok())
            {
                lock(pending).remove(&id);
            }
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
        if let Some(id) = &out.request_id {
            lock(&self.pending).insert(id.clone());
        }
        let endpoint = self.endpoint.clone();
        let pending = self.pending.clone();
        async move {
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
                    lock(&pending).remove(id);
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
                    let _ = r.into_body().collect().await;
                }
                Ok(r) => {
                    forget();
                    let status = r.status();
                    let body = r
                        .into_body()
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
            .field("endpoint", &self.conn.as_ref().map(|c| &c.endpoint))
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
        self.conn.as_ref().map(|c| c.endpoint.to_string())
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
    async fn recv(&mut self) -> std::io::Result<Option<Incoming>> {
        Ok(self.inbound.recv().await)
    }

    async fn send(&mut self, out: &mut Vec<Transmit>) -> std::io::Result<()> {
        send_all(&self.shared, &mut self.conn, &mut self.tasks, out).await;
        Ok(())
    }

    async fn close(&mut self) {
        self.tasks.abort_all();
        self.conn = None;
    }
}
