//! [`RequestContext`]: what a handler knows about the request it serves.

use std::sync::Arc;

use serde_json::Value;
use tessera_proto::RequestOptions;
use tessera_runtime::{Peer, PeerError};
use tessera_types::{Era, JsonObject, ProtocolVersion, RequestId};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

/// The request being handled: its id and `_meta`, the negotiated era and
/// version, the client's capabilities, a way to report progress and log, and
/// the cancellation token that fires when the client cancels.
#[derive(Debug, Clone)]
pub struct RequestContext {
    pub(crate) id: RequestId,
    pub(crate) method: Arc<str>,
    pub(crate) peer: Peer,
    pub(crate) cancel: CancellationToken,
    pub(crate) proto: tessera_proto::RequestContext,
}

impl RequestContext {
    pub(crate) fn from_request(r: &tessera_runtime::Request) -> Self {
        RequestContext {
            id: r.id.clone(),
            method: r.method.as_str().into(),
            peer: r.peer.clone(),
            cancel: r.cancel.clone(),
            proto: r.context.clone(),
        }
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.id
    }

    /// The method being served.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// Legacy (session) or modern (stateless) era.
    pub fn era(&self) -> Era {
        self.proto.era
    }

    /// The protocol version the request is served in.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.proto.version
    }

    /// The request's `_meta`, if any.
    pub fn meta(&self) -> Option<&JsonObject> {
        self.proto.meta.as_ref()
    }

    /// The client's declared capabilities (from `initialize` in the legacy era,
    /// from this request's `_meta` in the modern era).
    pub fn client_capabilities(&self) -> &JsonObject {
        &self.proto.peer_capabilities
    }

    /// The client's `Implementation` info, when it sent one.
    pub fn client_info(&self) -> Option<&JsonObject> {
        self.proto.peer_info.as_deref()
    }

    /// Whether the client declared a capability (`sampling`, `elicitation`, `roots`, …).
    pub fn client_has(&self, capability: &str) -> bool {
        self.proto.peer_capabilities.contains_key(capability)
    }

    /// Sends a request to the client on behalf of this request (legacy era:
    /// sampling, elicitation, roots, ping) and waits for its result. On
    /// Streamable HTTP it travels on this request's response stream.
    pub async fn request_client(
        &self,
        method: &str,
        params: Option<JsonObject>,
    ) -> Result<JsonObject, PeerError> {
        let options = RequestOptions {
            related: Some(self.id.clone()),
            ..RequestOptions::default()
        };
        tokio::select! {
            r = self.peer.request(method, params, options) => r,
            _ = self.cancel.cancelled() => Err(PeerError::Call(tessera_proto::CallError::Cancelled)),
        }
    }

    /// The connection, for requests and notifications to the client.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Whether the client asked for progress on this request.
    pub fn wants_progress(&self) -> bool {
        self.proto.progress_token.is_some()
    }

    /// Reports progress. Sent only when the client gave a progress token and
    /// `progress` is greater than the last value reported; never after the result.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.peer
            .progress(self.id.clone(), progress, total, message.map(str::to_owned));
    }

    /// Sends a log message tied to this request, if the client's log level lets it through.
    pub fn log(&self, level: &str, logger: Option<&str>, data: Value) {
        self.peer.log(
            level,
            logger.map(str::to_owned),
            data,
            Some(self.id.clone()),
        );
    }

    /// The cancellation token: fires when the client cancels the request.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether the client cancelled the request.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Completes when the client cancels the request.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.cancel.cancelled()
    }
}
