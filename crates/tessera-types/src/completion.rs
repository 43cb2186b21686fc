//! Argument completion (`completion/complete`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::JsonObject;
use crate::macros::{requests, tagged_union};
use crate::result::ResultType;

/// Refers to a prompt (`type: "ref/prompt"`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "ref/prompt")]
pub struct PromptReference {
    /// The prompt's name.
    pub name: String,
    /// A human-readable title. Since 2025-06-18.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// Refers to a resource template (`type: "ref/resource"`; called
/// `ResourceReference` before 2025-06-18).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "ref/resource")]
pub struct ResourceTemplateReference {
    /// The URI template (or URI).
    pub uri: String,
}

/// The 2024-11-05 and 2025-03-26 name of [`ResourceTemplateReference`].
pub type ResourceReference = ResourceTemplateReference;

tagged_union! {
    /// What is being completed: a prompt or a resource template.
    pub enum CompletionReference (tag = "type") {
        /// A prompt's argument.
        "ref/prompt" => Prompt(PromptReference),
        /// A resource template's variable.
        "ref/resource" => ResourceTemplate(ResourceTemplateReference),
    }
}

/// The argument being completed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CompletionArgument {
    /// The argument's name.
    pub name: String,
    /// The partial value.
    pub value: String,
}

/// Values already resolved, to narrow completions. Since 2025-06-18.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CompletionContext {
    /// Previously resolved argument values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// Parameters of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteRequestParams {
    /// Reserved metadata (`_meta`); required in 2026-07-28.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: CompletionReference,
    /// The argument and its partial value.
    pub argument: CompletionArgument,
    /// Context. Since 2025-06-18.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
}

/// The completions of a [`CompleteResult`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The values (at most 100).
    pub values: Vec<String>,
    /// The total number of matches, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more matches than `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// Result of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// The completions.
    pub completion: Completion,
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The result type. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
}

impl CompleteResult {
    /// A result with `values`.
    pub fn new(values: Vec<String>) -> Self {
        CompleteResult {
            completion: Completion {
                values,
                ..Completion::default()
            },
            ..CompleteResult::default()
        }
    }
}

crate::result::impl_result_fields!(CompleteResult);

requests! {
    /// `completion/complete`.
    CompleteRequest: crate::methods::COMPLETION_COMPLETE, CompleteRequestParams => CompleteResult;
}
