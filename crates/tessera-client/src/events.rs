//! [`ClientEvent`]: what the server tells the client, typed, as a stream.

use futures::stream::BoxStream;
use serde_json::Value;
use tessera_types::methods;
use tessera_types::{
    Era, JsonObject, LoggingMessageNotificationParams, ProgressNotificationParams, ProtocolVersion,
    RequestId,
};
use tokio::sync::broadcast;

/// Something the server said, or something that happened to the connection.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientEvent {
    /// Progress on one of this client's requests (only requests that asked
    /// for progress, with [`CallOptions`](crate::CallOptions)).
    Progress(ProgressNotificationParams),
    /// A log message (`notifications/message`).
    Log(LoggingMessageNotificationParams),
    /// `notifications/tools/list_changed`.
    ToolListChanged,
    /// `notifications/prompts/list_changed`.
    PromptListChanged,
    /// `notifications/resources/list_changed`.
    ResourceListChanged,
    /// `notifications/resources/updated`.
    ResourceUpdated {
        /// The resource that changed.
        uri: String,
    },
    /// A URL-mode elicitation this client knows of completed
    /// (`notifications/elicitation/complete`, 2025-11-25). Notifications for
    /// unknown or already completed ids are ignored.
    ElicitationComplete {
        /// Its id.
        elicitation_id: String,
    },
    /// Any other notification (including `notifications/subscriptions/acknowledged`).
    Other {
        /// The method.
        method: String,
        /// The params.
        params: Option<JsonObject>,
    },
    /// The connection ended (the server exited, the transport failed, or
    /// [`Client::close`](crate::Client::close) was called). Requests in flight
    /// failed with a closed-connection error.
    Disconnected,
    /// [`Client::reconnect`](crate::Client::reconnect) connected again.
    Reconnected {
        /// The era of the new connection.
        era: Era,
        /// Its version.
        version: ProtocolVersion,
    },
}

impl ClientEvent {
    /// The event for a notification, or `None` for one that is not passed on
    /// as is (URL elicitation completions are checked first).
    pub(crate) fn from_notification(method: &str, params: Option<&JsonObject>) -> Option<Self> {
        let decode = |p: Option<&JsonObject>| p.map(|p| Value::Object(p.clone()));
        Some(match method {
            methods::NOTIFICATIONS_MESSAGE => match decode(params).map(serde_json::from_value) {
                Some(Ok(p)) => ClientEvent::Log(p),
                _ => other(method, params),
            },
            methods::NOTIFICATIONS_TOOLS_LIST_CHANGED => ClientEvent::ToolListChanged,
            methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED => ClientEvent::PromptListChanged,
            methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED => ClientEvent::ResourceListChanged,
            methods::NOTIFICATIONS_RESOURCES_UPDATED => {
                match params.and_then(|p| p.get("uri")).and_then(Value::as_str) {
                    Some(uri) => ClientEvent::ResourceUpdated {
                        uri: uri.to_owned(),
                    },
                    None => other(method, params),
                }
            }
            methods::NOTIFICATIONS_ELICITATION_COMPLETE => return None,
            _ => other(method, params),
        })
    }
}

fn other(method: &str, params: Option<&JsonObject>) -> ClientEvent {
    ClientEvent::Other {
        method: method.to_owned(),
        params: params.cloned(),
    }
}

/// The subscription a notification belongs to (2026-07-28
/// `_meta.io.modelcontextprotocol/subscriptionId`), if any.
pub(crate) fn subscription_id(params: Option<&JsonObject>) -> Option<RequestId> {
    params?
        .get("_meta")?
        .get(tessera_proto::meta_keys::SUBSCRIPTION_ID)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

/// A receiver of [`ClientEvent`]s from the moment it was created. A receiver
/// that falls more than the buffer behind skips the oldest events.
#[derive(Debug)]
pub struct EventStream {
    rx: broadcast::Receiver<ClientEvent>,
}

impl EventStream {
    pub(crate) fn new(rx: broadcast::Receiver<ClientEvent>) -> Self {
        EventStream { rx }
    }

    /// The next event; `None` once the client is gone.
    pub async fn recv(&mut self) -> Option<ClientEvent> {
        loop {
            match self.rx.recv().await {
                Ok(e) => return Some(e),
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::debug!(skipped = n, "event receiver fell behind");
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// The next event if one is waiting.
    pub fn try_recv(&mut self) -> Option<ClientEvent> {
        loop {
            match self.rx.try_recv() {
                Ok(e) => return Some(e),
                Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
                Err(_) => return None,
            }
        }
    }

    /// The events as a [`Stream`](futures::Stream).
    pub fn into_stream(self) -> BoxStream<'static, ClientEvent> {
        Box::pin(futures::stream::unfold(self, |mut s| async move {
            s.recv().await.map(|e| (e, s))
        }))
    }
}
