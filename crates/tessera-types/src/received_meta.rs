//! A received request's `params._meta`, kept as the JSON text it arrived in.
//!
//! A 2026-07-28 request carries its protocol version, its client's
//! capabilities and identity in `_meta`, and the transport, the engine and
//! the server each look at a few of those members. Building a JSON tree of
//! the whole `_meta` for that (and dropping it after) was the largest single
//! cost of a modern request. [`ReceivedMeta`] keeps the text; one pass over
//! it, when it is read off the params, notes where the well-known members'
//! values are ([`WELL_KNOWN`]). Those are then read from their own text;
//! any other member is found by a pass over the text that builds nothing.
//! The tree ([`ReceivedMeta::object`]) is built only for code that asks for
//! the whole `_meta`, on first use, and kept.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::de::{DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::JsonObject;
use crate::borrowed::BorrowedStr;
use crate::meta;

/// The `_meta` keys whose values' places are noted when `_meta` is read:
/// those looked at on every request (era detection, the per-request checks
/// of 2026-07-28, progress and request tags).
pub const WELL_KNOWN: [&str; 6] = [
    meta::PROTOCOL_VERSION,
    meta::CLIENT_CAPABILITIES,
    meta::CLIENT_INFO,
    meta::LOG_LEVEL,
    meta::PROGRESS_TOKEN,
    meta::REQUEST_TAG,
];

/// Where a member's value is in the text: `start..end`.
type Span = (usize, usize);

/// A request's `_meta` object as JSON text, with typed reads of single
/// members and a tree built only when asked for. Cheap to clone (shared).
#[derive(Clone)]
pub struct ReceivedMeta(Arc<Inner>);

struct Inner {
    /// The object's text.
    text: Box<str>,
    /// The value of each [`WELL_KNOWN`] key, when present (the last one
    /// when a key is given twice, as a tree keeps it).
    known: [Option<Span>; WELL_KNOWN.len()],
    /// Where each present [`WELL_KNOWN`] member's key (its opening quote)
    /// is, when `plain`.
    keys: [Option<usize>; WELL_KNOWN.len()],
    /// Noted in the params' pass: no key is written with an escape or
    /// given twice, so `known` and `keys` place every well-known member.
    plain: bool,
    /// Each [`WELL_KNOWN`] member's value as a tree, built on first use.
    values: [OnceLock<Value>; WELL_KNOWN.len()],
    /// The whole object, built on first use.
    tree: OnceLock<JsonObject>,
}

impl ReceivedMeta {
    /// `_meta` from its JSON text: `None` unless the text is an object that
    /// reads. Only the [`WELL_KNOWN`] members' places are noted; nothing is
    /// built.
    pub fn from_text(text: &str) -> Option<Self> {
        if !text.starts_with('{') {
            return None;
        }
        let text: Box<str> = text.into();
        let known = well_known_spans(&text)?;
        Some(ReceivedMeta(Arc::new(Inner {
            text,
            known,
            keys: [None; WELL_KNOWN.len()],
            plain: false,
            values: Default::default(),
            tree: OnceLock::new(),
        })))
    }

    /// When the params' pass found no key written with an escape or given
    /// twice: for each [`WELL_KNOWN`] key, where its member's key (opening
    /// quote) and value are in [`ReceivedMeta::text`].
    pub(crate) fn plain_places(&self) -> Option<[Option<(usize, Span)>; WELL_KNOWN.len()]> {
        if !self.0.plain {
            return None;
        }
        let mut out = [None; WELL_KNOWN.len()];
        for (o, (k, v)) in out.iter_mut().zip(self.0.keys.iter().zip(self.0.known)) {
            *o = match (k, v) {
                (Some(k), Some(v)) => Some((*k, v)),
                (None, None) => None,
                _ => return None,
            };
        }
        Some(out)
    }

    /// The object's JSON text.
    pub fn text(&self) -> &str {
        &self.0.text
    }

    /// The whole `_meta` as a tree, built on first use and then kept.
    pub fn object(&self) -> &JsonObject {
        self.0
            .tree
            .get_or_init(|| serde_json::from_str(&self.0.text).unwrap_or_default())
    }

    /// The JSON text of the member `key`'s value (the last one when the key
    /// is given twice), without building a tree.
    pub fn member_text(&self, key: &str) -> Option<&str> {
        let (start, end) = match WELL_KNOWN.iter().position(|k| *k == key) {
            Some(i) => self.0.known[i]?,
            None => find_span(&self.0.text, key)?,
        };
        self.0.text.get(start..end)
    }

