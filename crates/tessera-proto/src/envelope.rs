//! Reading a frame as JSON text before any of it becomes a tree.
//!
//! A frame is first checked as JSON and split into its messages as borrowed
//! text ([`Frame`]): a batch becomes a list of element texts, counted before
//! any element is read, so a batch over a limit is refused at the cost of a
//! scan and one pointer pair per element. Each message is then read member
//! by member ([`Members`]): only the envelope's own members (`jsonrpc`, `id`,
//! `method`, `params`, `result`, `error`) are kept, as text, and every other
//! member is skipped without being built.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use tessera_types::borrowed::{self, BorrowedStr};
use tessera_types::params::{ParamsRead, ParamsSeed, ReadObject};

/// One frame split into its messages, as text borrowed from the frame.
#[derive(Debug)]
pub enum Frame<'a> {
    /// One value, as the bytes it arrived in. An object is checked as JSON
    /// while its message is read (one pass does both); any other value was
    /// checked when the frame was split, and is refused when decoded.
    Single(&'a [u8]),
    /// A JSON array: a batch, one text per element (possibly empty).
    Batch(Vec<&'a RawValue>),
}

impl Frame<'_> {
    /// The number of messages: 1, or the number of batch elements.
    pub fn len(&self) -> usize {
        match self {
            Frame::Single(_) => 1,
            Frame::Batch(items) => items.len(),
        }
    }

    /// Whether this is an empty batch.
    pub fn is_empty(&self) -> bool {
        matches!(self, Frame::Batch(items) if items.is_empty())
    }

    /// Whether this is a batch.
    pub fn is_batch(&self) -> bool {
        matches!(self, Frame::Batch(_))
    }
}

/// Splits `bytes` into a [`Frame`]: `Err` with serde_json's message when the
/// bytes are not one JSON value.
pub(crate) fn split(bytes: &[u8]) -> Result<Frame<'_>, serde_json::Error> {
    // An object (nearly every frame) is read once, when its message is.
    if first_byte(bytes) == Some(b'{') {
        return Ok(Frame::Single(bytes));
    }
    let whole: &RawValue = serde_json::from_slice(bytes)?;
    if whole.get().starts_with('[') {
        let items: Vec<&RawValue> = serde_json::from_str(whole.get())?;
        Ok(Frame::Batch(items))
    } else {
        Ok(Frame::Single(bytes))
    }
}

/// The first byte of `bytes` that is not JSON whitespace.
pub(crate) fn first_byte(bytes: &[u8]) -> Option<u8> {
    bytes
        .iter()
        .copied()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

/// The envelope members of one message, as text. A member given twice
/// counts once, with its last value (as a JSON tree would keep it); a member
/// whose value is `null` is present.
#[derive(Debug, Default)]
pub(crate) struct Members<'a> {
    pub jsonrpc: Option<&'a RawValue>,
    pub id: Option<&'a RawValue>,
    pub method: Option<&'a RawValue>,
    pub params: Option<ParamsText<'a>>,
    pub result: Option<&'a RawValue>,
    pub error: Option<&'a RawValue>,
    /// A `params` object was read whose text the pass could not bound:
    /// the message is to be read again with `params` as plain text.
    again: bool,
}

/// A message's `params`, as read with its envelope.
#[derive(Debug)]
pub(crate) enum ParamsText<'a> {
    /// Read as plain text (its members not looked at yet).
    Raw(&'a RawValue),
    /// An object read member by member in the message's pass.
    Object(ReadObject<'a>),
    /// Read in the message's pass: not an object.
    NotObject,
}

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(MembersVisitor { base: None })
    }
}

/// Reads the envelope members; with `base`, the text being read, `params`
/// is read member by member in the same pass ([`ParamsSeed`]), else as
/// plain text.
struct MembersVisitor<'b> {
    base: Option<&'b [u8]>,
}

impl<'de> Visitor<'de> for MembersVisitor<'de> {
    type Value = Members<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
        let mut m = Members::default();
        while let Some(key) = map.next_key::<BorrowedStr<'de>>()? {
            let slot = match &*key {
                "jsonrpc" => &mut m.jsonrpc,
                "id" => &mut m.id,
                "method" => &mut m.method,
                "params" => {
                    let seed = match (self.base, &key.0) {
                        (Some(base), Cow::Borrowed(key)) => ParamsSeed::after_key(base, key),
                        _ => None,
                    };
                    m.params = Some(match seed {
                        None => ParamsText::Raw(map.next_value()?),
                        Some(seed) => match map.next_value_seed(seed)? {
                            ParamsRead::Object(o) => ParamsText::Object(o),
                            ParamsRead::NotObject => ParamsText::NotObject,
                            ParamsRead::Again => {
                                m.again = true;
                                ParamsText::NotObject
                            }
                        },
                    });
                    continue;
                }
                "result" => &mut m.result,
                "error" => &mut m.error,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value::<&'de RawValue>()?);
        }
        Ok(m)
    }
}

