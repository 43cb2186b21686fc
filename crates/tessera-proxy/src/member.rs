//! One upstream of an [`Aggregator`](crate::Aggregator): its pooled
//! connection, the supervisor that keeps it open (reconnecting with
//! backoff), and the way every request reaches it: through its circuit
//! breaker and concurrency cap, retried once only when it was never
//! written (see [`crate::resilience`]).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tessera_proto::{ConnectMode, RequestOptions};
use tessera_runtime::{BoxFuture, HandlerResult, Request};
use tessera_types::{
    Era, ErrorObject, JsonObject, SubscriptionFilter, SubscriptionsListenRequestParams, methods,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::callers::{Callers, IDLE, Lease, Refused};

pub(crate) mod resources;
use crate::calls::Calls;
use crate::config::UpstreamConfig;
use crate::forward::{Failure, Fate, forward, send};
use crate::hub::{Hub, Origin};
use crate::naming::Naming;
use crate::resilience::{Circuit, CircuitState, Places, RETRY_WAIT};
use crate::route::{ask_sole, log};
use crate::upstream::{Sink, Upstream, UpstreamOptions, all_client_capabilities, proxy_identity};

/// The traffic of one upstream's pooled connection.
pub(crate) struct MemberSink {
    naming: Naming,
    calls: Arc<Calls>,
    hub: Arc<Hub>,
    /// The caller whose own connection this is (`None`: the pooled one).
    origin: Option<Origin>,
}

impl MemberSink {
    /// The sink of a connection to the upstream named by `naming` with the
    /// requests `calls` in flight, announcing its changes on `hub`;
    /// `origin` names the caller whose own connection it is.
    pub fn new(naming: Naming, calls: Arc<Calls>, hub: Arc<Hub>, origin: Option<Origin>) -> Self {
        MemberSink {
            naming,
            calls,
            hub,
            origin,
        }
    }
}

impl Sink for MemberSink {
    fn request(
        &self,
        method: String,
        params: Option<JsonObject>,
    ) -> BoxFuture<'static, HandlerResult> {
        ask_sole(&self.calls, "pooled", method, params)
    }

    fn notification(&self, method: String, params: Option<JsonObject>) {
        match method.as_str() {
            methods::NOTIFICATIONS_MESSAGE => {
                log(self.calls.sole().ok().as_ref(), None, params.as_ref())
            }
            methods::NOTIFICATIONS_PROGRESS | methods::NOTIFICATIONS_CANCELLED => {}
            tessera_runtime::CLOSE_SSE_STREAM_NOTIFICATION => {}
            methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED => {}
            _ => self
                .hub
                .announce(&self.naming, self.origin, &method, params.as_ref()),
        }
    }
}

/// One upstream of the aggregator.
pub(crate) struct Member {
    /// Its configuration entry.
    pub entry: UpstreamConfig,
    /// How its names are shown to clients (from the entry).
    pub naming: Naming,
    /// The options of its connection (the entry's timeout applied).
    pub options: UpstreamOptions,
    conn: Mutex<Option<Arc<Upstream>>>,
    /// The requests in flight on its connection.
    pub calls: Arc<Calls>,
    /// Whether it is connected now.
    pub alive: watch::Sender<bool>,
    /// How many lost caller connections were made again, with their
    /// subscriptions.
    pub restored: watch::Sender<u64>,
    circuit: Circuit,
    places: Places,
    /// One connection per caller instead of the pooled one, for an
    /// upstream whose credentials depend on the caller.
    callers: Option<Callers>,
    /// The listen streams that carry resource subscriptions to it when
    /// it speaks 2026-07-28 ([`resources`]).
    streams: resources::Streams,
    /// Stops its supervisor (and closes its connection).
    pub stop: CancellationToken,
    /// The instructions it gave in its last handshake.
    instructions: Mutex<Option<String>>,
}

/// The connection a request goes through: the pooled one, or the
/// caller's own.
enum Conn {
    Pooled(Arc<Upstream>),
    Caller(Lease),
}

impl Conn {
    fn upstream(&self) -> &Arc<Upstream> {
        match self {
            Conn::Pooled(up) => up,
            Conn::Caller(l) => &l.up,
        }
    }
}