    /// Whether `_meta` has the member `key` (no tree is built).
    pub fn contains_key(&self, key: &str) -> bool {
        self.member_text(key).is_some()
    }

    /// The member `key` deserialized as `T` from its own text: `None` when
    /// absent.
    pub fn member<T: DeserializeOwned>(&self, key: &str) -> Option<Result<T, serde_json::Error>> {
        self.member_text(key).map(serde_json::from_str)
    }

    /// The member `key` when it is a string (borrowed from the text unless
    /// it has escapes); `Err` with the value when it is something else;
    /// `None` when absent.
    pub fn str_member(&self, key: &str) -> Option<Result<Cow<'_, str>, Value>> {
        let text = self.member_text(key)?;
        Some(json_str(text).ok_or_else(|| serde_json::from_str(text).unwrap_or_default()))
    }

    /// One member as a tree value. A [`WELL_KNOWN`] member is read alone
    /// (on first use, then kept); any other builds the whole tree, like
    /// [`ReceivedMeta::object`] ([`ReceivedMeta::member`] reads one member
    /// alone without keeping it).
    pub fn get(&self, key: &str) -> Option<&Value> {
        if let Some(tree) = self.0.tree.get() {
            return tree.get(key);
        }
        match WELL_KNOWN.iter().position(|k| *k == key) {
            Some(i) => {
                let (start, end) = self.0.known[i]?;
                let text = self.0.text.get(start..end)?;
                Some(
                    self.0.values[i].get_or_init(|| serde_json::from_str(text).unwrap_or_default()),
                )
            }
            None => self.object().get(key),
        }
    }
}

/// The content of a JSON string's text, or `None` when the text is not a
/// string: borrowed when it has no escapes.
fn json_str(text: &str) -> Option<Cow<'_, str>> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(text).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

impl From<JsonObject> for ReceivedMeta {
    /// `_meta` built by the application: written as text once (so that
    /// member reads work the same), the tree kept.
    fn from(tree: JsonObject) -> Self {
        let text: Box<str> = serde_json::to_string(&tree)
            .unwrap_or_else(|_| "{}".to_owned())
            .into();
        let known = well_known_spans(&text).unwrap_or_default();
        ReceivedMeta(Arc::new(Inner {
            text,
            known,
            keys: [None; WELL_KNOWN.len()],
            plain: false,
            values: Default::default(),
            tree: OnceLock::from(tree),
        }))
    }
}

impl PartialEq for ReceivedMeta {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || self.0.text == other.0.text
            || self.object() == other.object()
    }
}

impl fmt::Debug for ReceivedMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ReceivedMeta({})", self.0.text)
    }
}

/// Where `value` (a slice of `base`) starts and ends in `base`.
fn span_in(base: &str, value: &str) -> Option<Span> {
    span_in_bytes(base.as_bytes(), value)
}

/// Where `value`, borrowed from `base`, starts and ends in `base`: `None`
/// when it is not a slice of `base` (a copy, as an unescaped string is).
/// Told by address, without comparing the bytes: two live values cannot
/// share an address unless one is a slice of the other.
pub(crate) fn span_in_bytes(base: &[u8], value: &str) -> Option<Span> {
    let start = (value.as_ptr() as usize).checked_sub(base.as_ptr() as usize)?;
    let end = start.checked_add(value.len())?;
    (end <= base.len()).then_some((start, end))
}

/// The places of the [`WELL_KNOWN`] members' values in an object's text.
fn well_known_spans(text: &str) -> Option<[Option<Span>; WELL_KNOWN.len()]> {
    let mut d = serde_json::Deserializer::from_str(text);
    d.deserialize_map(SpansVisitor {
        base: text,
        key: None,
    })
    .ok()
    .map(|found| found.known)
}

/// The place of one member's value in an object's text (the last one when
/// the key is given twice).
fn find_span(text: &str, key: &str) -> Option<Span> {
    let mut d = serde_json::Deserializer::from_str(text);
    d.deserialize_map(SpansVisitor {
        base: text,
        key: Some(key),
    })
    .ok()?
    .other
}

/// What one pass over an object's members found.
struct Found {
    known: [Option<Span>; WELL_KNOWN.len()],
    other: Option<Span>,
}

