//! What every task of one HTTP client connection shares: the HTTP client,
//! the session, the negotiated version, the auth hook (every request goes
//! through [`Shared::exchange`]), and the channel to the engine.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use tessera_types::methods;

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode, Uri};
use serde::Deserialize;
use serde_json::Value;
use tessera_proto::{Outbound, RawResult, Transmit};
use tessera_runtime::Incoming;
use tessera_types::{ErrorObject, JsonRpcMessage, Params, RequestId};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use super::body::AnswerBody;
use super::envelope::{Envelope, InitializeAnswer, ToolsAnswer, object_view};
use super::pool::Pool;
use super::tool_headers::{ToolHeaders, headers_for};
use crate::client_auth::{ChallengeOutcome, HeldAuth};
use crate::client_observe::{HttpExchange, HttpObserver};
use crate::headers::names;

/// The HTTP clients of a connection: for `http://` to the connection's own
/// server, keep-alive HTTP/1.1 connections of hyper pooled here ([`Pool`]);
/// for `http://` elsewhere (an HTTP+SSE message endpoint on another host),
/// hyper_util's pooled client; reqwest for `https://` (rustls, HTTP/2 where
/// the server offers it; see `tls`). Neither `http://` way goes through
/// reqwest's own request type and its redirect and retry layers, which cost
/// a forwarded call more than the rest of the exchange.
#[derive(Clone)]
pub(crate) struct HttpClient {
    /// `https://` (and any other scheme, which it refuses with its reason).
    pub tls: reqwest::Client,
    /// `http://` to the connection's own host and port.
    own: Option<Arc<Pool>>,
    /// `http://` elsewhere.
    pub plain: PlainClient,
}

/// hyper's client for `http://`.
pub(crate) type PlainClient = hyper_util::client::legacy::Client<
    hyper_util::client::legacy::connect::HttpConnector,
    http_body_util::Full<Bytes>,
>;

impl HttpClient {
    /// The clients for a connection to `url`, `tls` for `https://`.
    pub(crate) fn new(tls: reqwest::Client, url: &Uri) -> Self {
        let mut connector = hyper_util::client::legacy::connect::HttpConnector::new();
        connector.set_nodelay(true);
        // Idle connections kept 90 s, as reqwest does.
        let plain =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .pool_timer(hyper_util::rt::TokioTimer::new())
                .pool_idle_timeout(super::pool::IDLE_TIMEOUT)
                .build(connector);
        HttpClient {
            tls,
            own: Pool::for_url(url),
            plain,
        }
    }

    /// Sends `req` and waits for the answer's head.
    async fn send(&self, shared: &Shared, req: Request<Bytes>) -> Result<Response, String> {
        if req.uri().scheme_str() == Some("http") {
            let req = req.map(http_body_util::Full::new);
            let answer = match &self.own {
                Some(pool) if pool.serves(req.uri()) => {
                    let mut req = req;
                    if !req.headers().contains_key(http::header::HOST) {
                        if let Some(host) = host_header(req.uri()) {
                            req.headers_mut().insert(http::header::HOST, host);
                        }
                    }
                    pool.send(req).await.map(|r| r.map(AnswerBody::Pooled))
                }
                _ => match self.plain.request(req).await {
                    Ok(r) => Ok(r.map(|b| AnswerBody::Boxed(reqwest::Body::wrap(b)))),
                    Err(e) => Err(error_chain(&e)),
                },
            };
            return answer.map_err(|e| format!("HTTP request failed: {e}"));
        }
        let req = shared.to_reqwest(req)?;
        match self.tls.execute(req).await {
            Ok(r) => Ok(http::Response::from(r).map(AnswerBody::Boxed)),
            Err(e) => Err(format!("HTTP request failed: {}", error_chain(&e))),
        }
    }
}

/// A response as the transport reads it: `http` types, the body read frame
/// by frame.
pub(crate) type Response = http::Response<AnswerBody>;

/// How many times one request is sent when the server keeps challenging it
/// (the first attempt included).
const MAX_AUTH_ATTEMPTS: usize = 4;

/// Locks a mutex, ignoring poisoning (the data stays consistent: every
/// critical section is a plain read or write).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Drops the tasks of `tasks` that have finished. A `JoinSet` keeps every
/// finished task, with the memory of its future, until it is joined: a
/// connection that sends for long would otherwise grow without bound.
pub(crate) fn reap(tasks: &mut tokio::task::JoinSet<()>) {
    while tasks.try_join_next().is_some() {}
}

