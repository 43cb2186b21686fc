//! [`Client`]: the connected handle, and the path every request takes
//! (options, `_meta`, progress, the response cache, re-issue after a lost
//! connection).

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use tessera_types::methods;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_proto::{ConnectMode, Connected, EngineConfig, meta_keys};
use tessera_runtime::{ConnectionOptions, Peer};
use tessera_types::{
    ClientCapabilities, Era, Implementation, JsonObject, LoggingLevel, ProgressNotificationParams,
    ProtocolVersion, ServerCapabilities, WithMeta,
};
use tokio::sync::mpsc;

use crate::cache::{self, CacheStats};
use crate::connect::{Conn, DynConnector};
use crate::error::ClientError;
use crate::events::{ClientEvent, EventStream};
use crate::input::to_object;
use crate::options::{CallOptions, ReconnectPolicy};
use crate::service::Shared;

/// Methods that can be re-issued safely after the connection was lost
/// (they change nothing on the server).
pub(crate) const IDEMPOTENT_METHODS: [&str; 9] = [
    methods::TOOLS_LIST,
    methods::PROMPTS_LIST,
    methods::PROMPTS_GET,
    methods::RESOURCES_LIST,
    methods::RESOURCES_TEMPLATES_LIST,
    methods::RESOURCES_READ,
    methods::COMPLETION_COMPLETE,
    methods::SERVER_DISCOVER,
    methods::PING,
];

/// Settings fixed at build time.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub max_rounds: usize,
    pub max_pages: usize,
    pub retry_idempotent: bool,
    pub reconnect: ReconnectPolicy,
    pub resubscribe: bool,
    pub mode: ConnectMode,
    pub engine: EngineConfig,
    pub connection: ConnectionOptions,
}

/// Session state a legacy connection needs again after reconnecting.
#[derive(Debug, Default)]
pub(crate) struct Remembered {
    pub log_level: Option<LoggingLevel>,
    pub subscriptions: BTreeSet<String>,
}

pub(crate) struct ClientInner {
    pub shared: Arc<Shared>,
    pub conn: Mutex<Conn>,
    pub reconnecting: tokio::sync::Mutex<()>,
    pub connector: Option<Arc<dyn DynConnector>>,
    pub settings: Settings,
    pub remembered: Mutex<Remembered>,
}

impl ClientInner {
    pub fn conn(&self) -> std::sync::MutexGuard<'_, Conn> {
        self.conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The current connection: its peer, generation and what it is.
    pub fn current(&self) -> (Peer, u64, Arc<Connected>) {
        let c = self.conn();
        (c.peer.clone(), c.generation, c.connected.clone())
    }

    pub fn can_resubscribe(&self) -> bool {
        self.settings.resubscribe && self.connector.is_some()
    }

    pub fn is_closing(&self) -> bool {
        self.shared.closed.load(Ordering::SeqCst)
    }

    pub fn remembered(&self) -> std::sync::MutexGuard<'_, Remembered> {
        self.remembered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Marks the client closed and wakes whoever waits for a new connection.
    pub fn mark_closed(&self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        self.shared.generation.send_modify(|_| {});
    }
}

impl Drop for ClientInner {
    fn drop(&mut self) {
        self.mark_closed();
        self.conn().peer.close();
    }
}

