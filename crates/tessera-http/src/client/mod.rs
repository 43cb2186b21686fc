//! The HTTP client: a [`Transport`] that speaks Streamable HTTP (every era),
//! and falls back to the 2024-11-05 HTTP+SSE transport for servers that only
//! have that.
//!
//! - **Session** (legacy era): the `Mcp-Session-Id` of the `initialize`
//!   answer is kept and sent on every later request; `DELETE` ends it on
//!   close. A `404` to a request carrying the session means the server
//!   forgot it: the request is refused as not served, and the connection
//!   ends as lost ([`tessera_runtime::SessionLost`]). The transport never
//!   writes an MCP message of its own: the client reconnects through its
//!   connector, negotiates, restores the session's state and sends the
//!   request again ([`streamable`]).
//! - **Headers**: `MCP-Protocol-Version` (the request's own `_meta` version in
//!   2026-07-28, the negotiated one after `initialize`), in 2026-07-28
//!   `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` headers of `x-mcp-header`
//!   tool parameters (learnt from `tools/list`, which leaves out tools with
//!   invalid annotations: [`tool_headers`]), plus any headers of the builder.
//! - **Era detection**: the engine probes with `server/discover`. A server
//!   that refuses it with an HTTP error whose body is not a JSON-RPC error gets
//!   a synthesized JSON-RPC error for that request, so the engine falls back
//!   to `initialize` (the spec's "inspect the 400 body" rule).
//! - **Transport detection** ([`detect`]): a first POST refused with 400, 404
//!   or 405 makes the transport GET the URL; an `endpoint` event there means
//!   HTTP+SSE ([`legacy`]), and everything goes that way from then on.
//! - **Streams**: SSE responses are parsed as they arrive; once a legacy
//!   session exists, a `GET` stream carries the server's own requests and
//!   notifications (a server that has none answers 405, which is fine); it is
//!   reopened when the server ends it, and a `404` there ends the connection
//!   as lost ([`listen`]). An SSE response that ends before its answer is
//!   resumed with `GET` and `Last-Event-ID`, after the server's `retry:`
//!   delay. An HTTP+SSE event stream the server closes ends that session,
//!   and the connection, the same way ([`legacy`]).
//! - **TLS** ([`tls`]): `https://` with rustls (ring), the webpki roots and
//!   any roots given to the builder.
//! - **Connections** ([`pool`]): `http://` requests to the server's own host
//!   and port go on keep-alive HTTP/1.1 connections the transport pools
//!   itself (taken back once an answer is read to its end, dropped after
//!   90 s unused); other `http://` URLs go through hyper_util's pooled
//!   client, `https://` through reqwest (HTTP/2 where the server offers it
//!   by ALPN).
//! - **Auth**: every request goes through the [`HttpAuth`] hook, if set.

use std::sync::Arc;
use std::time::Duration;
use tessera_types::methods;

use http::{HeaderMap, HeaderName, HeaderValue, Method, Uri};
use http_body_util::BodyExt;
use rustls::pki_types::CertificateDer;
use tessera_proto::Transmit;
use tessera_runtime::{Incoming, Transport};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

mod body;
mod detect;
mod envelope;
mod failure;
mod legacy;
mod listen;
mod observed_body;
mod params_head;
mod pool;
mod shared;
mod streamable;
mod tls;
mod tool_headers;

pub use detect::{HttpTransportKind, known_transport};
pub use failure::{TRANSPORT_FAILURE_KEY, TransportFailure};
pub use legacy::LegacySseClientTransport;

use crate::client_auth::{HeldAuth, HttpAuth};
use detect::{cached, forget, remember, suggests_legacy};
use legacy::LegacyConn;
use shared::{Outgoing, Shared};

/// How long the first message waits for its answer's headers before the
/// next messages are sent anyway (see `HttpClientTransport::probe`).
const FIRST_ANSWER_WAIT: Duration = Duration::from_secs(2);

/// Why an HTTP client transport could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpClientError {
    /// The URL is not an absolute `http://` or `https://` URL.
    #[error("invalid MCP server URL {url:?}: {why}")]
    BadUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// The TLS setup failed (a bad root certificate, for example).
    #[error("TLS setup failed: {0}")]
    Tls(String),
}

