//! The peer's notifications: those the engine acts on itself
//! (`notifications/cancelled`, `notifications/initialized`, the progress of
//! a request this side sent) and those it hands to the application.

use std::time::Instant;

use serde::Deserialize as _;
use serde_json::Value;
use tessera_types::{JsonObject, ProgressToken, RequestId, methods};

use super::Engine;
use crate::config::Side;
use crate::event::Event;

impl Engine {
    pub(super) fn on_notification(
        &mut self,
        now: Instant,
        method: String,
        params: Option<JsonObject>,
    ) {
        match method.as_str() {
            methods::NOTIFICATIONS_CANCELLED => {
                self.on_cancelled(params.as_ref());
                self.handled(method, params);
            }
            methods::NOTIFICATIONS_PROGRESS => {
                let Some(p) = params else {
                    return self.handled(method, params);
                };
                let Ok(ProgressHead { token }) = ProgressHead::deserialize(&p) else {
                    return self.handled(method, Some(p));
                };
                if let Some(id) = self.pending.on_progress(&token, now) {
                    let copy = self.report_handled.then(|| p.clone());
                    self.push_event(Event::Progress { id, params: p });
                    if let Some(p) = copy {
                        self.handled(method, Some(p));
                    }
                } else {
                    // Not for a request in flight: a task's progress token
                    // outlives the request that created the task (2025-11-25),
                    // so the application decides what the token names.
                    self.push_event(Event::Notification {
                        method,
                        params: Some(p),
                    });
                }
            }
            methods::NOTIFICATIONS_INITIALIZED if self.config.side == Side::Server => {
                if let Some(version) = self.session.version {
                    if !self.session.initialized {
                        self.session.initialized = true;
                        self.session.revision += 1;
                        self.push_event(Event::Initialized { version });
                    }
                }
                self.handled(method, params);
            }
            _ => self.push_event(Event::Notification { method, params }),
        }
    }

    /// Acts on `notifications/cancelled`: the request it names gets no
    /// response (a batch stops waiting for it) and its handler is told.
    fn on_cancelled(&mut self, params: Option<&JsonObject>) {
        let Some(CancelHead { id, reason }) = params.and_then(|p| CancelHead::deserialize(p).ok())
        else {
            return;
        };
        if let Some(f) = self.inflight.get_mut(&id) {
            if f.initialize || f.cancelled {
                return;
            }
            f.cancelled = true;
            let batch = f.batch;
            // A cancelled request gets no response; a batch stops waiting for it.
            if let Some(b) = batch.and_then(|b| self.batches.get_mut(&b).map(|x| (b, x))) {
                b.1.waiting.remove(&id);
                let b = b.0;
                self.flush_batch(b);
            }
            self.push_event(Event::Cancelled { id, reason });
        }
    }

    /// Reports a notification the engine acted on, when asked to
    /// ([`Engine::report_handled_notifications`]).
    fn handled(&mut self, method: String, params: Option<JsonObject>) {
        if self.report_handled {
            self.push_event(Event::NotificationHandled { method, params });
        }
    }
}

/// What the engine reads of a `notifications/progress`: the token that
/// names the request (the rest goes to the application as it came).
#[derive(serde::Deserialize)]
struct ProgressHead {
    /// `progressToken`.
    #[serde(rename = "progressToken")]
    token: ProgressToken,
}

/// What the engine reads of a `notifications/cancelled`
/// ([`CancelledNotificationParams`]): the request, and a reason when it is a
/// string (one of another type is left out; the cancellation stands).
#[derive(serde::Deserialize)]
struct CancelHead {
    /// `requestId`.
    #[serde(rename = "requestId")]
    id: RequestId,
    /// `reason`.
    #[serde(default, deserialize_with = "text_or_none")]
    reason: Option<String>,
}

/// A string member, or none when it holds another type.
fn text_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}
