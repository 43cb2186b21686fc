//! The `params` of a request or notification, kept as JSON text until
//! something reads them.
//!
//! A message read off the wire carries its params as the text it arrived
//! in. A typed reader ([`Params::decode`], [`decode_params`](crate::decode_params))
//! deserializes straight from that text, with no JSON tree in between; code
//! that wants to look around ([`Params::object`]) gets a tree built on first
//! use and kept. Params built by the application ([`From<JsonObject>`]) are a
//! tree from the start. Written out, params are their text when nothing
//! changed them, else their tree.

use std::fmt;
use std::sync::{LazyLock, OnceLock};

use memchr::memmem::Finder;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::JsonObject;
use crate::received_meta::ReceivedMeta;

mod read;

pub(crate) use read::raw_of_written;
use read::{HeadSeed, NOTED_LEN};
pub use read::{NOTED, Noted, ParamsRead, ParamsSeed, ReadObject};

/// The deepest nesting of arrays and objects serde_json reads into a tree
/// (its recursion limit of 128 is reached at the 128th level).
pub const MAX_NESTING: usize = 127;

/// A request's or notification's params: always a JSON object, as text, as
/// a tree, or both.
pub struct Params {
    /// The text as received; `None` once the tree was changed, or when the
    /// params were built as a tree.
    text: Option<Box<RawValue>>,
    /// The tree, built from the text on first use.
    tree: OnceLock<JsonObject>,
    /// `_meta`, `name` and `uri`, read together on first use (the transport
    /// and the engine both look at them; the text is read once for them).
    /// Boxed: a request is moved many times on its way to its handler.
    head: OnceLock<Box<Head>>,
}

/// What [`Params::meta_place`] found.
pub(crate) struct MetaPlace<'a> {
    /// `_meta` and where it is in the text; `None` when absent.
    pub(crate) at: Option<(&'a ReceivedMeta, (usize, usize))>,
    /// The `name` member, when present.
    pub(crate) name: Option<&'a Value>,
    /// The `uri` member, when present.
    pub(crate) uri: Option<&'a Value>,
}

/// The members of params that routing reads before any handler: `_meta`
/// (when an object, kept as text), `name` and `uri`; and how the [`NOTED`]
/// members appear.
#[derive(Debug, Clone, Default)]
struct Head {
    meta: Option<ReceivedMeta>,
    /// `_meta` is an object the head's pass could not take (its first key
    /// has escapes): read again on its own.
    meta_again: bool,
    name: Option<Value>,
    uri: Option<Value>,
    /// Bit `i` set: the member [`FLAGGED`]`[i]` is there.
    seen: u8,
    /// How many times each [`NOTED`] key is given (at most 255).
    counts: [u8; NOTED_LEN],
    /// The first byte of each [`NOTED`] member's last value (see
    /// [`Noted::opens`]); 0 when absent.
    opens: [u8; NOTED_LEN],
    /// Where each [`NOTED`] member's last value is in the params' text,
    /// when noted (see [`Noted::text`]).
    spans: [Option<(usize, usize)>; NOTED_LEN],
    /// Where the object `meta` is in the params' text, when the head's
    /// pass read it there.
    meta_at: Option<(usize, usize)>,
}

impl Params {
    /// Params from JSON text: `None` unless the text is an object nested at
    /// most [`MAX_NESTING`] deep (so that a tree can always be built from it).
    pub fn from_raw(text: Box<RawValue>) -> Option<Self> {
        let ok = text.get().trim_start().starts_with('{') && within_depth(text.get());
        ok.then(|| Params {
            text: Some(text),
            tree: OnceLock::new(),
            head: OnceLock::new(),
        })
    }

    /// Params from the text of a message whose frame was checked to nest at
    /// most [`MAX_NESTING`] deep as a whole (a decoder's work): `None` unless
    /// the text is an object. The depth is not counted again.
    pub fn from_checked_raw(text: Box<RawValue>) -> Option<Self> {
        text.get().starts_with('{').then(|| Params {
            text: Some(text),
            tree: OnceLock::new(),
            head: OnceLock::new(),
        })
    }

    /// Empty params (`{}`) as text, for an edit to write into.
    pub(crate) fn empty_text() -> Self {
        Params {
            text: Some(RawValue::from_string("{}".to_owned()).expect("valid JSON")),
            tree: OnceLock::new(),
            head: OnceLock::new(),
        }
    }

    /// Takes `text` (an object, written by this crate) as the params; what
    /// was read of the old text is forgotten.
    pub(crate) fn set_text(&mut self, text: Box<RawValue>) {
        self.text = Some(text);
        self.tree = OnceLock::new();
        self.head = OnceLock::new();
    }