/// The state of one connection.
pub(crate) struct Shared {
    pub client: HttpClient,
    /// The URL the user gave (the MCP endpoint, or the legacy SSE URL).
    pub url: Uri,
    /// `url` parsed once for reqwest (`None` if it does not parse as a URL;
    /// each request then parses its own and fails with the reason).
    parsed_url: Option<reqwest::Url>,
    /// The `Host` header of requests to `url` over `http://` (HTTP/1.1),
    /// written once rather than by the HTTP client for every request.
    host: Option<http::HeaderValue>,
    pub session: Mutex<Option<String>>,
    pub version: Mutex<Option<String>>,
    pub extra_headers: HeaderMap,
    pub auth: OnceLock<Arc<dyn HeldAuth>>,
    /// Sees every exchange, if set.
    pub observer: OnceLock<Arc<dyn HttpObserver>>,
    pub inbound: mpsc::Sender<Incoming>,
    /// Set when the server forgot the session: the connection ends, and the
    /// client sets up a new one (see [`Shared::lose_session`]).
    pub lost: tokio::sync::watch::Sender<bool>,
    /// How many POSTs are on their way (their answers are still to come).
    pub in_flight: AtomicUsize,
    /// Woken each time a POST ends (see [`Shared::next_incoming`]).
    pub settled: tokio::sync::Notify,
    /// The standalone GET stream of the session, if one is open.
    pub listen: Mutex<Option<AbortHandle>>,
    /// The ids of `tools/list` requests whose answers are still to come.
    pub tools_list_ids: Mutex<HashSet<RequestId>>,
    /// What `tools/list` taught about `x-mcp-header` parameters.
    pub tool_headers: Mutex<ToolHeaders>,
    /// The HTTP version and session id, for telemetry (shared with the
    /// connection's [`Link`](tessera_runtime::Link)).
    pub link: Arc<tessera_runtime::LinkState>,
    /// The most bytes read of one answer body or one event of a stream
    /// ([`HttpClientBuilder::max_message_bytes`](super::HttpClientBuilder::max_message_bytes)).
    pub max_message: usize,
}

impl Shared {
    pub(crate) fn new(
        client: HttpClient,
        url: Uri,
        extra_headers: HeaderMap,
        inbound: mpsc::Sender<Incoming>,
    ) -> Self {
        Shared {
            client,
            parsed_url: reqwest::Url::parse(&url.to_string()).ok(),
            host: host_header(&url),
            url,
            session: Mutex::new(None),
            version: Mutex::new(None),
            extra_headers,
            auth: OnceLock::new(),
            observer: OnceLock::new(),
            inbound,
            lost: tokio::sync::watch::Sender::new(false),
            in_flight: AtomicUsize::new(0),
            settled: tokio::sync::Notify::new(),
            listen: Mutex::new(None),
            tools_list_ids: Mutex::new(HashSet::new()),
            tool_headers: Mutex::new(ToolHeaders::default()),
            link: Arc::default(),
            max_message: super::DEFAULT_MAX_MESSAGE_BYTES,
        }
    }

    pub(crate) fn session(&self) -> Option<String> {
        lock(&self.session).clone()
    }

    pub(crate) fn set_session(&self, s: Option<String>) {
        self.link.set_session(s.as_deref());
        *lock(&self.session) = s;
    }

    /// Keeps `s`, the session id an answer carried, unless it is the one
    /// kept already (every answer of a session carries it).
    pub(crate) fn note_session(&self, s: &str) {
        if lock(&self.session).as_deref() != Some(s) {
            self.set_session(Some(s.to_owned()));
        }
    }

    pub(crate) fn version(&self) -> Option<String> {
        lock(&self.version).clone()
    }