/// Which transport an [`HttpClientTransport`] speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum HttpTransportMode {
    /// Streamable HTTP, falling back to HTTP+SSE when the server refuses it
    /// (the spec's backwards-compatibility procedure; the default).
    #[default]
    Auto,
    /// Streamable HTTP only.
    Streamable,
    /// The 2024-11-05 HTTP+SSE transport only.
    LegacySse,
}

/// Sets up an [`HttpClientTransport`] (or a [`LegacySseClientTransport`]).
#[derive(Clone)]
pub struct HttpClientBuilder {
    url: String,
    headers: HeaderMap,
    roots: Vec<CertificateDer<'static>>,
    auth: Option<Arc<dyn HeldAuth>>,
    mode: HttpTransportMode,
    max_message: usize,
}

/// The most bytes a client reads of one answer body or one event of a
/// stream by default: 16 MiB, the largest message a connection takes by
/// default.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

impl std::fmt::Debug for HttpClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClientBuilder")
            .field("url", &self.url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("extra_roots", &self.roots.len())
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl HttpClientBuilder {
    /// Sends `name: value` with every request (replacing an earlier value).
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// Sends every header of `headers` with every request. A name given
    /// here replaces earlier values of that name; a name with several values
    /// in `headers` is sent with all of them.
    pub fn headers(mut self, headers: HeaderMap) -> Self {
        for name in headers.keys() {
            self.headers.remove(name);
        }
        for (k, v) in &headers {
            self.headers.append(k.clone(), v.clone());
        }
        self
    }

    /// Trusts `der` (a DER-encoded certificate) as a root for `https://`, on
    /// top of the webpki roots.
    pub fn add_root_certificate_der(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.roots.push(CertificateDer::from(der.into()));
        self
    }

    /// Trusts every certificate of a PEM document as a root for `https://`.
    pub fn add_root_certificates_pem(mut self, pem: &[u8]) -> Result<Self, HttpClientError> {
        self.roots.extend(tls::pem_certificates(pem)?);
        Ok(self)
    }

    /// Sends every request through `auth` for credentials, and lets it
    /// answer `401`/`403` challenges (see [`HttpAuth`]).
    /// An `Arc` of a hook is a hook too, to share one.
    pub fn auth(mut self, auth: impl HttpAuth) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// Which transport to speak (default [`HttpTransportMode::Auto`]).
    pub fn mode(mut self, mode: HttpTransportMode) -> Self {
        self.mode = mode;
        self
    }

    /// The most bytes read of one answer body or of one event of an event
    /// stream (default [`DEFAULT_MAX_MESSAGE_BYTES`]). A larger answer fails
    /// its request with an error naming this limit, and a larger event ends
    /// its stream, so a server cannot make the client hold more.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message = bytes.max(1);
        self
    }

    fn shared(
        self,
    ) -> Result<(Arc<Shared>, mpsc::Receiver<Incoming>, HttpTransportMode), HttpClientError> {
        let url = &self.url;
        let bad = |why: &str| HttpClientError::BadUrl {
            url: url.clone(),
            why: why.to_owned(),
        };
        let uri: Uri = url.parse().map_err(|_| bad("not a URL"))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) {
            return Err(bad("the URL must start with http:// or https://"));
        }
        if uri.host().is_none() {
            return Err(bad("the URL has no host"));
        }
        let client = shared::HttpClient::new(tls::client(&self.roots)?, &uri);
        let (tx, rx) = mpsc::channel(256);
        let mut shared = Shared::new(client, uri, self.headers, tx);
        shared.max_message = self.max_message;
        if let Some(auth) = self.auth {
            let _ = shared.auth.set(auth);
        }
        Ok((Arc::new(shared), rx, self.mode))
    }

    /// The transport.
    pub fn build(self) -> Result<HttpClientTransport, HttpClientError> {
        let (shared, inbound, mode) = self.shared()?;
        Ok(HttpClientTransport {
            shared,
            inbound,
            tasks: JoinSet::new(),
            get_started: false,
            mode,
            decided: mode == HttpTransportMode::Streamable,
            answered_late: Arc::default(),
            legacy: None,
        })
    }

    /// A [`LegacySseClientTransport`] for the URL (an SSE URL).
    pub fn build_legacy(self) -> Result<LegacySseClientTransport, HttpClientError> {
        let (shared, inbound, _) = self.shared()?;
        Ok(LegacySseClientTransport::from_parts(shared, inbound))
    }
}

