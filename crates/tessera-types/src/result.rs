//! Members shared by every result: `resultType` and the generic result shape.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::JsonObject;

/// The `resultType` discriminator of a result (2026-07-28).
///
/// Results of 2026-07-28 always carry it; results of earlier versions never
/// do, and a missing `resultType` means [`ResultType::Complete`]. The Tasks
/// extension adds [`ResultType::Task`]; other values are kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum ResultType {
    /// `"complete"`: the final result of the request.
    #[default]
    Complete,
    /// `"input_required"`: an interim [`InputRequiredResult`](crate::mrtr::InputRequiredResult).
    InputRequired,
    /// `"task"`: a task handle (Tasks extension `CreateTaskResult`).
    Task,
    /// Any other value.
    Other(String),
}

impl ResultType {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Task => "task",
            ResultType::Other(s) => s,
        }
    }

    /// Parses a wire string.
    pub fn parse(s: &str) -> ResultType {
        match s {
            "complete" => ResultType::Complete,
            "input_required" => ResultType::InputRequired,
            "task" => ResultType::Task,
            other => ResultType::Other(other.to_owned()),
        }
    }

    /// The result type of a raw result object: its `resultType` member, or
    /// [`ResultType::Complete`] when absent (as the spec requires for results
    /// from servers of earlier versions).
    pub fn of(result: &JsonObject) -> ResultType {
        match crate::probe::Probe::of_object(result)
            .result_type
            .valid()
            .map(String::as_str)
        {
            Some(s) => ResultType::parse(s),
            None => ResultType::Complete,
        }
    }
}

impl fmt::Display for ResultType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ResultType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = crate::borrowed::BorrowedStr::deserialize(d)?;
        Ok(ResultType::parse(&s))
    }
}

/// A result with no specific members (schema `EmptyResult`, and the generic
/// `Result` shape): `_meta`, `resultType` and anything else, kept verbatim.
///
/// Used as the result of `ping`, `resources/subscribe`,
/// `resources/unsubscribe`, `logging/setLevel` (legacy versions) and of the
/// Tasks extension's `tasks/update` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyResult {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The result type. 2026-07-28 (required there); absent in earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Any other members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl EmptyResult {
    /// An empty result without `resultType` (legacy versions).
    pub fn new() -> Self {
        EmptyResult::default()
    }

    /// An empty result with `resultType: "complete"` (2026-07-28).
    pub fn complete() -> Self {
        EmptyResult {
            result_type: Some(ResultType::Complete),
            ..EmptyResult::default()
        }
    }
}

/// Access to the members every result type shares, so generic code (the
/// server engine) can stamp `resultType` and `_meta` for the negotiated
/// version.
pub trait ResultFields {
    /// The `resultType` member.
    fn result_type_mut(&mut self) -> &mut Option<ResultType>;
    /// The `_meta` member.
    fn meta_mut(&mut self) -> &mut Option<JsonObject>;
}

/// Implements [`ResultFields`] for result structs with `result_type` and `meta`.
macro_rules! impl_result_fields {
    ($($t:ty),+ $(,)?) => {
        $(
            impl $crate::result::ResultFields for $t {
                fn result_type_mut(&mut self) -> &mut Option<$crate::result::ResultType> {
                    &mut self.result_type
                }
                fn meta_mut(&mut self) -> &mut Option<$crate::JsonObject> {
                    &mut self.meta
                }
            }
        )+
    };
}
pub(crate) use impl_result_fields;

impl_result_fields!(EmptyResult);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn result_type_round_trips_and_defaults() {
        for s in ["complete", "input_required", "task", "something_else"] {
            let t: ResultType = serde_json::from_value(json!(s)).unwrap();
            assert_eq!(serde_json::to_value(&t).unwrap(), json!(s));
        }
        assert_eq!(ResultType::of(&JsonObject::new()), ResultType::Complete);
    }

    #[test]
    fn empty_result_keeps_extra_members() {
        let v = json!({"resultType": "complete", "x": 1, "_meta": {"a": true}});
        let r: EmptyResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.result_type, Some(ResultType::Complete));
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        assert_eq!(serde_json::to_value(EmptyResult::new()).unwrap(), json!({}));
    }
}