    /// A request to `uri` with the user's extra headers, and `session` as
    /// `Mcp-Session-Id`. Built in place (no `http::request::Builder`, which
    /// moves the whole request at every step and parses each header again).
    pub(crate) fn request_to(
        &self,
        uri: &Uri,
        method: Method,
        body: Option<Bytes>,
        accept: &'static str,
        session: Option<&str>,
    ) -> Request<Bytes> {
        let has_body = body.is_some();
        let mut req = Request::new(body.unwrap_or_default());
        *req.method_mut() = method;
        *req.uri_mut() = uri.clone();
        // The connection's own URL is most often passed as itself.
        let own = std::ptr::eq(uri, &self.url) || *uri == self.url;
        let h = req.headers_mut();
        h.reserve(4 + self.extra_headers.len());
        h.insert(http::header::ACCEPT, HeaderValue::from_static(accept));
        if has_body {
            h.insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
        }
        if let Some(s) = session.and_then(|s| HeaderValue::from_str(s).ok()) {
            h.insert(names::MCP_SESSION_ID.clone(), s);
        }
        if let (Some(host), true) = (&self.host, own) {
            h.insert(http::header::HOST, host.clone());
        }
        for name in self.extra_headers.keys() {
            h.remove(name);
        }
        for (k, v) in &self.extra_headers {
            h.append(k.clone(), v.clone());
        }
        req
    }

    /// A request to the user's URL carrying the current session.
    pub(crate) fn request(
        &self,
        method: Method,
        body: Option<Bytes>,
        accept: &'static str,
    ) -> Request<Bytes> {
        let session = self.session();
        self.request_to(&self.url, method, body, accept, session.as_deref())
    }

