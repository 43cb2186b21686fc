//! The client verbs: each parses its words, connects with the common
//! [`ClientOptions`](crate::connect::ClientOptions), sends one request and
//! prints its result (`--json`: exactly the protocol result).

pub mod call;
pub mod complete;
pub mod discover;
pub mod get;
pub mod list;
pub mod log_level;
pub mod ping;
pub mod read;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use tessera::types::JsonObject;

use crate::exit::Failure;

/// Refuses words left over after a verb took its own.
pub fn no_more(mut words: impl Iterator<Item = String>) -> Result<(), Failure> {
    match words.next() {
        Some(extra) => Err(Failure::Usage(format!("unexpected argument {extra:?}"))),
        None => Ok(()),
    }
}

/// Parses a JSON object argument (`what` names it in errors).
pub fn json_object(text: &str, what: &str, example: &str) -> Result<JsonObject, Failure> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| Failure::Usage(format!("{what} is not valid JSON: {e}")))?;
    match v {
        Value::Object(o) => Ok(o),
        _ => Err(Failure::Usage(format!(
            "{what} must be a JSON object, like '{example}'"
        ))),
    }
}

/// Parses a JSON object of strings (prompt arguments, completion context).
pub fn string_map(text: &str, what: &str) -> Result<BTreeMap<String, String>, Failure> {
    let o = json_object(text, what, r#"{"name":"value"}"#)?;
    let mut map = BTreeMap::new();
    for (k, v) in o {
        let Value::String(v) = v else {
            return Err(Failure::Usage(format!(
                "{what}: the value of {k:?} must be a string (MCP prompt arguments are strings)"
            )));
        };
        map.insert(k, v);
    }
    Ok(map)
}

/// A request's typed params as the JSON object the client sends.
pub fn params_object<T: Serialize>(params: &T) -> JsonObject {
    match serde_json::to_value(params) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tessera::types::{
        GetPromptRequestParams, LoggingLevel, PaginatedRequestParams, ReadResourceRequestParams,
        SetLevelRequestParams,
    };

    /// The params each verb sends, as they were written as JSON.
    #[test]
    fn params_keep_their_shape() {
        let v = |o: JsonObject| Value::Object(o);
        assert_eq!(
            v(params_object(
                &call::params("add", Some(r#"{"a":1}"#)).unwrap()
            )),
            json!({"name": "add", "arguments": {"a": 1}})
        );
        assert_eq!(
            v(params_object(&call::params("add", None).unwrap())),
            json!({"name": "add"})
        );
        assert_eq!(
            v(complete::params(
                complete::CompleteWhat::Prompt,
                "p",
                "a",
                "x",
                Some(r#"{"b":"y"}"#)
            )
            .unwrap()),
            json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "x"},
                   "context": {"arguments": {"b": "y"}}})
        );
        assert_eq!(
            v(
                complete::params(complete::CompleteWhat::Resource, "u/{id}", "id", "1", None)
                    .unwrap()
            ),
            json!({"ref": {"type": "ref/resource", "uri": "u/{id}"}, "argument": {"name": "id", "value": "1"}})
        );
        let mut get = GetPromptRequestParams::new("p");
        get.arguments = Some(string_map(r#"{"x":"1"}"#, "ARGS").unwrap());
        assert_eq!(
            v(params_object(&get)),
            json!({"name": "p", "arguments": {"x": "1"}})
        );
        assert!(string_map(r#"{"x":1}"#, "ARGS").is_err());
        assert_eq!(
            v(params_object(&ReadResourceRequestParams::new("file:///a"))),
            json!({"uri": "file:///a"})
        );
        assert_eq!(
            v(params_object(&SetLevelRequestParams {
                meta: None,
                level: LoggingLevel::Warning
            })),
            json!({"level": "warning"})
        );
        assert_eq!(
            v(params_object(&PaginatedRequestParams::after(
                "c1".to_owned()
            ))),
            json!({"cursor": "c1"})
        );
    }
}
