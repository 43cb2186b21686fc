//! The body of a `prompts/get` and the extractors that read it.

use std::collections::{BTreeMap, HashMap, HashSet};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_types::{JsonObject, PromptArgument};

use crate::extract::{FromRequest, HandlerInput, Rejection, RequestBody};
use crate::schema::schema_for;

/// The body of a `prompts/get`: what it carries beyond the
/// [`RequestParts`](crate::RequestParts). The arguments have been checked
/// against the prompt's declaration.
#[derive(Debug, Clone)]
pub struct PromptGet {
    /// The prompt's name.
    pub name: String,
    /// The argument values (all strings, as the protocol has them).
    pub arguments: BTreeMap<String, String>,
}

impl RequestBody for PromptGet {
    /// The prompt's `arguments`.
    type Declaration = Vec<PromptArgument>;
}

/// The prompt's arguments, deserialised into `T`.
///
/// `T`'s JSON Schema (schemars) declares the prompt's `arguments` unless the
/// [`PromptBuilder`](crate::PromptBuilder) lists them explicitly: each
/// top-level property is an argument, its doc comment the description, and
/// the properties that are not `Option`al (the schema's `required`) are
/// required arguments.
///
/// Prompt arguments are strings on the wire. A field whose schema type is
/// `integer`, `number` or `boolean` is parsed from its string; a value that
/// does not parse, or any other mismatch, is refused with `-32602`.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptArgs<T>(pub T);

impl<S, T> FromRequest<S, PromptGet> for PromptArgs<T>
where
    T: DeserializeOwned + JsonSchema + Send,
{
    fn from_request(input: &mut HandlerInput<S, PromptGet>) -> Result<Self, Rejection> {
        let get = &input.body;
        let schema = schema_for::<T>();
        let object = typed_values(&schema, &get.arguments);
        serde_json::from_value(Value::Object(object))
            .map(PromptArgs)
            .map_err(|e| {
                Rejection::InvalidParams(format!("Invalid arguments for prompt {}: {e}", get.name))
            })
    }

    fn declaration() -> Option<Vec<PromptArgument>> {
        arguments_from_schema(&schema_for::<T>())
    }
}

/// The raw argument values, by name. The prompt declares no arguments through
/// this extractor: list them on the builder with
/// [`PromptBuilder::argument`](crate::PromptBuilder::argument), or accept any
/// with [`PromptBuilder::allow_undeclared_arguments`](crate::PromptBuilder::allow_undeclared_arguments).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PromptArgsMap(pub HashMap<String, String>);

impl<S> FromRequest<S, PromptGet> for PromptArgsMap {
    fn from_request(input: &mut HandlerInput<S, PromptGet>) -> Result<Self, Rejection> {
        Ok(PromptArgsMap(
            input
                .body
                .arguments
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ))
    }
}

/// The prompt arguments an object schema describes: one per top-level
/// property, required when listed in `required`. `None` when there are none.
pub(crate) fn arguments_from_schema(schema: &JsonObject) -> Option<Vec<PromptArgument>> {
    let properties = schema.get("properties")?.as_object()?;
    if properties.is_empty() {
        return None;
    }
    let required: HashSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let text = |p: &Value, key: &str| p.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(
        properties
            .iter()
            .map(|(name, p)| PromptArgument {
                name: name.clone(),
                title: text(p, "title"),
                description: text(p, "description"),
                required: Some(required.contains(name.as_str())),
            })
            .collect(),
    )
}

/// The argument strings as JSON, with those whose property is typed as a
/// number or boolean parsed into one (when they parse).
fn typed_values(schema: &JsonObject, arguments: &BTreeMap<String, String>) -> JsonObject {
    let properties = schema.get("properties").and_then(Value::as_object);
    arguments
        .iter()
        .map(|(name, raw)| {
            let types = properties
                .and_then(|p| p.get(name))
                .and_then(|p| p.get("type"));
            (name.clone(), typed_value(types, raw))
        })
        .collect()
}

fn typed_value(types: Option<&Value>, raw: &str) -> Value {
    let allows = |t: &str| match types {
        Some(Value::String(s)) => s == t,
        Some(Value::Array(a)) => a.iter().any(|x| x.as_str() == Some(t)),
        _ => false,
    };
    if allows("string") {
        return Value::String(raw.to_owned());
    }
    let trimmed = raw.trim();
    if allows("boolean") {
        if let Ok(b) = trimmed.parse::<bool>() {
            return Value::Bool(b);
        }
    }
    if allows("integer") {
        if let Ok(i) = trimmed.parse::<i64>() {
            return Value::from(i);
        }
        if let Ok(u) = trimmed.parse::<u64>() {
            return Value::from(u);
        }
    }
    if allows("number") {
        if let Some(n) = trimmed
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
        {
            return Value::Number(n);
        }
    }
    Value::String(raw.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Review {
        /// The code to review.
        code: String,
        /// How many points to make.
        points: Option<u32>,
        /// Be strict.
        strict: Option<bool>,
    }

    #[test]
    fn schema_properties_become_arguments() {
        let args = arguments_from_schema(&schema_for::<Review>()).unwrap();
        let by_name: BTreeMap<_, _> = args.iter().map(|a| (a.name.as_str(), a)).collect();
        assert_eq!(by_name["code"].required, Some(true));
        assert_eq!(
            by_name["code"].description.as_deref(),
            Some("The code to review.")
        );
        assert_eq!(by_name["points"].required, Some(false));
        assert_eq!(by_name["strict"].required, Some(false));
        assert!(arguments_from_schema(&crate::schema::empty_object_schema()).is_none());
    }

    #[test]
    fn numbers_and_booleans_are_parsed_from_strings() {
        let schema = schema_for::<Review>();
        let args = BTreeMap::from([
            ("code".to_owned(), "42".to_owned()),
            ("points".to_owned(), " 3 ".to_owned()),
            ("strict".to_owned(), "true".to_owned()),
        ]);
        let v = typed_values(&schema, &args);
        assert_eq!(v["code"], Value::String("42".into()));
        assert_eq!(v["points"], Value::from(3));
        assert_eq!(v["strict"], Value::Bool(true));
        let bad = BTreeMap::from([("points".to_owned(), "three".to_owned())]);
        assert_eq!(
            typed_values(&schema, &bad)["points"],
            Value::String("three".into())
        );
    }
}
