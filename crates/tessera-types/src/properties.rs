//! [`SchemaProperties`]: the properties of an elicitation form in the order
//! they were declared, and [`PROPERTY_ORDER`], the annotation that carries
//! that order through JSON objects that sort their keys.
//!
//! A form is asked one property at a time, so its order is part of what the
//! server means ("name" before "guests"). `serde_json`'s objects (without
//! its `preserve_order` feature, which this workspace leaves off) sort their
//! keys, and every message crosses such objects on its way; so a schema
//! whose order is not alphabetical also names it in
//! `"x-property-order": [...]`, an annotation other clients ignore, and
//! reading a schema applies it.

use std::collections::BTreeMap;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::JsonObject;
use crate::elicitation::PrimitiveSchemaDefinition;

/// The `requestedSchema` annotation naming the properties in order (written
/// only when the order is not alphabetical).
pub const PROPERTY_ORDER: &str = "x-property-order";

/// Form properties in declaration order: insertion order when built,
/// document order when read (then reordered by [`PROPERTY_ORDER`] when the
/// schema has it). Names are unique: inserting a name again replaces its
/// schema in place.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SchemaProperties(Vec<(String, PrimitiveSchemaDefinition)>);

impl SchemaProperties {
    /// No properties.
    pub fn new() -> Self {
        SchemaProperties::default()
    }

    /// The number of properties.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The schema of property `name`.
    pub fn get(&self, name: &str) -> Option<&PrimitiveSchemaDefinition> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }

    /// Whether property `name` exists.
    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Adds a property at the end, or replaces the schema of an existing one
    /// in place; returns the schema it replaced.
    pub fn insert(
        &mut self,
        name: impl Into<String>,
        schema: PrimitiveSchemaDefinition,
    ) -> Option<PrimitiveSchemaDefinition> {
        let name = name.into();
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some((_, s)) => Some(std::mem::replace(s, schema)),
            None => {
                self.0.push((name, schema));
                None
            }
        }
    }

    /// Removes property `name`, keeping the order of the others.
    pub fn remove(&mut self, name: &str) -> Option<PrimitiveSchemaDefinition> {
        let i = self.0.iter().position(|(n, _)| n == name)?;
        Some(self.0.remove(i).1)
    }

    /// The properties in order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &PrimitiveSchemaDefinition)> {
        self.0.iter().map(|(n, s)| (n, s))
    }

    /// The names in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(n, _)| n)
    }

    /// The schemas in order.
    pub fn values(&self) -> impl Iterator<Item = &PrimitiveSchemaDefinition> {
        self.0.iter().map(|(_, s)| s)
    }

    /// Moves the properties named in `order` to the front, in that order;
    /// the others follow in their current order. Unknown names are ignored.
    pub fn reorder(&mut self, order: &[String]) {
        let mut rest = std::mem::take(&mut self.0);
        for name in order {
            if let Some(i) = rest.iter().position(|(n, _)| n == name) {
                self.0.push(rest.remove(i));
            }
        }
        self.0.append(&mut rest);
    }

    /// Whether the names are in alphabetical (byte) order, the order a
    /// sorted JSON object gives them anyway.
    pub(crate) fn is_sorted(&self) -> bool {
        self.0.windows(2).all(|w| w[0].0 <= w[1].0)
    }
}

impl<N: Into<String>> FromIterator<(N, PrimitiveSchemaDefinition)> for SchemaProperties {
    fn from_iter<I: IntoIterator<Item = (N, PrimitiveSchemaDefinition)>>(iter: I) -> Self {
        let mut p = SchemaProperties::new();
        for (n, s) in iter {
            p.insert(n, s);
        }
        p
    }
}

