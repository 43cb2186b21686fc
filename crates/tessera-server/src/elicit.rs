//! Typed elicitation: ask the user for a value of a Rust type.
//!
//! [`RequestContext::elicit`] derives the form from `T`'s JSON Schema
//! (schemars), checks that it fits what a form may ask (a flat object of
//! strings, numbers, booleans and enums: the spec's
//! `PrimitiveSchemaDefinition`s), asks, and reads the answer back as `T`.
//!
//! ```no_run
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use tessera_server::{Elicited, RequestContext};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Booking {
//!     /// Who books.
//!     name: String,
//!     /// How many guests.
//!     guests: u8,
//! }
//!
//! async fn book(ctx: RequestContext) -> String {
//!     match ctx.elicit::<Booking>("Who is coming?").await {
//!         Ok(Elicited::Accepted(b)) => format!("{} for {}", b.guests, b.name),
//!         Ok(Elicited::Declined | Elicited::Cancelled) => "not booked".into(),
//!         Err(e) => format!("could not ask: {e}"),
//!     }
//! }
//! ```

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_types::{
    ElicitAction, ElicitRequestFormParams, ElicitRequestParams, ElicitationSchema,
};

use crate::context::RequestContext;
use crate::mrtr::InputError;

/// What the user did with a typed question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited<T> {
    /// The user submitted the form; its values read as `T`.
    Accepted(T),
    /// The user explicitly declined.
    Declined,
    /// The user dismissed the question.
    Cancelled,
}

/// The form-mode `requestedSchema` of `T`: `T`'s JSON Schema, with `Option`
/// fields as optional properties and enums inlined, checked against what a
/// form may ask. `Err` says why `T` cannot be a form (a nested object, an
/// array of objects, a map…).
pub fn form_schema<T: JsonSchema>() -> Result<ElicitationSchema, String> {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(o) = &mut value {
        // A form's schema has no dialect or title of its own to carry.
        o.remove("$schema");
        o.remove("title");
        o.remove("description");
        // An `Option` field is an optional property (not `required`): a form
        // has no null, so its schema is the inner type's.
        if let Some(Value::Object(props)) = o.get_mut("properties") {
            props.values_mut().for_each(without_null);
        }
    }
    if value.get("type").and_then(Value::as_str) != Some("object") {
        return Err(format!(
            "{} is not an object with named fields",
            std::any::type_name::<T>()
        ));
    }
    serde_json::from_value(value).map_err(|e| {
        format!(
            "{} does not fit an elicitation form (a flat object of strings, numbers, booleans \
             and enums): {e}",
            std::any::type_name::<T>()
        )
    })
}

/// `schema` without the `null` that schemars adds for an `Option`: in
/// `type: [T, "null"]`, in `enum`, and as an `anyOf` branch.
fn without_null(schema: &mut Value) {
    let Value::Object(o) = schema else { return };
    let is_null = |v: &Value| v.as_str() == Some("null");
    if let Some(Value::Array(types)) = o.get_mut("type") {
        types.retain(|t| !is_null(t));
        if types.len() == 1 {
            let only = types.remove(0);
            o.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = o.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if let Some(Value::Array(branches)) = o.get("anyOf") {
        let rest: Vec<&Value> = branches
            .iter()
            .filter(|b| !b.get("type").is_some_and(is_null))
            .collect();
        if let [one] = rest.as_slice() {
            let mut merged = (*one).clone();
            if let Value::Object(m) = &mut merged {
                for (k, v) in o.iter().filter(|(k, _)| k.as_str() != "anyOf") {
                    m.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            *schema = merged;
        }
    }
}

impl RequestContext {
    /// Asks the user, through the client's form, for a `T` (see [the
    /// module](crate::elicit)). The schema is derived from `T` and checked
    /// on each call; a `T` that cannot be a form is
    /// [`InputError::Malformed`] before anything is sent. An accepted answer
    /// that does not read as `T` is [`InputError::Malformed`] too.
    pub async fn elicit<T: JsonSchema + DeserializeOwned>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicited<T>, InputError> {
        let schema = form_schema::<T>().map_err(InputError::Malformed)?;
        let params = ElicitRequestParams::Form(ElicitRequestFormParams::new(message, schema));
        let result = self.elicit_with(params).await?;
        match result.action {
            ElicitAction::Accept => {
                let content =
                    serde_json::to_value(result.content.unwrap_or_default()).unwrap_or(Value::Null);
                serde_json::from_value(content)
                    .map(Elicited::Accepted)
                    .map_err(|e| {
                        InputError::Malformed(format!(
                            "the accepted form does not read as {}: {e}",
                            std::any::type_name::<T>()
                        ))
                    })
            }
            ElicitAction::Decline => Ok(Elicited::Declined),
            ElicitAction::Cancel => Ok(Elicited::Cancelled),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Meal {
        Fish,
        Veg,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Booking {
        name: String,
        guests: u8,
        vip: bool,
        meal: Meal,
        note: Option<String>,
        side: Option<Meal>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        booking: Booking,
    }

    #[test]
    fn flat_types_become_forms_and_nested_ones_are_refused() {
        let s = form_schema::<Booking>().unwrap();
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["properties"]["name"]["type"], "string");
        assert_eq!(v["properties"]["guests"]["type"], "integer");
        assert_eq!(v["properties"]["vip"]["type"], "boolean");
        assert_eq!(
            v["properties"]["meal"]["enum"],
            serde_json::json!(["Fish", "Veg"])
        );
        assert_eq!(v["properties"]["note"]["type"], "string");
        assert_eq!(v["properties"]["side"]["enum"], serde_json::json!(["Fish", "Veg"]));
        let required: Vec<&str> = s.required.iter().flatten().map(String::as_str).collect();
        assert!(
            required.contains(&"name") && !required.contains(&"note"),
            "{required:?}"
        );
        let e = form_schema::<Nested>().unwrap_err();
        assert!(e.contains("does not fit an elicitation form"), "{e}");
        assert!(form_schema::<u8>().unwrap_err().contains("not an object"));
    }
}