    /// Sends a request built by `build`, with the credentials of the
    /// [`HttpAuth`] if there is one; on a 401/403 the hook may renew them and
    /// the request is built and sent again (at most [`MAX_AUTH_ATTEMPTS`]
    /// times in all).
    pub(crate) async fn exchange(
        &self,
        build: impl Fn() -> Request<Bytes>,
    ) -> Result<Response, String> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut req = build();
            if let Some(auth) = self.auth.get() {
                let (method, uri) = (req.method().clone(), req.uri().clone());
                auth.authorize_boxed(&method, &uri, req.headers_mut())
                    .await?;
            }
            // What the observer is shown: a copy of the request as sent.
            let seen = self.observer.get().map(|o| {
                let parts = (
                    req.method().clone(),
                    req.uri().clone(),
                    req.headers().clone(),
                );
                let id = crate::client_observe::next_exchange_id();
                (o, parts, req.body().clone(), std::time::Instant::now(), id)
            });
            let answer = self.client.send(self, req).await;
            if let Some((observer, (method, uri, headers), body, started, id)) = &seen {
                observer.exchange(&HttpExchange {
                    id: *id,
                    method,
                    url: uri,
                    request_headers: headers,
                    request_body: body,
                    outcome: match &answer {
                        Ok(r) => Ok((r.status(), r.headers())),
                        Err(e) => Err(e.as_str()),
                    },
                    elapsed: started.elapsed(),
                    attempt,
                });
            }
            let mut response = answer?;
            self.link.set_http_version(response.version());
            if let Some((observer, _, _, _, id)) = seen {
                response = response.map(|body| {
                    AnswerBody::Boxed(reqwest::Body::wrap(
                        super::observed_body::ObservedBody::new(body, observer.clone(), id),
                    ))
                });
            }
            let status = response.status();
            let challenged = status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN;
            let Some(auth) = self.auth.get().filter(|_| challenged) else {
                return Ok(response);
            };
            if attempt >= MAX_AUTH_ATTEMPTS {
                return Ok(response);
            }
            match auth
                .challenge_boxed(&self.url, status, response.headers())
                .await
            {
                ChallengeOutcome::Retry => continue,
                ChallengeOutcome::Pass => return Ok(response),
                ChallengeOutcome::Fail(why) => {
                    return Err(format!("HTTP {}: {why}", status.as_u16()));
                }
            }
        }
    }

    /// Turns `req` into reqwest's request. A request to the user's URL (every
    /// POST, and the GET and DELETE of a session) reuses the URL parsed once
    /// at the start instead of parsing its text again.
    fn to_reqwest(&self, req: Request<Bytes>) -> Result<reqwest::Request, String> {
        let failed = |e: &reqwest::Error| format!("HTTP request failed: {}", error_chain(e));
        let url = match &self.parsed_url {
            Some(url) if *req.uri() == self.url => url.clone(),
            _ => return reqwest::Request::try_from(req).map_err(|e| failed(&e)),
        };
        let (parts, body) = req.into_parts();
        let mut out = reqwest::Request::new(parts.method, url);
        *out.headers_mut() = parts.headers;
        *out.version_mut() = parts.version;
        *out.body_mut() = Some(body.into());
        Ok(out)
    }

    /// Remembers the version an `initialize` answer negotiated.
    pub(crate) fn note_version(&self, response: &Value) {
        let answer: InitializeAnswer = object_view(response);
        if let Some(v) = answer
            .result
            .into_valid()
            .and_then(|r| r.protocol_version.into_valid())
        {
            *lock(&self.version) = Some(v);
        }
    }

    /// Hands one message (or batch) from the server to the engine. Answers
    /// to `tools/list` are read first: tools with invalid `x-mcp-header`
    /// annotations are left out, and the others' mirrored parameters kept.
    pub(crate) async fn deliver(&self, bytes: &[u8]) {
        let rewritten = self.absorb_tools_list(bytes);
        let bytes = rewritten.as_deref().unwrap_or(bytes);
        let _ = self
            .inbound
            .send(Incoming::Bytes(BytesMut::from(bytes)))
            .await;
    }

    /// Hands the engine one message the transport read as a result
    /// response to `id` ([`RawResult::read_response`] of `bytes`), with
    /// what it read, so that the engine does not read it again. An answer
    /// to a `tools/list` is read whole first, as [`Shared::deliver`] does.
    pub(crate) async fn deliver_result(&self, bytes: Bytes, id: RequestId, result: RawResult) {
        let awaited_list = {
            let ids = lock(&self.tools_list_ids);
            !ids.is_empty() && ids.contains(&id)
        };
        if awaited_list {
            return self.deliver(&bytes).await;
        }
        let _ = self
            .inbound
            .send(Incoming::Result { bytes, id, result })
            .await;
    }

    fn absorb_tools_list(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        let mut ids = lock(&self.tools_list_ids);
        if ids.is_empty() {
            return None;
        }
        let v: Value = serde_json::from_slice(bytes).ok()?;
        let id = object_view::<Envelope>(&v).answers()?;
        if !ids.remove(&id) {
            return None;
        }
        drop(ids);
        let mut answer: ToolsAnswer = object_view(&v);
        if lock(&self.tool_headers).absorb_list(&mut answer) {
            // Through a tree: its members written in order, as before.
            let v = serde_json::to_value(&answer).ok()?;
            serde_json::to_vec(&v).ok()
        } else {
            None
        }
    }

    /// Answers a request locally with an error (the server gave no JSON-RPC answer).
    pub(crate) async fn fail(&self, id: &RequestId, message: String) {
        self.answer_locally(id, super::failure::local_error(message))
            .await;
    }

    /// Answers request `id` with a transport error that says the session
    /// is lost and the request was not served
    /// ([`TransportFailure::session_lost`](super::failure::TransportFailure::session_lost)).
    pub(crate) async fn fail_lost(&self, id: &RequestId, message: String) {
        self.answer_locally(id, super::failure::session_lost_error(message))
            .await;
    }

    async fn answer_locally(&self, id: &RequestId, e: ErrorObject) {
        lock(&self.tools_list_ids).remove(id);
        let m = JsonRpcMessage::error(Some(id.clone()), e);
        self.deliver(&serde_json::to_vec(&m).unwrap_or_default())
            .await;
    }

    /// Ends the connection because the server forgot session `stale` (it
    /// answered `404`): the standalone stream stops, no `DELETE` is sent,
    /// and the transport reports its end once the answers already delivered
    /// are read. A transport never sets up a session by itself: the client
    /// reconnects, negotiates again and restores what the old session had.
    ///
    /// The connection is marked lost before the session is cleared, so a
    /// POST that reads no session after this began (see
    /// [`streamable::post`](super::streamable::post)) always finds it lost and
    /// is never sent without its session.
    pub(crate) fn lose_session(&self, stale: &str) {
        let was_lost = self.lost.send_replace(true);
        {
            let mut session = lock(&self.session);
            if session.as_deref() == Some(stale) {
                *session = None;
                self.link.set_session(None);
            }
        }
        self.stop_listen();
        if !was_lost {
            tracing::info!("the server forgot session {stale}; the connection ends");
        }
    }

    /// The next message for the engine from `inbound`. Once the session is
    /// lost, the end ([`SessionLost`](tessera_runtime::SessionLost)) comes
    /// after every POST on its way has its outcome read.
    pub(crate) async fn next_incoming(
        &self,
        inbound: &mut mpsc::Receiver<Incoming>,
    ) -> std::io::Result<Option<Incoming>> {
        let mut lost = self.lost.subscribe();
        tokio::select! {
            biased;
            m = inbound.recv() => return Ok(m),
            _ = lost.wait_for(|l| *l) => {}
        }
        loop {
            // Registered before the count is read: a POST that ends after
            // the read wakes it.
            let settled = self.settled.notified();
            tokio::pin!(settled);
            settled.as_mut().enable();
            if self.in_flight.load(Ordering::SeqCst) == 0 {
                return match inbound.try_recv() {
                    Ok(m) => Ok(Some(m)),
                    Err(_) => Err(tessera_runtime::SessionLost::io_error()),
                };
            }
            tokio::select! {
                biased;
                m = inbound.recv() => return Ok(m),
                _ = settled => {}
            }
        }
    }

    /// Whether the server forgot the session.
    pub(crate) fn is_lost(&self) -> bool {
        *self.lost.borrow()
    }

    /// Counts a POST until the guard drops.
    pub(crate) fn post_started(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(self.clone())
    }

    /// Stops the standalone GET stream, if one is open.
    pub(crate) fn stop_listen(&self) {
        if let Some(h) = lock(&self.listen).take() {
            h.abort();
        }
    }
}

