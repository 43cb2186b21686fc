//! Client errors.

use tessera_proto::CallError;
use tessera_runtime::PeerError;
use tessera_types::{ElicitRequestURLParams, ErrorObject};

/// Why a client operation failed.
///
/// Protocol errors (the server's JSON-RPC error, reachable with
/// [`ClientError::remote`]) are kept apart from local ones (closed connection,
/// timeout, a limit of this client, a refusal by one of its handlers).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server process could not be started, or a transport failed.
    #[error("transport error: {0}")]
    Io(#[from] std::io::Error),
    /// Connecting (era probe, handshake) failed.
    #[error("could not connect: {0}")]
    Connect(PeerError),
    /// A request failed: an error response, a timeout, a closed connection.
    #[error("{0}")]
    Request(PeerError),
    /// The server's answer did not have the shape the protocol requires.
    #[error("unexpected answer to {method}: {source}")]
    Decode {
        /// The method that was called.
        method: String,
        /// What did not fit.
        source: serde_json::Error,
    },
    /// The server does not offer what was asked (a capability it did not declare).
    #[error("the server does not support {0}")]
    Unsupported(String),
    /// The builder was given something invalid (a root that is not a
    /// `file://` URI, for example).
    #[error("invalid client configuration: {0}")]
    Config(String),
    /// The server broke a protocol rule in its answer (an `input_required`
    /// result with neither `inputRequests` nor `requestState`, for example).
    #[error("protocol violation in the answer to {method}: {reason}")]
    Protocol {
        /// The method that was called.
        method: String,
        /// What was wrong.
        reason: String,
    },
    /// A multi round-trip request still asked for input after the configured
    /// number of rounds ([`ClientBuilder::max_input_rounds`](crate::ClientBuilder::max_input_rounds)).
    #[error(
        "{method} still asked for input after {rounds} round(s); raise ClientBuilder::max_input_rounds \
         if the server legitimately needs more"
    )]
    TooManyRounds {
        /// The method that was called.
        method: String,
        /// How many retries were made.
        rounds: usize,
    },
    /// The server asked for input the client never declared it supports
    /// (an undeclared capability or elicitation mode, or sampling with tools
    /// without `sampling.tools`). The client does not answer such requests.
    #[error(
        "the server asked for {what} (input request {key:?}), which this client did not declare"
    )]
    UndeclaredInput {
        /// The `inputRequests` key.
        key: String,
        /// What was asked for, e.g. `elicitation/create (url mode)`.
        what: String,
    },
    /// One of the client's handlers refused or failed an input request
    /// (the user rejected a sampling request, the answer did not match the
    /// requested schema…). The original request is not retried.
    #[error("input request {key:?} ({method}) was not fulfilled: {error}")]
    Input {
        /// The `inputRequests` key.
        key: String,
        /// The method of the input request.
        method: String,
        /// Why, as the JSON-RPC error a legacy client would have sent.
        error: ErrorObject,
    },
    /// The arguments given for a call are not what the protocol carries
    /// (tool arguments that do not serialize to a JSON object); nothing was
    /// sent.
    #[error("invalid arguments for {method}: {why}")]
    InvalidArguments {
        /// The method that was to be called.
        method: String,
        /// What was wrong.
        why: String,
    },
    /// A paginated list handed back a cursor it had already handed back.
    #[error("{method} returned the cursor {cursor:?} twice; stopping to avoid an endless loop")]
    CursorLoop {
        /// The list method.
        method: String,
        /// The repeated cursor.
        cursor: String,
    },
    /// A skill or skill file did not match its entry (size, digest,
    /// frontmatter, not listed, …); the content was not returned.
    #[error("skill verification failed: {0}")]
    SkillVerification(#[from] crate::skills::SkillVerificationError),
    /// A paginated list had more pages than the configured limit.
    #[error(
        "{method} returned more than {pages} pages; raise ClientBuilder::max_pages if that is expected"
    )]
    TooManyPages {
        /// The list method.
        method: String,
        /// The limit.
        pages: usize,
    },
    /// The server needs URL-mode elicitations completed before it can answer
    /// (`-32042`, 2025-11-25). Show each URL to the user (see
    /// [`Client::consent_to_urls`](crate::Client::consent_to_urls)) and retry
    /// once they are done.
    #[error("the server requires URL elicitation first: {error}")]
    UrlElicitationRequired {
        /// The elicitations to complete.
        elicitations: Vec<ElicitRequestURLParams>,
        /// The server's error.
        error: ErrorObject,
    },
    /// The client was connected over a one-off transport and cannot reconnect.
    #[error(
        "this client cannot reconnect: it was connected over a one-off transport (use connect_child or connect_with)"
    )]
    NotReconnectable,
    /// Every reconnection attempt failed.
    #[error("could not reconnect after {attempts} attempt(s): {last}")]
    ReconnectFailed {
        /// How many attempts were made.
        attempts: u32,
        /// The last attempt's error.
        last: Box<ClientError>,
    },
}

impl ClientError {
    /// The server's JSON-RPC error, if that is what this is.
    pub fn remote(&self) -> Option<&ErrorObject> {
        match self {
            ClientError::Request(e) | ClientError::Connect(e) => e.remote(),
            ClientError::UrlElicitationRequired { error, .. } => Some(error),
            _ => None,
        }
    }

    /// Whether the transport reported that the server forgot the session
    /// (Streamable HTTP: `404` to a request that carried one). The request
    /// was not served and the connection ended; a client that can reconnect
    /// sets up a new session and sends the request once more by itself.
    pub fn is_session_lost(&self) -> bool {
        self.remote()
            .and_then(|e| e.data.as_ref())
            .and_then(|d| d.get(tessera_runtime::TRANSPORT_FAILURE_KEY))
            .and_then(|m| m.get(tessera_runtime::SESSION_LOST_KEY))
            .and_then(serde_json::Value::as_bool)
            == Some(true)
    }

    /// Whether the connection was (or got) closed before an answer arrived.
    pub fn is_closed(&self) -> bool {
        matches!(
            self,
            ClientError::Request(PeerError::Closed | PeerError::Call(CallError::Closed))
                | ClientError::Connect(PeerError::Closed | PeerError::Call(CallError::Closed))
        )
    }

    /// Whether the answer was dropped for exceeding the transport's
    /// message size limit ([`CallError::TooLarge`]).
    pub fn is_too_large(&self) -> bool {
        matches!(
            self,
            ClientError::Request(PeerError::Call(CallError::TooLarge { .. }))
                | ClientError::Connect(PeerError::Call(CallError::TooLarge { .. }))
        )
    }

    /// Whether the request timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            ClientError::Request(PeerError::Call(CallError::Timeout(_)))
        )
    }

    pub(crate) fn from_peer(e: PeerError) -> ClientError {
        if let Some(remote) = e.remote() {
            if let Some(elicitations) = crate::elicitation::url_elicitations_required(remote) {
                return ClientError::UrlElicitationRequired {
                    elicitations,
                    error: remote.clone(),
                };
            }
        }
        ClientError::Request(e)
    }
}
