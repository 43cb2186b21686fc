//! [`OneShot`]: an engine that serves a few messages inside the caller's task.
//!
//! A stateless HTTP server answers each POST with a fresh engine. Spawning a
//! driver task for it (and hopping through channels to reach it) costs more
//! than the request itself, so the one-shot engine runs where the request is
//! handled: the caller feeds it messages and awaits [`OneShot::next`], which
//! polls the handlers it started (in that same task) and hands back what the
//! engine writes, in order. Handlers still get a working [`Peer`] for
//! progress, logs and notifications.

use foldhash::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tessera_types::methods;

use futures::FutureExt;
use futures::stream::{FuturesUnordered, StreamExt};
use tessera_proto::{Engine, EngineConfig, Event, Transmit};
use tessera_types::{ErrorObject, JsonObject, JsonRpcMessage, RequestId};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use crate::peer::{Command, OutgoingRequest, Peer, PeerError, PeerInfo};
use crate::service::{BoxFuture, HandlerResult, Notification, Request, Service};

/// A handler that finished: its request and what it answered.
type Finished = (RequestId, HandlerResult);

/// One engine run in the caller's task.
///
/// The configuration must list the methods the service serves (as
/// [`EngineConfig::methods`]); it is shared, never rebuilt.
pub struct OneShot<S> {
    engine: Engine,
    service: Arc<S>,
    peer: Peer,
    commands: mpsc::UnboundedReceiver<Command>,
    _info: watch::Sender<PeerInfo>,
    handlers: FuturesUnordered<BoxFuture<'static, Finished>>,
    tokens: HashMap<RequestId, CancellationToken>,
    outgoing: HashMap<RequestId, oneshot::Sender<Result<JsonObject, PeerError>>>,
    /// Notifications waiting to be handled, in arrival order.
    notifications: Vec<Notification>,
    extensions: crate::Extensions,
}

impl<S> std::fmt::Debug for OneShot<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OneShot")
            .field("handlers", &self.handlers.len())
            .finish_non_exhaustive()
    }
}

fn now() -> std::time::Instant {
    tokio::time::Instant::now().into_std()
}