/// Notes the places of the [`WELL_KNOWN`] members' values (with no `key`)
/// or of the member `key`'s, skipping every other value.
struct SpansVisitor<'b, 'k> {
    base: &'b str,
    key: Option<&'k str>,
}

impl<'de> Visitor<'de> for SpansVisitor<'de, '_> {
    type Value = Found;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Found, A::Error> {
        let mut found = Found {
            known: [None; WELL_KNOWN.len()],
            other: None,
        };
        while let Some(k) = map.next_key::<BorrowedStr<'de>>()? {
            let slot = match self.key {
                Some(wanted) => (*k == *wanted).then_some(&mut found.other),
                None => WELL_KNOWN
                    .iter()
                    .position(|w| *k == **w)
                    .map(|i| &mut found.known[i]),
            };
            match slot {
                Some(slot) => {
                    let v: &'de RawValue = map.next_value()?;
                    *slot = span_in(self.base, v.get());
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }
}

impl ReceivedMeta {
    /// `_meta` as the slice `start..end` of `base`, with the well-known
    /// members' places given in `base`.
    fn from_slice(
        base: &[u8],
        (start, end): Span,
        in_base: [Option<Span>; WELL_KNOWN.len()],
        keys_in_base: Option<[Option<usize>; WELL_KNOWN.len()]>,
    ) -> Option<Self> {
        let text: Box<str> = std::str::from_utf8(base.get(start..end)?).ok()?.into();
        let mut known = [None; WELL_KNOWN.len()];
        for (k, b) in known.iter_mut().zip(in_base) {
            if let Some((s, e)) = b {
                *k = Some((s.checked_sub(start)?, e.checked_sub(start)?));
            }
        }
        let mut keys = [None; WELL_KNOWN.len()];
        if let Some(in_base) = keys_in_base {
            for (k, b) in keys.iter_mut().zip(in_base) {
                if let Some(at) = b {
                    *k = Some(at.checked_sub(start)?);
                }
            }
        }
        Some(ReceivedMeta(Arc::new(Inner {
            text,
            known,
            keys,
            plain: keys_in_base.is_some(),
            values: Default::default(),
            tree: OnceLock::new(),
        })))
    }
}

/// A `_meta` value as read off a params' text by [`ReceivedMetaSeed`].
pub(crate) enum MetaRead {
    /// `null`: no `_meta`.
    Null,
    /// Neither an object nor `null`: no `_meta`. The first byte of its
    /// text (`[`, `"`, `t`, `f`, or `0` for any number).
    NotObject(u8),
    /// An object, read, and where its text ends in the text read (when
    /// known: not for an empty object).
    Object(ReceivedMeta, Option<usize>),
    /// An object whose bounds the one pass could not tell (its first key
    /// has escapes): to be read again on its own.
    Again,
}

/// Reads a params' `_meta` value off the params' text `base` in the same
/// pass as the params' other members: the well-known members' places are
/// noted as the object goes by, and the object's own text is found from
/// its first key and its last value (no second pass over it).
pub(crate) struct ReceivedMetaSeed<'b> {
    /// The whole text the deserializer reads (the params', or the message's).
    pub(crate) base: &'b [u8],
}

impl<'de> DeserializeSeed<'de> for ReceivedMetaSeed<'de> {
    type Value = MetaRead;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<MetaRead, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ReceivedMetaSeed<'de> {
    type Value = MetaRead;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<MetaRead, E> {
        Ok(MetaRead::NotObject(if b { b't' } else { b'f' }))
    }

    fn visit_i64<E>(self, _: i64) -> Result<MetaRead, E> {
        Ok(MetaRead::NotObject(b'0'))
    }

    fn visit_u64<E>(self, _: u64) -> Result<MetaRead, E> {
        Ok(MetaRead::NotObject(b'0'))
    }

    fn visit_f64<E>(self, _: f64) -> Result<MetaRead, E> {
        Ok(MetaRead::NotObject(b'0'))
    }

    fn visit_str<E>(self, _: &str) -> Result<MetaRead, E> {
        Ok(MetaRead::NotObject(b'"'))
    }

    fn visit_unit<E>(self) -> Result<MetaRead, E> {
        Ok(MetaRead::Null)
    }