/// An HTTP connection to one MCP server, as a runtime [`Transport`] (hand
/// it to `ClientBuilder::connect_transport`): Streamable HTTP, or HTTP+SSE
/// for servers that only speak that (see [`HttpTransportMode`]).
pub struct HttpClientTransport {
    shared: Arc<Shared>,
    inbound: mpsc::Receiver<Incoming>,
    tasks: JoinSet<()>,
    get_started: bool,
    mode: HttpTransportMode,
    /// Whether the transport is known (no probe needed).
    decided: bool,
    /// Set when a first POST that went on in the background (past
    /// [`FIRST_ANSWER_WAIT`]) was answered with success: the server speaks
    /// Streamable HTTP, and the session that answer opened, if any, is the
    /// connection's. Read by the next [`send`](Transport::send).
    answered_late: Arc<std::sync::atomic::AtomicBool>,
    /// The HTTP+SSE connection, when the server speaks that.
    legacy: Option<LegacyConn>,
}

impl std::fmt::Debug for HttpClientTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClientTransport")
            .field("url", &self.shared.url)
            .field("mode", &self.mode)
            .field("legacy_sse", &self.legacy.is_some())
            .finish_non_exhaustive()
    }
}

impl HttpClientTransport {
    /// A transport for the endpoint at `url` (for example
    /// `http://127.0.0.1:8000/mcp` or `https://example.com/mcp`).
    pub fn new(url: &str) -> Result<Self, HttpClientError> {
        Self::builder(url).build()
    }