/// Reads the envelope members of `text`, which must be a JSON object.
pub(crate) fn members(text: &str) -> Result<Members<'_>, serde_json::Error> {
    let mut d = serde_json::Deserializer::from_str(text);
    let visitor = MembersVisitor {
        base: Some(text.as_bytes()),
    };
    let read = Deserializer::deserialize_map(&mut d, visitor).and_then(|m| d.end().map(|()| m));
    match read {
        Ok(m) if !m.again => Ok(m),
        // Read again with `params` as plain text: for the error of the
        // ordinary reading, or for params the one pass could not bound.
        _ => serde_json::from_str(text),
    }
}

/// Reads the envelope members of `bytes`, checking them as one JSON object
/// on the way (`Err` for anything else, with serde_json's message).
pub(crate) fn members_of_bytes(bytes: &[u8]) -> Result<Members<'_>, serde_json::Error> {
    // Text that is UTF-8 as a whole (nearly every frame: checked at once,
    // not value by value) is read as text; the rest as bytes, where only
    // the strings kept are checked.
    if let Ok(text) = std::str::from_utf8(bytes) {
        return members(text);
    }
    let mut d = serde_json::Deserializer::from_slice(bytes);
    let visitor = MembersVisitor { base: Some(bytes) };
    let read = Deserializer::deserialize_map(&mut d, visitor).and_then(|m| d.end().map(|()| m));
    match read {
        Ok(m) if !m.again => Ok(m),
        // As in `members`.
        _ => serde_json::from_slice(bytes),
    }
}

/// What kind of JSON value `raw` is, by its first character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Object,
    Array,
    String,
    Number,
    Bool,
    Null,
}

/// The kind of `raw` (its text is valid JSON without leading whitespace).
pub(crate) fn kind(raw: &RawValue) -> Kind {
    match raw.get().trim_start().as_bytes().first() {
        Some(b'{') => Kind::Object,
        Some(b'[') => Kind::Array,
        Some(b'"') => Kind::String,
        Some(b't' | b'f') => Kind::Bool,
        Some(b'n') => Kind::Null,
        _ => Kind::Number,
    }
}

/// The string `raw` holds, unescaped (`None` when it is not a string).
pub(crate) fn string(raw: &RawValue) -> Option<Cow<'_, str>> {
    borrowed::raw_str(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_split_before_its_elements_are_read() {
        let f = split(br#" [ {"a":1} , 2, [3] ] "#).unwrap();
        let Frame::Batch(items) = f else {
            panic!("not a batch")
        };
        let texts: Vec<&str> = items.iter().map(|r| r.get()).collect();
        assert_eq!(texts, [r#"{"a":1}"#, "2", "[3]"]);
        assert!(split(b"[]").unwrap().is_empty());
        assert_eq!(split(b" {} ").unwrap().len(), 1);
        assert!(split(b"[1,]").is_err());
        assert!(split(b"1 2").is_err());
        // An object is checked when its members are read.
        assert!(members_of_bytes(b"{} {}").is_err());
        assert!(members_of_bytes(b"{\"a\":}").is_err());
    }

    #[test]
    fn members_keep_the_last_duplicate_and_present_nulls() {
        let m = members(r#"{"id":1,"x":{"deep":[1,2]},"id":"b","method":null,"par\u0061ms":{}}"#)
            .unwrap();
        assert_eq!(m.id.unwrap().get(), r#""b""#);
        assert_eq!(m.method.unwrap().get(), "null");
        assert!(matches!(m.params, Some(ParamsText::Raw(p)) if p.get() == "{}"));
        assert!(m.jsonrpc.is_none() && m.result.is_none() && m.error.is_none());
    }

    #[test]
    fn strings_are_unescaped() {
        let raw: &RawValue = serde_json::from_str(r#""2\u002e0""#).unwrap();
        assert_eq!(string(raw).as_deref(), Some("2.0"));
        let raw: &RawValue = serde_json::from_str("20").unwrap();
        assert_eq!(string(raw), None);
        assert_eq!(kind(raw), Kind::Number);
    }
}
