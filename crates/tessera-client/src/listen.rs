//! `subscriptions/listen` (2026-07-28): long-lived notification streams,
//! demultiplexed by `_meta.io.modelcontextprotocol/subscriptionId`.
//!
//! Every notification of a stream carries the JSON-RPC id of the
//! `subscriptions/listen` request that opened it. The client learns that id
//! as the request is sent and routes tagged notifications to the matching
//! [`ListenStream`]; one that arrives before its stream is registered is held
//! briefly (a bounded buffer) and handed over on registration.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use tessera_types::methods;

use futures::Stream;
use serde_json::Value;
use tessera_proto::RequestOptions;
use tessera_types::{
    Era, JsonObject, NotificationMethod, RequestId, SubscriptionFilter,
    SubscriptionsAcknowledgedNotification, SubscriptionsAcknowledgedNotificationParams,
};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::client::{Client, ClientInner};
use crate::error::ClientError;
use crate::events::ClientEvent;

/// How a subscription ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ListenEnd {
    /// The server ended it gracefully (it answered the `subscriptions/listen` request).
    Graceful,
    /// The connection closed and the subscription was not re-established
    /// (no reconnection, or the client closed).
    Closed,
    /// The request failed.
    Failed(String),
}

const ORPHAN_LIMIT: usize = 256;

type Key = (u64, RequestId);

#[derive(Debug, Default)]
struct Registry {
    active: HashMap<Key, mpsc::UnboundedSender<ClientEvent>>,
    orphans: VecDeque<(Key, ClientEvent)>,
}

/// The open subscription streams, by connection generation and request id.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    inner: Mutex<Registry>,
}

impl Subscriptions {
    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Delivers a tagged notification (or holds it until its stream registers).
    pub fn route(&self, generation: u64, id: RequestId, n: ClientEvent) {
        let key = (generation, id);
        let mut r = self.lock();
        if let Some(tx) = r.active.get(&key) {
            let _ = tx.send(n);
            return;
        }
        if r.orphans.len() >= ORPHAN_LIMIT {
            r.orphans.pop_front();
        }
        r.orphans.push_back((key, n));
    }

    fn register(
        self: &Arc<Self>,
        key: Key,
        tx: mpsc::UnboundedSender<ClientEvent>,
    ) -> Registration {
        let mut r = self.lock();
        let mut kept = VecDeque::new();
        for (k, n) in r.orphans.drain(..) {
            if k == key {
                let _ = tx.send(n);
            } else {
                kept.push_back((k, n));
            }
        }
        r.orphans = kept;
        r.active.insert(key.clone(), tx);
        Registration {
            subs: self.clone(),
            key,
        }
    }

    /// Forgets what is held for connections before `generation`.
    pub fn forget_before(&self, generation: u64) {
        let mut r = self.lock();
        r.orphans.retain(|((g, _), _)| *g >= generation);
        r.active.retain(|(g, _), _| *g >= generation);
    }
}

struct Registration {
    subs: Arc<Subscriptions>,
    key: Key,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.subs.lock().active.remove(&self.key);
    }
}

/// The notifications of one `subscriptions/listen` subscription.
///
/// Read it with [`ListenStream::recv`] or as a [`Stream`]. Dropping it
/// cancels the subscription (`notifications/cancelled` on stdio). When the
/// connection is lost and the client reconnects, the stream re-sends
/// `subscriptions/listen` (the server keeps no subscription state across
/// connections); the new acknowledgment then arrives on the stream as a
/// [`ClientEvent::SubscriptionsAcknowledged`] item. Notifications sent while
/// disconnected are lost.
#[derive(Debug)]
pub struct ListenStream {
    rx: mpsc::UnboundedReceiver<ClientEvent>,
    acknowledged: SubscriptionFilter,
    end: Arc<Mutex<Option<ListenEnd>>>,
    task: JoinHandle<()>,
}

impl ListenStream {
    /// What the server agreed to send (its acknowledgment). Check it against
    /// what was asked: unsupported notification types are left out.
    pub fn acknowledged(&self) -> &SubscriptionFilter {
        &self.acknowledged
    }

    /// The next notification; `None` once the subscription ended.
    pub async fn recv(&mut self) -> Option<ClientEvent> {
        self.rx.recv().await
    }