    /// The received text, when the params arrived as text and nothing
    /// changed them since.
    pub fn raw(&self) -> Option<&RawValue> {
        self.text.as_deref()
    }

    /// The params as a tree (built from the text on first use, then kept).
    pub fn object(&self) -> &JsonObject {
        self.tree.get_or_init(|| match &self.text {
            // The constructor checked the text: an object within the depth
            // limit always reads.
            Some(t) => serde_json::from_str(t.get()).unwrap_or_default(),
            None => JsonObject::new(),
        })
    }

    /// The params as a tree to change; the received text is dropped.
    pub fn object_mut(&mut self) -> &mut JsonObject {
        self.object();
        self.text = None;
        self.head = OnceLock::new();
        self.tree.get_mut().expect("the tree was just built")
    }

    /// The params as a tree, taken.
    pub fn into_object(mut self) -> JsonObject {
        self.object();
        self.tree.take().unwrap_or_default()
    }

    /// Whether the params may have the member `key`, decided without
    /// building the tree when there is text: a text that neither names
    /// `key` nor has a `\u` escape (which could spell it) cannot have it.
    /// `true` says "maybe"; [`Params::get`] tells for sure.
    pub fn may_have(&self, key: &str) -> bool {
        match &self.text {
            Some(t) => {
                // Read already with the head: the answer is known.
                if let (Some(head), Some(i)) = (self.head.get(), flag_of(key)) {
                    return head.seen & (1 << i) != 0;
                }
                memchr::memmem::find(t.get().as_bytes(), key.as_bytes()).is_some()
                    || has_escape(t.get())
            }
            None => self.object().contains_key(key),
        }
    }

    /// One member, read on its own from the text when there is one (the
    /// other members are skipped, not built; a [`NOTED`] member whose place
    /// is known is read from there); from the tree otherwise.
    pub fn member(&self, key: &str) -> Option<Value> {
        if self.text.is_none() {
            return self.object().get(key).cloned();
        }
        // Read with the head already: the member's place may be known.
        if let Some(noted) = self.head.get().and_then(|_| self.noted(key)) {
            if noted.count == 0 {
                return None;
            }
            if let Some(text) = noted.text {
                return serde_json::from_str(text).ok();
            }
        }
        self.member_of_text(key)
    }

