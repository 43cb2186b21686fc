//! The head's pass over params: what routing and `tools/call` read of
//! them, noted in one pass, either over the params' own text
//! ([`HeadSeed`], on first use) or while the message holding them is read
//! ([`ParamsSeed`], so that a received request's text is read once).

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::{Head, Params, flag_of};
use crate::borrowed::{BorrowedStr, raw_str};
use crate::received_meta::{MetaRead, ReceivedMetaSeed, span_in_bytes};

/// The members whose every occurrence the head's pass counts, and whose
/// last value it notes (see [`Params::noted`]): what `tools/call` checks
/// of its params before a handler runs.
pub const NOTED: [&str; 4] = ["name", "arguments", "_meta", "task"];

/// The length of [`NOTED`].
pub(super) const NOTED_LEN: usize = NOTED.len();

/// `_meta`'s place in [`NOTED`].
pub(super) const META: usize = 2;

/// How one [`NOTED`] member appears in params that arrived as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Noted<'a> {
    /// How many times the key is given (at most 255).
    pub count: u8,
    /// The first byte of the last value's text: `{`, `[`, `"`, `n` (null),
    /// `t`, `f`, or `0` for any number; `None` when the key is absent.
    pub opens: Option<u8>,
    /// The last value's JSON text, when its place is known: always for a
    /// present member other than `_meta` (whose object is
    /// [`Params::meta`]).
    pub text: Option<&'a str>,
}

/// Notes the head's members one by one, in the pass that reads them.
struct HeadReader<'b> {
    /// The whole text being read; places are noted in it.
    base: &'b [u8],
    head: Head,
    /// Where the last member's value ends in `base`, when known.
    last_end: Option<usize>,
}

impl<'de> HeadReader<'de> {
    fn new(base: &'de [u8]) -> Self {
        HeadReader {
            base,
            head: Head::default(),
            last_end: None,
        }
    }

    /// Reads the value of the member `key` (the last one counts when a key
    /// is given twice, as a tree would keep it).
    fn member<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        let noted = NOTED.iter().position(|k| *k == key);
        if let Some(i) = noted {
            self.head.counts[i] = self.head.counts[i].saturating_add(1);
        }
        if noted == Some(META) {
            let read = map.next_value_seed(ReceivedMetaSeed { base: self.base })?;
            let h = &mut self.head;
            (h.meta, h.meta_again, h.opens[META], self.last_end) = match read {
                MetaRead::Object(m, end) => (Some(m), false, b'{', end),
                MetaRead::Again => (None, true, b'{', None),
                MetaRead::Null => (None, false, b'n', None),
                MetaRead::NotObject(opens) => (None, false, opens, None),
            };
            h.spans[META] = None;
            h.meta_at = match (&h.meta, self.last_end) {
                (Some(m), Some(end)) => end.checked_sub(m.text().len()).map(|s| (s, end)),
                _ => None,
            };
            return Ok(());
        }
        let value: &'de RawValue = map.next_value()?;
        let span = span_in_bytes(self.base, value.get());
        self.last_end = span.map(|(_, end)| end);
        match key {
            "name" => self.head.name = Some(value_of(value)),
            "uri" => self.head.uri = Some(value_of(value)),
            other => {
                if let Some(i) = flag_of(other) {
                    self.head.seen |= 1 << i;
                }
            }
        }
        if let Some(i) = noted {
            self.head.spans[i] = span;
            self.head.opens[i] = match value.get().as_bytes().first() {
                Some(b'-' | b'0'..=b'9') => b'0',
                Some(b) => *b,
                None => 0,
            };
        }
        Ok(())
    }

    /// The head, with its places moved to a text that starts at `start` in
    /// `base`: `None` when one is outside it.
    fn finish(mut self, start: usize) -> Option<Head> {
        let meta_at = self.head.meta_at.as_mut();
        for span in self.head.spans.iter_mut().flatten().chain(meta_at) {
            *span = (span.0.checked_sub(start)?, span.1.checked_sub(start)?);
        }
        Some(self.head)
    }
}

/// A member's value as a tree, from its text.
fn value_of(raw: &RawValue) -> Value {
    match raw_str(raw) {
        Some(s) => Value::String(s.into_owned()),
        // The text was read as JSON, within the depth limit (checked with
        // the frame): it reads again.
        None => serde_json::from_str(raw.get()).unwrap_or(Value::Null),
    }
}

/// Reads the [`Head`] members of an object's text `base`, skipping the
/// others.
pub(super) struct HeadSeed<'b> {
    pub(super) base: &'b [u8],
}

impl<'de> DeserializeSeed<'de> for HeadSeed<'de> {
    type Value = Head;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for HeadSeed<'de> {
    type Value = Head;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        let mut reader = HeadReader::new(self.base);
        while let Some(key) = map.next_key::<BorrowedStr<'de>>()? {
            reader.member(&key, &mut map)?;
        }
        Ok(reader.head)
    }
}

/// Reads a message's `params` value in the pass that reads the message:
/// the head's members are noted as the object goes by, and the object's
/// own text is found from where it starts and where its last value ends,
/// so that the params are not read again (see [`Params::from_read`]).
pub struct ParamsSeed<'b> {
    /// The whole text the deserializer reads.
    base: &'b [u8],
    /// Where the value starts in `base`.
    start: usize,
}

