//! JSON Schemas: generated from Rust types (schemars) and checked with the
//! `jsonschema` crate.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tessera_types::{ElicitationSchema, JsonObject};

mod decoded;
mod field_order;

pub(crate) use decoded::decoding_enforces;

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

/// The form-mode `requestedSchema` of `T` (a struct of primitive fields),
/// with its properties in the order `T` declares them: the order the
/// client asks them in. `Option` fields are optional properties and enums
/// become choices.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use tessera_server::schema::elicitation_schema;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Booking {
///     /// Who books.
///     name: String,
///     /// How many come.
///     guests: u32,
/// }
///
/// let schema = elicitation_schema::<Booking>()?;
/// assert_eq!(schema.properties.keys().collect::<Vec<_>>(), ["name", "guests"]);
/// # Ok::<(), serde_json::Error>(())
/// ```
///
/// Fails when `T`'s schema is not a flat object of primitive properties.
pub fn elicitation_schema<T>() -> Result<ElicitationSchema, serde_json::Error>
where
    T: JsonSchema + for<'de> Deserialize<'de>,
{
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    // Enums inline, where a form can read them.
    settings.inline_subschemas = true;
    let mut value = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
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
    let mut schema: ElicitationSchema = serde_json::from_value(value)?;
    if let Some(fields) = field_order::field_order::<T>() {
        let order: Vec<String> = fields.iter().map(|f| (*f).to_owned()).collect();
        schema.properties.reorder(&order);
    }
    Ok(schema)
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

/// The draft-07 form of a 2020-12 schema, for old clients whose validators
/// only know draft-07: `$defs` becomes `definitions` (and `$ref`s to it follow),
/// `prefixItems` becomes the array form of `items` (with `items` turned into
/// `additionalItems`), and a 2020-12 `$schema` names draft-07. Keywords that
/// draft-07 lacks and that have no equivalent (`unevaluatedProperties`,
/// `dependentSchemas`, …) are kept: draft-07 validators ignore unknown keywords.
pub fn to_draft07(schema: &JsonObject) -> JsonObject {
    match convert_draft07(Value::Object(schema.clone())) {
        Value::Object(o) => o,
        _ => schema.clone(),
    }
}

fn convert_draft07(v: Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut out = JsonObject::new();
            let prefix = o.contains_key("prefixItems");
            for (k, v) in o {
                let v = convert_draft07(v);
                match k.as_str() {
                    "$defs" => {
                        out.insert("definitions".into(), v);
                    }
                    "$ref" => {
                        let v = match v {
                            Value::String(r) if r.starts_with("#/$defs/") => {
                                Value::String(r.replacen("#/$defs/", "#/definitions/", 1))
                            }
                            other => other,
                        };
                        out.insert(k, v);
                    }
                    "$schema" if v.as_str().is_some_and(|s| s.contains("2020-12")) => {
                        out.insert(
                            k,
                            Value::String("http://json-schema.org/draft-07/schema#".into()),
                        );
                    }
                    "prefixItems" => {
                        out.insert("items".into(), v);
                    }
                    "items" if prefix => {
                        out.insert("additionalItems".into(), v);
                    }
                    _ => {
                        out.insert(k, v);
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(convert_draft07).collect()),
        other => other,
    }
}

/// The schema of a tool that takes no arguments.
pub fn empty_object_schema() -> JsonObject {
    let mut o = JsonObject::new();
    o.insert("type".into(), Value::String("object".into()));
    o
}

/// A tool's schema, compiled when the tool is registered (when every call is
/// checked against it, unless the server compiles schemas on first use) or
/// on first use (when it only explains a call that did not decode: a schema
/// derived from a Rust type compiles).
pub(crate) struct LazyValidator {
    schema: Option<JsonObject>,
    compiled: std::sync::OnceLock<Result<Validator, String>>,
}

impl LazyValidator {
    /// A schema compiled already.
    pub(crate) fn ready(v: Validator) -> Self {
        LazyValidator {
            schema: None,
            compiled: std::sync::OnceLock::from(Ok(v)),
        }
    }

    /// A schema compiled on first use.
    pub(crate) fn deferred(schema: &JsonObject) -> Self {
        LazyValidator {
            schema: Some(schema.clone()),
            compiled: std::sync::OnceLock::new(),
        }
    }

    /// The compiled schema, or why it does not compile.
    pub(crate) fn compiled(&self) -> Result<&Validator, &str> {
        self.compiled
            .get_or_init(|| match &self.schema {
                Some(s) => Validator::new(s),
                None => Err("no schema".to_owned()),
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// The compiled schema (`None` if it does not compile).
    pub(crate) fn get(&self) -> Option<&Validator> {
        self.compiled().ok()
    }
}

impl std::fmt::Debug for LazyValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyValidator")
            .field("compiled", &self.compiled.get().is_some())
            .finish()
    }
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
    ///
    /// `jsonschema::Validator::new` is not generic, so its compiler is the one
    /// copy jsonschema already holds; building through `jsonschema::options()`
    /// would put another copy (about 1.2 MB) in every crate that calls it.
    pub fn new(schema: &JsonObject) -> Result<Validator, String> {
        jsonschema::Validator::new(&Value::Object(schema.clone()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn draft07_form() {
        let s: JsonObject = serde_json::from_value(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"p": {"type": "array", "prefixItems": [{"type": "number"}], "items": false}},
            "properties": {"pt": {"$ref": "#/$defs/p"}}
        }))
        .unwrap();
        let d = Value::Object(to_draft07(&s));
        assert_eq!(d["$schema"], "http://json-schema.org/draft-07/schema#");
        assert_eq!(d["properties"]["pt"]["$ref"], "#/definitions/p");
        assert_eq!(d["definitions"]["p"]["items"], json!([{"type": "number"}]));
        assert_eq!(d["definitions"]["p"]["additionalItems"], json!(false));
        assert!(d.get("$defs").is_none());
        // The result is a valid draft-07 schema that validates the same data.
        let v = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft7)
            .build(&d)
            .unwrap();
        assert!(v.is_valid(&json!({"pt": [1]})));
        assert!(!v.is_valid(&json!({"pt": [1, 2]})));
        assert!(!v.is_valid(&json!({"pt": ["x"]})));
    }
}
