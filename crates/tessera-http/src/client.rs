//! The Streamable HTTP client: a [`Transport`] that sends every outgoing
//! message as a POST and feeds what comes back (a JSON body or an SSE stream)
//! to the engine, for both eras.
//!
//! - **Session** (legacy era): the `Mcp-Session-Id` of the `initialize`
//!   answer is kept and sent on every later request; `DELETE` ends it on close.
//! - **Headers**: `MCP-Protocol-Version` (the request's own `_meta` version in
//!   2026-07-28, the negotiated one after `initialize`), and in 2026-07-28
//!   `Mcp-Method` and `Mcp-Name`.
//! - **Era detection**: the engine probes with `server/discover`. A server
//!   that refuses it with an HTTP error whose body is not a JSON-RPC error gets
//!   a synthesized JSON-RPC error for that request, so the engine falls back
//!   to `initialize` (the spec's "inspect the 400 body" rule).
//! - **Streams**: SSE responses are parsed as they arrive; once a legacy
//!   session exists, a `GET` stream carries the server's own requests and
//!   notifications (a server that has none answers 405, which is fine). An
//!   SSE response that ends before its answer is resumed with `GET` and
//!   `Last-Event-ID`, after the server's `retry:` delay.
//!
//! Plain `http://` only: `https://` URLs are refused with a clear error (TLS
//! is not built in yet).

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tessera_proto::{Outbound, Transmit};
use tessera_runtime::{Incoming, Transport};
use tessera_types::{ErrorObject, JsonRpcMessage, RequestId};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::client_auth::{ChallengeOutcome, HttpAuth};
use crate::headers::{
    LAST_EVENT_ID, MCP_METHOD, MCP_NAME, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, encode_header_value,
};
use crate::sse::SseDecoder;

type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// Why an HTTP client transport could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpClientError {
    /// The URL is not an absolute `http://` URL.
    #[error("invalid MCP server URL {url:?}: {why}")]
    BadUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        why: String,
    },
}

struct Shared {
    client: HttpClient,
    url: Uri,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    extra_headers: HeaderMap,
    auth: OnceLock<Arc<dyn HttpAuth>>,
    inbound: mpsc::Sender<Incoming>,
}

/// How many times one request is sent when the server keeps challenging it
/// (the first attempt included).
const MAX_AUTH_ATTEMPTS: usize = 4;

/// A Streamable HTTP connection to one MCP endpoint, as a runtime
/// [`Transport`] (hand it to `ClientBuilder::connect_transport`).
pub struct HttpClientTransport {
    shared: Arc<Shared>,
    inbound: mpsc::Receiver<Incoming>,
    tasks: JoinSet<()>,
    get_started: bool,
}

impl std::fmt::Debug for HttpClientTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClientTransport")
            .field("url", &self.shared.url)
            .finish_non_exhaustive()
    }
}

impl HttpClientTransport {
    /// A transport for the endpoint at `url` (for example `http://127.0.0.1:8000/mcp`).
    pub fn new(url: &str) -> Result<Self, HttpClientError> {
        Self::with_headers(url, HeaderMap::new())
    }

    /// Like [`HttpClientTransport::new`], sending `headers` with every request
    /// (for example `Authorization`).
    pub fn with_headers(url: &str, headers: HeaderMap) -> Result<Self, HttpClientError> {
        let bad = |why: &str| HttpClientError::BadUrl {
            url: url.to_owned(),
            why: why.to_owned(),
        };
        let uri: Uri = url.parse().map_err(|_| bad("not a URL"))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") => return Err(bad("https is not supported yet; use an http:// URL")),
            _ => return Err(bad("the URL must start with http://")),
        }
        if uri.host().is_none() {
            return Err(bad("the URL has no host"));
        }
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new()).build(connector);
        let (tx, rx) = mpsc::channel(256);
        Ok(HttpClientTransport {
            shared: Arc::new(Shared {
                client,
                url: uri,
                session: Mutex::new(None),
                version: Mutex::new(None),
                extra_headers: headers,
                auth: OnceLock::new(),
                inbound: tx,
            }),
            inbound: rx,
            tasks: JoinSet::new(),
            get_started: false,
        })
    }

    /// Sends every request through `auth` for credentials, and lets it
    /// answer `401`/`403` challenges (see [`HttpAuth`]). Set it before the
    /// transport is used; a second call is ignored.
    pub fn with_auth(self, auth: Arc<dyn HttpAuth>) -> Self {
        let _ = self.shared.auth.set(auth);
        self
    }

    /// The session id the server issued, if any.
    pub fn session_id(&self) -> Option<String> {
        self.shared.session()
    }
}

