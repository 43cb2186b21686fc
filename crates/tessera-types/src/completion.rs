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

impl CompleteRequestParams {
    /// Completes argument `argument` of prompt `prompt`, typed so far as
    /// `value`.
    pub fn prompt(
        prompt: impl Into<String>,
        argument: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        CompleteRequestParams::of(
            CompletionReference::Prompt(PromptReference {
                name: prompt.into(),
                title: None,
            }),
            argument,
            value,
        )
    }

    /// Completes variable `variable` of the resource template `template`,
    /// typed so far as `value`.
    pub fn resource_template(
        template: impl Into<String>,
        variable: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        CompleteRequestParams::of(
            CompletionReference::ResourceTemplate(ResourceTemplateReference {
                uri: template.into(),
            }),
            variable,
            value,
        )
    }

    fn of(
        reference: CompletionReference,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        CompleteRequestParams {
            meta: None,
            reference,
            argument: CompletionArgument {
                name: name.into(),
                value: value.into(),
            },
            context: None,
        }
    }

    /// Adds arguments already resolved, to narrow the completions
    /// (2025-06-18 and later).
    pub fn with_context(mut self, arguments: impl IntoIterator<Item = (String, String)>) -> Self {
        self.context = Some(CompletionContext {
            arguments: Some(arguments.into_iter().collect()),
        });
        self
    }
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_constructors_write_the_schemas_shapes() {
        let p = CompleteRequestParams::prompt("summarise", "title", "prog")
            .with_context([("lang".to_owned(), "en".to_owned())]);
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({
                "ref": {"type": "ref/prompt", "name": "summarise"},
                "argument": {"name": "title", "value": "prog"},
                "context": {"arguments": {"lang": "en"}}
            })
        );
        let r = CompleteRequestParams::resource_template("books://{id}", "id", "1");
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({
                "ref": {"type": "ref/resource", "uri": "books://{id}"},
                "argument": {"name": "id", "value": "1"}
            })
        );
    }
}
