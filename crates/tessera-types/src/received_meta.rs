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
            values: Default::default(),
            tree: OnceLock::new(),
        })))
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
    let start = (value.as_ptr() as usize).checked_sub(base.as_ptr() as usize)?;
    let end = start.checked_add(value.len())?;
    (base.get(start..end) == Some(value)).then_some((start, end))
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

/// Reads a `_meta` value off a params' text as a [`ReceivedMeta`] (`None`
/// when it is not an object), without building anything else.
pub(crate) struct ReceivedMetaSeed;

impl<'de> DeserializeSeed<'de> for ReceivedMetaSeed {
    type Value = Option<ReceivedMeta>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let raw: &'de RawValue = serde::Deserialize::deserialize(d)?;
        Ok(ReceivedMeta::from_text(raw.get()))
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