impl Shared {
    fn session(&self) -> Option<String> {
        self.session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn version(&self) -> Option<String> {
        self.version
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn request(&self, method: Method, body: Option<Bytes>, accept: &str) -> Request<Full<Bytes>> {
        let mut b = Request::builder()
            .method(method)
            .uri(self.url.clone())
            .header(http::header::ACCEPT, accept);
        if body.is_some() {
            b = b.header(http::header::CONTENT_TYPE, "application/json");
        }
        if let Some(s) = self.session() {
            b = b.header(MCP_SESSION_ID, s);
        }
        let mut req = b
            .body(Full::new(body.unwrap_or_default()))
            .unwrap_or_else(|_| Request::new(Full::new(Bytes::new())));
        for (k, v) in &self.extra_headers {
            req.headers_mut().insert(k.clone(), v.clone());
        }
        req
    }

    /// Sends a request built by `build`, with the credentials of the
    /// [`HttpAuth`] if there is one; on a 401/403 the hook may renew them and
    /// the request is built and sent again (at most [`MAX_AUTH_ATTEMPTS`]
    /// times in all).
    async fn exchange(
        &self,
        build: impl Fn() -> Request<Full<Bytes>>,
    ) -> Result<http::Response<hyper::body::Incoming>, String> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut req = build();
            if let Some(auth) = self.auth.get() {
                let (method, uri) = (req.method().clone(), req.uri().clone());
                auth.authorize(&method, &uri, req.headers_mut()).await?;
            }
            let response = self
                .client
                .request(req)
                .await
                .map_err(|e| format!("HTTP request failed: {e}"))?;
            let status = response.status();
            let challenged = status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN;
            let Some(auth) = self.auth.get().filter(|_| challenged) else {
                return Ok(response);
            };
            if attempt >= MAX_AUTH_ATTEMPTS {
                return Ok(response);
            }
            match auth.challenge(&self.url, status, response.headers()).await {
                ChallengeOutcome::Retry => continue,
                ChallengeOutcome::Pass => return Ok(response),
                ChallengeOutcome::Fail(why) => return Err(why),
            }
        }
    }

    /// Remembers the version an `initialize` answer negotiated.
    fn note_version(&self, response: &Value) {
        if let Some(v) = response
            .get("result")
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_str)
        {
            *self
                .version
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(v.to_owned());
        }
    }

    async fn deliver(&self, bytes: &[u8]) {
        let _ = self
            .inbound
            .send(Incoming::Bytes(BytesMut::from(bytes)))
            .await;
    }

    /// Answers a request locally with an error (the server gave no JSON-RPC answer).
    async fn fail(&self, id: &RequestId, message: String) {
        let e = ErrorObject::internal(message);
        let m = JsonRpcMessage::error(Some(id.clone()), e);
        self.deliver(&serde_json::to_vec(&m).unwrap_or_default())
            .await;
    }
}

/// What the transport needs to know of an outgoing message.
struct Outgoing {
    body: Bytes,
    request_id: Option<RequestId>,
    method: Option<String>,
    modern_version: Option<String>,
    name: Option<String>,
}

