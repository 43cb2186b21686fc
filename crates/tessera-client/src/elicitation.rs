//! Elicitation on the client side: defaults (SEP-1034) and validation of form
//! answers, URL-mode bookkeeping (`notifications/elicitation/complete`, the
//! `-32042` error of 2025-11-25).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::Value;
use tessera_types::{
    ElicitAction, ElicitRequestURLParams, ElicitResult, ErrorObject, JsonObject, Loose, McpError,
    URLElicitationRequiredError,
};
use tokio::sync::watch;

use crate::members::read;

/// The `default` of each property of a form schema that has one.
pub(crate) fn schema_defaults(schema: &JsonObject) -> BTreeMap<String, Value> {
    let form: FormSchema = read(Some(schema));
    form.properties
        .into_valid()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(k, p)| match p.into_valid()?.default {
            // A `default` member, whatever its value (`null` included).
            Loose::Valid(d) => Some((k, d)),
            _ => None,
        })
        .collect()
}

/// A form's schema: each property's `default`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FormSchema {
    properties: Loose<BTreeMap<String, Loose<PropertyDefault>>>,
}

/// A property's `default`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PropertyDefault {
    default: Loose<Value>,
    /// Other members (ignored; they make only objects read as properties).
    #[serde(flatten)]
    _others: JsonObject,
}

/// Completes an accepted answer with the schema's defaults for the properties
/// the user left out, then checks it against the schema. Answers other than
/// `accept` lose their content (nothing the user did not submit is sent).
pub(crate) fn finish_form_answer(
    schema: &JsonObject,
    mut answer: ElicitResult,
) -> Result<ElicitResult, ErrorObject> {
    if answer.action != ElicitAction::Accept {
        answer.content = None;
        return Ok(answer);
    }
    let mut content = match answer.content.take() {
        Some(c) => serde_json::to_value(c)
            .ok()
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default(),
        None => JsonObject::new(),
    };
    for (k, v) in schema_defaults(schema) {
        content.entry(k).or_insert(v);
    }
    let value = Value::Object(content);
    check_form(schema, &value)?;
    answer.content = Some(serde_json::from_value(value).map_err(|e| {
        ErrorObject::internal(format!(
            "Internal error: the form answer has unsupported values: {e}"
        ))
    })?);
    Ok(answer)
}

/// Checks form content against the requested schema (with `format` checked:
/// `email`, `uri`, `date`, `date-time`).
///
/// The schema is read as draft 7, whatever its `$schema`: a form schema is a
/// flat object of primitive properties (`type`, `enum`, `oneOf`/`anyOf` of
/// `const`s, `items`, length and range bounds, `format`), which means the same
/// in draft 7 and 2020-12, and draft 7 asserts `format` by default. Going
/// through `jsonschema::draft7::new`, which is not generic, keeps one copy of
/// jsonschema's compiler in a binary instead of one per calling crate (about
/// 1.2 MB each).
pub(crate) fn check_form(schema: &JsonObject, content: &Value) -> Result<(), ErrorObject> {
    let schema_value = Value::Object(schema.clone());
    let validator = jsonschema::draft7::new(&schema_value).map_err(|e| {
        ErrorObject::invalid_params(format!(
            "Invalid params: requestedSchema is not a valid JSON Schema: {e}"
        ))
    })?;
    let problems: Vec<String> = validator
        .iter_errors(content)
        .take(10)
        .map(|e| {
            let path = e.instance_path().to_string();
            if path.is_empty() {
                e.to_string()
            } else {
                format!("{path}: {e}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ErrorObject::internal(format!(
            "Internal error: the user's answer does not match requestedSchema: {}",
            problems.join("; ")
        )))
    }
}

/// The URL elicitations of a `-32042` error, if `e` is one.
pub(crate) fn url_elicitations_required(e: &ErrorObject) -> Option<Vec<ElicitRequestURLParams>> {
    match URLElicitationRequiredError::data(e)? {
        Ok(d) => Some(d.elicitations),
        Err(_) => Some(Vec::new()),
    }
}

/// At most this many elicitation ids are remembered.
const TRACK_LIMIT: usize = 4096;

/// URL-mode elicitations the client knows of, and whether each completed.
#[derive(Debug, Default)]
pub(crate) struct ElicitationTracker {
    known: Mutex<HashMap<String, (u64, watch::Sender<bool>)>>,
    counter: Mutex<u64>,
}

impl ElicitationTracker {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, watch::Sender<bool>)>> {
        self.known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Remembers an elicitation id (from a URL-mode request or a `-32042` error).
    pub fn register(&self, id: &str) -> watch::Receiver<bool> {
        let order = {
            let mut c = self
                .counter
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *c += 1;
            *c
        };
        let mut known = self.lock();
        if let Some((_, tx)) = known.get(id) {
            return tx.subscribe();
        }
        if known.len() >= TRACK_LIMIT {
            // Forget the oldest entry.
            if let Some(oldest) = known
                .iter()
                .min_by_key(|(_, (o, _))| *o)
                .map(|(k, _)| k.clone())
            {
                known.remove(&oldest);
            }
        }
        let (tx, rx) = watch::channel(false);
        known.insert(id.to_owned(), (order, tx));
        rx
    }

    /// Marks an id complete; `false` (ignore the notification) when the id is
    /// unknown or already completed.
    pub fn complete(&self, id: &str) -> bool {
        let known = self.lock();
        match known.get(id) {
            Some((_, tx)) if !*tx.borrow() => {
                // `send_replace` updates the value even when nobody is waiting yet.
                tx.send_replace(true);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn defaults_fill_omitted_fields_then_validate() {
        let schema = obj(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "email": {"type": "string", "format": "email"}
            },
            "required": ["email"]
        }));
        let answer: ElicitResult = serde_json::from_value(
            json!({"action": "accept", "content": {"email": "a@b.example"}}),
        )
        .unwrap();
        let done = finish_form_answer(&schema, answer).unwrap();
        assert_eq!(
            serde_json::to_value(done.content).unwrap(),
            json!({"name": "John Doe", "age": 30, "email": "a@b.example"})
        );
        let bad: ElicitResult =
            serde_json::from_value(json!({"action": "accept", "content": {"email": "nope"}}))
                .unwrap();
        assert_eq!(finish_form_answer(&schema, bad).unwrap_err().code, -32603);
        let missing: ElicitResult =
            serde_json::from_value(json!({"action": "accept", "content": {}})).unwrap();
        assert!(finish_form_answer(&schema, missing).is_err());
        let declined: ElicitResult =
            serde_json::from_value(json!({"action": "decline", "content": {"x": "y"}})).unwrap();
        assert_eq!(finish_form_answer(&schema, declined).unwrap().content, None);
    }

    #[test]
    fn tracker_ignores_unknown_and_repeated_ids() {
        let t = ElicitationTracker::default();
        assert!(!t.complete("nope"));
        let rx = t.register("a");
        assert!(!*rx.borrow());
        assert!(t.complete("a"));
        assert!(*rx.borrow());
        assert!(!t.complete("a"));
    }

    #[test]
    fn url_required_errors_are_recognised() {
        let e = ErrorObject::new(-32042, "needs a URL").with_data(json!({"elicitations": [
            {"mode": "url", "elicitationId": "e1", "url": "https://x.example/", "message": "go"}
        ]}));
        let els = url_elicitations_required(&e).unwrap();
        assert_eq!(els[0].elicitation_id.as_deref(), Some("e1"));
        assert!(url_elicitations_required(&ErrorObject::internal("x")).is_none());
    }
}
