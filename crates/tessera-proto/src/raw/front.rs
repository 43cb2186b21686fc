//! A serializer wrapper that writes what an engine adds to a 2026-07-28
//! result (`resultType`, and `_meta` with the server's identity) as the first
//! members of the object a typed result writes, then the result's own members
//! into the same object: one pass, no `#[serde(flatten)]` buffering.
//!
//! The wrapper refuses (with an error, so that the caller takes the old
//! path) a result that does not write an object (or a map), or that writes a
//! `_meta` member of its own when the server's identity is to be added (only
//! the engine's merge knows what to do with it; without an identity to add,
//! the engine keeps a result's `_meta` as it is, and so does the writer). A
//! result with a `resultType` of its own (a task) is refused by the first
//! pass, which notes it, and written by a second without the added
//! `resultType`: the engine keeps a result's own.

use std::cell::Cell;

use serde::ser::{self, Impossible, Serialize, SerializeMap, SerializeStruct, Serializer};
use serde_json::value::RawValue;

use super::MetaWithInfo;

/// The members an engine adds, which a shaped result must not write itself.
const ADDED: [&str; 2] = ["resultType", "_meta"];

/// serde_json's private struct names (its `RawValue`, its arbitrary-precision
/// number) start with this; they are not result objects.
const SERDE_JSON_PRIVATE: &str = "$serde_json::private::";

fn not_an_object<E: ser::Error>() -> E {
    E::custom("a shaped result must write a JSON object")
}

fn own_member<E: ser::Error>(name: &str) -> E {
    E::custom(format_args!(
        "a shaped result must not write its own {name} member"
    ))
}

/// `result` written as an object with `resultType: "complete"` (unless
/// `own_type`) and, when `server_info` is given, `_meta` holding it as the
/// server's identity, in front of the result's own members.
pub(super) struct InFront<'a, T: ?Sized> {
    /// The typed result.
    pub result: &'a T,
    /// The text of `_meta`'s `io.modelcontextprotocol/serverInfo`, if added.
    pub server_info: Option<&'a RawValue>,
    /// Whether the result writes its own `resultType` (known from a first
    /// pass): it is then not added, and the result's is let through.
    pub own_type: bool,
    /// Set when a pass without `own_type` met the result's own `resultType`.
    pub met_type: Cell<bool>,
}

impl<T: Serialize + ?Sized> Serialize for InFront<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.result.serialize(Front {
            inner: s,
            added: Added {
                server_info: self.server_info,
                own_type: self.own_type,
                met_type: &self.met_type,
            },
        })
    }
}

/// What the writer adds and lets through.
#[derive(Clone, Copy)]
struct Added<'a> {
    server_info: Option<&'a RawValue>,
    own_type: bool,
    met_type: &'a Cell<bool>,
}

impl Added<'_> {
    /// Refuses a member named as one the writer adds.
    fn check<E: ser::Error>(self, name: &str) -> Result<(), E> {
        match name {
            "_meta" if self.server_info.is_some() => Err(own_member(name)),
            "resultType" if !self.own_type => {
                self.met_type.set(true);
                Err(own_member(name))
            }
            _ => Ok(()),
        }
    }
}

/// The serializer a result is written with: an object opens with the added
/// members; anything else is refused.
struct Front<'a, S> {
    inner: S,
    added: Added<'a>,
}

/// Writes each scalar or sequence method as a refusal.
macro_rules! refuse {
    ($($name:ident($($arg:ty),*) -> $ret:ty;)*) => {
        $(
            fn $name(self, $(_: $arg),*) -> Result<$ret, Self::Error> {
                Err(not_an_object())
            }
        )*
    };
}

impl<'a, S: Serializer> Serializer for Front<'a, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Impossible<S::Ok, S::Error>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeMap = FrontMap<'a, S::SerializeMap>;
    type SerializeStruct = FrontStruct<'a, S::SerializeStruct>;
    type SerializeStructVariant = Impossible<S::Ok, S::Error>;

    refuse! {
        serialize_bool(bool) -> S::Ok;
        serialize_i8(i8) -> S::Ok;
        serialize_i16(i16) -> S::Ok;
        serialize_i32(i32) -> S::Ok;
        serialize_i64(i64) -> S::Ok;
        serialize_i128(i128) -> S::Ok;
        serialize_u8(u8) -> S::Ok;
        serialize_u16(u16) -> S::Ok;
        serialize_u32(u32) -> S::Ok;
        serialize_u64(u64) -> S::Ok;
        serialize_u128(u128) -> S::Ok;
        serialize_f32(f32) -> S::Ok;
        serialize_f64(f64) -> S::Ok;
        serialize_char(char) -> S::Ok;
        serialize_str(&str) -> S::Ok;
        serialize_bytes(&[u8]) -> S::Ok;
        serialize_none() -> S::Ok;
        serialize_unit() -> S::Ok;
        serialize_unit_struct(&'static str) -> S::Ok;
        serialize_unit_variant(&'static str, u32, &'static str) -> S::Ok;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        // JSON writes `Some(x)` as `x`.
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        if name.starts_with(SERDE_JSON_PRIVATE) {
            return Err(not_an_object());
        }
        // JSON writes a newtype as what it holds.
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<S::Ok, S::Error> {
        // `{"Variant": ...}`: not a result's own members.
        Err(not_an_object())
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        // Never a length of 0: serde_json would close the object at once.
        let mut m = self.inner.serialize_map(len.map(|n| n + 2))?;
        if !self.added.own_type {
            m.serialize_entry("resultType", "complete")?;
        }
        if let Some(info) = self.added.server_info {
            m.serialize_entry("_meta", &MetaWithInfo(info))?;
        }
        Ok(FrontMap(m, self.added))
    }

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        if name.starts_with(SERDE_JSON_PRIVATE) {
            return Err(not_an_object());
        }
        let mut s = self.inner.serialize_struct(name, len + 2)?;
        if !self.added.own_type {
            s.serialize_field("resultType", "complete")?;
        }
        if let Some(info) = self.added.server_info {
            s.serialize_field("_meta", &MetaWithInfo(info))?;
        }
        Ok(FrontStruct(s, self.added))
    }
}

