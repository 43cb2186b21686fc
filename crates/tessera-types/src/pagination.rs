//! Cursor-based pagination of list requests.

use serde::{Deserialize, Serialize};

use crate::JsonObject;
use crate::result::ResultType;

/// An opaque pagination cursor.
pub type Cursor = String;

/// Parameters of a list request (`tools/list`, `prompts/list`, ...):
/// schema `PaginatedRequestParams`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedRequestParams {
    /// Reserved metadata (`_meta`); required in 2026-07-28.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Where to continue: the `nextCursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
}

impl PaginatedRequestParams {
    /// Parameters asking for the page after `cursor`.
    pub fn after(cursor: impl Into<Cursor>) -> Self {
        PaginatedRequestParams {
            cursor: Some(cursor.into()),
            meta: None,
        }
    }
}

/// The `PaginatedResult` base shape: a result that may have more pages.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedResult {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The result type. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
}

crate::result::impl_result_fields!(PaginatedResult);