/// A connected MCP client. Cheap to clone: clones share the connection.
///
/// ```no_run
/// use tessera_client::{ClientBuilder, ChildCommand};
///
/// # async fn run() -> Result<(), tessera_client::ClientError> {
/// let client = ClientBuilder::new("example", "1.0")
///     .connect_child(&ChildCommand::new("tessera", ["serve", "--stdio"]))
///     .await?;
/// let tools = client.list_tools().await?;
/// let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
/// client.close().await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<ClientInner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (_, generation, c) = self.inner.current();
        f.debug_struct("Client")
            .field("era", &c.era)
            .field("version", &c.version)
            .field("generation", &generation)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Starts building a client.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> crate::ClientBuilder {
        crate::ClientBuilder::new(name, version)
    }

    pub(crate) fn connected(&self) -> Arc<Connected> {
        self.inner.conn().connected.clone()
    }

    /// The era in use.
    pub fn era(&self) -> Era {
        self.connected().era
    }

    /// The protocol version in use.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.connected().version
    }

    /// The server's name, version and other `Implementation` details. A
    /// server that sent a malformed `serverInfo` gets the parts that could be
    /// read (empty strings otherwise); the raw object is in
    /// [`Client::connect_result`].
    pub fn server_info(&self) -> Implementation {
        self.connected().server_info.clone()
    }

    /// The server's capabilities. Every member the server sent is kept:
    /// those this version of Tessera does not model, and modelled ones whose
    /// value does not fit, are in [`ServerCapabilities::other`] as sent, so
    /// serialising the value gives back what the server declared.
    pub fn server_capabilities(&self) -> ServerCapabilities {
        (*self.connected().server_capabilities).clone()
    }

    /// The server's instructions, if any.
    pub fn instructions(&self) -> Option<String> {
        self.connected().instructions.clone()
    }

    /// The whole `initialize` (legacy) or `server/discover` (2026-07-28)
    /// result the connection started with, exactly as the server sent it.
    pub fn connect_result(&self) -> JsonObject {
        self.connected().result.clone()
    }

    /// The capabilities this client declares (derived from its handlers).
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.inner.shared.inputs.caps
    }

    /// The underlying connection handle (it changes on reconnection).
    pub fn peer(&self) -> Peer {
        self.inner.conn().peer.clone()
    }

    /// How many times the client connected (1 before any reconnection).
    pub fn generation(&self) -> u64 {
        self.inner.conn().generation
    }

    /// The process id of the server, for a client started with
    /// [`ClientBuilder::connect_child`](crate::ClientBuilder::connect_child).
    pub fn child_id(&self) -> Option<u32> {
        self.inner.conn().child.as_ref().and_then(|c| c.id())
    }

    /// Whether the connection is still up.
    pub fn is_connected(&self) -> bool {
        let c = self.inner.conn();
        c.peer.is_open() && !*c.done.borrow()
    }

    /// Completes when the current connection ends (the server exited, the
    /// transport failed, or the client closed).
    pub async fn closed(&self) {
        let mut done = self.inner.conn().done.clone();
        let _ = done.wait_for(|d| *d).await;
    }

    /// Everything the server tells the client, typed, from now on: progress,
    /// logs, list changes, resource updates, URL elicitation completions,
    /// task status, subscription acknowledgments and connection changes.
    /// Each notification keeps its `_meta` ([`ClientEvent::meta`]) and its
    /// wire form ([`ClientEvent::method`], [`ClientEvent::params`]); any
    /// other notification arrives as [`ClientEvent::Other`] exactly as sent.
    /// A [`ClientExtension`](crate::ClientExtension) also receives its own.
    pub fn events(&self) -> EventStream {
        EventStream::new(self.inner.shared.events.subscribe())
    }

    /// The response cache's counters (all zero when the cache is off).
    pub fn cache_stats(&self) -> CacheStats {
        self.inner
            .shared
            .cache
            .as_ref()
            .map(|c| c.stats())
            .unwrap_or_default()
    }

    /// Empties the response cache.
    pub fn clear_cache(&self) {
        if let Some(c) = &self.inner.shared.cache {
            c.clear();
        }
    }

    /// Drops the cached results marked `cacheScope: "private"`: call it when
    /// the authorisation context changes (another user, another token).
    pub fn clear_private_cache(&self) {
        if let Some(c) = &self.inner.shared.cache {
            c.invalidate_private();
        }
    }

    /// Sends any request and returns its raw result (no multi round-trip
    /// handling: an `input_required` result is returned as it is).
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<JsonObject>,
    ) -> Result<JsonObject, ClientError> {
        self.send(method, params, &CallOptions::default()).await
    }

    /// [`Client::request_raw`] with options.
    pub async fn request_raw_with(
        &self,
        method: &str,
        params: Option<JsonObject>,
        options: &CallOptions,
    ) -> Result<JsonObject, ClientError> {
        self.send(method, params, options).await
    }

    /// Sends a request named by its marker type from `tessera_types` (its
    /// method, params and result types) and decodes the result:
    /// `client.request::<PingRequest>(&RequestParams::default())`.
    pub async fn request<R: tessera_types::RequestMethod>(
        &self,
        params: &R::Params,
    ) -> Result<R::Result, ClientError> {
        let raw = self.request_raw(R::METHOD, Some(to_object(params))).await?;
        decode(R::METHOD, raw)
    }

    /// The path of every request: the cache, `_meta` (log level, extra
    /// entries), progress, and one re-issue after a lost connection for
    /// idempotent methods when [`ClientBuilder::retry_idempotent`](crate::ClientBuilder::retry_idempotent) is on,
    /// or of any request the server refused because it forgot the session.
    pub(crate) async fn send(
        &self,
        method: &str,
        params: Option<JsonObject>,
        options: &CallOptions,
    ) -> Result<JsonObject, ClientError> {
        let cache = self.inner.shared.cache.as_ref();
        let key = cache.and_then(|_| cache::key(method, params.as_ref()));
        if let (Some(c), Some(k)) = (cache, &key) {
            if let Some(hit) = c.get(k) {
                return Ok(hit);
            }
        }
        let retry = self.inner.settings.retry_idempotent
            && self.inner.connector.is_some()
            && IDEMPOTENT_METHODS.contains(&method);
        let mut reissued = false;
        loop {
            self.renew_lost_session().await?;
            let (peer, generation, connected) = self.inner.current();
            let p = self.decorate(params.clone(), options, connected.era);
            match self.send_on(&peer, method, p, options).await {
                Ok(r) => {
                    if let (Some(c), Some(k)) = (cache, key) {
                        c.store(k, method, params.as_ref(), &r);
                    }
                    return Ok(r);
                }
                Err(e) if retry && !reissued && e.is_closed() => {
                    reissued = true;
                    tracing::debug!(%method, "connection lost; reconnecting to re-issue");
                    self.reconnect_from(generation).await?;
                }
                // The server never served it: safe to send again, whatever
                // the method, once a new session exists. A request that met
                // a connection already ended by the lost session was not
                // sent at all.
                Err(e)
                    if !reissued
                        && self.inner.connector.is_some()
                        && (e.is_session_lost()
                            || e.is_closed() && self.ended_by_lost_session(generation).await) =>
                {
                    reissued = true;
                    tracing::info!(%method, "the server forgot the session; reconnecting");
                    self.reconnect_from(generation).await?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether connection `generation` (still the current one) ended
    /// because the server forgot the session; waits a moment for its end to
    /// be recorded.
    async fn ended_by_lost_session(&self, generation: u64) -> bool {
        let (mut done, lost) = {
            let c = self.inner.conn();
            if c.generation != generation {
                return false;
            }
            (c.done.clone(), c.lost.clone())
        };
        let ended =
            tokio::time::timeout(std::time::Duration::from_secs(5), done.wait_for(|d| *d)).await;
        matches!(ended, Ok(Ok(_))) && lost.load(Ordering::SeqCst)
    }

    /// Reconnects first when the connection ended because the server forgot
    /// the session (a new request cannot act twice), if the client can.
    async fn renew_lost_session(&self) -> Result<(), ClientError> {
        if self.inner.connector.is_none() {
            return Ok(());
        }
        let (lost, generation) = {
            let c = self.inner.conn();
            (c.lost.load(Ordering::SeqCst), c.generation)
        };
        if lost {
            tracing::info!("the server forgot the session; reconnecting");
            self.reconnect_from(generation).await?;
        }
        Ok(())
    }

    /// Adds the per-request `_meta` entries.
    fn decorate(
        &self,
        params: Option<JsonObject>,
        options: &CallOptions,
        era: Era,
    ) -> Option<JsonObject> {
        let level = match era {
            Era::Modern => options.log_level.or(self.inner.remembered().log_level),
            Era::Legacy => None,
        };
        if level.is_none() && options.meta.is_empty() {
            return params;
        }
        let mut p = WithMeta::split_option(params);
        p.edit_meta(|m| {
            for (k, v) in &options.meta {
                m.insert(k.clone(), v.clone());
            }
            if let Some(l) = level {
                m.insert(
                    meta_keys::LOG_LEVEL.into(),
                    Value::String(l.as_str().into()),
                );
            }
        });
        Some(p.join())
    }

    async fn send_on(
        &self,
        peer: &Peer,
        method: &str,
        params: Option<JsonObject>,
        options: &CallOptions,
    ) -> Result<JsonObject, ClientError> {
        let ro = options.request_options();
        if !ro.progress {
            return peer
                .request(method, params, ro)
                .await
                .map_err(ClientError::from_peer);
        }
        let (tx, mut rx) = mpsc::unbounded_channel();
        let request = peer.request_with_progress(method, params, ro, tx);
        tokio::pin!(request);
        let out = loop {
            tokio::select! {
                biased;
                Some(p) = rx.recv() => self.progress(p, options),
                r = &mut request => break r,
            }
        };
        while let Ok(p) = rx.try_recv() {
            self.progress(p, options);
        }
        out.map_err(ClientError::from_peer)
    }

    fn progress(&self, params: JsonObject, options: &CallOptions) {
        let Ok(p) = serde_json::from_value::<ProgressNotificationParams>(Value::Object(params))
        else {
            tracing::debug!("ignored a malformed progress notification");
            return;
        };
        if let Some(cb) = &options.progress {
            cb(p.clone());
        }
        let _ = self.inner.shared.events.send(ClientEvent::Progress(p));
    }

    /// Closes the connection and, for a child process, shuts it down (close
    /// its stdin, wait, SIGTERM, SIGKILL). Requests in flight on any clone
    /// fail with a closed-connection error.
    pub async fn close(self) {
        self.inner.mark_closed();
        let (peer, mut done, child) = {
            let mut c = self.inner.conn();
            (c.peer.clone(), c.done.clone(), c.child.take())
        };
        peer.close();
        let _ = done.wait_for(|d| *d).await;
        if let Some(c) = child {
            let _ = c.shutdown().await;
        }
    }
}

pub(crate) fn decode<R: DeserializeOwned>(method: &str, raw: JsonObject) -> Result<R, ClientError> {
    serde_json::from_value(Value::Object(raw)).map_err(|source| ClientError::Decode {
        method: method.to_owned(),
        source,
    })
}