/// A POST on its way (see [`Shared::post_started`]).
pub(crate) struct InFlight(Arc<Shared>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.0.settled.notify_waiters();
    }
}

/// The `Host` header an HTTP/1.1 client writes for `url` (its host, and
/// its port unless the scheme's default), for `http://` URLs only: over
/// `https://` the connection may speak HTTP/2, which names the host
/// otherwise.
fn host_header(url: &Uri) -> Option<http::HeaderValue> {
    if url.scheme_str() != Some("http") {
        return None;
    }
    let host = url.host()?;
    let value = match url.port_u16() {
        Some(port) if port != 80 => format!("{host}:{port}"),
        _ => host.to_owned(),
    };
    http::HeaderValue::from_str(&value).ok()
}

/// An error with its sources (the HTTP client's own message is terse).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        source = inner.source();
    }
    s
}

/// What the transport needs to know of an outgoing message.
pub(crate) struct Outgoing {
    pub body: Bytes,
    pub request_id: Option<RequestId>,
    pub method: Option<String>,
    /// The `_meta` protocol version of a 2026-07-28 message.
    pub modern_version: Option<String>,
    /// `params.name` or `params.uri`.
    pub name: Option<String>,
    /// The `Mcp-Param-*` headers of a 2026-07-28 `tools/call`.
    pub param_headers: Vec<(http::HeaderName, http::HeaderValue)>,
}

