//! What the engine hands back to its driver.

use std::sync::Arc;

use tessera_types::{
    EditedHead, Era, Implementation, JsonObject, JsonRpcMessage, Params, ProgressToken,
    ProtocolVersion, ReceivedMeta, RequestId, ServerCapabilities,
};

use crate::error::CallError;
use crate::peer::{PeerCapabilities, PeerInfo};
use crate::raw::{RawResponse, RawResult, ResultShape};

/// A message (or batch) to write to the transport.
#[derive(Debug, Clone, PartialEq)]
pub struct Transmit {
    /// What to write.
    pub message: Outbound,
    /// The incoming request this message belongs to, if any: its response, or a
    /// progress/log notification or server-to-client request issued while handling
    /// it. Transports with per-request streams (Streamable HTTP) route on it.
    pub related: Option<RequestId>,
    /// For a request whose params text the engine edited (stamping its
    /// `_meta` members): the members an HTTP transport mirrors in headers,
    /// as written, so that it need not read the text again. `None` when the
    /// engine did not write the params (the transport reads them itself).
    /// Whoever changes `message` afterwards must set it to `None`.
    pub mirrored: Option<Box<EditedHead>>,
}

/// One message or a batch of them.
#[derive(Debug, Clone, PartialEq)]
pub enum Outbound {
    /// A single message.
    Single(JsonRpcMessage),
    /// A JSON-RPC batch (only in reply to a batch, on versions that allow them).
    Batch(Vec<JsonRpcMessage>),
    /// A result response whose result is JSON text, written as it is (see
    /// [`Engine::respond_raw`](crate::Engine::respond_raw)).
    Raw(RawResponse),
}

impl Outbound {
    /// Serialises to bytes without a trailing newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size_hint());
        // Serialising these types cannot fail: every map key is a string.
        match self.write_to(&mut out) {
            Ok(()) => out,
            Err(_) => Vec::new(),
        }
    }

    /// About how many bytes this message takes written: enough for a
    /// request whose params are text (a forwarded request) to be written
    /// without growing the buffer; a small start for the rest.
    fn size_hint(&self) -> usize {
        match self {
            Outbound::Single(JsonRpcMessage::Request(r)) => {
                let params = r.params.as_ref().and_then(Params::raw);
                r.method.len() + params.map_or(128, |t| t.get().len() + 64)
            }
            Outbound::Raw(r) => r.result.get().len() + 64,
            _ => 128,
        }
    }

    /// Serialises into `out` without a trailing newline.
    pub fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        match self {
            Outbound::Single(m) => serde_json::to_writer(out, m),
            Outbound::Batch(b) => serde_json::to_writer(out, b),
            Outbound::Raw(r) => r.write_to(out),
        }
    }

    /// The single message, if this is neither a batch nor a raw result.
    pub fn as_single(&self) -> Option<&JsonRpcMessage> {
        match self {
            Outbound::Single(m) => Some(m),
            Outbound::Batch(_) | Outbound::Raw(_) => None,
        }
    }

    /// The id this message answers, if it is a single response (a result,
    /// an error with an id, or a raw result).
    pub fn response_id(&self) -> Option<&RequestId> {
        match self {
            Outbound::Single(JsonRpcMessage::Result(r)) => Some(&r.id),
            Outbound::Single(JsonRpcMessage::Error(e)) => e.id.as_ref(),
            Outbound::Raw(r) => Some(&r.id),
            Outbound::Single(_) | Outbound::Batch(_) => None,
        }
    }

    /// Whether this is a single response (result, error or raw result).
    pub fn is_single_response(&self) -> bool {
        matches!(
            self,
            Outbound::Single(JsonRpcMessage::Result(_) | JsonRpcMessage::Error(_))
                | Outbound::Raw(_)
        )
    }
}

