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
use tessera_types::{ElicitAction, ElicitRequestFormParams, ElicitRequestParams};

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
        let schema = crate::schema::elicitation_schema::<T>().map_err(|e| {
            InputError::Malformed(format!(
                "{} does not fit an elicitation form (a flat object of strings, numbers, \
                 booleans and enums): {e}",
                std::any::type_name::<T>()
            ))
        })?;
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
        let s = crate::schema::elicitation_schema::<Booking>().unwrap();
        let order: Vec<&String> = s.properties.keys().collect();
        assert_eq!(order, ["name", "guests", "vip", "meal", "note", "side"]);
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["properties"]["name"]["type"], "string");
        assert_eq!(v["properties"]["guests"]["type"], "integer");
        assert_eq!(v["properties"]["vip"]["type"], "boolean");
        assert_eq!(
            v["properties"]["meal"]["enum"],
            serde_json::json!(["Fish", "Veg"])
        );
        assert_eq!(v["properties"]["note"]["type"], "string");
        assert_eq!(
            v["properties"]["side"]["enum"],
            serde_json::json!(["Fish", "Veg"])
        );
        let required: Vec<&str> = s.required.iter().flatten().map(String::as_str).collect();
        assert!(
            required.contains(&"name") && !required.contains(&"note"),
            "{required:?}"
        );
        assert!(crate::schema::elicitation_schema::<Nested>().is_err());
        assert!(crate::schema::elicitation_schema::<u8>().is_err());
    }
}
