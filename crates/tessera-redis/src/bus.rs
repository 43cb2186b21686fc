//! [`RedisBus`]: messages between the instances of an endpoint over Redis
//! pub/sub.
//!
//! A topic `T` is the channel `{prefix}bus:T`. Publishing is one `PUBLISH`
//! on the shared connection. Subscriptions of one instance share one
//! dedicated pub/sub connection, driven by one task: it subscribes a channel
//! when the first local subscription of its topic appears and unsubscribes
//! when the last one is dropped, and hands each message to every local
//! subscription of the topic (a bounded queue each; a reader that falls
//! behind loses messages, with a warning, as Redis itself drops a client
//! whose output buffer overflows). When the connection is lost, every
//! subscription ends (as the [`Bus`] contract says: their owners subscribe
//! again, knowing they may have missed messages) and the task reconnects
//! with backoff; until it is back, `subscribe` fails at once with
//! [`StoreError::Unavailable`]. Delivery is at most once.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use tessera_runtime::{Bus, BusSubscription, StoreError};
use tokio::sync::{mpsc, oneshot};

use crate::connection::{Conn, Redis};
use crate::error::Error;

/// How many messages one subscription holds before it loses the newest.
const QUEUE: usize = 1024;

/// Messages between instances over Redis pub/sub (see the module
/// documentation). Cheap to clone; the subscription task stops when the
/// last clone (and the [`Redis`] handle that made it) is dropped.
#[derive(Clone)]
pub struct RedisBus {
    inner: Arc<BusInner>,
}

struct BusInner {
    conn: Conn,
    timeout: Duration,
    channel_prefix: String,
    local: Arc<Local>,
    commands: mpsc::UnboundedSender<Command>,
}

impl std::fmt::Debug for RedisBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBus")
            .field("channel_prefix", &self.inner.channel_prefix)
            .finish_non_exhaustive()
    }
}

/// The local subscriptions of each channel: (id, queue).
type Channels = HashMap<String, Vec<(u64, mpsc::Sender<Bytes>)>>;

/// The local subscriptions, by channel.
#[derive(Default)]
struct Local {
    next: AtomicU64,
    channels: Mutex<Channels>,
}

impl Local {
    fn lock(&self) -> MutexGuard<'_, Channels> {
        self.channels.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn has(&self, channel: &str) -> bool {
        self.lock().get(channel).is_some_and(|v| !v.is_empty())
    }

    fn remove(&self, channel: &str, id: u64) -> bool {
        let mut g = self.lock();
        let Some(v) = g.get_mut(channel) else {
            return false;
        };
        v.retain(|(i, _)| *i != id);
        if v.is_empty() {
            g.remove(channel);
            return true;
        }
        false
    }

    fn deliver(&self, channel: &str, payload: &[u8]) {
        let g = self.lock();
        let Some(subs) = g.get(channel) else { return };
        let payload = Bytes::copy_from_slice(payload);
        for (_, tx) in subs {
            if let Err(mpsc::error::TrySendError::Full(_)) = tx.try_send(payload.clone()) {
                tracing::warn!(channel, "a bus subscriber is behind; a message was dropped");
            }
        }
    }
}

/// What the subscription task is asked to do.
enum Command {
    /// Make sure the channel is subscribed on the connection, then answer.
    Subscribe(String, oneshot::Sender<Result<(), Error>>),
    /// Unsubscribe the channel if no local subscription wants it any more.
    Unsubscribe(String),
}

impl Redis {
    /// The bus of this instance (one per [`Redis`] handle and its clones):
    /// the first call starts the task that owns its pub/sub connection
    /// (reconnected with backoff when lost). Needs a tokio runtime.
    pub fn bus(&self) -> RedisBus {
        self.inner
            .bus
            .get_or_init(|| {
                let (commands, rx) = mpsc::unbounded_channel();
                let local = Arc::new(Local::default());
                let timeout = self.settings().op_timeout;
                tokio::spawn(drive(self.inner.client.clone(), timeout, local.clone(), rx));
                RedisBus {
                    inner: Arc::new(BusInner {
                        conn: self.inner.conn.clone(),
                        timeout,
                        channel_prefix: self.key("bus:"),
                        local,
                        commands,
                    }),
                }
            })
            .clone()
    }
}

impl RedisBus {
    fn channel(&self, topic: &str) -> String {
        format!("{}{topic}", self.inner.channel_prefix)
    }
}

fn store_error(e: Error) -> StoreError {
    e.into()
}

impl Bus for RedisBus {
    async fn publish(&self, topic: &str, payload: Bytes) -> Result<(), StoreError> {
        let channel = self.channel(topic);
        self.inner
            .conn
            .run(|mut c| async move {
                redis::cmd("PUBLISH")
                    .arg(&channel)
                    .arg(payload.as_ref())
                    .exec_async(&mut c)
                    .await
            })
            .await
            .map_err(store_error)
    }

