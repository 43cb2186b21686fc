//! Elicitation: a server asks the user for information through the client.
//!
//! Form mode (since 2025-06-18) collects values described by a restricted
//! JSON Schema of primitive properties; URL mode (since 2025-11-25) sends
//! the user to a web page. Legacy versions send `elicitation/create` as a
//! server-to-client request; 2026-07-28 embeds it in an
//! [`InputRequiredResult`](crate::mrtr::InputRequiredResult).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::JsonObject;
use crate::macros::{notifications, requests};
use crate::probe::Probe;
pub use crate::properties::{PROPERTY_ORDER, SchemaProperties, property_order};
use crate::tasks::legacy::TaskMetadata;

/// The `mode` member of form-mode parameters: always `"form"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum FormMode {
    /// `"form"`.
    #[default]
    #[serde(rename = "form")]
    Form,
}

/// Form-mode parameters of `elicitation/create` (the only mode in 2025-06-18).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestFormParams {
    /// Reserved metadata (`_meta`). Not defined in 2026-07-28.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// `"form"`; may be omitted. Since 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormMode>,
    /// What to ask the user.
    pub message: String,
    /// The shape of the answer.
    pub requested_schema: ElicitationSchema,
    /// Asks for a task-augmented request. 2025-11-25 only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
}

impl ElicitRequestFormParams {
    /// Asks `message`, expecting an answer shaped by `schema`.
    pub fn new(message: impl Into<String>, schema: ElicitationSchema) -> Self {
        ElicitRequestFormParams {
            meta: None,
            mode: None,
            message: message.into(),
            requested_schema: schema,
            task: None,
        }
    }
}

/// URL-mode parameters of `elicitation/create` (`mode: "url"`). Since 2025-11-25.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "mode", rename = "url", rename_all = "camelCase")]
pub struct ElicitRequestURLParams {
    /// Reserved metadata (`_meta`). Not defined in 2026-07-28.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Why the user should open the URL.
    pub message: String,
    /// The URL to open.
    pub url: String,
    /// Identifies the elicitation. 2025-11-25 only (required there; removed
    /// in 2026-07-28, where servers keep such state in `requestState`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Asks for a task-augmented request. 2025-11-25 only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
}

impl ElicitRequestURLParams {
    /// Asks the user to open `url`.
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> Self {
        ElicitRequestURLParams {
            message: message.into(),
            url: url.into(),
            ..ElicitRequestURLParams::default()
        }
    }
}

/// Parameters of `elicitation/create`: form or URL mode, told apart by
/// `mode` (absent means form).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ElicitRequestParams {
    /// Form mode.
    Form(ElicitRequestFormParams),
    /// URL mode. Since 2025-11-25.
    Url(ElicitRequestURLParams),
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let r = match Probe::of(&v).mode.valid().map(String::as_str) {
            Some("url") => serde_json::from_value(v).map(ElicitRequestParams::Url),
            Some("form") | None => serde_json::from_value(v).map(ElicitRequestParams::Form),
            Some(other) => {
                return Err(serde::de::Error::custom(format!(
                    "unknown elicitation mode {other:?}"
                )));
            }
        };
        r.map_err(serde::de::Error::custom)
    }
}

impl From<ElicitRequestFormParams> for ElicitRequestParams {
    fn from(v: ElicitRequestFormParams) -> Self {
        ElicitRequestParams::Form(v)
    }
}

impl From<ElicitRequestURLParams> for ElicitRequestParams {
    fn from(v: ElicitRequestURLParams) -> Self {
        ElicitRequestParams::Url(v)
    }
}

/// The `requestedSchema` of form mode: a flat object of primitive properties,
/// kept in the order the server declared them ([`SchemaProperties`]). A
/// schema whose order is not alphabetical is written with the
/// [`PROPERTY_ORDER`] annotation, so that the order survives JSON objects
/// that sort their keys; reading a schema applies the annotation.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(from = "SchemaWire", into = "SchemaWire")]
pub struct ElicitationSchema {
    /// The JSON Schema dialect (`$schema`). Since 2025-11-25.
    pub schema: Option<String>,
    /// The properties, in declaration order.
    pub properties: SchemaProperties,
    /// The names of required properties.
    pub required: Option<Vec<String>>,
}

