//! Extractors: the parameters a prompt handler can take.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_types::{ErrorObject, JsonObject, PromptArgument};
use tokio_util::sync::CancellationToken;

use crate::context::RequestContext;
use crate::extract::State;
use crate::schema::schema_for;

/// Everything a `prompts/get` request carries, before extraction. The
/// arguments have been checked against the prompt's declaration.
#[derive(Debug)]
pub struct PromptGet<S> {
    /// The prompt's name.
    pub name: String,
    /// The argument values (all strings, as the protocol has them).
    pub arguments: BTreeMap<String, String>,
    /// The request context.
    pub context: RequestContext,
    /// The server's shared state.
    pub state: Arc<S>,
}

/// Something a prompt handler can take as a parameter: [`PromptArgs<T>`],
/// [`PromptArgsMap`], [`RequestContext`], [`State<S>`],
/// [`Peer`](tessera_runtime::Peer) or [`CancellationToken`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of a prompt handler",
    label = "not a prompt extractor",
    note = "each parameter of a prompt handler is an extractor (`FromPromptGet<S>`), such as `PromptArgs<T>`, `PromptArgsMap`, `RequestContext`, `State<S>`, `Peer` or `CancellationToken`"
)]
pub trait FromPromptGet<S>: Sized + Send {
    /// Extracts the value; an `Err` becomes the JSON-RPC error of the request.
    fn from_prompt_get(get: &mut PromptGet<S>) -> Result<Self, ErrorObject>;

    /// The prompt arguments this extractor implies, if it reads the arguments.
    fn arguments() -> Option<Vec<PromptArgument>> {
        None
    }
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

impl<S, T> FromPromptGet<S> for PromptArgs<T>
where
    T: DeserializeOwned + JsonSchema + Send,
{
    fn from_prompt_get(get: &mut PromptGet<S>) -> Result<Self, ErrorObject> {
        let schema = schema_for::<T>();
        let object = typed_values(&schema, &get.arguments);
        serde_json::from_value(Value::Object(object))
            .map(PromptArgs)
            .map_err(|e| {
                ErrorObject::invalid_params(format!(
                    "Invalid arguments for prompt {}: {e}",
                    get.name
                ))
            })
    }

    fn arguments() -> Option<Vec<PromptArgument>> {
        arguments_from_schema(&schema_for::<T>())
    }
}

/// The raw argument values, by name. The prompt declares no arguments through
/// this extractor: list them on the builder with
/// [`PromptBuilder::argument`](crate::PromptBuilder::argument), or accept any
/// with [`PromptBuilder::allow_undeclared_arguments`](crate::PromptBuilder::allow_undeclared_arguments).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PromptArgsMap(pub HashMap<String, String>);

impl<S> FromPromptGet<S> for PromptArgsMap {
    fn from_prompt_get(get: &mut PromptGet<S>) -> Result<Self, ErrorObject> {
        Ok(PromptArgsMap(
            get.arguments
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ))
    }
}

impl<S: Send + Sync> FromPromptGet<S> for State<S> {
    fn from_prompt_get(get: &mut PromptGet<S>) -> Result<Self, ErrorObject> {
        Ok(State(get.state.clone()))
    }
}

impl<S> FromPromptGet<S> for RequestContext {
    fn from_prompt_get(get: &mut PromptGet<S>) -> Result<Self, ErrorObject> {
        Ok(get.context.clone())
    }
}

impl<S> FromPromptGet<S> for tessera_runtime::Peer {
    fn from_prompt_get(get: &mut PromptGet<S>) -> Result<Self, ErrorObject> {
        Ok(get.context.peer().clone())
    }
}

impl<S> FromPromptGet<S> for CancellationToken {
    fn from_prompt_get(get: &mut PromptGet<S>) -> Result<Self, ErrorObject> {
        Ok(get.context.cancellation().clone())
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