    fn visit_none<E>(self) -> Result<MetaRead, E> {
        Ok(MetaRead::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<MetaRead, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(MetaRead::NotObject(b'['))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MetaRead, A::Error> {
        let base = self.base;
        let mut known = [None; WELL_KNOWN.len()];
        // The first key as borrowed from the text (`None`: it had escapes).
        let mut first: Option<Option<&'de str>> = None;
        let mut last: Option<&'de str> = None;
        // Each key's opening quote, for the well-known ones; `plain` stays
        // true while no key has escapes or is given twice.
        let mut keys = [None; WELL_KNOWN.len()];
        let mut seen: Vec<&'de str> = Vec::with_capacity(8);
        let mut plain = true;
        while let Some(k) = map.next_key::<BorrowedStr<'de>>()? {
            let borrowed = match k.0 {
                Cow::Borrowed(s) => Some(s),
                Cow::Owned(_) => None,
            };
            if first.is_none() {
                first = Some(borrowed);
            }
            match borrowed {
                Some(s) if plain && !seen.contains(&s) => seen.push(s),
                _ => plain = false,
            }
            let v: &'de RawValue = map.next_value()?;
            if let Some(i) = WELL_KNOWN.iter().position(|w| *k == **w) {
                known[i] = span_in_bytes(base, v.get());
                keys[i] = borrowed
                    .and_then(|s| span_in_bytes(base, s))
                    .and_then(|(at, _)| at.checked_sub(1));
            }
            last = Some(v.get());
        }
        let (Some(first), Some(last)) = (first, last) else {
            // No member: an empty object (whose end is not known here).
            return Ok(ReceivedMeta::from_text("{}")
                .map_or(MetaRead::Again, |m| MetaRead::Object(m, None)));
        };
        let bounds = first.and_then(|first| {
            // `{`, whitespace, `"`, then the first key.
            let (key, _) = span_in_bytes(base, first)?;
            let open = base.get(..key)?.strip_suffix(b"\"")?.trim_ascii_end();
            let start = open.len().checked_sub(1)?;
            // The last value, whitespace, then `}`.
            let (_, value_end) = span_in_bytes(base, last)?;
            let after = base.get(value_end..)?.trim_ascii_start();
            let end = base.len() - after.len() + 1;
            (open.ends_with(b"{") && after.starts_with(b"}")).then_some((start, end))
        });
        Ok(bounds
            .and_then(|b| {
                let meta = ReceivedMeta::from_slice(base, b, known, plain.then_some(keys))?;
                Some(MetaRead::Object(meta, Some(b.1)))
            })
            .unwrap_or(MetaRead::Again))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(text: &str) -> ReceivedMeta {
        ReceivedMeta::from_text(text).expect("an object")
    }

    /// Every member read from the text agrees with the tree, and reading
    /// them builds no tree.
    fn agrees_with_the_tree(text: &str) {
        let m = meta(text);
        let tree: JsonObject = serde_json::from_str(text).unwrap();
        let mut keys: Vec<&str> = WELL_KNOWN.to_vec();
        keys.extend(tree.keys().map(String::as_str));
        keys.push("absent");
        for key in keys {
            let read = m.member::<Value>(key).map(Result::unwrap);
            assert_eq!(read.as_ref(), tree.get(key), "{key} in {text}");
            assert_eq!(m.contains_key(key), tree.contains_key(key), "{key}");
            let s = m.str_member(key).map(|r| r.map(Cow::into_owned));
            let expected = tree.get(key).map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                other => Err(other.clone()),
            });
            assert_eq!(s, expected, "{key} in {text}");
        }
        for key in WELL_KNOWN {
            assert_eq!(m.get(key), tree.get(key), "{key} in {text}");
        }
        assert!(m.0.tree.get().is_none(), "no tree for {text}");
        assert_eq!(m.object(), &tree);
    }

    #[test]
    fn members_read_from_the_text_are_the_tree_s() {
        agrees_with_the_tree(
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                "io.modelcontextprotocol/clientCapabilities":{"sampling":{}},
                "io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},
                "progressToken":7,"io.tessera/requestTag":"t","other":[1,{"x":null}]}"#,
        );
        agrees_with_the_tree(r#"{}"#);
        agrees_with_the_tree(r#"{ "progressToken" : "a\"b" , "x" : "\u00e9" }"#);
    }

    #[test]
    fn escaped_keys_are_the_keys_they_spell() {
        let text = r#"{"io.modelcontextprotocol\u002fprotocolVersion":"2026-07-28",
            "\u0070rogressToken":"p","o\u0074her":"\u0041"}"#;
        agrees_with_the_tree(text);
        let m = meta(text);
        assert_eq!(
            m.str_member(meta::PROTOCOL_VERSION).unwrap().unwrap(),
            "2026-07-28"
        );
        assert_eq!(m.str_member("other").unwrap().unwrap(), "A");
    }

