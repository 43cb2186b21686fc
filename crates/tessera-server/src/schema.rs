//! JSON Schemas: generated from Rust types (schemars) and checked with the
//! `jsonschema` crate.

use schemars::JsonSchema;
use serde_json::Value;
use tessera_types::JsonObject;

/// The JSON Schema (2020-12) of `T`, as MCP wants it in `inputSchema` or
/// `outputSchema`: an object schema, without the `$schema` and `title` keys
/// (2020-12 is MCP's default dialect).
pub fn schema_for<T: JsonSchema>() -> JsonObject {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut obj = match schema.to_value() {
        Value::Object(o) => o,
        _ => JsonObject::new(),
    };
    obj.remove("$schema");
    obj.remove("title");
    obj
}

/// The schema of a tool that takes no arguments.
pub fn empty_object_schema() -> JsonObject {
    let mut o = JsonObject::new();
    o.insert("type".into(), Value::String("object".into()));
    o
}

/// A compiled schema.
pub struct Validator {
    inner: jsonschema::Validator,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Validator").finish_non_exhaustive()
    }
}

impl Validator {
    /// Compiles a schema (its `$schema` picks the dialect; 2020-12 by default).
    /// Remote `$ref`s are never fetched.
    pub fn new(schema: &JsonObject) -> Result<Validator, String> {
        let schema = Value::Object(schema.clone());
        let mut options = jsonschema::options();
        if schema.get("$schema").is_none() {
            options = options.with_draft(jsonschema::Draft::Draft202012);
        }
        options
            .build(&schema)
            .map(|inner| Validator { inner })
            .map_err(|e| e.to_string())
    }

    /// Checks a value; the error lists each problem with the path it is at.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        let problems: Vec<String> = self
            .inner
            .iter_errors(value)
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
            Err(problems.join("; "))
        }
    }
}
