//! [`Bus`]: messages between the instances serving one endpoint; [`LocalBus`]
//! for one process.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use foldhash::HashMap;
use futures::{Stream, StreamExt};
use tokio::sync::mpsc;

use super::store::StoreError;
use crate::BoxFuture;

/// A publish/subscribe channel between server instances, by topic.
///
/// Delivery is at most once and not persisted: a message reaches every
/// subscription made before it was published (the publisher's own
/// included), in the order one publisher published them; one made while it
/// was in flight may get it too. Payloads are opaque
/// bytes; topics are short strings (the users of a bus namespace them). The
/// rules are checked by `shared::bus_contract` (feature `testing`).
///
/// Implement it with `async fn`s; here a bus that wraps another and counts
/// what it publishes:
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use bytes::Bytes;
/// use tessera_runtime::{Bus, BusSubscription, LocalBus, StoreError};
///
/// struct Counting {
///     inner: LocalBus,
///     published: AtomicUsize,
/// }
///
/// impl Bus for Counting {
///     async fn publish(&self, topic: &str, payload: Bytes) -> Result<(), StoreError> {
///         self.published.fetch_add(1, Ordering::Relaxed);
///         self.inner.publish(topic, payload).await
///     }
///     async fn subscribe(&self, topic: &str) -> Result<BusSubscription, StoreError> {
///         self.inner.subscribe(topic).await
///     }
/// }
/// ```
pub trait Bus: Send + Sync + 'static {
    /// Sends `payload` to every current subscription of `topic`. Returns once
    /// the bus has taken the message (not when subscribers have read it).
    fn publish(
        &self,
        topic: &str,
        payload: Bytes,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Subscribes to `topic`. Every message published after this returns is
    /// delivered to the subscription; dropping it unsubscribes.
    fn subscribe(
        &self,
        topic: &str,
    ) -> impl Future<Output = Result<BusSubscription, StoreError>> + Send;
}

impl<B: Bus + ?Sized> Bus for Arc<B> {
    fn publish(
        &self,
        topic: &str,
        payload: Bytes,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        (**self).publish(topic, payload)
    }
    fn subscribe(
        &self,
        topic: &str,
    ) -> impl Future<Output = Result<BusSubscription, StoreError>> + Send {
        (**self).subscribe(topic)
    }
}

/// The object-safe form of [`Bus`] that the library holds
/// (`Arc<dyn DynBus>`): every `Bus` is one. Not for implementing or naming
/// in user code; implement [`Bus`].
#[doc(hidden)]
pub trait DynBus: Send + Sync + 'static {
    /// [`Bus::publish`], boxed.
    fn publish_boxed<'a>(
        &'a self,
        topic: &'a str,
        payload: Bytes,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// [`Bus::subscribe`], boxed.
    fn subscribe_boxed<'a>(
        &'a self,
        topic: &'a str,
    ) -> BoxFuture<'a, Result<BusSubscription, StoreError>>;
}

impl<B: Bus> DynBus for B {
    fn publish_boxed<'a>(
        &'a self,
        topic: &'a str,
        payload: Bytes,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.publish(topic, payload))
    }
    fn subscribe_boxed<'a>(
        &'a self,
        topic: &'a str,
    ) -> BoxFuture<'a, Result<BusSubscription, StoreError>> {
        Box::pin(self.subscribe(topic))
    }
}

/// The calls of a held bus, as [`Bus`]'s (no import needed).
impl dyn DynBus {
    /// [`Bus::publish`].
    pub fn publish<'a>(
        &'a self,
        topic: &'a str,
        payload: Bytes,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.publish_boxed(topic, payload)
    }
    /// [`Bus::subscribe`].
    pub fn subscribe<'a>(
        &'a self,
        topic: &'a str,
    ) -> BoxFuture<'a, Result<BusSubscription, StoreError>> {
        self.subscribe_boxed(topic)
    }
}

/// A held bus is used through [`Bus`] like any other (one box per call,
/// made by [`DynBus`]).
impl Bus for dyn DynBus {
    async fn publish(&self, topic: &str, payload: Bytes) -> Result<(), StoreError> {
        self.publish_boxed(topic, payload).await
    }
    async fn subscribe(&self, topic: &str) -> Result<BusSubscription, StoreError> {
        self.subscribe_boxed(topic).await
    }
}

/// The messages of one subscription, a [`Stream`] of payloads. Dropping it
/// unsubscribes. It ends when the bus is gone (a networked bus that lost its
/// connection ends its subscriptions; their owners subscribe again).
pub struct BusSubscription {
    // In a mutex only to be `Sync` (it is only reached through `&mut self`,
    // with `get_mut`, never locked).
    inner: Mutex<Pin<Box<dyn Stream<Item = Bytes> + Send>>>,
}

impl std::fmt::Debug for BusSubscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BusSubscription").finish_non_exhaustive()
    }
}

