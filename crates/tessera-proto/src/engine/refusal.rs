//! Frames refused without a request to tie them to: over-long lines, junk,
//! and an over-long answer to a request this side sent.

use tessera_types::{ErrorObject, RequestId};

use super::{Connect, Engine};
use crate::error::CallError;
use crate::event::Event;
use crate::pending::PendingKind;

impl Engine {
    /// Answers a frame the transport could not hand over (too large, say)
    /// with `error` and a null id.
    pub fn refuse_frame(&mut self, error: ErrorObject) {
        if !self.closed {
            self.answer_unattributed(error);
        }
    }

    /// Answers a frame that cannot be tied to a request with `error` and a
    /// null id, up to [`EngineConfig::max_unattributed_errors`](crate::EngineConfig::max_unattributed_errors) times; past
    /// that, the frame is dropped unanswered and reported, once as
    /// [`Event::PeerMisbehaving`], then per frame as
    /// [`Event::ProtocolViolation`].
    pub(super) fn answer_unattributed(&mut self, error: ErrorObject) {
        self.unattributed = self.unattributed.saturating_add(1);
        let limit = self.config.max_unattributed_errors;
        if self.unattributed <= limit {
            self.answer(None, Err(error), None);
            return;
        }
        if self.unattributed == limit + 1 {
            self.push_event(Event::PeerMisbehaving(format!(
                "the peer sent {} frames that are not JSON-RPC requests or responses \
                 (the last: {}); no longer answering them",
                self.unattributed, error.message
            )));
        } else {
            self.push_event(Event::ProtocolViolation(format!(
                "unanswered: {}",
                error.message
            )));
        }
    }

    /// The answer to request `id` this side sent arrived, but was longer
    /// than the transport's limit (`len` > `limit` bytes) and was dropped
    /// unread: the request fails with [`CallError::TooLarge`] (a connection
    /// attempt with [`Event::ConnectFailed`]). Returns whether `id` was
    /// pending; when it was not, nothing changes.
    pub fn refuse_oversized_response(&mut self, id: &RequestId, len: usize, limit: usize) -> bool {
        if self.closed {
            return false;
        }
        let Some(p) = self.pending.remove(id) else {
            return false;
        };
        let error = CallError::TooLarge { len, limit };
        match p.kind {
            PendingKind::User => self.push_event(Event::Response {
                id: id.clone(),
                outcome: Err(error),
            }),
            PendingKind::Probe | PendingKind::Initialize => {
                self.connect = Connect::Failed;
                self.push_event(Event::ConnectFailed(error));
            }
        }
        true
    }
}
