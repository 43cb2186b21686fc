//! Deserialising matched template variables into a typed value.
//!
//! Values are text, so numbers, booleans and characters are parsed from it;
//! lists deserialize into sequences (a single string into a sequence of
//! one), pairs into maps, and a list of one item into a scalar.

use std::collections::HashMap;

use serde::de::value::{Error, MapDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeOwned, Deserializer, IntoDeserializer, Unexpected, Visitor};

use super::template::VarValue;

/// Deserialises `T` from the variables (as a map from name to value).
pub(crate) fn from_vars<T: DeserializeOwned>(vars: &HashMap<String, VarValue>) -> Result<T, Error> {
    let mut entries: Vec<(String, ValueDe)> = vars
        .iter()
        .map(|(k, v)| (k.clone(), ValueDe(v.clone())))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    // Deserializing from the map checks that every entry was consumed.
    T::deserialize(MapDeserializer::new(entries.into_iter()))
}

/// One variable's value as a deserializer.
struct ValueDe(VarValue);

impl ValueDe {
    fn scalar(self) -> Result<String, Error> {
        match self.0 {
            VarValue::String(s) => Ok(s),
            VarValue::List(mut l) if l.len() == 1 => Ok(l.remove(0)),
            VarValue::List(_) => Err(de::Error::invalid_type(Unexpected::Seq, &"a single value")),
            VarValue::Map(_) => Err(de::Error::invalid_type(Unexpected::Map, &"a single value")),
        }
    }
}

impl IntoDeserializer<'_, Error> for ValueDe {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

macro_rules! parse_scalar {
    ($($method:ident => $visit:ident : $ty:ty),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
                let s = self.scalar()?;
                match s.parse::<$ty>() {
                    Ok(v) => visitor.$visit(v),
                    Err(_) => Err(de::Error::invalid_value(
                        Unexpected::Str(&s),
                        &concat!("a value of type ", stringify!($ty)),
                    )),
                }
            }
        )*
    };
}

impl<'de> Deserializer<'de> for ValueDe {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            VarValue::String(s) => visitor.visit_string(s),
            VarValue::List(_) => self.deserialize_seq(visitor),
            VarValue::Map(_) => self.deserialize_map(visitor),
        }
    }

    parse_scalar! {
        deserialize_bool => visit_bool: bool,
        deserialize_i8 => visit_i8: i8,
        deserialize_i16 => visit_i16: i16,
        deserialize_i32 => visit_i32: i32,
        deserialize_i64 => visit_i64: i64,
        deserialize_i128 => visit_i128: i128,
        deserialize_u8 => visit_u8: u8,
        deserialize_u16 => visit_u16: u16,
        deserialize_u32 => visit_u32: u32,
        deserialize_u64 => visit_u64: u64,
        deserialize_u128 => visit_u128: u128,
        deserialize_f32 => visit_f32: f32,
        deserialize_f64 => visit_f64: f64,
        deserialize_char => visit_char: char,
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_string(self.scalar()?)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_string(self.scalar()?)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_string(self.scalar()?)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_byte_buf(self.scalar()?.into_bytes())
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_byte_buf(self.scalar()?.into_bytes())
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // A variable that is present is defined; absent ones never get here.
        visitor.visit_some(self)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let items = match self.0 {
            VarValue::String(s) => vec![s],
            VarValue::List(l) => l,
            VarValue::Map(_) => {
                return Err(de::Error::invalid_type(Unexpected::Map, &"a list"));
            }
        };
        let mut seq = SeqDeserializer::new(items.into_iter().map(|s| ValueDe(VarValue::String(s))));
        let out = visitor.visit_seq(&mut seq)?;
        seq.end()?;
        Ok(out)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let VarValue::Map(pairs) = self.0 else {
            return Err(de::Error::invalid_type(
                Unexpected::Other("a string or list"),
                &"name/value pairs",
            ));
        };
        let mut map = MapDeserializer::new(
            pairs
                .into_iter()
                .map(|(k, v)| (k, ValueDe(VarValue::String(v)))),
        );
        let out = visitor.visit_map(&mut map)?;
        map.end()?;
        Ok(out)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let s = self.scalar()?;
        visitor.visit_enum(IntoDeserializer::<Error>::into_deserializer(s))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    use super::*;

    fn vars(v: &[(&str, VarValue)]) -> HashMap<String, VarValue> {
        v.iter()
            .map(|(k, x)| ((*k).to_owned(), x.clone()))
            .collect()
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Order {
        Asc,
        Desc,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Query {
        table: String,
        limit: u32,
        ratio: Option<f64>,
        active: Option<bool>,
        order: Option<Order>,
        path: Vec<String>,
        #[serde(default)]
        tags: Vec<String>,
        initial: char,
    }

    #[test]
    fn typed_values() {
        let v = vars(&[
            ("table", "users".into()),
            ("limit", "10".into()),
            ("ratio", "0.5".into()),
            ("order", "desc".into()),
            ("path", VarValue::List(vec!["a".into(), "b".into()])),
            ("initial", "é".into()),
        ]);
        let q: Query = from_vars(&v).unwrap();
        assert_eq!(
            q,
            Query {
                table: "users".into(),
                limit: 10,
                ratio: Some(0.5),
                active: None,
                order: Some(Order::Desc),
                path: vec!["a".into(), "b".into()],
                tags: vec![],
                initial: 'é',
            }
        );
    }

    #[test]
    fn errors_name_the_problem() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Id {
            id: u32,
        }
        let e = from_vars::<Id>(&vars(&[("id", "abc".into())])).unwrap_err();
        assert!(e.to_string().contains("u32"), "{e}");
        let e = from_vars::<Id>(&HashMap::new()).unwrap_err();
        assert!(e.to_string().contains("missing field `id`"), "{e}");
        let e = from_vars::<Id>(&vars(&[(
            "id",
            VarValue::List(vec!["1".into(), "2".into()]),
        )]))
        .unwrap_err();
        assert!(e.to_string().contains("single value"), "{e}");
    }

    #[test]
    fn maps_and_single_items() {
        let v = vars(&[
            (
                "params",
                VarValue::Map(vec![("a".into(), "1".into()), ("b".into(), "2".into())]),
            ),
            ("one", VarValue::List(vec!["7".into()])),
            ("word", "x".into()),
        ]);
        #[derive(Debug, Deserialize)]
        struct P {
            params: BTreeMap<String, u8>,
            one: u8,
            word: Vec<String>,
        }
        let p: P = from_vars(&v).unwrap();
        assert_eq!(p.params["b"], 2);
        assert_eq!(p.one, 7);
        assert_eq!(p.word, vec!["x".to_owned()]);
        let raw: HashMap<String, String> =
            from_vars(&vars(&[("a", "1".into()), ("b", "two".into())])).unwrap();
        assert_eq!(raw["b"], "two");
    }
}