    #[test]
    fn a_repeated_key_is_its_last_value() {
        let text = r#"{"io.modelcontextprotocol/protocolVersion":"1",
            "io.modelcontextprotocol/protocolVersion":2,"x":1,"x":"last"}"#;
        agrees_with_the_tree(text);
        let m = meta(text);
        assert_eq!(m.str_member(meta::PROTOCOL_VERSION).unwrap(), Err(json!(2)));
        assert_eq!(m.str_member("x").unwrap().unwrap(), "last");
    }

    /// `_meta` read in the params' pass is the same as read on its own.
    fn read_in_params(params: &str) -> Option<ReceivedMeta> {
        struct Outer<'b>(&'b str);
        impl<'de> Visitor<'de> for Outer<'de> {
            type Value = Option<MetaRead>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut found = None;
                while let Some(k) = map.next_key::<BorrowedStr<'de>>()? {
                    if *k == *"_meta" {
                        found = Some(map.next_value_seed(ReceivedMetaSeed {
                            base: self.0.as_bytes(),
                        })?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(found)
            }
        }
        let mut d = serde_json::Deserializer::from_str(params);
        match d.deserialize_map(Outer(params)).unwrap()? {
            MetaRead::NotObject(_) | MetaRead::Null => None,
            MetaRead::Object(m, _) => Some(m),
            MetaRead::Again => panic!("read again: {params}"),
        }
    }

    #[test]
    fn meta_read_in_the_params_pass_is_its_text() {
        for meta in [
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#,
            r#"{ "progressToken" : [1, {"a" : "}"}] , "x" : "\"}" }"#,
            "{\n\t\"k\" :\r 1\n}",
            r#"{"a":{"b":{"c":[]}},"io.tessera/requestTag":7}"#,
        ] {
            let params = format!(r#"{{"name":"n","_meta" : {meta} ,"arguments":{{"_meta":1}}}}"#);
            let m = read_in_params(&params).expect("an object");
            assert_eq!(m.text(), meta);
            let alone = ReceivedMeta::from_text(meta).unwrap();
            for key in WELL_KNOWN {
                assert_eq!(
                    m.member_text(key),
                    alone.member_text(key),
                    "{key} in {meta}"
                );
            }
            agrees_with_the_tree(m.text());
        }
        let empty = read_in_params(r#"{"_meta":{ }}"#).unwrap();
        assert!(empty.object().is_empty());
        for not in ["[{}]", "\"{}\"", "null", "1.5", "-2", "true"] {
            let params = format!(r#"{{"_meta":{not},"x":1}}"#);
            assert!(read_in_params(&params).is_none(), "{not}");
        }
    }

    #[test]
    fn only_objects_are_meta() {
        for text in ["[]", "1", "\"{\"", "null", "true"] {
            assert!(ReceivedMeta::from_text(text).is_none(), "{text}");
        }
    }

    #[test]
    fn a_huge_meta_reads_like_a_small_one() {
        let mut tree = JsonObject::new();
        for i in 0..5_000 {
            tree.insert(
                format!("com.example/k{i}"),
                json!({"i": i, "s": "x".repeat(20)}),
            );
        }
        tree.insert(meta::PROGRESS_TOKEN.into(), json!("tok"));
        let text = serde_json::to_string(&tree).unwrap();
        let m = meta(&text);
        assert_eq!(m.str_member(meta::PROGRESS_TOKEN).unwrap().unwrap(), "tok");
        assert_eq!(
            m.member::<Value>("com.example/k4999").unwrap().unwrap(),
            json!({"i": 4999, "s": "x".repeat(20)})
        );
        assert!(m.0.tree.get().is_none());
        assert_eq!(m.object(), &tree);
    }

    #[test]
    fn a_tree_is_read_the_same_as_its_text() {
        let tree = json!({"progressToken": 1, "k": "v"})
            .as_object()
            .unwrap()
            .clone();
        let m = ReceivedMeta::from(tree.clone());
        assert_eq!(m.member::<Value>(meta::PROGRESS_TOKEN).unwrap().unwrap(), 1);
        assert_eq!(m.str_member("k").unwrap().unwrap(), "v");
        assert_eq!(m, meta(r#"{"k":"v","progressToken":1}"#));
        assert_eq!(m.object(), &tree);
    }
}
