//! Progress notifications for long-running requests.

use serde::{Deserialize, Serialize};

use crate::JsonObject;
use crate::jsonrpc::ProgressToken;
use crate::macros::notifications;

/// Parameters of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// Reserved metadata (`_meta`). Since 2025-06-18.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with every notification.
    #[serde(serialize_with = "crate::number::ser_f64")]
    pub progress: f64,
    /// The total, if known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::number::ser_opt_f64"
    )]
    pub total: Option<f64>,
    /// A human-readable description. Since 2025-03-26.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ProgressNotificationParams {
    /// Progress `progress` of `total` for `token`.
    pub fn new(token: ProgressToken, progress: f64, total: Option<f64>) -> Self {
        ProgressNotificationParams {
            meta: None,
            progress_token: token,
            progress,
            total,
            message: None,
        }
    }

    /// Sets the message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

notifications! {
    /// `notifications/progress`.
    ProgressNotification: crate::methods::NOTIFICATIONS_PROGRESS, ProgressNotificationParams;
}