    /// A builder for headers, TLS roots, auth and the transport mode.
    pub fn builder(url: &str) -> HttpClientBuilder {
        HttpClientBuilder {
            url: url.to_owned(),
            headers: HeaderMap::new(),
            roots: Vec::new(),
            auth: None,
            mode: HttpTransportMode::Auto,
            max_message: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }

    /// Like [`HttpClientTransport::new`], sending `headers` with every request
    /// (for example `Authorization`).
    pub fn with_headers(url: &str, headers: HeaderMap) -> Result<Self, HttpClientError> {
        Self::builder(url).headers(headers).build()
    }

    /// Sends every request through `auth` for credentials, and lets it
    /// answer `401`/`403` challenges (see [`HttpAuth`]). Set it before the
    /// transport is used; a second call is ignored.
    /// An `Arc` of a hook is a hook too, to share one.
    pub fn with_auth(self, auth: impl HttpAuth) -> Self {
        let _ = self.shared.auth.set(Arc::new(auth));
        self
    }

    /// Shows every HTTP exchange of this transport to `observer` (a
    /// debugging tool's view of the wire). Set it before the transport is
    /// used; a second call is ignored.
    pub fn with_observer(self, observer: Arc<dyn crate::client_observe::HttpObserver>) -> Self {
        let _ = self.shared.observer.set(observer);
        self
    }

    /// Where this transport goes, for telemetry (`network.*`,
    /// `server.*`), sharing what it learns as it goes (the HTTP version,
    /// the session id: [`LinkState`](tessera_runtime::LinkState)). Give it
    /// to the connection (`ClientBuilder::link`, or
    /// `ConnectionOptions::link`). `None` when the URL has no host.
    pub fn link(&self) -> Option<tessera_runtime::Link> {
        tessera_runtime::Link::http(&self.shared.url.to_string())
            .map(|l| l.with_state(self.shared.link.clone()))
    }

    /// Writes what this transport learns (the HTTP version, the session
    /// id) into `state`, the state of a [`Link`](tessera_runtime::Link) a
    /// client already has: for the transports a client makes when it
    /// reconnects ([`link`](HttpClientTransport::link) gave the first
    /// one's). Call it before the transport is used; later it changes
    /// nothing.
    pub fn with_link_state(mut self, state: Arc<tessera_runtime::LinkState>) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.link = state;
        }
        self
    }

    /// The session id the server issued, if any.
    pub fn session_id(&self) -> Option<String> {
        self.shared.session()
    }

    /// The transport in use, once the first message went out.
    pub fn transport_kind(&self) -> Option<HttpTransportKind> {
        if self.legacy.is_some() {
            Some(HttpTransportKind::LegacySse)
        } else if self.decided {
            Some(HttpTransportKind::Streamable)
        } else {
            None
        }
    }

    /// Sends the first message when the transport is not known yet: over
    /// HTTP+SSE if this URL spoke that before (or the mode says so), else
    /// POSTed, probing for HTTP+SSE if the POST is refused.
    async fn probe(&mut self, out: Outgoing) {
        let shared = self.shared.clone();
        let known = cached(&shared.url);
        if self.mode == HttpTransportMode::LegacySse || known == Some(HttpTransportKind::LegacySse)
        {
            match legacy::open(&shared, legacy::ENDPOINT_TIMEOUT).await {
                Ok(conn) => return self.use_legacy(conn, out).await,
                Err(e) if self.mode == HttpTransportMode::LegacySse => {
                    if let Some(id) = &out.request_id {
                        shared.fail(id, e).await;
                    }
                    return;
                }
                Err(_) => forget(&shared.url),
            }
        }
        // The first POST decides the transport, so later messages wait for
        // its answer, but not for long: a server that never answers (one that
        // ignores the `server/discover` probe) must not hold back the
        // `initialize` the client falls back to. Past the wait, the POST goes
        // on in the background and the next message probes again, unless
        // that answer came with success by then (`answered_late`).
        let mut first = Box::pin({
            let shared = shared.clone();
            async move { (streamable::send_post(&shared, &out, None).await, out) }
        });
        let (answer, out) = match tokio::time::timeout(FIRST_ANSWER_WAIT, &mut first).await {
            Ok(done) => done,
            Err(_) => {
                tracing::debug!(
                    "no answer to the first POST to {} within {FIRST_ANSWER_WAIT:?}; going on",
                    shared.url
                );
                let answered_late = self.answered_late.clone();
                self.tasks.spawn(async move {
                    let (answer, out) = first.await;
                    match answer {
                        Ok(response) => {
                            // Decided before the answer reaches the engine,
                            // so that what the engine sends next (after an
                            // `initialize`, in the session it opened) is
                            // not probed for again, without its session.
                            if response.status().is_success() {
                                answered_late.store(true, std::sync::atomic::Ordering::Release);
                            }
                            streamable::handle_response(&shared, &out, response).await
                        }
                        Err(e) => {
                            if let Some(id) = &out.request_id {
                                shared.fail(id, e).await;
                            }
                        }
                    }
                });
                return;
            }
        };
        let response = match answer {
            Ok(r) => r,
            Err(e) => {
                if let Some(id) = &out.request_id {
                    shared.fail(id, e).await;
                }
                return;
            }
        };
        let status = response.status();
        if suggests_legacy(status) && known != Some(HttpTransportKind::Streamable) {
            let headers = response.headers().clone();
            let body = http_body_util::Limited::new(response.into_body(), shared.max_message)
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            match legacy::open(&shared, legacy::ENDPOINT_TIMEOUT).await {
                Ok(conn) => {
                    remember(&shared.url, HttpTransportKind::LegacySse);
                    return self.use_legacy(conn, out).await;
                }
                Err(why) => {
                    tracing::debug!("no HTTP+SSE at {}: {why}", shared.url);
                    remember(&shared.url, HttpTransportKind::Streamable);
                    self.decided = true;
                    if let Some(s) = headers
                        .get(crate::headers::MCP_SESSION_ID)
                        .and_then(|v| v.to_str().ok())
                    {
                        shared.set_session(Some(s.to_owned()));
                    }
                    streamable::handle_body(&shared, &out, status, &body).await;
                    return;
                }
            }
        }
        if status.is_success() {
            remember(&shared.url, HttpTransportKind::Streamable);
            self.decided = true;
        }
        self.tasks.spawn(async move {
            streamable::handle_response(&shared, &out, response).await;
        });
    }

    async fn use_legacy(&mut self, conn: LegacyConn, out: Outgoing) {
        self.decided = true;
        let conn = self.legacy.insert(conn);
        self.tasks.spawn(conn.post(self.shared.clone(), out));
    }

    /// Sends one message over Streamable HTTP.
    async fn send_streamable(&mut self, o: Outgoing) {
        let shared = self.shared.clone();
        if o.method.as_deref() == Some(methods::NOTIFICATIONS_INITIALIZED) {
            // The handshake is done once the server has this notification:
            // send it, then open the GET stream.
            streamable::post(shared.clone(), o).await;
            if !self.get_started && shared.session().is_some() {
                self.get_started = true;
                listen::open_listen(&shared).await;
            }
            return;
        }
        self.tasks.spawn(streamable::post(shared, o));
    }
}