/// [`ElicitationSchema`] as it is written.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename = "object")]
struct SchemaWire {
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    schema: Option<String>,
    properties: SchemaProperties,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    required: Option<Vec<String>>,
    #[serde(
        rename = "x-property-order",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    order: Option<Vec<String>>,
}

impl From<SchemaWire> for ElicitationSchema {
    fn from(w: SchemaWire) -> Self {
        let mut properties = w.properties;
        if let Some(order) = &w.order {
            properties.reorder(order);
        }
        ElicitationSchema {
            schema: w.schema,
            properties,
            required: w.required,
        }
    }
}

impl From<ElicitationSchema> for SchemaWire {
    fn from(s: ElicitationSchema) -> Self {
        let order = (!s.properties.is_sorted()).then(|| s.properties.keys().cloned().collect());
        SchemaWire {
            schema: s.schema,
            properties: s.properties,
            required: s.required,
            order,
        }
    }
}

impl ElicitationSchema {
    /// An empty schema.
    pub fn new() -> Self {
        ElicitationSchema::default()
    }

    /// Adds a property.
    pub fn property(
        mut self,
        name: impl Into<String>,
        schema: impl Into<PrimitiveSchemaDefinition>,
        required: bool,
    ) -> Self {
        let name = name.into();
        if required {
            self.required
                .get_or_insert_with(Vec::new)
                .push(name.clone());
        }
        self.properties.insert(name, schema.into());
        self
    }
}

/// The `format` of a string property.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StringFormat {
    /// An e-mail address.
    Email,
    /// A URI.
    Uri,
    /// A date.
    Date,
    /// A date and time.
    DateTime,
}

/// A string property (`type: "string"`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string", rename_all = "camelCase")]
pub struct StringSchema {
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The least length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// The greatest length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// A format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// A default value. Since 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// `integer` or `number`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberType {
    /// Any number.
    #[default]
    Number,
    /// Integers only.
    Integer,
}

/// A number property (`type: "number"` or `"integer"`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberSchema {
    /// `number` or `integer`.
    #[serde(rename = "type")]
    pub kind: NumberType,
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The least value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::number::ser_opt_f64"
    )]
    pub minimum: Option<f64>,
    /// The greatest value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::number::ser_opt_f64"
    )]
    pub maximum: Option<f64>,
    /// A default value. Since 2025-11-25.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::number::ser_opt_f64"
    )]
    pub default: Option<f64>,
}

/// A boolean property (`type: "boolean"`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "boolean")]
pub struct BooleanSchema {
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

/// A value with a display title, in titled enums (`{const, title}`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EnumOption {
    /// The value (`const`).
    #[serde(rename = "const")]
    pub value: String,
    /// Its display title.
    pub title: String,
}

impl EnumOption {
    /// An option `value` displayed as `title`.
    pub fn new(value: impl Into<String>, title: impl Into<String>) -> Self {
        EnumOption {
            value: value.into(),
            title: title.into(),
        }
    }
}