fn describe(t: &Transmit) -> Outgoing {
    let body = Bytes::from(t.message.to_bytes());
    let single = match &t.message {
        Outbound::Single(m) => Some(m),
        Outbound::Batch(_) => None,
    };
    let (request_id, method, params) = match single {
        Some(JsonRpcMessage::Request(r)) => (
            Some(r.id.clone()),
            Some(r.method.clone()),
            r.params.as_ref(),
        ),
        Some(JsonRpcMessage::Notification(n)) => (None, Some(n.method.clone()), n.params.as_ref()),
        _ => (None, None, None),
    };
    let modern_version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(tessera_proto::meta_keys::PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let name = params
        .and_then(|p| p.get("name").or_else(|| p.get("uri")))
        .and_then(Value::as_str)
        .map(str::to_owned);
    Outgoing {
        body,
        request_id,
        method,
        modern_version,
        name,
    }
}

async fn post(shared: Arc<Shared>, out: Outgoing) {
    let version = out.modern_version.clone().or_else(|| shared.version());
    let build = || {
        let mut req = shared.request(
            Method::POST,
            Some(out.body.clone()),
            "application/json, text/event-stream",
        );
        let h = req.headers_mut();
        if let Some(v) = version
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            h.insert(MCP_PROTOCOL_VERSION, v);
        }
        if out.modern_version.is_some() {
            if let Some(m) = out
                .method
                .as_deref()
                .and_then(|m| HeaderValue::from_str(m).ok())
            {
                h.insert(MCP_METHOD, m);
            }
            let named = matches!(
                out.method.as_deref(),
                Some("tools/call" | "prompts/get" | "resources/read")
            );
            if let (true, Some(n)) = (named, &out.name) {
                if let Ok(v) = HeaderValue::from_str(&encode_header_value(n)) {
                    h.insert(MCP_NAME, v);
                }
            }
        }
        req
    };
    let response = match shared.exchange(build).await {
        Ok(r) => r,
        Err(e) => {
            if let Some(id) = &out.request_id {
                shared.fail(id, e).await;
            }
            return;
        }
    };
    let status = response.status();
    if let Some(s) = response
        .headers()
        .get(MCP_SESSION_ID)
        .and_then(|v| v.to_str().ok())
    {
        *shared
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(s.to_owned());
    }
    let is_sse = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let is_initialize = out.method.as_deref() == Some("initialize");
    if status == StatusCode::ACCEPTED {
        return;
    }
    if is_sse && status.is_success() {
        read_sse(
            &shared,
            response.into_body(),
            out.request_id.as_ref(),
            is_initialize,
        )
        .await;
        return;
    }
    let body = match response.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            if let Some(id) = &out.request_id {
                shared
                    .fail(id, format!("reading the HTTP response failed: {e}"))
                    .await;
            }
            return;
        }
    };
    // A JSON-RPC body (a result, or an error with a 4xx status) goes to the engine.
    let parsed: Option<Value> = serde_json::from_slice(&body).ok();
    let is_rpc = parsed.as_ref().is_some_and(|v| {
        v.is_array()
            || v.get("jsonrpc").is_some() && (v.get("result").is_some() || v.get("error").is_some())
    });
    if is_rpc {
        if is_initialize {
            if let Some(v) = parsed
                .as_ref()
                .and_then(|v| v.get("result"))
                .and_then(|r| r.get("protocolVersion"))
                .and_then(Value::as_str)
            {
                *shared
                    .version
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(v.to_owned());
            }
        }
        shared.deliver(&body).await;
        return;
    }
    if let Some(id) = &out.request_id {
        let text = String::from_utf8_lossy(&body);
        shared
            .fail(
                id,
                format!(
                    "HTTP {status} from the server: {}",
                    text.chars().take(300).collect::<String>()
                ),
            )
            .await;
    }
}

