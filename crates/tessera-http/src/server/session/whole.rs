//! Requests answered with SSE ([`ResponseMode::Sse`]) whose handler answers
//! at once: the whole stream in one body.
//!
//! A request's stream does not start when its frame reaches the core, but
//! once the core has been stepped after that (its handler polled at least
//! once). When the handler's first message is its response, the stream is
//! written whole: the priming event and the response event, ended, as one
//! body ([`FirstReply::SseDone`]), with the ids, the stored event and the
//! bytes on the wire a started stream would have had; no channel, no stream
//! state, one buffer. A handler still running after that step gets its
//! stream (and the priming event) then, before anything else it sends: the
//! client can resume it from the start as before.

use std::task::{Context, Poll};

use tessera_proto::Outbound;

use super::super::ResponseMode;
use super::super::event_store::{EventId, StoredEvent};
use super::{FirstReply, Route, RouteState, Router, SessionCore, unstored};
use crate::sse::{self, SseEvent};

/// Requests waiting for their first step, and how many steps the core made.
#[derive(Default)]
pub(super) struct Unstarted {
    /// Route keys, with the count of steps when each was submitted.
    waiting: Vec<(u64, u64)>,
    /// Steps of the core so far.
    steps: u64,
}

impl Unstarted {
    /// Remembers a route whose stream starts after the next step.
    pub(super) fn push(&mut self, key: u64) {
        self.waiting.push((key, self.steps));
    }

    /// Whether a route waits.
    pub(super) fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

/// Steps of a boxed core, counted, as a future that ends after one that
/// made progress. Its first poll does not step the core: the turn that
/// builds it has just done so ([`step`]), with the same task's context.
pub(super) fn work_after_step<'a>(
    core: &'a mut Box<dyn SessionCore>,
    unstarted: &'a mut Unstarted,
) -> impl Future<Output = ()> + Send + 'a {
    let mut first = true;
    std::future::poll_fn(move |cx: &mut Context<'_>| {
        if std::mem::take(&mut first) {
            return Poll::Pending;
        }
        unstarted.steps += 1;
        core.poll_work(cx)
    })
}

/// One step of a boxed core, counted, with the context of the task that
/// awaits it: whether the core made progress (`false`: it waits, and its
/// wakers are that task's).
pub(super) fn step<'a>(
    core: &'a mut Box<dyn SessionCore>,
    unstarted: &'a mut Unstarted,
) -> impl Future<Output = bool> + Send + 'a {
    std::future::poll_fn(move |cx: &mut Context<'_>| {
        unstarted.steps += 1;
        Poll::Ready(core.poll_work(cx).is_ready())
    })
}

impl Router {
    /// Whether the route `key` waits for its first message to start its
    /// stream.
    pub(super) fn unstarted_sse(&self, key: u64) -> bool {
        matches!(
            self.routes.get(&key).map(|r| &r.state),
            Some(RouteState::Pending {
                mode: ResponseMode::Sse,
                ..
            })
        )
    }

    /// Starts the streams of the routes that waited through a step of the
    /// core without an answer (their handlers run on).
    pub(super) fn start_waiting(&mut self) {
        let steps = self.unstarted.steps;
        let mut waiting = std::mem::take(&mut self.unstarted.waiting);
        waiting.retain(|&(key, at)| {
            if at == steps {
                return self.unstarted_sse(key);
            }
            if self.unstarted_sse(key) {
                self.start_stream(key);
            }
            false
        });
        self.unstarted.waiting = waiting;
    }

    /// The route's first message is its response: the whole stream (the
    /// priming event when resumable, then the response) goes out as one
    /// body, and the response is stored as if the stream had been started.
    pub(super) async fn answer_whole(&mut self, key: u64, message: &Outbound) {
        if self.store.is_some() && self.unstored.full() {
            // A slow store: wait for it rather than queue without bound.
            self.unstored.next().await;
        }
        let stream = self.next_stream;
        self.next_stream += 1;
        let mut out = Vec::with_capacity(256);
        let mut buf = [0u8; 41];
        let mut seq = 0;
        if self.store.is_some() {
            let mut ev = SseEvent::data(b"").id(EventId { stream, seq }.encode(&mut buf));
            if let Some(r) = self.retry {
                ev = ev.retry(r);
            }
            ev.encode_into(&mut out);
            seq += 1;
        }
        let id = EventId { stream, seq };
        let label = self.store.is_some().then(|| id.encode(&mut buf));
        let (body, data) = sse::encode_message(out, label, |out| message.write_to(out));
        let stored = self.store.as_ref().and_then(|store| {
            unstored::Pending::start(store.store_boxed(&self.session, StoredEvent { id, data }))
        });
        if let Some(Route {
            state: RouteState::Pending { first, .. },
            ..
        }) = self.end_route(key)
        {
            let _ = first.send(FirstReply::SseDone(body));
        }
        self.unstored.hold(stored);
    }
}