    /// `_meta`, when it is an object. Read on first use from the text
    /// together with `name` and `uri` (the other members are skipped), then
    /// kept; `_meta` stays text (see [`ReceivedMeta`]).
    pub fn meta(&self) -> Option<&ReceivedMeta> {
        // Text that neither names `_meta` nor has a `\\u` escape (which
        // could spell it) has none: nothing is read.
        if let Some(t) = &self.text {
            static META: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("_meta"));
            if self.head.get().is_none()
                && META.find(t.get().as_bytes()).is_none()
                && !has_escape(t.get())
            {
                return None;
            }
        }
        self.head().meta.as_ref()
    }

    /// The `name` member, whatever its type (see [`Params::meta`]).
    pub fn name(&self) -> Option<&Value> {
        self.head().name.as_ref()
    }

    /// The `uri` member, whatever its type (see [`Params::meta`]).
    pub fn uri(&self) -> Option<&Value> {
        self.head().uri.as_ref()
    }

    /// How the member `key`, one of [`NOTED`], appears in params that
    /// arrived as text (read with the head: see [`Params::meta`]). `None`
    /// for params built as a tree, and for other keys.
    pub fn noted(&self, key: &str) -> Option<Noted<'_>> {
        let i = NOTED.iter().position(|k| *k == key)?;
        let text = self.text.as_deref()?;
        let head = self.head();
        let count = head.counts[i];
        Some(Noted {
            count,
            opens: (count > 0).then_some(head.opens[i]),
            text: head.spans[i].and_then(|(start, end)| text.get().get(start..end)),
        })
    }

    /// What the head's pass, when it already ran over the text, placed of
    /// `_meta` (given once or not at all), with `name` and `uri`: for an
    /// edit of `_meta` that need not scan the params again. `None` when the
    /// head was not read yet, or `_meta` is given twice or is not an object.
    pub(crate) fn meta_place(&self) -> Option<MetaPlace<'_>> {
        self.text.as_ref()?;
        let head = self.head.get()?;
        let at = match head.counts[read::META] {
            0 => None,
            1 if head.opens[read::META] == b'{' => Some((head.meta.as_ref()?, head.meta_at?)),
            _ => return None,
        };
        Some(MetaPlace {
            at,
            name: head.name.as_ref(),
            uri: head.uri.as_ref(),
        })
    }

    /// `_meta` read on its own when the head's pass could not take it.
    fn settle(&self, head: &mut Head) {
        if head.meta_again {
            // `_meta`'s first key has escapes: read on its own.
            head.meta = match self.member_of_text("_meta") {
                Some(Value::Object(m)) => Some(ReceivedMeta::from(m)),
                _ => None,
            };
        }
    }

    /// [`Params::member`] read from the text alone.
    fn member_of_text(&self, key: &str) -> Option<Value> {
        let t = self.text.as_ref()?;
        let mut d = serde_json::Deserializer::from_str(t.get());
        serde::de::DeserializeSeed::deserialize(MemberSeed(key), &mut d).ok()?
    }

    fn head(&self) -> &Head {
        self.head.get_or_init(|| Box::new(self.read_head()))
    }

    /// The head, read from the text or taken from the tree.
    fn read_head(&self) -> Head {
        match (&self.text, self.tree.get()) {
            (Some(t), _) => {
                let mut d = serde_json::Deserializer::from_str(t.get());
                // The text is a valid object: only a member too deep for a
                // tree could fail, and such text is refused when decoded.
                let mut head = serde::de::DeserializeSeed::deserialize(
                    HeadSeed {
                        base: t.get().as_bytes(),
                    },
                    &mut d,
                )
                .unwrap_or_default();
                self.settle(&mut head);
                head
            }
            // The same members taken from the tree.
            (None, Some(tree)) => Head {
                meta: match tree.get("_meta") {
                    Some(Value::Object(m)) => Some(ReceivedMeta::from(m.clone())),
                    _ => None,
                },
                seen: FLAGGED
                    .iter()
                    .enumerate()
                    .filter(|(_, k)| tree.contains_key(**k))
                    .fold(0, |bits, (i, _)| bits | (1 << i)),
                name: tree.get("name").cloned(),
                uri: tree.get("uri").cloned(),
                // Not asked of a tree (see `Params::noted`).
                ..Head::default()
            },
            (None, None) => Head::default(),
        }
    }

    /// One member (builds the tree on first use).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.object().get(key)
    }

    /// Deserializes the params as `T`: from the text when there is one, with
    /// no tree in between.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        match (&self.text, self.tree.get()) {
            (Some(t), _) => serde_json::from_str(t.get()),
            (None, Some(tree)) => T::deserialize(ObjectRef(tree)),
            (None, None) => T::deserialize(ObjectRef(&JsonObject::new())),
        }
    }

    /// The params as JSON text (written from the tree when there is no text).
    pub fn to_raw(&self) -> Box<RawValue> {
        match &self.text {
            Some(t) => t.clone(),
            None => serde_json::value::to_raw_value(self.object())
                .unwrap_or_else(|_| RawValue::from_string("{}".to_owned()).expect("valid JSON")),
        }
    }
}

/// Members whose presence the head's pass notes (a server asks for them on
/// every request, through [`Params::may_have`]): the multi-round-trip
/// `requestState` and `inputResponses` (2026-07-28), and `task` (every
/// `tools/call`, whether to run it as a task).
const FLAGGED: [&str; 3] = ["requestState", "inputResponses", "task"];

/// `key`'s bit in [`Head::seen`], when it is one of [`FLAGGED`].
fn flag_of(key: &str) -> Option<usize> {
    FLAGGED.iter().position(|k| *k == key)
}

/// Whether JSON text has a `\\u` escape (which could spell any key).
fn has_escape(text: &str) -> bool {
    // Built once: making a searcher costs more than searching a message.
    static ESCAPE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("\\u"));
    ESCAPE.find(text.as_bytes()).is_some()
}

/// Finds one member of an object, skipping the others (the last one when a
/// key is given twice, as a tree would keep it).
struct MemberSeed<'k>(&'k str);

impl<'de> serde::de::DeserializeSeed<'de> for MemberSeed<'_> {
    type Value = Option<Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for MemberSeed<'_> {
    type Value = Option<Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<crate::borrowed::BorrowedStr<'de>>()? {
            if *key == *self.0 {
                found = Some(map.next_value::<Value>()?);
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// Deserializes `T` from a borrowed tree, without copying it.
pub(crate) fn decode_tree<T: DeserializeOwned>(tree: &JsonObject) -> Result<T, serde_json::Error> {
    T::deserialize(ObjectRef(tree))
}

/// Deserializes `T`, which may borrow strings from it, from a borrowed tree.
pub(crate) fn decode_tree_ref<'a, T: Deserialize<'a>>(
    tree: &'a JsonObject,
) -> Result<T, serde_json::Error> {
    T::deserialize(ObjectRef(tree))
}

/// A borrowed object read as a value, without cloning it into one.
struct ObjectRef<'a>(&'a JsonObject);