impl Member {
    /// A member for `entry` (not started: see [`supervise`]); `stop` stops
    /// it.
    pub fn new(
        entry: UpstreamConfig,
        options: &UpstreamOptions,
        stop: CancellationToken,
        hub: &Arc<Hub>,
    ) -> Self {
        let mut o = options.clone();
        if entry.timeout.is_some() {
            o.request_timeout = entry.timeout;
        }
        Member {
            callers: entry
                .caller
                .clone()
                .map(|c| Callers::new(c, entry.naming(), hub.clone())),
            circuit: Circuit::new(entry.breaker),
            places: Places::new(entry.max_concurrent),
            naming: entry.naming(),
            entry,
            options: o,
            conn: Mutex::new(None),
            calls: Arc::new(Calls::default()),
            streams: resources::Streams::default(),
            alive: watch::channel(false).0,
            restored: watch::channel(0).0,
            stop,
            instructions: Mutex::new(None),
        }
    }

    /// The instructions it gave in its last handshake, if any.
    pub fn instructions(&self) -> Option<String> {
        self.instructions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Keeps the instructions `up` gave in its handshake, telling `hub`
    /// when they changed (new sessions are then told them).
    fn learn(&self, up: &Upstream, hub: &Hub) {
        let said = &up.connected.instructions;
        let mut held = self.instructions.lock().unwrap_or_else(|e| e.into_inner());
        if *held != *said {
            held.clone_from(said);
            drop(held);
            hub.told.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        }
    }

    /// The state `/readyz` shows: `connected`, `reconnecting`,
    /// `circuit-open` or `circuit-half-open`; `per-caller` for an upstream
    /// connected to per caller, on demand, whose circuit is closed.
    pub fn state(&self) -> &'static str {
        if self.callers.is_none() && self.current().is_none() {
            return "reconnecting";
        }
        match self.circuit.state_at(tokio::time::Instant::now()) {
            CircuitState::Closed if self.callers.is_some() => "per-caller",
            CircuitState::Closed => "connected",
            CircuitState::Open => "circuit-open",
            CircuitState::HalfOpen => "circuit-half-open",
        }
    }

    /// Forwards `r` (as `method` with `params`) through the circuit breaker
    /// and the concurrency cap; a request that never reached the upstream
    /// is sent once more on its next connection (waiting for it at most
    /// [`RETRY_WAIT`]).
    pub async fn call(
        &self,
        r: &Request,
        method: &str,
        params: JsonObject,
    ) -> Result<JsonObject, ErrorObject> {
        let name = &self.entry.name;
        let mut retried = false;
        loop {
            // Admitted first: a caller's connection made now counts, when
            // it cannot be made, as a failure of the upstream.
            let pass = self.circuit.admit(name, tokio::time::Instant::now())?;
            let conn = match self.connection(r).await {
                Ok(c) => c,
                Err(refused) => {
                    if refused.upstream_failed {
                        pass.finish(Fate::Lost);
                    }
                    return Err(refused.error);
                }
            };
            let (up, calls) = match &conn {
                Conn::Pooled(up) => (up, &self.calls),
                Conn::Caller(l) => (&l.up, &l.calls),
            };
            let place = self.place(r).await?;
            let out = forward(up, calls, r, method, Some(params.clone())).await;
            drop(place);
            match out {
                Ok(result) => {
                    pass.finish(Fate::Answered);
                    return Ok(result);
                }
                Err(Failure { error, fate }) => {
                    pass.finish(fate);
                    if fate != Fate::Unsent || retried {
                        return Err(error);
                    }
                    retried = true;
                    tracing::debug!(upstream = %name, %method, "never sent; retrying on the next connection");
                    let next = match (&conn, &self.callers) {
                        (Conn::Caller(lease), Some(callers)) => {
                            // The caller's next request connects again.
                            callers.forget(lease);
                            true
                        }
                        _ => self.next_connection(conn.upstream(), r).await,
                    };
                    if !next {
                        return Err(error);
                    }
                }
            }
        }
    }

    /// Sends a list request (`None` when the upstream is down, its circuit
    /// refuses, or the request fails: the list goes on without it).
    pub async fn page(
        &self,
        r: &Request,
        method: &str,
        params: Option<JsonObject>,
    ) -> Option<JsonObject> {
        let pass = self
            .circuit
            .admit(&self.entry.name, tokio::time::Instant::now())
            .ok()?;
        let conn = match self.connection(r).await {
            Ok(c) => c,
            Err(refused) => {
                tracing::debug!(upstream = %self.entry.name, %method, error = %refused.error.message, "left out of the list for this caller");
                if refused.upstream_failed {
                    pass.finish(Fate::Lost);
                }
                return None;
            }
        };
        let up = conn.upstream();
        let _place = self.place(r).await.ok()?;
        match send(up, r, method, params).await {
            Ok(page) => {
                pass.finish(Fate::Answered);
                Some(page)
            }
            Err(Failure { error, fate }) => {
                pass.finish(fate);
                tracing::warn!(upstream = %self.entry.name, %method, %error, "left out of the list");
                None
            }
        }
    }