impl IntoIterator for SchemaProperties {
    type Item = (String, PrimitiveSchemaDefinition);
    type IntoIter = std::vec::IntoIter<(String, PrimitiveSchemaDefinition)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a SchemaProperties {
    type Item = (&'a String, &'a PrimitiveSchemaDefinition);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (String, PrimitiveSchemaDefinition)>,
        fn(&'a (String, PrimitiveSchemaDefinition)) -> (&'a String, &'a PrimitiveSchemaDefinition),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(n, s)| (n, s))
    }
}

impl Serialize for SchemaProperties {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (n, v) in &self.0 {
            m.serialize_entry(n, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for SchemaProperties {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = SchemaProperties;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of property schemas")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut p = SchemaProperties::new();
                while let Some((n, s)) = map.next_entry::<String, PrimitiveSchemaDefinition>()? {
                    p.insert(n, s);
                }
                Ok(p)
            }
        }
        d.deserialize_map(InOrder)
    }
}

/// The members of a raw `requestedSchema` that give its properties' order
/// (the property schemas themselves are skipped).
#[derive(Default, Deserialize)]
#[serde(default)]
struct Ordered {
    properties: crate::Loose<BTreeMap<String, serde::de::IgnoredAny>>,
    /// [`PROPERTY_ORDER`].
    #[serde(rename = "x-property-order")]
    order: crate::Loose<Vec<crate::Loose<String>>>,
}

/// The property names of a raw `requestedSchema` in the server's order: the
/// [`PROPERTY_ORDER`] annotation first (names that exist), then the rest as
/// the object holds them. For code that reads the schema as JSON (a form
/// that also knows properties the typed schema does not model).
pub fn property_order(schema: &JsonObject) -> Vec<String> {
    let read: Ordered = crate::params::decode_tree(schema).unwrap_or_default();
    let mut names: Vec<String> = read
        .properties
        .into_valid()
        .map(|p| p.into_keys().collect())
        .unwrap_or_default();
    let order: Vec<String> = read
        .order
        .into_valid()
        .map(|a| a.into_iter().filter_map(crate::Loose::into_valid).collect())
        .unwrap_or_default();
    let mut out = Vec::with_capacity(names.len());
    for n in order {
        if let Some(i) = names.iter().position(|x| *x == n) {
            out.push(names.remove(i));
        }
    }
    out.append(&mut names);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elicitation::{ElicitationSchema, StringSchema};
    use serde_json::json;

    fn text() -> PrimitiveSchemaDefinition {
        StringSchema::default().into()
    }

    #[test]
    fn declaration_order_survives_a_sorted_json_object() {
        let s = ElicitationSchema::new()
            .property("name", text(), true)
            .property("guests", text(), false);
        // serde_json::Value sorts keys: the order travels in the annotation.
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v[PROPERTY_ORDER], json!(["name", "guests"]));
        let back: ElicitationSchema = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(
            back.properties.keys().collect::<Vec<_>>(),
            ["name", "guests"]
        );
        assert_eq!(back, s);
        assert_eq!(property_order(v.as_object().unwrap()), ["name", "guests"]);
    }

    #[test]
    fn alphabetical_order_needs_no_annotation_and_text_order_is_kept() {
        let s = ElicitationSchema::new()
            .property("a", text(), false)
            .property("b", text(), false);
        let v = serde_json::to_value(&s).unwrap();
        assert!(v.get(PROPERTY_ORDER).is_none(), "{v}");
        // Read from text, the document's order is the order.
        let t: ElicitationSchema = serde_json::from_str(
            r#"{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"string"}}}"#,
        )
        .unwrap();
        assert_eq!(t.properties.keys().collect::<Vec<_>>(), ["zeta", "alpha"]);
        // Unknown names in the annotation are ignored; unnamed ones follow.
        let raw = json!({"type": "object", "properties": {"a": {}, "b": {}, "c": {}},
                         PROPERTY_ORDER: ["c", "nope"]});
        assert_eq!(property_order(raw.as_object().unwrap()), ["c", "a", "b"]);
    }

    #[test]
    fn inserting_again_replaces_in_place() {
        let mut p = SchemaProperties::new();
        p.insert("x", text());
        p.insert("y", text());
        assert!(p.insert("x", text()).is_some());
        assert_eq!(p.keys().collect::<Vec<_>>(), ["x", "y"]);
        assert!(p.remove("x").is_some());
        assert_eq!(p.len(), 1);
    }
}