/// Choose one of plain values (`type: "string"` with `enum`). Since 2025-11-25.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string")]
pub struct UntitledSingleSelectEnumSchema {
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values (`enum`).
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// A default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// Choose one of titled values (`type: "string"` with `oneOf`). Since 2025-11-25.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string", rename_all = "camelCase")]
pub struct TitledSingleSelectEnumSchema {
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The options.
    pub one_of: Vec<EnumOption>,
    /// A default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// The `items` of an untitled multi-select: `{type: "string", enum}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string")]
pub struct UntitledEnumItems {
    /// The values (`enum`).
    #[serde(rename = "enum")]
    pub values: Vec<String>,
}

/// The `items` of a titled multi-select: `{anyOf: [{const, title}]}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledEnumItems {
    /// The options.
    pub any_of: Vec<EnumOption>,
}

/// Choose several plain values (`type: "array"`). Since 2025-11-25.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "array", rename_all = "camelCase")]
pub struct UntitledMultiSelectEnumSchema {
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The least number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// The greatest number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The values.
    pub items: UntitledEnumItems,
    /// Default choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// Choose several titled values (`type: "array"`). Since 2025-11-25.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "array", rename_all = "camelCase")]
pub struct TitledMultiSelectEnumSchema {
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The least number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// The greatest number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The options.
    pub items: TitledEnumItems,
    /// Default choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// Choose one value, with parallel display names in `enumNames`
/// (non-standard JSON Schema). The `EnumSchema` of 2025-06-18; kept as a
/// deprecated form since 2025-11-25.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string", rename_all = "camelCase")]
pub struct LegacyTitledEnumSchema {
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values (`enum`).
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Display names, parallel to `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// A default value. Since 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// The shapes a restricted property schema may take, worked out from `type`
/// and the members present.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    String,
    Number,
    Boolean,
    UntitledSingle,
    TitledSingle,
    UntitledMulti,
    TitledMulti,
    LegacyTitled,
}

fn shape_of(v: &Value) -> Result<Shape, String> {
    let p = Probe::of(v);
    let titled_items = p.items.valid().is_some_and(|i| i.any_of.0);
    match p.kind.valid().map(String::as_str) {
        Some("string") if p.one_of.0 => Ok(Shape::TitledSingle),
        Some("string") if p.enum_values.0 && p.enum_names.0 => Ok(Shape::LegacyTitled),
        Some("string") if p.enum_values.0 => Ok(Shape::UntitledSingle),
        Some("string") => Ok(Shape::String),
        Some("number" | "integer") => Ok(Shape::Number),
        Some("boolean") => Ok(Shape::Boolean),
        Some("array") if titled_items => Ok(Shape::TitledMulti),
        Some("array") => Ok(Shape::UntitledMulti),
        Some(t) => Err(format!("unsupported property schema type {t:?}")),
        None => Err("property schema without a string `type`".to_owned()),
    }
}

fn from_value<T: serde::de::DeserializeOwned, E: serde::de::Error>(v: Value) -> Result<T, E> {
    serde_json::from_value(v).map_err(E::custom)
}

/// A property of a form-mode `requestedSchema` (schema
/// `PrimitiveSchemaDefinition`). The enum variants exist since 2025-11-25;
/// 2025-06-18 knows `String`, `Number`, `Boolean` and the legacy enum.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PrimitiveSchemaDefinition {
    /// A string.
    String(StringSchema),
    /// A number or integer.
    Number(NumberSchema),
    /// A boolean.
    Boolean(BooleanSchema),
    /// One of plain values.
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// One of titled values.
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// Several plain values.
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// Several titled values.
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// One value with `enumNames`.
    LegacyTitled(LegacyTitledEnumSchema),
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(match shape_of(&v).map_err(serde::de::Error::custom)? {
            Shape::String => Self::String(from_value(v)?),
            Shape::Number => Self::Number(from_value(v)?),
            Shape::Boolean => Self::Boolean(from_value(v)?),
            Shape::UntitledSingle => Self::UntitledSingleSelect(from_value(v)?),
            Shape::TitledSingle => Self::TitledSingleSelect(from_value(v)?),
            Shape::UntitledMulti => Self::UntitledMultiSelect(from_value(v)?),
            Shape::TitledMulti => Self::TitledMultiSelect(from_value(v)?),
            Shape::LegacyTitled => Self::LegacyTitled(from_value(v)?),
        })
    }
}

/// Any enum property schema (schema `EnumSchema`: since 2025-11-25 the
/// union below; in 2025-06-18 the shape now called
/// [`LegacyTitledEnumSchema`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum EnumSchema {
    /// One of plain values.
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// One of titled values.
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// Several plain values.
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// Several titled values.
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// One value with `enumNames`.
    LegacyTitled(LegacyTitledEnumSchema),
}

impl<'de> Deserialize<'de> for EnumSchema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(match shape_of(&v).map_err(serde::de::Error::custom)? {
            Shape::UntitledSingle => Self::UntitledSingleSelect(from_value(v)?),
            Shape::TitledSingle => Self::TitledSingleSelect(from_value(v)?),
            Shape::UntitledMulti => Self::UntitledMultiSelect(from_value(v)?),
            Shape::TitledMulti => Self::TitledMultiSelect(from_value(v)?),
            Shape::LegacyTitled => Self::LegacyTitled(from_value(v)?),
            _ => return Err(serde::de::Error::custom("not an enum schema")),
        })
    }
}

/// A single-choice enum schema (schema `SingleSelectEnumSchema`). Since 2025-11-25.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SingleSelectEnumSchema {
    /// Plain values.
    Untitled(UntitledSingleSelectEnumSchema),
    /// Titled values.
    Titled(TitledSingleSelectEnumSchema),
}

impl<'de> Deserialize<'de> for SingleSelectEnumSchema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(match shape_of(&v).map_err(serde::de::Error::custom)? {
            Shape::UntitledSingle | Shape::LegacyTitled => Self::Untitled(from_value(v)?),
            Shape::TitledSingle => Self::Titled(from_value(v)?),
            _ => return Err(serde::de::Error::custom("not a single-select enum schema")),
        })
    }
}

/// A multiple-choice enum schema (schema `MultiSelectEnumSchema`). Since 2025-11-25.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MultiSelectEnumSchema {
    /// Plain values.
    Untitled(UntitledMultiSelectEnumSchema),
    /// Titled values.
    Titled(TitledMultiSelectEnumSchema),
}

impl<'de> Deserialize<'de> for MultiSelectEnumSchema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(match shape_of(&v).map_err(serde::de::Error::custom)? {
            Shape::UntitledMulti => Self::Untitled(from_value(v)?),
            Shape::TitledMulti => Self::Titled(from_value(v)?),
            _ => return Err(serde::de::Error::custom("not a multi-select enum schema")),
        })
    }
}

macro_rules! into_primitive {
    ($($ty:ty => $variant:ident),+ $(,)?) => {
        $(
            impl From<$ty> for PrimitiveSchemaDefinition {
                fn from(v: $ty) -> Self {
                    PrimitiveSchemaDefinition::$variant(v)
                }
            }
        )+
    };
}

into_primitive!(
    StringSchema => String,
    NumberSchema => Number,
    BooleanSchema => Boolean,
    UntitledSingleSelectEnumSchema => UntitledSingleSelect,
    TitledSingleSelectEnumSchema => TitledSingleSelect,
    UntitledMultiSelectEnumSchema => UntitledMultiSelect,
    TitledMultiSelectEnumSchema => TitledMultiSelect,
    LegacyTitledEnumSchema => LegacyTitled,
);

impl From<EnumSchema> for PrimitiveSchemaDefinition {
    fn from(e: EnumSchema) -> Self {
        match e {
            EnumSchema::UntitledSingleSelect(v) => v.into(),
            EnumSchema::TitledSingleSelect(v) => v.into(),
            EnumSchema::UntitledMultiSelect(v) => v.into(),
            EnumSchema::TitledMultiSelect(v) => v.into(),
            EnumSchema::LegacyTitled(v) => v.into(),
        }
    }
}

/// The user's answer to an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// The user submitted (form mode: `content` holds the values).
    Accept,
    /// The user explicitly declined.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

/// A submitted form value: string, integer, number, boolean or (since
/// 2025-11-25, for multi-selects) a list of strings. The schemas allow
/// integers but not fractional numbers; [`ElicitValue::Number`] accepts
/// those anyway for number properties.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ElicitValue {
    /// A boolean.
    Boolean(bool),
    /// An integer.
    Integer(i64),
    /// A fractional number.
    Number(f64),
    /// A string.
    String(String),
    /// Several strings. Since 2025-11-25.
    StringList(Vec<String>),
}

/// Result of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// Reserved metadata (`_meta`). 2025-06-18 and 2025-11-25 (not defined
    /// in 2026-07-28, where the result is embedded in `inputResponses`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values (form mode, `accept` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<BTreeMap<String, ElicitValue>>,
}

impl ElicitResult {
    /// An `accept` with values.
    pub fn accept(content: BTreeMap<String, ElicitValue>) -> Self {
        ElicitResult {
            meta: None,
            action: ElicitAction::Accept,
            content: Some(content),
        }
    }

    /// An answer without values (`decline`, `cancel`, or URL-mode `accept`).
    pub fn action(action: ElicitAction) -> Self {
        ElicitResult {
            meta: None,
            action,
            content: None,
        }
    }
}

/// Parameters of `notifications/elicitation/complete`. 2025-11-25 only.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCompleteNotificationParams {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The `elicitationId` of the finished URL-mode elicitation.
    pub elicitation_id: String,
}

requests! {
    /// `elicitation/create`: server to client in 2025-06-18 and 2025-11-25;
    /// an input request in 2026-07-28.
    ElicitRequest: crate::methods::ELICITATION_CREATE, ElicitRequestParams => ElicitResult;
}

notifications! {
    /// `notifications/elicitation/complete`: a URL-mode elicitation
    /// finished. 2025-11-25 only.
    ElicitationCompleteNotification: crate::methods::NOTIFICATIONS_ELICITATION_COMPLETE, ElicitationCompleteNotificationParams;
}
