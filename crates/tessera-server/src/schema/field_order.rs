//! The order in which a struct declares its fields, as serde names them:
//! read by asking the type to deserialize itself from a deserializer that
//! only notes the field list serde's derive hands it. schemars writes
//! `properties` into a JSON object that sorts its keys, so this is where a
//! form's declaration order comes from.

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

/// Why the field list was not read (never shown: a type that is not a plain
/// struct simply has no declared order).
#[derive(Debug)]
struct Noted;

impl std::fmt::Display for Noted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("field order noted")
    }
}

impl std::error::Error for Noted {}

impl de::Error for Noted {
    fn custom<T: std::fmt::Display>(_msg: T) -> Self {
        Noted
    }
}

/// A deserializer that notes the fields of the struct asked of it.
struct FieldNotes<'a>(&'a mut Option<&'static [&'static str]>);

impl<'de> Deserializer<'de> for FieldNotes<'_> {
    type Error = Noted;

    fn deserialize_any<V: Visitor<'de>>(self, _v: V) -> Result<V::Value, Noted> {
        Err(Noted)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _v: V,
    ) -> Result<V::Value, Noted> {
        *self.0 = Some(fields);
        Err(Noted)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

/// The serialized names of `T`'s fields in declaration order, or `None` for
/// a type that is not a plain struct (a map, a struct with flattened fields).
pub(crate) fn field_order<T: for<'de> Deserialize<'de>>() -> Option<&'static [&'static str]> {
    let mut fields = None;
    let _ = T::deserialize(FieldNotes(&mut fields));
    fields
}

#[cfg(test)]
mod tests {
    use super::field_order;

    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Booking {
        name: String,
        guest_count: u32,
        arrival: String,
    }

    #[test]
    fn fields_come_in_declaration_order_with_serde_names() {
        assert_eq!(
            field_order::<Booking>(),
            Some(&["name", "guestCount", "arrival"][..])
        );
        assert_eq!(
            field_order::<std::collections::BTreeMap<String, u32>>(),
            None
        );
    }
}
