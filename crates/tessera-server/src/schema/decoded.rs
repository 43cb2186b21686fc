//! Which tool input schemas decoding the arguments already enforces, so the
//! server can skip validating them against the schema.
//!
//! A schema derived from a Rust type with schemars says, for the common
//! shapes, nothing serde's decoding of that type does not check itself: the
//! JSON types, required and (with `deny_unknown_fields`) unknown
//! properties, enum variants, tuple lengths and the ranges of the integer
//! types. Anything else (`minLength`, `pattern`, a `minimum` that is not an
//! integer type's bound, `allOf`, formats serde does not parse…) leaves the
//! schema to be checked.

use serde_json::Value;
use tessera_types::JsonObject;

/// Keywords that only annotate: no instance is refused for them.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "$schema",
];

/// Whether checking `schema` before the handler runs can be skipped:
/// always for a schema that only says "an object" (the call's params were
/// checked to hold one), and, when `decoded` (the handler decodes its
/// arguments into the type the schema was derived from), for a schema made
/// only of keywords that decoding enforces.
pub(crate) fn decoding_enforces(schema: &JsonObject, decoded: bool) -> bool {
    let any_object = schema.iter().all(|(k, v)| {
        (k == "type" && v == "object") || ANNOTATIONS.contains(&k.as_str()) || k.starts_with("x-")
    });
    any_object || (decoded && enforced(schema))
}

/// [`decoding_enforces`] for one subschema.
fn enforced(schema: &JsonObject) -> bool {
    schema.iter().all(|(key, value)| match key.as_str() {
        "type" | "required" | "enum" | "const" => true,
        "properties" | "$defs" => value
            .as_object()
            .is_some_and(|m| m.values().all(enforced_value)),
        "additionalProperties" | "items" => enforced_value(value),
        "prefixItems" | "anyOf" | "oneOf" => value
            .as_array()
            .is_some_and(|a| a.iter().all(enforced_value)),
        // Tuples: serde reads exactly as many items as the tuple has.
        "minItems" | "maxItems" => {
            let items = schema.get("prefixItems").and_then(Value::as_array);
            items.is_some_and(|i| value.as_u64() == Some(i.len() as u64))
        }
        "$ref" => value.as_str().is_some_and(|r| r.starts_with("#/$defs/")),
        "format" => value.as_str().is_some_and(|f| number_format(f).is_some()),
        "minimum" | "maximum" => {
            let bounds = schema
                .get("format")
                .and_then(Value::as_str)
                .and_then(number_format)
                .flatten();
            match (bounds, value.as_f64()) {
                (Some((low, high)), Some(v)) => {
                    if key == "minimum" {
                        v == low
                    } else {
                        v == high
                    }
                }
                _ => false,
            }
        }
        k => ANNOTATIONS.contains(&k) || k.starts_with("x-"),
    })
}

/// [`enforced`] for a subschema that may be a boolean schema.
fn enforced_value(value: &Value) -> bool {
    match value {
        Value::Bool(_) => true,
        Value::Object(o) => enforced(o),
        _ => false,
    }
}

/// The formats schemars gives Rust's number types, with the bounds of the
/// integer ones (as `f64`: the bounds schemars writes are exact there).
fn number_format(format: &str) -> Option<Option<(f64, f64)>> {
    let bounds = match format {
        "uint8" => (0.0, u8::MAX as f64),
        "uint16" => (0.0, u16::MAX as f64),
        "uint32" => (0.0, u32::MAX as f64),
        "uint64" | "uint" => (0.0, u64::MAX as f64),
        "uint128" => (0.0, u128::MAX as f64),
        "int8" => (i8::MIN as f64, i8::MAX as f64),
        "int16" => (i16::MIN as f64, i16::MAX as f64),
        "int32" => (i32::MIN as f64, i32::MAX as f64),
        "int64" | "int" => (i64::MIN as f64, i64::MAX as f64),
        "int128" => (i128::MIN as f64, i128::MAX as f64),
        "float" | "double" => return Some(None),
        _ => return None,
    };
    Some(Some(bounds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::schema_for;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    enum Unit {
        Celsius,
        Fahrenheit,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Inner {
        x: f64,
        y: Option<i32>,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Plain {
        /// A name.
        name: String,
        count: u8,
        big: u64,
        small: i16,
        unit: Unit,
        at: Option<Inner>,
        tags: Vec<String>,
        pair: (u32, String),
        map: std::collections::HashMap<String, bool>,
        any: serde_json::Value,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Ranged {
        #[schemars(range(min = 1, max = 10))]
        n: u32,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Lengths {
        #[schemars(length(min = 3))]
        s: String,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Patterned {
        #[schemars(regex(pattern = "^a+$"))]
        s: String,
    }

    #[test]
    fn schemas_derived_from_plain_types_are_enforced_by_decoding() {
        let s = schema_for::<Plain>();
        assert!(decoding_enforces(&s, true), "{}", Value::Object(s.clone()));
        // The same schema given by hand is checked: nothing decodes it.
        assert!(!decoding_enforces(&s, false));
    }

    #[test]
    fn validation_keywords_keep_the_check() {
        for s in [
            schema_for::<Ranged>(),
            schema_for::<Lengths>(),
            schema_for::<Patterned>(),
        ] {
            assert!(!decoding_enforces(&s, true), "{}", Value::Object(s));
        }
        let odd = |v: Value| decoding_enforces(v.as_object().unwrap(), true);
        assert!(!odd(
            json!({"type": "object", "allOf": [{"required": ["a"]}]})
        ));
        assert!(!odd(
            json!({"type": "object", "properties": {"a": {"type": "string", "format": "email"}}})
        ));
        assert!(!odd(
            json!({"type": "object", "properties": {"a": {"type": "integer", "format": "uint8", "minimum": 1}}})
        ));
        assert!(!odd(
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s"}}})
        ));
        assert!(!odd(
            json!({"type": "object", "properties": {"a": {"type": "array", "minItems": 1}}})
        ));
    }

    #[test]
    fn a_bare_object_schema_needs_no_check() {
        let bare = crate::schema::empty_object_schema();
        assert!(decoding_enforces(&bare, false));
        let described = json!({"type": "object", "description": "anything", "x-note": 1});
        assert!(decoding_enforces(described.as_object().unwrap(), false));
        let with_props = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert!(!decoding_enforces(with_props.as_object().unwrap(), false));
    }
}