impl<'de> Deserializer<'de> for ObjectRef<'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        serde::de::value::MapDeserializer::new(self.0.iter().map(|(k, v)| (k.as_str(), v)))
            .deserialize_any(v)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// Whether valid JSON `text` nests at most [`MAX_NESTING`] deep. Most texts
/// have fewer opening brackets than that in all (a count the compiler
/// vectorises); only the others are walked.
pub fn within_depth(text: &str) -> bool {
    opening_brackets(text.as_bytes()) <= MAX_NESTING || nesting(text.as_bytes()) <= MAX_NESTING
}

/// How many `[` and `{` bytes `text` has (in strings too): a bound of its
/// nesting. Counted in blocks of 255 bytes with a byte-wide count each, a
/// loop the compiler vectorises.
pub fn opening_brackets(text: &[u8]) -> usize {
    text.chunks(255)
        .map(|block| {
            // `[` (0x5b) and `{` (0x7b) differ only in the bit 0x20.
            block
                .iter()
                .fold(0u8, |n, &b| n.wrapping_add(u8::from(b | 0x20 == b'{'))) as usize
        })
        .sum()
}

/// The deepest nesting of arrays and objects in JSON `text` (for text that
/// is not valid JSON, a count that is at least as deep as a parser gets).
pub fn nesting(text: &[u8]) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in text {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

impl std::ops::Index<&str> for Params {
    type Output = Value;

    /// The member `key` (builds the tree on first use). Panics when there is
    /// no such member, as indexing a [`JsonObject`] does.
    fn index(&self, key: &str) -> &Value {
        &self.object()[key]
    }
}

impl From<JsonObject> for Params {
    fn from(tree: JsonObject) -> Self {
        Params {
            text: None,
            tree: OnceLock::from(tree),
            head: OnceLock::new(),
        }
    }
}

impl Default for Params {
    /// Empty params (`{}`).
    fn default() -> Self {
        Params::from(JsonObject::new())
    }
}

impl Clone for Params {
    fn clone(&self) -> Self {
        Params {
            text: self.text.clone(),
            tree: self.tree.clone(),
            head: self.head.clone(),
        }
    }
}

impl PartialEq for Params {
    fn eq(&self, other: &Self) -> bool {
        match (&self.text, &other.text) {
            (Some(a), Some(b)) if a.get() == b.get() => true,
            _ => self.object() == other.object(),
        }
    }
}

impl fmt::Debug for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.text, self.tree.get()) {
            (Some(t), _) => write!(f, "Params({})", t.get()),
            (None, Some(tree)) => write!(f, "Params({tree:?})"),
            (None, None) => f.write_str("Params({})"),
        }
    }
}