impl Outgoing {
    /// Reads what matters of `t`; notes a 2026-07-28 `tools/list` so that its
    /// answer is read, and mirrors `x-mcp-header` parameters of a `tools/call`.
    pub(crate) fn describe(t: &Transmit, shared: &Shared) -> Outgoing {
        let body = Bytes::from(t.message.to_bytes());
        let single = match &t.message {
            Outbound::Single(m) => Some(m),
            Outbound::Batch(_) | Outbound::Raw(_) => None,
        };
        let (request_id, method, params) = match single {
            Some(JsonRpcMessage::Request(r)) => (
                Some(r.id.clone()),
                Some(r.method.clone()),
                r.params.as_ref(),
            ),
            Some(JsonRpcMessage::Notification(n)) => {
                (None, Some(n.method.clone()), n.params.as_ref())
            }
            _ => (None, None, None),
        };
        // The members the engine noted when it wrote the params text (a
        // forwarded request's); else params text is read for them alone, in
        // one pass.
        let mut head = match (&t.mirrored, params.and_then(Params::raw)) {
            (Some(m), Some(_)) => Some(super::params_head::ParamsHead::from(&**m)),
            (_, text) => text.and_then(|t| super::params_head::ParamsHead::read(t.get())),
        };
        let modern_version = match &mut head {
            Some(h) => h.version.take(),
            None => params.and_then(modern_version),
        };
        let head = head.as_ref();
        let member = |p, key| member_of(head, p, key);
        // Mcp-Name mirrors params.name or params.uri, and for the Tasks
        // extension's methods params.taskId.
        let named = params.and_then(|p| match method.as_deref() {
            Some(methods::TASKS_GET | methods::TASKS_UPDATE | methods::TASKS_CANCEL) => {
                Some(member(p, "taskId")).filter(Option::is_some)
            }
            Some(methods::RESOURCES_READ) => Some(member(p, "uri")).filter(Option::is_some),
            _ => Some(member(p, "name")).filter(Option::is_some),
        });
        let name = match named {
            // Absent: the uri, if any.
            None => params.and_then(|p| member(p, "uri")),
            Some(present) => present,
        }
        .and_then(|v| match v {
            MemberRef::Borrowed(Value::String(s)) => Some(s.clone()),
            MemberRef::Owned(Value::String(s)) => Some(s),
            _ => None,
        });
        let mut param_headers = Vec::new();
        if modern_version.is_some() {
            match (method.as_deref(), &request_id) {
                (Some(methods::TOOLS_LIST), Some(id)) => {
                    lock(&shared.tools_list_ids).insert(id.clone());
                }
                (Some(methods::TOOLS_CALL), _) => {
                    let known = lock(&shared.tool_headers);
                    let mirrored = name.as_deref().and_then(|n| known.get(n));
                    if let Some(p) = mirrored.filter(|p| !p.is_empty()) {
                        let arguments = params.and_then(|p| member(p, "arguments"));
                        param_headers = headers_for(p, arguments.as_ref().map(MemberRef::get));
                    }
                }
                _ => {}
            }
        }
        if method.as_deref() == Some(methods::NOTIFICATIONS_CANCELLED) {
            // A cancelled request may never be answered: stop waiting for it
            // (every message is read whole while a `tools/list` is awaited).
            let id = params
                .and_then(|p| member(p, "requestId"))
                .and_then(|v| RequestId::deserialize(v.get()).ok());
            if let Some(id) = id {
                lock(&shared.tools_list_ids).remove(&id);
            }
        }
        Outgoing {
            body,
            request_id,
            method,
            modern_version,
            name,
            param_headers,
        }
    }
}

/// [`member`], `name` and `uri` taken from `head` when the text was read
/// for them.
fn member_of<'a>(
    head: Option<&super::params_head::ParamsHead>,
    params: &'a Params,
    key: &str,
) -> Option<MemberRef<'a>> {
    match (head, key) {
        (Some(h), "name") => h.name.clone().map(MemberRef::Owned),
        (Some(h), "uri") => h.uri.clone().map(MemberRef::Owned),
        _ => member(params, key),
    }
}

/// A member of params: borrowed from their tree, or read on its own from
/// their text.
enum MemberRef<'a> {
    Borrowed(&'a Value),
    Owned(Value),
}

impl MemberRef<'_> {
    fn get(&self) -> &Value {
        match self {
            MemberRef::Borrowed(v) => v,
            MemberRef::Owned(v) => v,
        }
    }
}

/// The member `key` of `params` (any type, `null` included), read without
/// copying the others: looked up in the tree when the params are one (a
/// proxy's rewritten params), read from the text otherwise (`name` and
/// `uri` read once, with `_meta`).
fn member<'a>(params: &'a Params, key: &str) -> Option<MemberRef<'a>> {
    if params.raw().is_none() {
        return params.object().get(key).map(MemberRef::Borrowed);
    }
    match key {
        "name" => params.name().map(MemberRef::Borrowed),
        "uri" => params.uri().map(MemberRef::Borrowed),
        _ => params.member(key).map(MemberRef::Owned),
    }
}