    /// Why the subscription ended, once it has.
    pub fn end(&self) -> Option<ListenEnd> {
        self.end
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl Stream for ListenStream {
    type Item = ClientEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for ListenStream {
    fn drop(&mut self) {
        // Dropping the task drops its request future, which cancels the request.
        self.task.abort();
    }
}

impl Client {
    /// Opens a `subscriptions/listen` stream (2026-07-28) for the
    /// notifications in `filter`, and returns once the server acknowledged it:
    /// from then on, matching changes are delivered. Several streams may be
    /// open at once; each gets only its own notifications, typed as
    /// [`ClientEvent`]s (never the connection events). All of them are also
    /// delivered on [`Client::events`], and they invalidate the response
    /// cache.
    ///
    /// In the legacy era there is no such method: list changes arrive on
    /// [`Client::events`] unasked, and resource updates after
    /// [`Client::subscribe`].
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<ListenStream, ClientError> {
        if self.era() != Era::Modern {
            return Err(ClientError::Unsupported(format!(
                "subscriptions/listen in protocol version {} (use subscribe() and events())",
                self.protocol_version()
            )));
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let (ack_tx, ack_rx) = oneshot::channel();
        let end = Arc::new(Mutex::new(None));
        let job = Subscription {
            client: Arc::downgrade(&self.inner),
            subs: self.inner.shared.subscriptions.clone(),
            generation: self.inner.shared.generation.subscribe(),
            filter,
            out: tx,
            end: end.clone(),
        };
        let task = tokio::spawn(job.run(ack_tx));
        match ack_rx.await {
            Ok(Ok(acknowledged)) => Ok(ListenStream {
                rx,
                acknowledged,
                end,
                task,
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(ClientError::Request(tessera_runtime::PeerError::Closed)),
        }
    }
}

type AckSender = oneshot::Sender<Result<SubscriptionFilter, ClientError>>;

struct Subscription {
    client: Weak<ClientInner>,
    subs: Arc<Subscriptions>,
    generation: watch::Receiver<u64>,
    filter: SubscriptionFilter,
    out: mpsc::UnboundedSender<ClientEvent>,
    end: Arc<Mutex<Option<ListenEnd>>>,
}

impl Subscription {
    fn finish(&self, end: ListenEnd) {
        *self
            .end
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(end);
    }

    async fn run(mut self, ack: AckSender) {
        let mut ack = Some(ack);
        loop {
            let Some(client) = self.client.upgrade() else {
                self.finish(ListenEnd::Closed);
                return;
            };
            let (peer, generation, _) = client.current();
            let can_resubscribe = client.can_resubscribe();
            let closed = client.is_closing();
            drop(client);
            if closed {
                self.finish(ListenEnd::Closed);
                return;
            }
            self.generation.mark_unchanged();
            let outcome = self.once(&peer, generation, &mut ack).await;
            match outcome {
                Ok(()) => {
                    self.finish(ListenEnd::Graceful);
                    return;
                }
                Err(e) if e.is_closed() && can_resubscribe && ack.is_none() => {
                    // Wait for the next connection, then listen again.
                    if self.generation.changed().await.is_err() {
                        self.finish(ListenEnd::Closed);
                        return;
                    }
                }
                Err(e) => {
                    let end = if e.is_closed() {
                        ListenEnd::Closed
                    } else {
                        ListenEnd::Failed(e.to_string())
                    };
                    self.finish(end);
                    if let Some(a) = ack.take() {
                        let _ = a.send(Err(e));
                    }
                    return;
                }
            }
        }
    }

    /// One `subscriptions/listen` request, until it ends.
    async fn once(
        &self,
        peer: &tessera_runtime::Peer,
        generation: u64,
        ack: &mut Option<AckSender>,
    ) -> Result<(), ClientError> {
        let mut params = JsonObject::new();
        params.insert(
            "notifications".into(),
            serde_json::to_value(&self.filter).unwrap_or(Value::Null),
        );
        let (id_tx, id_rx) = oneshot::channel();
        let options = RequestOptions {
            no_timeout: true,
            ..RequestOptions::default()
        };
        let request =
            peer.request_with_id(methods::SUBSCRIPTIONS_LISTEN, Some(params), options, id_tx);
        tokio::pin!(request);
        let id = tokio::select! {
            id = id_rx => match id {
                Ok(id) => id,
                Err(_) => return request.await.map(|_| ()).map_err(ClientError::from_peer),
            },
            r = &mut request => return r.map(|_| ()).map_err(ClientError::from_peer),
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        let _registration = self.subs.register((generation, id), tx);
        let outcome = loop {
            tokio::select! {
                biased;
                Some(n) = rx.recv() => self.deliver(n, ack),
                r = &mut request => break r,
            }
        };
        while let Ok(n) = rx.try_recv() {
            self.deliver(n, ack);
        }
        outcome.map(|_| ()).map_err(ClientError::from_peer)
    }

    fn deliver(&self, n: ClientEvent, ack: &mut Option<AckSender>) {
        if n.method() == Some(SubscriptionsAcknowledgedNotification::METHOD) {
            if let Some(a) = ack.take() {
                let granted = n
                    .params_as::<SubscriptionsAcknowledgedNotificationParams>()
                    .map(|p| p.notifications)
                    .unwrap_or_default();
                let _ = a.send(Ok(granted));
                return;
            }
        }
        let _ = self.out.send(n);
    }
}
