//! `subscriptions/listen` (2026-07-28): one long-lived stream for opted-in
//! change notifications, replacing `resources/subscribe` and the HTTP GET
//! stream.

use serde::{Deserialize, Serialize};

use crate::JsonObject;
use crate::jsonrpc::RequestId;
use crate::macros::{notifications, requests};
use crate::meta::SUBSCRIPTION_ID;
use crate::result::ResultType;

/// The notifications a client opts in to (schema `SubscriptionFilter`).
/// 2026-07-28. Also carries the Tasks extension's `taskIds`
/// (`TaskSubscriptionNotifications`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// `notifications/tasks` for these task ids (Tasks extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

/// Parameters of `subscriptions/listen`. 2026-07-28.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SubscriptionsListenRequestParams {
    /// Reserved metadata (`_meta`); required.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// What to listen for.
    pub notifications: SubscriptionFilter,
}

/// Result of `subscriptions/listen`, sent when the stream closes.
/// 2026-07-28. Its `_meta` must carry
/// `io.modelcontextprotocol/subscriptionId`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenResult {
    /// Reserved metadata (`_meta`); required.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The result type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
}

impl SubscriptionsListenResult {
    /// The closing result of the subscription `id`.
    pub fn new(id: &RequestId) -> Self {
        let mut meta = JsonObject::new();
        meta.insert(
            SUBSCRIPTION_ID.to_owned(),
            serde_json::to_value(id).unwrap_or_default(),
        );
        SubscriptionsListenResult {
            meta: Some(meta),
            result_type: Some(ResultType::Complete),
        }
    }
}

/// Parameters of `notifications/subscriptions/acknowledged`: what the
/// server agreed to send. 2026-07-28.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// Reserved metadata (`_meta`); carries the subscription id.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The accepted subset of the requested filter.
    pub notifications: SubscriptionFilter,
}

crate::result::impl_result_fields!(SubscriptionsListenResult);

requests! {
    /// `subscriptions/listen`. 2026-07-28.
    SubscriptionsListenRequest: crate::methods::SUBSCRIPTIONS_LISTEN, SubscriptionsListenRequestParams => SubscriptionsListenResult;
}

notifications! {
    /// `notifications/subscriptions/acknowledged`. 2026-07-28.
    SubscriptionsAcknowledgedNotification: crate::methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED, SubscriptionsAcknowledgedNotificationParams;
}