impl Transport for HttpClientTransport {
    /// The next message from the server. Once the server forgot the session,
    /// the end ([`SessionLost`](tessera_runtime::SessionLost)) comes after
    /// every POST on its way has its answer (or its not-served error) read.
    async fn recv(&mut self) -> std::io::Result<Option<Incoming>> {
        self.shared.next_incoming(&mut self.inbound).await
    }

    async fn send(&mut self, out: &mut Vec<Transmit>) -> std::io::Result<()> {
        shared::reap(&mut self.tasks);
        if self.legacy.is_some() {
            legacy::send_all(&self.shared, &mut self.legacy, &mut self.tasks, out).await;
            return Ok(());
        }
        let mut pending = std::mem::take(out).into_iter();
        while let Some(t) = pending.next() {
            let o = Outgoing::describe(&t, &self.shared);
            if !self.decided
                && self
                    .answered_late
                    .load(std::sync::atomic::Ordering::Acquire)
            {
                remember(&self.shared.url, HttpTransportKind::Streamable);
                self.decided = true;
            }
            if !self.decided {
                self.probe(o).await;
                if self.legacy.is_some() {
                    let mut rest: Vec<Transmit> = pending.collect();
                    legacy::send_all(&self.shared, &mut self.legacy, &mut self.tasks, &mut rest)
                        .await;
                    return Ok(());
                }
                continue;
            }
            self.send_streamable(o).await;
        }
        Ok(())
    }