impl<S: Service> OneShot<S> {
    /// A fresh engine over a shared configuration and service.
    pub fn new(config: Arc<EngineConfig>, service: Arc<S>) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let (info_tx, info_rx) = watch::channel(PeerInfo::default());
        OneShot {
            engine: Engine::new(config),
            service,
            peer: Peer::new(tx, info_rx),
            commands: rx,
            _info: info_tx,
            handlers: FuturesUnordered::new(),
            tokens: HashMap::default(),
            outgoing: HashMap::default(),
            notifications: Vec::new(),
            extensions: crate::Extensions::new(),
        }
    }

    /// Carries on a legacy session, or starts as if a client had completed
    /// the handshake (see [`Engine::restore_session`]).
    pub fn restore_session(&mut self, snapshot: tessera_proto::SessionSnapshot) {
        self.engine.restore_session(snapshot);
    }

    /// The handle handlers get (closing it ends [`OneShot::next`]).
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Feeds one message; the handlers of the requests it carries see
    /// `extensions`. Handlers start running at the next [`OneShot::next`].
    pub fn handle(&mut self, message: JsonRpcMessage, extensions: crate::Extensions) {
        self.extensions = extensions;
        self.engine.handle_message(now(), message);
        self.process_events();
    }

    /// Tells the engine the client gave up on request `id`: its handler is
    /// cancelled and its answer dropped (as `notifications/cancelled` would).
    pub fn cancel(&mut self, id: &RequestId, reason: &str) {
        let mut p = JsonObject::new();
        p.insert(
            "requestId".into(),
            serde_json::to_value(id).unwrap_or_default(),
        );
        p.insert("reason".into(), reason.into());
        let n = JsonRpcMessage::notification(methods::NOTIFICATIONS_CANCELLED, Some(p));
        self.handle(n, crate::Extensions::new());
    }

    /// The next message the engine writes. Runs the handlers (and the
    /// notifications) in this task meanwhile. `None` once nothing is left in
    /// progress, or the engine is closed.
    pub async fn next(&mut self) -> Option<Transmit> {
        loop {
            if let Some(t) = self.engine.poll_transmit() {
                return Some(t);
            }
            if self.engine.is_closed() {
                return None;
            }
            if !self.notifications.is_empty() {
                for n in std::mem::take(&mut self.notifications) {
                    let _ = AssertUnwindSafe(self.service.handle_notification(n))
                        .catch_unwind()
                        .await;
                }
                continue;
            }
            if self.handlers.is_empty() {
                // Nothing can produce a message any more, except a command
                // already queued (a late notification from a handler's peer).
                match self.commands.try_recv() {
                    Ok(c) => {
                        self.apply(c);
                        continue;
                    }
                    Err(_) => return None,
                }
            }
            let deadline = self.engine.poll_timeout();
            tokio::select! {
                biased;
                Some(c) = self.commands.recv() => self.apply(c),
                Some((id, outcome)) = self.handlers.next() => {
                    // What the handler sent through its peer (progress, logs)
                    // goes out before its answer.
                    while let Ok(c) = self.commands.try_recv() {
                        self.apply(c);
                    }
                    self.tokens.remove(&id);
                    self.engine.respond(&id, outcome);
                }
                // Requests a handler sent to the client time out as usual.
                _ = sleep_until(deadline), if deadline.is_some() => {
                    self.engine.handle_timeout(now());
                }
                else => return None,
            }
            self.process_events();
        }
    }

    fn process_events(&mut self) {
        while let Some(ev) = self.engine.poll_event() {
            match ev {
                Event::Request(r) => self.start_handler(r),
                Event::Notification { method, params } => {
                    self.notifications.push(Notification {
                        method,
                        params,
                        peer: self.peer.clone(),
                    });
                }
                Event::Cancelled { id, .. } => {
                    if let Some(t) = self.tokens.get(&id) {
                        t.cancel();
                    }
                }
                Event::Response { id, outcome } => {
                    if let Some(reply) = self.outgoing.remove(&id) {
                        let _ = reply.send(outcome.map_err(PeerError::Call));
                    }
                }
                Event::Initialized { version } => {
                    self.service.on_initialized(self.peer.clone(), version);
                }
                other => tracing::debug!(?other, "one-shot engine: event ignored"),
            }
        }
    }

    fn start_handler(&mut self, r: tessera_proto::IncomingRequest) {
        let token = CancellationToken::new();
        self.tokens.insert(r.id.clone(), token.clone());
        let id = r.id.clone();
        let fut = self.service.handle_request(Request::new(
            r,
            self.peer.clone(),
            token.clone(),
            self.extensions.clone(),
        ));
        self.handlers.push(Box::pin(async move {
            tokio::select! {
                biased;
                _ = token.cancelled() => {
                    // The engine sends nothing for a cancelled request; this only clears it.
                    (id, Err(ErrorObject::internal("cancelled")))
                }
                out = AssertUnwindSafe(fut).catch_unwind() => {
                    let outcome = out.unwrap_or_else(|_| {
                        Err(ErrorObject::internal("Internal error: the request handler panicked"))
                    });
                    (id, outcome)
                }
            }
        }));
    }

    fn apply(&mut self, c: Command) {
        match c {
            Command::Request(r) => {
                let OutgoingRequest {
                    method,
                    params,
                    options,
                    reply,
                    assigned,
                    ..
                } = *r;
                match self.engine.send_request(now(), &method, params, options) {
                    Ok(id) => {
                        if let Some(a) = assigned {
                            let _ = a.send(id.clone());
                        }
                        self.outgoing.insert(id, reply);
                    }
                    Err(e) => {
                        let _ = reply.send(Err(PeerError::Send(e.to_string())));
                    }
                }
            }
            // A one-shot engine never waits on its own requests after the caller stops.
            Command::CancelRequest { .. } | Command::SessionChanged | Command::ApplySession(_) => {}
            notice @ (Command::Notify { .. } | Command::Progress { .. } | Command::Log { .. }) => {
                let _ = notice.send_notice(&mut self.engine);
            }
            Command::Connect { reply, .. } => {
                let _ = reply.send(Err(PeerError::Send(
                    "a one-shot engine serves requests; it does not connect".into(),
                )));
            }
            Command::Close => {
                self.engine.close();
                for (_, t) in self.tokens.drain() {
                    t.cancel();
                }
                for (_, reply) in self.outgoing.drain() {
                    let _ = reply.send(Err(PeerError::Closed));
                }
            }
        }
    }
}