    /// A place under the concurrency cap, waiting at most the request
    /// timeout, and no longer than the client does.
    async fn place(&self, r: &Request) -> Result<tokio::sync::OwnedSemaphorePermit, ErrorObject> {
        tokio::select! {
            p = self.places.take(&self.entry.name, self.options.request_timeout) => p,
            _ = r.cancel.cancelled() => Err(ErrorObject::internal("cancelled by the client")),
        }
    }

    /// Waits (at most [`RETRY_WAIT`], and no longer than the client) for a
    /// connection other than `old`; whether one came.
    async fn next_connection(&self, old: &Arc<Upstream>, r: &Request) -> bool {
        let mut alive = self.alive.subscribe();
        let wait = async {
            loop {
                if self.current().is_some_and(|c| !Arc::ptr_eq(&c, old)) {
                    return true;
                }
                if alive.changed().await.is_err() {
                    return false;
                }
            }
        };
        tokio::select! {
            got = tokio::time::timeout(RETRY_WAIT, wait) => got.unwrap_or(false),
            _ = r.cancel.cancelled() => false,
        }
    }

    /// The connection `r` goes through: the caller's own for an upstream
    /// with caller-dependent credentials, else the pooled one.
    async fn connection(&self, r: &Request) -> Result<Conn, Refused> {
        match &self.callers {
            Some(callers) => {
                let lease = callers.lease(r, &self.options).await?;
                self.learn(&lease.up, callers.hub());
                if lease.again {
                    // A connection made again for a caller whose earlier
                    // one was lost: its subscriptions come with it.
                    self.resubscribe(&lease.up, Some(lease.key), callers.hub())
                        .await;
                    self.restored.send_modify(|n| *n += 1);
                }
                Ok(Conn::Caller(lease))
            }
            None => Ok(self.upstream().map(Conn::Pooled)?),
        }
    }

    /// Makes again the lost connections of callers that carried their
    /// subscriptions, and the subscriptions on them (see
    /// [`Callers::restore`]).
    async fn restore_callers(&self, callers: &Callers, hub: &Hub) {
        for (key, entry) in callers.lost(tokio::time::Instant::now()) {
            match callers.restore(&entry, &self.options, &self.stop).await {
                Ok(Some(up)) => {
                    self.resubscribe(&up, Some(key), hub).await;
                    self.restored.send_modify(|n| *n += 1);
                    tracing::info!(upstream = %self.entry.name, "a caller's connection made again, with its subscriptions");
                }
                Ok(None) => {}
                Err(refused) => {
                    tracing::warn!(upstream = %self.entry.name, error = %refused.error.message, retried = refused.upstream_failed, "a caller's lost connection not made again")
                }
            }
        }
    }

    /// The key of the caller of `r` for an upstream reached per caller
    /// (`None` for the pooled connection); refused, with the error its
    /// caller gets, when the caller has no token it may be reached with.
    pub fn caller_key(&self, r: &Request) -> Result<Option<[u8; 32]>, ErrorObject> {
        self.callers.as_ref().map(|c| c.key(r)).transpose()
    }

    /// Whether it is reached on one connection per caller.
    pub fn per_caller(&self) -> bool {
        self.callers.is_some()
    }

    /// How many callers have a connection of their own now.
    pub fn caller_connections(&self) -> usize {
        self.callers.as_ref().map_or(0, Callers::len)
    }

    /// The connection now, if it is open.
    pub fn current(&self) -> Option<Arc<Upstream>> {
        self.conn
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .filter(|u| u.is_open())
    }

    /// The connection now, or the error a request to it gets.
    pub fn upstream(&self) -> Result<Arc<Upstream>, ErrorObject> {
        self.current().ok_or_else(|| {
            ErrorObject::internal(format!(
                "upstream {} is unavailable (reconnecting)",
                self.entry.name
            ))
        })
    }
}