    async fn close(&mut self) {
        self.tasks.abort_all();
        self.shared.stop_listen();
        if self.legacy.take().is_some() {
            return;
        }
        if self.shared.session().is_some() {
            let build = || {
                self.shared
                    .request(Method::DELETE, None, "application/json")
            };
            let _ = tokio::time::timeout(Duration::from_secs(2), self.shared.exchange(build)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_proto::Outbound;
    use tessera_types::{JsonRpcMessage, RequestId};

    /// Serves `app` on a free loopback port; the URL of its `/mcp`.
    async fn serve_at_mcp(app: axum::Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{addr}/mcp")
    }

    /// An endpoint that answers every POST with an empty result for its id.
    async fn answering_endpoint() -> String {
        let app = axum::Router::new().route(
            "/mcp",
            axum::routing::post(|body: axum::body::Bytes| async move {
                let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                axum::Json(serde_json::json!({"jsonrpc": "2.0", "id": v["id"], "result": {}}))
            }),
        );
        serve_at_mcp(app).await
    }

    #[tokio::test]
    async fn finished_exchanges_do_not_pile_up() {
        let url = answering_endpoint().await;
        let mut t = HttpClientTransport::builder(&url)
            .mode(HttpTransportMode::Streamable)
            .build()
            .unwrap();
        for i in 0..300 {
            let request = JsonRpcMessage::request(RequestId::Number(i), "ping", None);
            let mut out = vec![Transmit {
                message: Outbound::Single(request),
                related: None,
                mirrored: None,
            }];
            t.send(&mut out).await.unwrap();
            // The exchange of this request, and at most the one before it
            // (whose answer has arrived, but whose task may not have ended).
            assert!(t.tasks.len() <= 2, "{} tasks kept", t.tasks.len());
            let answer = tokio::time::timeout(Duration::from_secs(10), t.recv())
                .await
                .expect("answered in time")
                .unwrap();
            assert!(answer.is_some());
        }
    }

    /// A legacy endpoint whose `initialize` answer (session `s-1`) waits
    /// for `gate`; every other POST without that session is refused as the
    /// Tessera server refuses it (400, an error with a null id). Notes the
    /// method and session of each POST.
    struct SlowStart {
        gate: tokio::sync::Notify,
        seen: std::sync::Mutex<Vec<(String, Option<String>)>>,
    }

    async fn slow_start_endpoint(rig: Arc<SlowStart>) -> String {
        use axum::response::IntoResponse;
        let app = axum::Router::new().route(
            "/mcp",
            axum::routing::post(move |headers: HeaderMap, body: axum::body::Bytes| {
                let rig = rig.clone();
                async move {
                    let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                    let method = v["method"].as_str().unwrap_or_default().to_owned();
                    let session = headers
                        .get(crate::headers::MCP_SESSION_ID)
                        .and_then(|s| s.to_str().ok())
                        .map(str::to_owned);
                    rig.seen.lock().unwrap().push((method.clone(), session.clone()));
                    if method == methods::INITIALIZE {
                        rig.gate.notified().await;
                        let result = serde_json::json!({
                            "protocolVersion": "2025-06-18",
                            "capabilities": {},
                            "serverInfo": {"name": "slow", "version": "1"},
                        });
                        let answer =
                            serde_json::json!({"jsonrpc": "2.0", "id": v["id"], "result": result});
                        return ([("mcp-session-id", "s-1")], axum::Json(answer)).into_response();
                    }
                    if session.as_deref() != Some("s-1") {
                        let refusal = serde_json::json!({"jsonrpc": "2.0", "id": null,
                            "error": {"code": -32600, "message": "the Mcp-Session-Id header is required"}});
                        return (http::StatusCode::BAD_REQUEST, axum::Json(refusal)).into_response();
                    }
                    if v.get("id").is_none() {
                        return http::StatusCode::ACCEPTED.into_response();
                    }
                    axum::Json(serde_json::json!({"jsonrpc": "2.0", "id": v["id"], "result": {}}))
                        .into_response()
                }
            }),
        );
        serve_at_mcp(app).await
    }

    fn transmit(message: JsonRpcMessage) -> Vec<Transmit> {
        vec![Transmit {
            message: Outbound::Single(message),
            related: None,
            mirrored: None,
        }]
    }

    async fn next_message(t: &mut HttpClientTransport) -> serde_json::Value {
        match t.recv().await.unwrap() {
            Some(Incoming::Bytes(b)) => serde_json::from_slice(&b).unwrap(),
            Some(Incoming::Result { bytes, .. }) => serde_json::from_slice(&bytes).unwrap(),
            other => panic!("not a message: {other:?}"),
        }
    }

    /// An endpoint that refuses every request with an error whose id is
    /// null: as JSON with `400` (a `ping`), or as the one event of an SSE
    /// answer (anything else).
    async fn unattributed_refusing_endpoint() -> String {
        use axum::response::IntoResponse;
        let app = axum::Router::new().route(
            "/mcp",
            axum::routing::post(|body: axum::body::Bytes| async move {
                let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                let refusal = serde_json::json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32600, "message": "the Mcp-Session-Id header is required"}});
                if v["method"] == methods::PING {
                    return (http::StatusCode::BAD_REQUEST, axum::Json(refusal)).into_response();
                }
                let event = format!("event: message\ndata: {refusal}\n\n");
                ([(http::header::CONTENT_TYPE, "text/event-stream")], event).into_response()
            }),
        );
        serve_at_mcp(app).await
    }

    /// An endpoint whose answer to any request is `size` bytes of JSON: as
    /// an event of an SSE answer for `tools/list`, as a JSON body otherwise.
    async fn oversize_answering_endpoint(size: usize) -> String {
        use axum::response::IntoResponse;
        let app = axum::Router::new().route(
            "/mcp",
            axum::routing::post(move |body: axum::body::Bytes| async move {
                let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                let pad = "x".repeat(size);
                let answer = serde_json::json!({"jsonrpc": "2.0", "id": v["id"],
                    "result": {"pad": pad}});
                if v["method"] == methods::TOOLS_LIST {
                    let event = format!("event: message\ndata: {answer}\n\n");
                    return ([(http::header::CONTENT_TYPE, "text/event-stream")], event)
                        .into_response();
                }
                axum::Json(answer).into_response()
            }),
        );
        serve_at_mcp(app).await
    }

