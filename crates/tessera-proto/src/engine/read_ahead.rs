//! Answers the transport already read: an HTTP client checks that the
//! body of a POST's answer is a JSON-RPC response before it hands it on,
//! and gives the engine what it found, so the body is read once.

use std::time::Instant;

use tessera_types::RequestId;

use super::Engine;
use crate::event::Event;
use crate::raw::RawResult;

impl Engine {
    /// Feeds one frame of bytes that the transport already read as a
    /// well-formed result response to request `id`, with its result's text
    /// ([`RawResult::read_response`] of `bytes`): the answer to a request
    /// sent with [`Engine::send_request_raw`] is taken as it is, without
    /// reading `bytes` again; anything else is fed as
    /// [`Engine::handle_bytes`] feeds it.
    pub fn handle_result(&mut self, now: Instant, bytes: &[u8], id: RequestId, result: RawResult) {
        if !self.closed && self.pending.is_raw(&id) {
            self.pending.remove(&id);
            self.push_event(Event::RawResponse { id, result });
            return;
        }
        self.handle_bytes(now, bytes);
    }
}