impl BusSubscription {
    /// A subscription reading `stream` (which unsubscribes when dropped).
    pub fn new(stream: impl Stream<Item = Bytes> + Send + 'static) -> Self {
        BusSubscription {
            inner: Mutex::new(Box::pin(stream)),
        }
    }

    /// A subscription reading a channel; `on_drop` runs when it is dropped
    /// (to unsubscribe).
    pub fn from_channel(
        receiver: mpsc::Receiver<Bytes>,
        on_drop: impl FnOnce() + Send + 'static,
    ) -> Self {
        BusSubscription::new(Channel {
            receiver,
            on_drop: Some(Box::new(on_drop)),
        })
    }

    /// The next message, `None` when the subscription ended.
    pub async fn recv(&mut self) -> Option<Bytes> {
        self.stream().next().await
    }

    fn stream(&mut self) -> &mut Pin<Box<dyn Stream<Item = Bytes> + Send>> {
        self.inner.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Stream for BusSubscription {
    type Item = Bytes;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        self.stream().as_mut().poll_next(cx)
    }
}

struct Channel {
    receiver: mpsc::Receiver<Bytes>,
    on_drop: Option<Box<dyn FnOnce() + Send>>,
}

impl Stream for Channel {
    type Item = Bytes;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        self.receiver.poll_recv(cx)
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        if let Some(f) = self.on_drop.take() {
            f();
        }
    }
}

/// An in-process [`Bus`]: for one process, and for tests that run several
/// instances in one process (clone it, or share it in an `Arc`). Each
/// subscription buffers up to `capacity` messages; a subscriber that falls
/// further behind loses the newest (with a warning), as a networked bus
/// drops a client whose output buffer overflows.
#[derive(Debug, Clone)]
pub struct LocalBus {
    inner: Arc<Topics>,
}

#[derive(Debug)]
struct Topics {
    capacity: usize,
    map: Mutex<TopicMap>,
}

#[derive(Debug, Default)]
struct TopicMap {
    next: u64,
    topics: HashMap<String, Vec<(u64, mpsc::Sender<Bytes>)>>,
}

impl Topics {
    fn lock(&self) -> MutexGuard<'_, TopicMap> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl LocalBus {
    /// A bus whose subscriptions buffer up to 4,096 messages each.
    pub fn new() -> Self {
        LocalBus::with_capacity(4096)
    }

    /// A bus whose subscriptions buffer up to `capacity` messages each.
    pub fn with_capacity(capacity: usize) -> Self {
        LocalBus {
            inner: Arc::new(Topics {
                capacity: capacity.max(1),
                map: Mutex::new(TopicMap::default()),
            }),
        }
    }

    /// How many subscriptions `topic` has.
    pub fn subscribers(&self, topic: &str) -> usize {
        self.inner.lock().topics.get(topic).map_or(0, Vec::len)
    }
}

impl Default for LocalBus {
    fn default() -> Self {
        LocalBus::new()
    }
}

impl Bus for LocalBus {
    fn publish(
        &self,
        topic: &str,
        payload: Bytes,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        let mut g = self.inner.lock();
        if let Some(subs) = g.topics.get_mut(topic) {
            subs.retain(|(_, tx)| match tx.try_send(payload.clone()) {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    tracing::warn!(topic, "bus subscriber too slow: message dropped");
                    true
                }
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            });
            if subs.is_empty() {
                g.topics.remove(topic);
            }
        }
        std::future::ready(Ok(()))
    }

    fn subscribe(
        &self,
        topic: &str,
    ) -> impl Future<Output = Result<BusSubscription, StoreError>> + Send {
        let (tx, rx) = mpsc::channel(self.inner.capacity);
        let key = {
            let mut g = self.inner.lock();
            g.next += 1;
            let key = g.next;
            g.topics
                .entry(topic.to_owned())
                .or_default()
                .push((key, tx));
            key
        };
        let topics = Arc::downgrade(&self.inner);
        let topic_owned = topic.to_owned();
        let sub = BusSubscription::from_channel(rx, move || {
            let Some(topics) = topics.upgrade() else {
                return;
            };
            let mut g = topics.lock();
            if let Some(subs) = g.topics.get_mut(&topic_owned) {
                subs.retain(|(k, _)| *k != key);
                if subs.is_empty() {
                    g.topics.remove(&topic_owned);
                }
            }
        });
        std::future::ready(Ok(sub))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn meets_the_contract() {
        super::super::bus_contract::run(&LocalBus::new()).await;
    }

    #[tokio::test]
    async fn dropping_unsubscribes() {
        let bus = LocalBus::new();
        let a = bus.subscribe("t").await.unwrap();
        let _b = bus.subscribe("t").await.unwrap();
        assert_eq!(bus.subscribers("t"), 2);
        drop(a);
        assert_eq!(bus.subscribers("t"), 1);
        drop(_b);
        assert_eq!(bus.subscribers("t"), 0);
    }
}