/// The protocol version in the `_meta` of a 2026-07-28 message's params
/// (`_meta` an object, the version a string).
fn modern_version(params: &Params) -> Option<String> {
    let key = tessera_proto::meta_keys::PROTOCOL_VERSION;
    match params.raw() {
        None => params
            .object()
            .get("_meta")?
            .as_object()?
            .get(key)?
            .as_str()
            .map(str::to_owned),
        // Read from `_meta`'s text, no tree built.
        Some(_) => params.meta()?.str_member(key)?.ok().map(|v| v.into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headers::MCP_SESSION_ID;

    /// A connection's shared state for `url`, with the receiver of its
    /// inbound messages (kept so the channel stays open).
    fn shared_at(url: &str) -> (Shared, mpsc::Receiver<Incoming>) {
        let (inbound, rx) = mpsc::channel(1);
        let s = Shared::new(
            HttpClient::new(reqwest::Client::new(), &url.parse().unwrap()),
            url.parse().unwrap(),
            HeaderMap::new(),
            inbound,
        );
        (s, rx)
    }

    #[test]
    fn a_request_keeps_its_parts_whether_its_url_was_parsed_before_or_not() {
        let url: Uri = "http://127.0.0.1:8000/mcp?x=1".parse().unwrap();
        let (s, _rx) = shared_at("http://127.0.0.1:8000/mcp?x=1");
        // The connection's own URL (parsed once) and another one (an
        // HTTP+SSE message endpoint, parsed per request).
        let other: Uri = "http://127.0.0.1:8000/message?sessionId=abc"
            .parse()
            .unwrap();
        for uri in [url, other] {
            let body = Bytes::from_static(b"{\"jsonrpc\":\"2.0\"}");
            let req = s.request_to(
                &uri,
                Method::POST,
                Some(body.clone()),
                "text/event-stream",
                Some("sid"),
            );
            let out = s.to_reqwest(req).unwrap();
            assert_eq!(out.method(), Method::POST);
            assert_eq!(out.url().as_str(), uri.to_string());
            assert_eq!(out.headers()[MCP_SESSION_ID], "sid");
            // The connection's own URL gets its Host header made once;
            // another is left to the HTTP client.
            let host = out.headers().get(http::header::HOST);
            assert_eq!(
                host.map(|h| h.to_str().unwrap()),
                (uri == s.url).then_some("127.0.0.1:8000")
            );
            assert_eq!(out.headers()[http::header::ACCEPT], "text/event-stream");
            assert_eq!(
                out.headers()[http::header::CONTENT_TYPE],
                "application/json"
            );
            assert_eq!(out.body().and_then(|b| b.as_bytes()), Some(&body[..]));
        }
        // The connection's URL passed as itself; no body, no session: no
        // content type, no session header.
        let req = s.request_to(&s.url, Method::GET, None, "text/event-stream", None);
        assert_eq!(req.headers()[http::header::HOST], "127.0.0.1:8000");
        assert_eq!(req.headers()[http::header::ACCEPT], "text/event-stream");
        assert!(req.headers().get(http::header::CONTENT_TYPE).is_none());
        assert!(req.headers().get(MCP_SESSION_ID).is_none());
        assert_eq!(req.uri(), &s.url);
    }

    #[tokio::test(start_paused = true)]
    async fn after_a_loss_the_end_waits_for_every_post_on_its_way() {
        let (s, mut rx) = shared_at("http://127.0.0.1:8000/mcp");
        let s = Arc::new(s);
        s.set_session(Some("s1".into()));
        let (first, second) = (s.post_started(), s.post_started());
        s.lose_session("s1");
        assert_eq!(s.session(), None);
        // A message delivered meanwhile comes before the end.
        s.deliver(b"{}").await;
        let next = s.next_incoming(&mut rx).await.unwrap();
        assert!(matches!(next, Some(Incoming::Bytes(_))));
        drop(first);
        // One POST still on its way: no end yet, and the last one that
        // ends wakes the wait.
        let wait = std::time::Duration::from_secs(3600);
        let end = tokio::time::timeout(wait, async {
            let (end, ()) = tokio::join!(s.next_incoming(&mut rx), async {
                tokio::task::yield_now().await;
                drop(second);
            });
            end
        })
        .await
        .expect("the end came once the last POST ended");
        assert!(tessera_runtime::SessionLost::is(&end.unwrap_err()));
    }

    #[tokio::test]
    async fn a_session_id_is_kept_and_changed_by_answers() {
        let (s, _rx) = shared_at("http://127.0.0.1:8000/mcp");
        s.note_session("a");
        assert_eq!(s.session().as_deref(), Some("a"));
        s.note_session("a");
        assert_eq!(s.session().as_deref(), Some("a"));
        s.note_session("b");
        assert_eq!(s.session().as_deref(), Some("b"));
    }

    #[test]
    fn the_host_header_names_a_port_only_when_not_the_default() {
        let host =
            |u: &str| host_header(&u.parse().unwrap()).map(|h| h.to_str().unwrap().to_owned());
        assert_eq!(
            host("http://example.com/mcp").as_deref(),
            Some("example.com")
        );
        assert_eq!(
            host("http://example.com:80/mcp").as_deref(),
            Some("example.com")
        );
        assert_eq!(host("http://[::1]:8000/mcp").as_deref(), Some("[::1]:8000"));
        assert_eq!(host("https://example.com/mcp"), None);
    }

    #[test]
    fn mirrored_members_are_read_from_a_tree_and_from_text_alike() {
        let text = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","x":[1]},"name":"echo","arguments":{"a":1},"requestId":"r"}"#;
        let from_text =
            Params::from_raw(serde_json::value::RawValue::from_string(text.into()).unwrap())
                .unwrap();
        let from_tree =
            Params::from(serde_json::from_str::<tessera_types::JsonObject>(text).unwrap());
        for p in [&from_text, &from_tree] {
            assert_eq!(modern_version(p).as_deref(), Some("2026-07-28"));
            assert_eq!(member(p, "name").unwrap().get(), "echo");
            assert_eq!(member(p, "arguments").unwrap().get()["a"], 1);
            assert_eq!(member(p, "requestId").unwrap().get(), "r");
            assert!(member(p, "uri").is_none());
        }
        let legacy = Params::from(
            serde_json::from_str::<tessera_types::JsonObject>(
                r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}"#,
            )
            .unwrap(),
        );
        assert_eq!(modern_version(&legacy), None, "not a string");
    }

    #[test]
    fn the_members_the_engine_noted_are_taken_without_reading_the_text() {
        let (s, _rx) = shared_at("http://127.0.0.1:8000/mcp");
        let text =
            r#"{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#;
        let request = |params: Params| {
            JsonRpcMessage::Request(tessera_types::JsonRpcRequest {
                jsonrpc: tessera_types::JsonRpcVersion,
                id: RequestId::Number(1),
                method: methods::TOOLS_CALL.into(),
                params: Some(params),
            })
        };
        let as_text =
            || Params::from_raw(serde_json::value::RawValue::from_string(text.into()).unwrap());
        // Noted members that differ from the text tell which was used.
        let noted = tessera_types::EditedHead {
            version: Some("noted".into()),
            name: Some(Value::String("noted-name".into())),
            uri: None,
        };
        let describe = |params: Params, mirrored: Option<&tessera_types::EditedHead>| {
            let t = Transmit {
                message: Outbound::Single(request(params)),
                related: None,
                mirrored: mirrored.cloned().map(Box::new),
            };
            let o = Outgoing::describe(&t, &s);
            (o.modern_version, o.name)
        };
        assert_eq!(
            describe(as_text().unwrap(), Some(&noted)),
            (Some("noted".into()), Some("noted-name".into()))
        );
        // Nothing noted: the text is read.
        assert_eq!(
            describe(as_text().unwrap(), None),
            (Some("2026-07-28".into()), Some("echo".into()))
        );
        // Params that are a tree are looked up in the tree.
        let tree = Params::from(serde_json::from_str::<tessera_types::JsonObject>(text).unwrap());
        assert_eq!(
            describe(tree, Some(&noted)),
            (Some("2026-07-28".into()), Some("echo".into()))
        );
    }

    #[test]
    fn a_cancelled_tools_list_is_no_longer_awaited() {
        let (s, _rx) = shared_at("http://127.0.0.1:8000/mcp");
        let params = |v: Value| match v {
            Value::Object(o) => Some(o),
            _ => None,
        };
        let send = |m: JsonRpcMessage| {
            let t = Transmit {
                message: Outbound::Single(m),
                related: None,
                mirrored: None,
            };
            Outgoing::describe(&t, &s);
        };
        let meta = serde_json::json!({"_meta": {
            tessera_proto::meta_keys::PROTOCOL_VERSION: "2026-07-28"
        }});
        send(JsonRpcMessage::request(
            RequestId::Number(5),
            methods::TOOLS_LIST,
            params(meta),
        ));
        assert!(lock(&s.tools_list_ids).contains(&RequestId::Number(5)));
        send(JsonRpcMessage::notification(
            methods::NOTIFICATIONS_CANCELLED,
            params(serde_json::json!({"requestId": 5})),
        ));
        assert!(lock(&s.tools_list_ids).is_empty());
    }
}