impl Serialize for Params {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.text {
            Some(t) => t.serialize(s),
            None => self.object().serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        JsonObject::deserialize(d).map(Params::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn the_head_is_read_once_and_agrees_with_the_tree() {
        let texts = [
            r#"{"name":"a","arguments":{"x":1},"_meta":{"k":1}}"#,
            r#"{"uri":"file:///x","name":7,"_meta":[]}"#,
            r#"{"name":"first","name":"last","_meta":{"a":1},"_meta":{"b":2}}"#,
            r#"{"\u005fmeta":{"hidden":true},"n\u0061me":"spelled"}"#,
            r#"{"other":"_meta","x":{"name":"nested"}}"#,
            r#"{"_meta":{"\u0070rogressToken":1,"k":{"a":2}},"name":"x"}"#,
            r#"{"_meta" : { } , "_meta" : { "k" : [ "}" ] } }"#,
            r#"{"_meta":{"k":1},"_meta":"not an object"}"#,
            r#"{}"#,
        ];
        for text in texts {
            let p = Params::from_raw(raw(text)).unwrap();
            let tree = Params::from(serde_json::from_str::<JsonObject>(text).unwrap());
            assert_eq!(
                p.meta().map(ReceivedMeta::object),
                tree.meta().map(ReceivedMeta::object),
                "{text}"
            );
            assert_eq!(p.name(), tree.name(), "{text}");
            assert_eq!(p.uri(), tree.uri(), "{text}");
            // Read from the text, member by member: no tree was built.
            assert!(p.tree.get().is_none(), "{text}");
        }
        let p = Params::from_raw(raw(r#"{"name":"a","_meta":{"k":1}}"#)).unwrap();
        assert!(std::ptr::eq(p.meta().unwrap(), p.meta().unwrap()));
        // Changing the tree forgets what was read.
        let mut p = p;
        p.object_mut().insert("name".into(), json!("b"));
        assert_eq!(p.name(), Some(&json!("b")));
    }

    #[test]
    fn text_is_read_only_when_asked_and_written_as_it_came() {
        let p = Params::from_raw(raw(r#"{ "b": 1, "a": [true] }"#)).unwrap();
        assert!(p.tree.get().is_none());
        #[derive(Deserialize)]
        struct B {
            b: u8,
        }
        assert_eq!(p.decode::<B>().unwrap().b, 1);
        assert!(p.tree.get().is_none(), "typed reads build no tree");
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{ "b": 1, "a": [true] }"#
        );
        assert_eq!(p.get("a"), Some(&json!([true])));
        let mut p = p;
        p.object_mut().insert("c".into(), json!(2));
        assert!(p.raw().is_none());
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"a":[true],"b":1,"c":2}"#
        );
        assert_eq!(p.decode::<B>().unwrap().b, 1);
    }

    #[test]
    fn only_objects_within_the_depth_limit_are_params() {
        assert!(Params::from_raw(raw("[1]")).is_none());
        assert!(Params::from_raw(raw("1")).is_none());
        let deep = format!(
            r#"{{"a":{}{}}}"#,
            "[".repeat(MAX_NESTING),
            "]".repeat(MAX_NESTING)
        );
        assert!(Params::from_raw(raw(&deep)).is_none());
        let ok = format!(
            r#"{{"a":{}{}}}"#,
            "[".repeat(MAX_NESTING - 1),
            "]".repeat(MAX_NESTING - 1)
        );
        assert!(Params::from_raw(raw(&ok)).is_some());
        assert_eq!(nesting(br#"{"s":"[[[{{\"]]"}"#), 1);
        // Many brackets inside strings: counted, then walked, and within.
        let strings = format!(r#"{{"s":"{}"}}"#, "[".repeat(500));
        assert!(within_depth(&strings));
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(!within_depth(&deep));
    }

    #[test]
    fn may_have_answers_from_the_head_once_it_was_read() {
        for (text, state, responses, task) in [
            (
                r#"{"arguments":{"requestState":1,"task":{}},"name":"n"}"#,
                false,
                false,
                false,
            ),
            (
                r#"{"requestState":"s","_meta":{"inputResponses":{}},"task":{"ttl":1}}"#,
                true,
                false,
                true,
            ),
            (
                r#"{"inputResp\u006fnses":{},"requestState":null,"t\u0061sk":null}"#,
                true,
                true,
                true,
            ),
            (r#"{"x":1}"#, false, false, false),
        ] {
            let p = Params::from_raw(raw(text)).unwrap();
            let tree = Params::from(p.object().clone());
            let p = Params::from_raw(raw(text)).unwrap();
            // Before the head: a search of the text ("maybe").
            assert!(p.may_have("requestState") || !state, "{text}");
            p.name();
            assert_eq!(p.may_have("requestState"), state, "{text}");
            assert_eq!(p.may_have("inputResponses"), responses, "{text}");
            assert_eq!(p.may_have("task"), task, "{text}");
            tree.name();
            assert_eq!(tree.may_have("requestState"), state, "{text}");
            assert_eq!(tree.may_have("inputResponses"), responses, "{text}");
            assert_eq!(tree.may_have("task"), task, "{text}");
            assert!(p.tree.get().is_none(), "{text}");
        }
    }

    #[test]
    fn text_and_tree_compare_by_content() {
        let a = Params::from_raw(raw(r#"{"x": 1}"#)).unwrap();
        let b = Params::from(json!({"x": 1}).as_object().unwrap().clone());
        assert_eq!(a, b);
        assert_eq!(a.clone().into_object(), b.into_object());
    }
}

#[cfg(test)]
mod limit {
    use super::*;

    /// [`MAX_NESTING`] is serde_json's own limit: one level more fails to read.
    #[test]
    fn the_depth_limit_is_the_parsers() {
        let at = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(serde_json::from_str::<Value>(&at(MAX_NESTING)).is_ok());
        assert!(serde_json::from_str::<Value>(&at(MAX_NESTING + 1)).is_err());
    }
}