/// What a 2026-07-28 connection, which hears of changes only on a listen
/// stream, listens for: the list changes.
pub(crate) fn list_changes() -> SubscriptionFilter {
    SubscriptionFilter {
        tools_list_changed: Some(true),
        prompts_list_changed: Some(true),
        resources_list_changed: Some(true),
        ..SubscriptionFilter::default()
    }
}

/// Listens on `peer` for the list changes until the stream or the
/// connection ends (a legacy connection, `era`, hears of them unasked:
/// returns at once).
async fn listen_for_lists(era: Era, peer: tessera_runtime::Peer) {
    if era != Era::Modern {
        return;
    }
    let every = SubscriptionsListenRequestParams {
        meta: None,
        notifications: list_changes(),
    };
    let p = crate::shapes::write(&every).unwrap_or_default();
    let options = RequestOptions {
        no_timeout: true,
        ..RequestOptions::default()
    };
    let _ = peer
        .request(methods::SUBSCRIPTIONS_LISTEN, Some(p), options)
        .await;
}

/// Keeps `member` connected until its `stop` fires: connects, and
/// reconnects with backoff (0.2 s doubling up to 5 s) whenever the
/// connection ends, telling `hub`'s sessions that the lists changed.
pub(crate) async fn supervise(member: Arc<Member>, hub: Arc<Hub>) {
    let stop = member.stop.clone();
    const FIRST: Duration = Duration::from_millis(200);
    const MOST: Duration = Duration::from_secs(5);
    let mut delay = FIRST;
    if let Some(callers) = &member.callers {
        // Connected to per caller, on demand: usable at once; close what
        // callers left idle, and make again the lost connections that
        // carried subscriptions.
        let _ = member.alive.send_replace(true);
        hub.lists_changed();
        loop {
            let now = tokio::time::Instant::now();
            let wake = callers
                .next_retry()
                .map_or(IDLE / 4, |at| at.saturating_duration_since(now))
                .min(IDLE / 4);
            tokio::select! {
                _ = tokio::time::sleep(wake) => {}
                _ = callers.one_lost() => {}
                _ = stop.cancelled() => {
                    callers.clear();
                    return;
                }
            }
            callers.reap(tokio::time::Instant::now());
            tokio::select! {
                _ = member.restore_callers(callers, &hub) => {}
                _ = stop.cancelled() => {
                    callers.clear();
                    return;
                }
            }
        }
    }
    let spec = member.entry.spec.clone();
    loop {
        let sink = Arc::new(MemberSink::new(
            member.naming.clone(),
            member.calls.clone(),
            hub.clone(),
            None,
        ));
        let connecting = Upstream::connect(
            &spec,
            ConnectMode::Auto,
            proxy_identity(all_client_capabilities()),
            sink,
            &member.options,
            None,
        );
        let outcome = tokio::select! {
            o = connecting => o,
            _ = stop.cancelled() => return,
        };
        match outcome {
            Ok(up) => {
                let up = Arc::new(up);
                *member.conn.lock().unwrap_or_else(|e| e.into_inner()) = Some(up.clone());
                member.learn(&up, &hub);
                // What the sessions subscribed to through the connection
                // before this one is asked for again on this one, before the
                // upstream counts as connected.
                tokio::select! {
                    _ = member.resubscribe(&up, None, &hub) => {}
                    _ = stop.cancelled() => {
                        up.close().await;
                        return;
                    }
                }
                let _ = member.alive.send_replace(true);
                hub.lists_changed();
                delay = FIRST;
                tracing::info!(upstream = %member.entry.name, "connected");
                // A 2026-07-28 upstream tells of changes on a listen stream.
                let listen = async {
                    listen_for_lists(up.era(), up.peer.clone()).await;
                    std::future::pending::<()>().await
                };
                tokio::select! {
                    _ = up.peer_closed() => {}
                    _ = listen => {}
                    _ = stop.cancelled() => {
                        up.close().await;
                        return;
                    }
                }
                *member.conn.lock().unwrap_or_else(|e| e.into_inner()) = None;
                let _ = member.alive.send_replace(false);
                hub.lists_changed();
                tracing::warn!(upstream = %member.entry.name, "connection lost; reconnecting");
            }
            Err(e) => tracing::warn!(upstream = %member.entry.name, %e, "cannot connect"),
        }
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = stop.cancelled() => return,
        }
        delay = (delay * 2).min(MOST);
    }
}