    /// An answer over the client's limit, as a JSON body or as an event of
    /// an SSE answer, fails its request with an error naming the limit (the
    /// client used to read any size); within the limit it is delivered.
    #[tokio::test]
    async fn an_answer_over_the_clients_limit_fails_its_request() {
        let url = oversize_answering_endpoint(4096).await;
        let mut t = HttpClientTransport::builder(&url)
            .mode(HttpTransportMode::Streamable)
            .max_message_bytes(1024)
            .build()
            .unwrap();
        for (id, method) in [(1, methods::PING), (2, methods::TOOLS_LIST)] {
            let request = JsonRpcMessage::request(RequestId::Number(id), method, None);
            t.send(&mut transmit(request)).await.unwrap();
            let answer = next_message(&mut t).await;
            assert_eq!(answer["id"], id, "{answer}");
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("over 1024 bytes") && message.contains("max_message_bytes"),
                "{method}: {answer}"
            );
        }
        let mut t = HttpClientTransport::builder(&url)
            .mode(HttpTransportMode::Streamable)
            .max_message_bytes(8192)
            .build()
            .unwrap();
        for (id, method) in [(3, methods::PING), (4, methods::TOOLS_LIST)] {
            let request = JsonRpcMessage::request(RequestId::Number(id), method, None);
            t.send(&mut transmit(request)).await.unwrap();
            let answer = next_message(&mut t).await;
            assert_eq!(answer["result"]["pad"].as_str().map(str::len), Some(4096));
        }
    }

    /// A server that answers the POST carrying a request with an error
    /// whose id is null (it could not read the id, or refused the POST for
    /// a missing header) refuses that request: it fails at once with an
    /// error naming the server's, rather than waiting for an answer with
    /// its id until its timeout (the null-id error used to be handed on,
    /// and dropped by the engine as naming no request).
    #[tokio::test]
    async fn an_error_with_a_null_id_answers_the_request_its_post_carried() {
        let url = unattributed_refusing_endpoint().await;
        let mut t = HttpClientTransport::builder(&url)
            .mode(HttpTransportMode::Streamable)
            .build()
            .unwrap();
        for (id, method, status) in [
            (7, methods::PING, Some(400)),
            (8, methods::TOOLS_LIST, None),
        ] {
            let request = JsonRpcMessage::request(RequestId::Number(id), method, None);
            t.send(&mut transmit(request)).await.unwrap();
            let answer = next_message(&mut t).await;
            assert_eq!(answer["id"], id, "{answer}");
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("-32600") && message.contains("Mcp-Session-Id header is required"),
                "{answer}"
            );
            let error: tessera_types::ErrorObject =
                serde_json::from_value(answer["error"].clone()).unwrap();
            let failure = TransportFailure::of(&error).expect("marked as the transport's");
            assert_eq!(failure.status, status, "{answer}");
        }
    }

    /// An `initialize` answered only after the first-answer wait (a loaded
    /// machine), at a URL another connection of this process already found
    /// to speak Streamable HTTP: the session it opens is the connection's,
    /// and no later message is sent without it (each used to probe again,
    /// without the session, and be refused for good).
    #[tokio::test(start_paused = true)]
    async fn a_session_opened_after_the_first_answer_wait_is_used() {
        let rig = Arc::new(SlowStart {
            gate: tokio::sync::Notify::new(),
            seen: Default::default(),
        });
        let url = slow_start_endpoint(rig.clone()).await;
        remember(&url.parse().unwrap(), HttpTransportKind::Streamable);
        let mut t = HttpClientTransport::builder(&url).build().unwrap();
        let init = serde_json::json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        });
        let init = serde_json::from_value(init).unwrap();
        let request =
            JsonRpcMessage::request(RequestId::Number(0), methods::INITIALIZE, Some(init));
        // The (paused) clock runs past the wait while the answer is held.
        t.send(&mut transmit(request)).await.unwrap();
        rig.gate.notify_one();
        let answer = next_message(&mut t).await;
        assert_eq!(answer["id"], 0);
        assert_eq!(t.session_id().as_deref(), Some("s-1"));
        let initialized = JsonRpcMessage::notification(methods::NOTIFICATIONS_INITIALIZED, None);
        t.send(&mut transmit(initialized)).await.unwrap();
        let ping = JsonRpcMessage::request(RequestId::Number(1), methods::PING, None);
        t.send(&mut transmit(ping)).await.unwrap();
        let answer = next_message(&mut t).await;
        assert_eq!(
            (answer["id"].clone(), answer.get("error")),
            (serde_json::json!(1), None),
            "{answer}"
        );
        let seen = rig.seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            [
                (methods::INITIALIZE.to_owned(), None),
                (
                    methods::NOTIFICATIONS_INITIALIZED.to_owned(),
                    Some("s-1".into())
                ),
                (methods::PING.to_owned(), Some("s-1".into())),
            ]
        );
    }
}