    async fn subscribe(&self, topic: &str) -> Result<BusSubscription, StoreError> {
        let channel = self.channel(topic);
        let local = self.inner.local.clone();
        let id = local.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel(QUEUE);
        local
            .lock()
            .entry(channel.clone())
            .or_default()
            .push((id, tx));
        let commands = self.inner.commands.clone();
        // From here on, dropping the subscription unsubscribes.
        let unsubscribe = {
            let (local, channel, commands) = (local.clone(), channel.clone(), commands.clone());
            move || {
                if local.remove(&channel, id) {
                    let _ = commands.send(Command::Unsubscribe(channel));
                }
            }
        };
        let subscription = BusSubscription::from_channel(rx, unsubscribe);
        let (ack, answer) = oneshot::channel();
        commands
            .send(Command::Subscribe(channel, ack))
            .map_err(|_| StoreError::Unavailable("the bus task has stopped".into()))?;
        let timeout = self.inner.timeout;
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(Ok(()))) => Ok(subscription),
            Ok(Ok(Err(e))) => Err(store_error(e)),
            Ok(Err(_)) => Err(StoreError::Unavailable("the bus task has stopped".into())),
            Err(_) => Err(StoreError::Unavailable(format!(
                "no subscription within {timeout:?}"
            ))),
        }
    }
}

/// The subscription task: owns the pub/sub connection for as long as a
/// [`RedisBus`] clone holds the command sender.
async fn drive(
    client: redis::Client,
    timeout: Duration,
    local: Arc<Local>,
    mut commands: mpsc::UnboundedReceiver<Command>,
) {
    let mut backoff = Duration::from_millis(100);
    loop {
        let connected = tokio::time::timeout(timeout, client.get_async_pubsub()).await;
        let pubsub = match connected {
            Ok(Ok(p)) => p,
            Ok(Err(e)) => {
                if !wait_or_refuse(&mut commands, backoff, &Error::from_redis(e)).await {
                    return;
                }
                backoff = (backoff * 2).min(Duration::from_secs(2));
                continue;
            }
            Err(_) => {
                let e = Error::Unavailable("no answer to the pub/sub connection".into());
                if !wait_or_refuse(&mut commands, backoff, &e).await {
                    return;
                }
                backoff = (backoff * 2).min(Duration::from_secs(2));
                continue;
            }
        };
        backoff = Duration::from_millis(100);
        let (mut sink, mut stream) = pubsub.split();
        // The topics of subscriptions made while connecting.
        let wanted: Vec<String> = local.lock().keys().cloned().collect();
        let mut subscribed = HashSet::new();
        let mut broken = false;
        for channel in wanted {
            if sink.subscribe(&channel).await.is_err() {
                broken = true;
                break;
            }
            subscribed.insert(channel);
        }
        if broken {
            local.lock().clear();
            continue;
        }
        loop {
            tokio::select! {
                command = commands.recv() => match command {
                    None => return,
                    Some(Command::Subscribe(channel, ack)) => {
                        if !local.has(&channel) {
                            // Its subscription ended with a lost connection.
                            let _ = ack.send(Err(Error::Unavailable("the connection was lost".into())));
                            continue;
                        }
                        if subscribed.contains(&channel) {
                            let _ = ack.send(Ok(()));
                            continue;
                        }
                        match sink.subscribe(&channel).await {
                            Ok(()) => {
                                subscribed.insert(channel);
                                let _ = ack.send(Ok(()));
                            }
                            Err(e) => {
                                let _ = ack.send(Err(Error::from_redis(e)));
                                break;
                            }
                        }
                    }
                    Some(Command::Unsubscribe(channel)) => {
                        if !local.has(&channel) && subscribed.remove(&channel)
                            && sink.unsubscribe(&channel).await.is_err()
                        {
                            break;
                        }
                    }
                },
                message = stream.next() => match message {
                    Some(m) => local.deliver(m.get_channel_name(), m.get_payload_bytes()),
                    None => break,
                },
            }
        }
        // End every subscription: their owners subscribe again.
        local.lock().clear();
        tracing::warn!("the bus lost its Redis connection; its subscriptions ended; reconnecting");
    }
}

/// While disconnected: refuses subscriptions for `pause`, then returns
/// `true` to try again (`false` when every bus handle is gone).
async fn wait_or_refuse(
    commands: &mut mpsc::UnboundedReceiver<Command>,
    pause: Duration,
    why: &Error,
) -> bool {
    let until = tokio::time::Instant::now() + pause;
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(until) => return true,
            command = commands.recv() => match command {
                None => return false,
                Some(Command::Subscribe(_, ack)) => {
                    let _ = ack.send(Err(why.clone()));
                }
                Some(Command::Unsubscribe(_)) => {}
            },
        }
    }
}