/// What an incoming request is known to be about, beyond its method and params.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestInfo {
    /// The era this request is served in.
    pub era: Era,
    /// The protocol version: the negotiated one (legacy) or the request's own (modern).
    pub version: ProtocolVersion,
    /// `_meta.progressToken`, if the caller asked for progress.
    pub progress_token: Option<ProgressToken>,
    /// The peer's capabilities: from `initialize` (legacy) or from this request's `_meta` (modern).
    pub peer_capabilities: PeerCapabilities,
    /// The peer's `Implementation` info, when known.
    pub peer_info: Option<PeerInfo>,
    /// The request's `_meta`, if any: kept as the text it came in, read
    /// member by member, a tree only when asked (shared: handlers' contexts
    /// copy it often).
    pub meta: Option<ReceivedMeta>,
    /// The minimum log level asked for this request (modern: `_meta`
    /// `io.modelcontextprotocol/logLevel`; legacy: the session's `logging/setLevel`).
    pub log_level: Option<String>,
    /// What the engine adds to a result to this request, for a handler
    /// that writes its typed result with it in one pass
    /// ([`RawResult::shaped`]): given for a 2026-07-28 request to a server
    /// that is not part of a batch; `None` otherwise.
    pub result_shape: Option<ResultShape>,
}

/// A request from the peer for the application to handle.
#[derive(Debug, Clone, PartialEq)]
pub struct IncomingRequest {
    /// Its id; answer with [`Engine::respond`](crate::Engine::respond).
    pub id: RequestId,
    /// The method.
    pub method: String,
    /// The params, as they came (text until read; see [`Params`]).
    pub params: Option<Params>,
    /// Era, version, capabilities and `_meta`.
    pub context: RequestInfo,
}

/// What the connection turned out to be (client role).
#[derive(Debug, Clone, PartialEq)]
pub struct Connected {
    /// Legacy or modern.
    pub era: Era,
    /// The version in use.
    pub version: ProtocolVersion,
    /// The server's `Implementation` info. A server that sent a malformed
    /// `serverInfo` gets the parts that could be read (empty strings
    /// otherwise); the raw object is in [`Connected::result`].
    pub server_info: Implementation,
    /// The server's capabilities, every member kept (see
    /// [`ServerCapabilities::from_object`]).
    pub server_capabilities: Arc<ServerCapabilities>,
    /// The server's instructions, if any.
    pub instructions: Option<String>,
    /// The whole `initialize` or `server/discover` result.
    pub result: JsonObject,
}

/// Something the driver must act on.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// The peer sent a request for the application.
    Request(IncomingRequest),
    /// The peer sent a notification for the application (handle them in order).
    Notification {
        /// The method.
        method: String,
        /// The params.
        params: Option<JsonObject>,
    },
    /// The peer sent a notification the engine acted on itself
    /// (`notifications/cancelled`, a server's `notifications/initialized`,
    /// the `notifications/progress` of a request in flight), after the
    /// events of that action: for middleware that observes every
    /// notification. No application handler takes it.
    NotificationHandled {
        /// The method.
        method: String,
        /// The params.
        params: Option<JsonObject>,
    },
    /// The peer cancelled one of its requests: stop the handler; its answer will be dropped.
    Cancelled {
        /// The cancelled request.
        id: RequestId,
        /// The peer's reason, if given.
        reason: Option<String>,
    },
    /// A request this side sent got its outcome.
    Response {
        /// The id it was sent with.
        id: RequestId,
        /// The result, or why there is none.
        outcome: Result<JsonObject, CallError>,
    },
    /// A request this side sent with
    /// [`Engine::send_request_raw`](crate::Engine::send_request_raw) got a
    /// result, handed over as JSON text (its errors, timeouts and the like
    /// arrive as [`Event::Response`]).
    RawResponse {
        /// The id it was sent with.
        id: RequestId,
        /// The result.
        result: RawResult,
    },
    /// Progress for a request this side sent.
    Progress {
        /// The request the progress is about.
        id: RequestId,
        /// The `notifications/progress` params.
        params: JsonObject,
    },
    /// Server role: a legacy client finished the handshake (`notifications/initialized`).
    Initialized {
        /// The negotiated version.
        version: ProtocolVersion,
    },
    /// Client role: the connection is ready.
    Connected(Connected),
    /// Client role: the connection could not be set up.
    ConnectFailed(CallError),
    /// The peer sent something wrong that gets no answer (a malformed response,
    /// a response to an unknown id). For logs.
    ProtocolViolation(String),
    /// Something the peer keeps doing that its operator should hear about
    /// (it writes junk instead of JSON-RPC, and is no longer answered). For
    /// logs, as a warning.
    PeerMisbehaving(String),
}