/// A struct's fields after the added members; a field named as one of them
/// is refused.
pub(super) struct FrontStruct<'a, C>(C, Added<'a>);

impl<C: SerializeStruct> SerializeStruct for FrontStruct<'_, C> {
    type Ok = C::Ok;
    type Error = C::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), C::Error> {
        self.1.check(key)?;
        self.0.serialize_field(key, value)
    }

    fn skip_field(&mut self, key: &'static str) -> Result<(), C::Error> {
        self.0.skip_field(key)
    }

    fn end(self) -> Result<C::Ok, C::Error> {
        self.0.end()
    }
}

/// A map's entries (a struct with flattened members writes as one) after the
/// added members; a key naming one of them is refused.
pub(super) struct FrontMap<'a, C>(C, Added<'a>);

impl<C: SerializeMap> FrontMap<'_, C> {
    fn check<K: Serialize + ?Sized>(&self, key: &K) -> Result<(), C::Error> {
        match key.serialize(KeyName) {
            Ok(Some(name)) => self.1.check(name),
            Ok(None) | Err(Unreadable) => Ok(()),
        }
    }
}

impl<C: SerializeMap> SerializeMap for FrontMap<'_, C> {
    type Ok = C::Ok;
    type Error = C::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), C::Error> {
        self.check(key)?;
        self.0.serialize_key(key)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
        self.0.serialize_value(value)
    }

    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), C::Error> {
        self.check(key)?;
        self.0.serialize_entry(key, value)
    }

    fn end(self) -> Result<C::Ok, C::Error> {
        self.0.end()
    }
}

/// A map key that is not a string (the inner serializer judges it).
#[derive(Debug)]
struct Unreadable;

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a string key")
    }
}

impl std::error::Error for Unreadable {}

impl ser::Error for Unreadable {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Unreadable
    }
}

/// Reads a map key as far as telling whether it names an added member
/// (`Some` with its name), without writing it.
struct KeyName;

/// Writes each non-string key method as "not an added member".
macro_rules! not_added {
    ($($name:ident($($arg:ty),*);)*) => {
        $(
            fn $name(self, $(_: $arg),*) -> Result<Self::Ok, Unreadable> {
                Ok(None)
            }
        )*
    };
}

impl Serializer for KeyName {
    type Ok = Option<&'static str>;
    type Error = Unreadable;
    type SerializeSeq = Impossible<Self::Ok, Unreadable>;
    type SerializeTuple = Impossible<Self::Ok, Unreadable>;
    type SerializeTupleStruct = Impossible<Self::Ok, Unreadable>;
    type SerializeTupleVariant = Impossible<Self::Ok, Unreadable>;
    type SerializeMap = Impossible<Self::Ok, Unreadable>;
    type SerializeStruct = Impossible<Self::Ok, Unreadable>;
    type SerializeStructVariant = Impossible<Self::Ok, Unreadable>;

    not_added! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_i128(i128);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_u128(u128);
        serialize_f32(f32);
        serialize_f64(f64);
        serialize_char(char);
        serialize_bytes(&[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(&'static str);
    }

    fn serialize_str(self, v: &str) -> Result<Self::Ok, Unreadable> {
        Ok(ADDED.iter().copied().find(|a| *a == v))
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Self::Ok, Unreadable> {
        // Written as its name.
        self.serialize_str(variant)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Self::Ok, Unreadable> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Self::Ok, Unreadable> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Self::Ok, Unreadable> {
        Err(Unreadable)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Unreadable> {
        Err(Unreadable)
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unreadable> {
        Err(Unreadable)
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Unreadable> {
        Err(Unreadable)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Unreadable> {
        Err(Unreadable)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Unreadable> {
        Err(Unreadable)
    }

    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, Unreadable> {
        Err(Unreadable)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Unreadable> {
        Err(Unreadable)
    }
}