async fn sleep_until(deadline: Option<std::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d.into()).await,
        None => std::future::pending().await,
    }
}

impl<S> Drop for OneShot<S> {
    fn drop(&mut self) {
        // Handlers holding a clone of the token see the request end.
        for (_, t) in self.tokens.drain() {
            t.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_proto::{Outbound, ServerIdentity};
    use tessera_types::{Era, ProtocolVersion};

    /// Answers `echo` with its params, after a log message; `wait` waits
    /// until cancelled.
    struct Echo;

    impl Service for Echo {
        fn methods(&self) -> Vec<String> {
            vec!["echo".into(), "wait".into()]
        }
        fn handle_request(&self, r: Request) -> BoxFuture<'static, HandlerResult> {
            Box::pin(async move {
                if r.method == "wait" {
                    r.cancel.cancelled().await;
                    return Err(ErrorObject::internal("cancelled"));
                }
                // Logged right before the answer: it must still go out first.
                r.peer
                    .log("info", None, "working".into(), Some(r.id.clone()));
                Ok(r.params.unwrap_or_default())
            })
        }
    }

    fn engine() -> OneShot<Echo> {
        let config = EngineConfig::server(ServerIdentity::default()).with_methods(Echo.methods());
        OneShot::new(Arc::new(config), Arc::new(Echo))
    }

    fn request(id: i64, method: &str) -> JsonRpcMessage {
        let mut p = JsonObject::new();
        p.insert("x".into(), 1.into());
        JsonRpcMessage::request(RequestId::Number(id), method, Some(p))
    }

    #[tokio::test]
    async fn serves_a_request_after_an_assumed_handshake() {
        let mut e = engine();
        assert_eq!(Era::Legacy, ProtocolVersion::V2025_11_25.era());
        e.restore_session(tessera_proto::SessionSnapshot::new(
            ProtocolVersion::V2025_11_25,
        ));
        e.handle(request(1, "echo"), crate::Extensions::new());
        let log = e.next().await.expect("the log message");
        assert_eq!(log.related, Some(RequestId::Number(1)));
        let Some(Outbound::Single(JsonRpcMessage::Result(r))) = e.next().await.map(|t| t.message)
        else {
            panic!("expected the result");
        };
        assert_eq!(r.result.get("x"), Some(&1.into()));
        assert!(e.next().await.is_none(), "nothing left in progress");
    }

    #[tokio::test]
    async fn refuses_before_a_handshake_and_cancels() {
        let mut e = engine();
        e.handle(request(1, "echo"), crate::Extensions::new());
        let t = e.next().await.expect("an error");
        assert!(matches!(
            t.message,
            Outbound::Single(JsonRpcMessage::Error(_))
        ));
        e.restore_session(tessera_proto::SessionSnapshot::new(
            ProtocolVersion::V2025_06_18,
        ));
        e.handle(request(2, "wait"), crate::Extensions::new());
        e.cancel(&RequestId::Number(2), "gone");
        assert!(
            e.next().await.is_none(),
            "a cancelled request gets no answer"
        );
    }
}