/// Reads an SSE response, feeding every message to the engine; resumes with
/// GET + Last-Event-ID when the stream ends before `awaited`'s answer.
async fn read_sse(
    shared: &Arc<Shared>,
    body: hyper::body::Incoming,
    awaited: Option<&RequestId>,
    initialize: bool,
) {
    let mut body = body;
    let mut attempts = 0;
    loop {
        let mut decoder = SseDecoder::new();
        let mut last_id: Option<String> = None;
        let mut retry = Duration::from_secs(1);
        let mut answered = awaited.is_none();
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else { break };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            for ev in decoder.feed(&data) {
                if let Some(id) = ev.id {
                    last_id = Some(id);
                }
                if let Some(r) = ev.retry {
                    retry = Duration::from_millis(r);
                }
                if ev.data.is_empty() {
                    continue;
                }
                if let (Some(want), Ok(v)) = (awaited, serde_json::from_str::<Value>(&ev.data)) {
                    let id = v
                        .get("id")
                        .and_then(|i| serde_json::from_value::<RequestId>(i.clone()).ok());
                    if id.as_ref() == Some(want) && v.get("method").is_none() {
                        answered = true;
                        if initialize {
                            shared.note_version(&v);
                        }
                    }
                }
                shared.deliver(ev.data.as_bytes()).await;
            }
        }
        if answered || attempts >= 5 {
            if !answered {
                if let Some(id) = awaited {
                    shared
                        .fail(
                            id,
                            "the server's event stream ended without an answer".into(),
                        )
                        .await;
                }
            }
            return;
        }
        let Some(last) = last_id else {
            if let Some(id) = awaited {
                shared
                    .fail(
                        id,
                        "the server's event stream ended without an answer".into(),
                    )
                    .await;
            }
            return;
        };
        attempts += 1;
        tokio::time::sleep(retry).await;
        let build = || {
            let mut req = shared.request(Method::GET, None, "text/event-stream");
            if let Ok(v) = HeaderValue::from_str(&last) {
                req.headers_mut().insert(LAST_EVENT_ID, v);
            }
            if let Some(v) = shared
                .version()
                .and_then(|v| HeaderValue::from_str(&v).ok())
            {
                req.headers_mut().insert(MCP_PROTOCOL_VERSION, v);
            }
            req
        };
        match shared.exchange(build).await {
            Ok(r) if r.status().is_success() => body = r.into_body(),
            _ => {
                if let Some(id) = awaited {
                    shared
                        .fail(id, "could not resume the server's event stream".into())
                        .await;
                }
                return;
            }
        }
    }
}

/// Opens the standalone GET stream of a legacy session (the server's own
/// requests and notifications) and returns its body once the server has
/// answered, so that the stream is in place before the next request goes out.
async fn open_listen(shared: &Arc<Shared>) -> Option<hyper::body::Incoming> {
    let build = || {
        let mut req = shared.request(Method::GET, None, "text/event-stream");
        if let Some(v) = shared
            .version()
            .and_then(|v| HeaderValue::from_str(&v).ok())
        {
            req.headers_mut().insert(MCP_PROTOCOL_VERSION, v);
        }
        req
    };
    match tokio::time::timeout(Duration::from_secs(5), shared.exchange(build)).await {
        Ok(Ok(r)) if r.status().is_success() => Some(r.into_body()),
        _ => None,
    }
}

impl Transport for HttpClientTransport {
    async fn recv(&mut self) -> std::io::Result<Option<Incoming>> {
        Ok(self.inbound.recv().await)
    }

    async fn send(&mut self, out: &mut Vec<Transmit>) -> std::io::Result<()> {
        for t in out.drain(..) {
            let o = describe(&t);
            let initialized = o.method.as_deref() == Some("notifications/initialized");
            let shared = self.shared.clone();
            if initialized {
                // The handshake is done once the server has this notification:
                // send it, then open the GET stream.
                post(shared.clone(), o).await;
                if !self.get_started && shared.session().is_some() {
                    self.get_started = true;
                    if let Some(body) = open_listen(&shared).await {
                        self.tasks
                            .spawn(async move { read_sse(&shared, body, None, false).await });
                    }
                }
            } else {
                self.tasks.spawn(post(shared, o));
            }
        }
        Ok(())
    }

    async fn close(&mut self) {
        self.tasks.abort_all();
        if self.shared.session().is_some() {
            let build = || {
                self.shared
                    .request(Method::DELETE, None, "application/json")
            };
            let _ = tokio::time::timeout(Duration::from_secs(2), self.shared.exchange(build)).await;
        }
    }
}
