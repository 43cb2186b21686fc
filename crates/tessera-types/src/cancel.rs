//! Cancellation of in-flight requests.

use serde::{Deserialize, Serialize};

use crate::JsonObject;
use crate::jsonrpc::RequestId;
use crate::macros::notifications;

/// Parameters of `notifications/cancelled`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The id of the request to cancel. Required in every version but
    /// 2025-11-25, where it is optional (tasks are cancelled with
    /// `tasks/cancel` instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why, for logging or display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl CancelledNotificationParams {
    /// Cancels `request_id`.
    pub fn new(request_id: RequestId) -> Self {
        CancelledNotificationParams {
            meta: None,
            request_id: Some(request_id),
            reason: None,
        }
    }

    /// Sets the reason.
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
}

notifications! {
    /// `notifications/cancelled`.
    CancelledNotification: crate::methods::NOTIFICATIONS_CANCELLED, CancelledNotificationParams;
}