impl<'b> ParamsSeed<'b> {
    /// A seed for the value of the member whose key is `key`, a slice of
    /// `base` (the text being read) as the deserializer lent it: `None`
    /// when it is not one (a key with escapes is a copy).
    pub fn after_key(base: &'b [u8], key: &str) -> Option<Self> {
        let (_, key_end) = span_in_bytes(base, key)?;
        // The key's closing quote, whitespace, `:`, whitespace, the value.
        let rest = base
            .get(key_end..)?
            .strip_prefix(b"\"")?
            .trim_ascii_start()
            .strip_prefix(b":")?
            .trim_ascii_start();
        Some(ParamsSeed {
            base,
            start: base.len() - rest.len(),
        })
    }
}

/// A `params` value as [`ParamsSeed`] read it.
#[derive(Debug)]
pub enum ParamsRead<'a> {
    /// An object: its text and what was noted of it.
    Object(ReadObject<'a>),
    /// Not an object.
    NotObject,
    /// An object whose text the one pass could not bound (a last member
    /// whose value's end is unknown, such as a `_meta` that is not an
    /// object): to be read again, as text.
    Again,
}

/// An object `params` read by [`ParamsSeed`]: its text and its head.
#[derive(Debug)]
pub struct ReadObject<'a> {
    text: &'a str,
    /// Boxed: the object is moved out of the message's pass.
    head: Box<Head>,
}

impl ReadObject<'_> {
    /// The object's JSON text.
    pub fn text(&self) -> &str {
        self.text
    }
}

impl<'de> DeserializeSeed<'de> for ParamsSeed<'de> {
    type Value = ParamsRead<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ParamsSeed<'de> {
    type Value = ParamsRead<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(ParamsRead::NotObject)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(ParamsRead::NotObject)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(ParamsRead::NotObject)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(ParamsRead::NotObject)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(ParamsRead::NotObject)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(ParamsRead::NotObject)
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(ParamsRead::NotObject)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(ParamsRead::NotObject)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (base, start) = (self.base, self.start);
        let mut reader = HeadReader::new(base);
        let mut empty = true;
        while let Some(key) = map.next_key::<BorrowedStr<'de>>()? {
            empty = false;
            reader.member(&key, &mut map)?;
        }
        // `{`, the members, whitespace, `}`.
        let bounds = || -> Option<(usize, usize)> {
            if base.get(start) != Some(&b'{') {
                return None;
            }
            let value_end = if empty { start + 1 } else { reader.last_end? };
            let after = base.get(value_end..)?.trim_ascii_start();
            after
                .starts_with(b"}")
                .then(|| (start, base.len() - after.len() + 1))
        };
        let Some((start, end)) = bounds() else {
            return Ok(ParamsRead::Again);
        };
        let text = base.get(start..end).map(std::str::from_utf8);
        match (text, reader.finish(start)) {
            (Some(Ok(text)), Some(head)) => Ok(ParamsRead::Object(ReadObject {
                text,
                head: Box::new(head),
            })),
            _ => Ok(ParamsRead::Again),
        }
    }
}

/// serde_json's name for a raw value in the serde data model.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// `text`, JSON text that was read as one value, as a [`RawValue`] without
/// reading it again: handed to [`RawValue`]'s own `Deserialize` in the form
/// serde_json's deserializer gives a raw value in (a map of its token to
/// the text), which takes the text as it is. Should a later serde_json
/// take it differently, the text is checked and read the ordinary way.
fn raw_of_read(text: &str) -> Box<RawValue> {
    use serde::Deserialize;
    use serde::de::value::MapDeserializer;
    let given: MapDeserializer<'_, _, serde_json::Error> =
        MapDeserializer::new(std::iter::once((RAW_VALUE_TOKEN, text)));
    match Box::<RawValue>::deserialize(given) {
        Ok(raw) if raw.get() == text => raw,
        _ => RawValue::from_string(text.to_owned()).unwrap_or_else(|_| RawValue::NULL.to_owned()),
    }
}

/// `text`, JSON text this crate wrote out of pieces that were each read
/// as JSON (or written by serde_json), as a [`RawValue`] without reading it
/// again, the way [`raw_of_read`] does it, the string taken over without a
/// copy. `None` should a later serde_json take it differently (the caller
/// then writes its text the ordinary way).
pub(crate) fn raw_of_written(text: String) -> Option<Box<RawValue>> {
    use serde::Deserialize;
    use serde::de::value::MapDeserializer;
    let len = text.len();
    let given: MapDeserializer<'_, _, serde_json::Error> =
        MapDeserializer::new(std::iter::once((RAW_VALUE_TOKEN, text)));
    Box::<RawValue>::deserialize(given)
        .ok()
        .filter(|raw| raw.get().len() == len)
}

impl Params {
    /// Params read by a [`ParamsSeed`], with their head: from a message
    /// whose frame was checked to nest at most
    /// [`MAX_NESTING`](super::MAX_NESTING) deep as a whole (a decoder's
    /// work). Nothing is read again.
    pub fn from_read(read: ReadObject<'_>) -> Params {
        let params = Params {
            text: Some(raw_of_read(read.text)),
            tree: std::sync::OnceLock::new(),
            head: std::sync::OnceLock::new(),
        };
        let mut head = read.head;
        params.settle(&mut head);
        let _ = params.head.set(head);
        params
    }
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
