//! [`ClientEvent`]: what the server tells the client, typed, as a stream.
//!
//! Every notification is decoded into the params type `tessera-types` has
//! for it, so its `_meta` travels with it; a notification this crate does not
//! model (or one whose params do not fit its type) arrives as
//! [`ClientEvent::Other`] exactly as sent.

use futures::stream::BoxStream;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_types::tasks::legacy;
use tessera_types::{
    ElicitationCompleteNotification, ElicitationCompleteNotificationParams, Era, JsonObject,
    LoggingMessageNotification, LoggingMessageNotificationParams, NotificationMethod,
    NotificationParams, ProgressNotification, ProgressNotificationParams,
    PromptListChangedNotification, ProtocolVersion, RequestId, ResourceListChangedNotification,
    ResourceUpdatedNotification, ResourceUpdatedNotificationParams,
    SubscriptionsAcknowledgedNotification, SubscriptionsAcknowledgedNotificationParams,
    TaskStatusNotification, TaskStatusNotificationParams, ToolListChangedNotification,
};
use tokio::sync::broadcast;

/// Something the server said, or something that happened to the connection.
///
/// Notification variants hold the notification's typed params, `_meta`
/// included ([`ClientEvent::meta`]); [`ClientEvent::method`] and
/// [`ClientEvent::params`] give the wire form back.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientEvent {
    /// Progress on one of this client's requests (only requests that asked
    /// for progress, with [`CallOptions`](crate::CallOptions)).
    Progress(ProgressNotificationParams),
    /// A log message (`notifications/message`).
    Log(LoggingMessageNotificationParams),
    /// `notifications/tools/list_changed`.
    ToolListChanged(NotificationParams),
    /// `notifications/prompts/list_changed`.
    PromptListChanged(NotificationParams),
    /// `notifications/resources/list_changed`.
    ResourceListChanged(NotificationParams),
    /// `notifications/resources/updated`.
    ResourceUpdated(ResourceUpdatedNotificationParams),
    /// A URL-mode elicitation this client knows of completed
    /// (`notifications/elicitation/complete`, 2025-11-25). Notifications for
    /// unknown or already completed ids are not passed on.
    ElicitationComplete(ElicitationCompleteNotificationParams),
    /// A `subscriptions/listen` stream was acknowledged (2026-07-28).
    SubscriptionsAcknowledged(SubscriptionsAcknowledgedNotificationParams),
    /// A task's status changed: the tasks extension's `notifications/tasks`
    /// (2026-07-28), with the status-specific members (the task is
    /// `p.task.task`). Read either era's notification the same way with
    /// `p.task_id()`, `p.status()` and `p.status_message()`.
    TaskStatus(TaskStatusNotificationParams),
    /// A task's status changed: `notifications/tasks/status` (2025-11-25;
    /// the task is `p.task`). Read it as [`ClientEvent::TaskStatus`] with
    /// `p.task_id()`, `p.status()` and `p.status_message()`.
    LegacyTaskStatus(legacy::LegacyTaskStatusNotificationParams),
    /// Any other notification (an extension's, a vendor's), or a known one
    /// whose params did not fit its type: exactly as it arrived.
    Other {
        /// The method.
        method: String,
        /// The params, `_meta` included.
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
    /// Decodes a notification as it arrived (method and params) into its
    /// typed variant; [`ClientEvent::Other`] for a method this crate does
    /// not model or params that do not fit.
    pub fn from_notification(method: &str, params: Option<JsonObject>) -> Self {
        fn typed<N: NotificationMethod>(
            params: &Option<JsonObject>,
            wrap: impl FnOnce(N::Params) -> ClientEvent,
        ) -> Option<ClientEvent> {
            tessera_types::decode_object_params::<N::Params>(params.as_ref())
                .ok()
                .map(wrap)
        }
        let event = match method {
            ProgressNotification::METHOD => {
                typed::<ProgressNotification>(&params, ClientEvent::Progress)
            }
            LoggingMessageNotification::METHOD => {
                typed::<LoggingMessageNotification>(&params, ClientEvent::Log)
            }
            ToolListChangedNotification::METHOD => {
                typed::<ToolListChangedNotification>(&params, ClientEvent::ToolListChanged)
            }
            PromptListChangedNotification::METHOD => {
                typed::<PromptListChangedNotification>(&params, ClientEvent::PromptListChanged)
            }
            ResourceListChangedNotification::METHOD => {
                typed::<ResourceListChangedNotification>(&params, ClientEvent::ResourceListChanged)
            }
            ResourceUpdatedNotification::METHOD => {
                typed::<ResourceUpdatedNotification>(&params, ClientEvent::ResourceUpdated)
            }
            ElicitationCompleteNotification::METHOD => {
                typed::<ElicitationCompleteNotification>(&params, ClientEvent::ElicitationComplete)
            }
            SubscriptionsAcknowledgedNotification::METHOD => {
                typed::<SubscriptionsAcknowledgedNotification>(
                    &params,
                    ClientEvent::SubscriptionsAcknowledged,
                )
            }
            TaskStatusNotification::METHOD => {
                typed::<TaskStatusNotification>(&params, ClientEvent::TaskStatus)
            }
            legacy::LegacyTaskStatusNotification::METHOD => {
                typed::<legacy::LegacyTaskStatusNotification>(
                    &params,
                    ClientEvent::LegacyTaskStatus,
                )
            }
            _ => None,
        };
        event.unwrap_or_else(|| ClientEvent::Other {
            method: method.to_owned(),
            params,
        })
    }

    /// The notification's method; `None` for the connection events
    /// ([`ClientEvent::Disconnected`], [`ClientEvent::Reconnected`]).
    pub fn method(&self) -> Option<&str> {
        Some(match self {
            ClientEvent::Progress(_) => ProgressNotification::METHOD,
            ClientEvent::Log(_) => LoggingMessageNotification::METHOD,
            ClientEvent::ToolListChanged(_) => ToolListChangedNotification::METHOD,
            ClientEvent::PromptListChanged(_) => PromptListChangedNotification::METHOD,
            ClientEvent::ResourceListChanged(_) => ResourceListChangedNotification::METHOD,
            ClientEvent::ResourceUpdated(_) => ResourceUpdatedNotification::METHOD,
            ClientEvent::ElicitationComplete(_) => ElicitationCompleteNotification::METHOD,
            ClientEvent::SubscriptionsAcknowledged(_) => {
                SubscriptionsAcknowledgedNotification::METHOD
            }
            ClientEvent::TaskStatus(_) => TaskStatusNotification::METHOD,
            ClientEvent::LegacyTaskStatus(_) => legacy::LegacyTaskStatusNotification::METHOD,
            ClientEvent::Other { method, .. } => method,
            ClientEvent::Disconnected | ClientEvent::Reconnected { .. } => return None,
        })
    }

    /// The notification's `_meta`, as sent.
    pub fn meta(&self) -> Option<&JsonObject> {
        match self {
            ClientEvent::Progress(p) => p.meta.as_ref(),
            ClientEvent::Log(p) => p.meta.as_ref(),
            ClientEvent::ToolListChanged(p)
            | ClientEvent::PromptListChanged(p)
            | ClientEvent::ResourceListChanged(p) => p.meta.as_ref(),
            ClientEvent::ResourceUpdated(p) => p.meta.as_ref(),
            ClientEvent::ElicitationComplete(p) => p.meta.as_ref(),
            ClientEvent::SubscriptionsAcknowledged(p) => p.meta.as_ref(),
            ClientEvent::TaskStatus(p) => p.meta.as_ref(),
            ClientEvent::LegacyTaskStatus(p) => p.meta.as_ref(),
            ClientEvent::Other { params, .. } => params
                .as_ref()
                .and_then(|p| p.get("_meta"))
                .and_then(Value::as_object),
            ClientEvent::Disconnected | ClientEvent::Reconnected { .. } => None,
        }
    }

    /// The notification's params in wire form: a typed variant encoded
    /// again (every member its type models, `_meta` included), an
    /// [`ClientEvent::Other`] as it arrived. `None` for the connection
    /// events and for notifications sent without params.
    pub fn params(&self) -> Option<JsonObject> {
        fn encode<P: Serialize>(p: &P) -> Option<JsonObject> {
            tessera_types::encode_params(p).ok()
        }
        match self {
            ClientEvent::Progress(p) => encode(p),
            ClientEvent::Log(p) => encode(p),
            ClientEvent::ToolListChanged(p)
            | ClientEvent::PromptListChanged(p)
            | ClientEvent::ResourceListChanged(p) => p.meta.as_ref().and_then(|_| encode(p)),
            ClientEvent::ResourceUpdated(p) => encode(p),
            ClientEvent::ElicitationComplete(p) => encode(p),
            ClientEvent::SubscriptionsAcknowledged(p) => encode(p),
            ClientEvent::TaskStatus(p) => encode(p),
            ClientEvent::LegacyTaskStatus(p) => encode(p),
            ClientEvent::Other { params, .. } => params.clone(),
            ClientEvent::Disconnected | ClientEvent::Reconnected { .. } => None,
        }
    }

    /// The params decoded as `P` (for instance an extension's own type for
    /// an [`ClientEvent::Other`] notification).
    pub fn params_as<P: DeserializeOwned>(&self) -> Result<P, serde_json::Error> {
        tessera_types::decode_object_params(self.params().as_ref())
    }

    /// The 2026-07-28 subscription the notification was delivered on
    /// (`_meta.io.modelcontextprotocol/subscriptionId`), if any.
    pub fn subscription_id(&self) -> Option<RequestId> {
        meta_subscription_id(self.meta())
    }
}

/// The subscription id in a `_meta` object, if any.
fn meta_subscription_id(meta: Option<&JsonObject>) -> Option<RequestId> {
    meta?
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
