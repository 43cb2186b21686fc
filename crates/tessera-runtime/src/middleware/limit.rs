//! [`ConcurrencyLimitLayer`]: at most N requests at a time per session or per
//! principal.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tessera_types::ErrorObject;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{Middleware, Next, Refusal};
use crate::Principal;
use crate::service::{BoxFuture, HandlerResult, Request};

/// What requests are counted together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKey {
    /// Requests of one connection (a stdio connection, a legacy HTTP
    /// session; each stateless or 2026-07-28 HTTP request is its own).
    Session,
    /// Requests of one authenticated [`Principal`], across sessions.
    /// Requests without a principal are not limited by this layer.
    Principal,
}

/// Per key: its semaphore and how many requests run or wait with it.
type Slots = Arc<Mutex<HashMap<Key, (Arc<Semaphore>, usize)>>>;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Session(u64),
    Principal(Principal),
}

/// Lets at most `max` requests with the same key run at once; the others
/// wait for a slot in arrival order (a waiting request that is cancelled
/// leaves the queue), or, with [`ConcurrencyLimitLayer::refuse_when_full`],
/// are refused at once. Slots are kept only for keys with requests running
/// or waiting, so memory follows the load, not the number of sessions seen.
#[derive(Debug, Clone)]
pub struct ConcurrencyLimitLayer {
    key: LimitKey,
    max: usize,
    slots: Slots,
    refuse: Option<Duration>,
}

impl ConcurrencyLimitLayer {
    /// At most `max` requests at a time per connection.
    pub fn per_session(max: usize) -> Self {
        Self::new(LimitKey::Session, max)
    }

    /// At most `max` requests at a time per principal.
    pub fn per_principal(max: usize) -> Self {
        Self::new(LimitKey::Principal, max)
    }

    /// At most `max` (at least 1) requests at a time per `key`.
    pub fn new(key: LimitKey, max: usize) -> Self {
        ConcurrencyLimitLayer {
            key,
            max: max.max(1),
            slots: Arc::default(),
            refuse: None,
        }
    }

    /// Refuses a request that finds no free slot instead of queueing it: it
    /// is answered at once with a JSON-RPC error (`-32603`, "Too many
    /// requests in progress…") carried by a [`Refusal`] that an HTTP
    /// transport answers with `429 Too Many Requests` and `Retry-After:`
    /// `retry_after` (in whole seconds, at least 1).
    pub fn refuse_when_full(mut self, retry_after: Duration) -> Self {
        self.refuse = Some(retry_after);
        self
    }

    fn refusal(&self) -> Refusal {
        let secs = self.refuse.unwrap_or_default().as_secs().max(1);
        let whose = match self.key {
            LimitKey::Session => "this session",
            LimitKey::Principal => "this principal",
        };
        Refusal::new(ErrorObject::internal(format!(
            "Too many requests in progress: {whose} has {max} running, the limit; retry in {secs} s",
            max = self.max
        )))
        .http_status(http::StatusCode::TOO_MANY_REQUESTS)
        .http_header(http::header::RETRY_AFTER, secs.to_string())
    }

    /// How many keys have requests running or waiting.
    pub fn active_keys(&self) -> usize {
        self.slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    fn key_of(&self, request: &Request) -> Option<Key> {
        match self.key {
            LimitKey::Session => Some(Key::Session(request.peer.connection_id())),
            LimitKey::Principal => request.principal().cloned().map(Key::Principal),
        }
    }
}

/// A slot held (or waited for) by one request; forgets the key's semaphore
/// when the last request of that key is done.
struct Held {
    slots: Slots,
    key: Key,
    permit: Option<OwnedSemaphorePermit>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.permit.take();
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, users)) = slots.get_mut(&self.key) {
            *users -= 1;
            if *users == 0 {
                slots.remove(&self.key);
            }
        }
    }
}

impl Middleware for ConcurrencyLimitLayer {
    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, HandlerResult> {
        let Some(key) = self.key_of(&request) else {
            return next.run(request);
        };
        let semaphore = {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            let entry = slots
                .entry(key.clone())
                .or_insert_with(|| (Arc::new(Semaphore::new(self.max)), 0));
            entry.1 += 1;
            entry.0.clone()
        };
        let mut held = Held {
            slots: self.slots.clone(),
            key,
            permit: None,
        };
        if self.refuse.is_some() {
            return match semaphore.try_acquire_owned() {
                Ok(permit) => {
                    held.permit = Some(permit);
                    let answer = next.run(request);
                    Box::pin(async move {
                        let result = answer.await;
                        drop(held);
                        result
                    })
                }
                Err(_) => {
                    drop(held);
                    Box::pin(std::future::ready(self.refusal().reject(&request)))
                }
            };
        }
        Box::pin(async move {
            let cancel = request.cancel.clone();
            let permit = tokio::select! {
                p = semaphore.acquire_owned() => p,
                () = cancel.cancelled() => {
                    return Err(ErrorObject::internal("Request cancelled while waiting for a slot"));
                }
            };
            // The semaphore is never closed.
            held.permit = permit.ok();
            let result = next.run(request).await;
            drop(held);
            result
        })
    }
}
