//! The members that decide how a message is read (which variant, which
//! shape), read on their own before the whole message is decoded.

use serde::Deserialize;
use serde_json::Value;

use crate::{JsonObject, Loose, Present};

/// The deciding members of an object: each is [`Loose::Absent`] (or not
/// [`Present`]) when the object does not have it.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Probe {
    /// `mode` (elicitation requests).
    pub mode: Loose<String>,
    /// `resultType` (results).
    pub result_type: Loose<String>,
    /// `type` (schemas, content).
    #[serde(rename = "type")]
    pub kind: Loose<String>,
    /// `text` (resource contents).
    pub text: Present,
    /// `blob` (resource contents).
    pub blob: Present,
    /// `oneOf` (titled single-select enum schemas).
    pub one_of: Present,
    /// `enum` (enum schemas).
    #[serde(rename = "enum")]
    pub enum_values: Present,
    /// `enumNames` (legacy titled enum schemas).
    pub enum_names: Present,
    /// `items` (array schemas).
    pub items: Loose<ItemsProbe>,
}

/// The deciding member of an array schema's `items`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ItemsProbe {
    /// `anyOf` (titled multi-select enum schemas).
    pub any_of: Present,
    /// The other members (ignored; they make only objects read as items).
    #[serde(flatten)]
    _others: IgnoredMembers,
}

/// Members read past and dropped.
#[derive(Debug, Default)]
struct IgnoredMembers;

impl<'de> Deserialize<'de> for IgnoredMembers {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        JsonObject::deserialize(d).map(|_| IgnoredMembers)
    }
}

impl Probe {
    /// The deciding members of `v` (none when it is not an object).
    pub fn of(v: &Value) -> Probe {
        match v {
            Value::Object(o) => Probe::of_object(o),
            _ => Probe::default(),
        }
    }

    /// The deciding members of `o`.
    pub fn of_object(o: &JsonObject) -> Probe {
        crate::params::decode_tree(o).unwrap_or_default()
    }
}
