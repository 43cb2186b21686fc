//! Edits of a request's `params._meta` done on the params' JSON text: the
//! other members (`arguments`, `name`…) are passed through as the text they
//! arrived in, and `_meta` is read as a list of members whose values stay
//! text. Params that are a tree are edited as a tree, with the same result.
//!
//! A proxy forwarding a request and a client engine stamping its own
//! `_meta` members only add, replace and remove a few `_meta` keys: reading
//! the whole params into a tree and writing it again costs far more than
//! that.

use std::borrow::Cow;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::borrowed::BorrowedStr;
use crate::{JsonObject, Params};

/// The key of the `_meta` member.
const META: &str = "_meta";

/// What to do with a `_meta` that is there and is not an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotObject {
    /// Leave the params as they are (no edit is made).
    Keep,
    /// Replace it with an object holding the edit's members.
    Replace,
}

/// A change of `params._meta`: keys removed, then members set (replacing
/// any of the same key), then members added where the key is absent.
#[derive(Debug, Clone, Copy)]
pub struct MetaEdit<'a> {
    /// Keys taken out of `_meta`.
    pub remove: &'a [&'a str],
    /// Members written first, replacing any of the same key, unless
    /// `_meta` is there and is not an object (see [`MetaChanges`]).
    pub set_if_object: &'a [(&'a str, Cow<'a, Value>)],
    /// Members written, replacing any of the same key (in this order).
    pub set: &'a [(&'a str, Cow<'a, Value>)],
    /// Members written only when `_meta` has no member of that key.
    pub fill: &'a [(&'a str, Cow<'a, Value>)],
    /// What happens to a `_meta` that is not an object.
    pub not_object: NotObject,
    /// Whether a `_meta` left empty is taken out of the params.
    pub drop_empty: bool,
}

impl MetaEdit<'_> {
    /// Whether the edit adds anything (else it can only remove).
    fn adds(&self) -> bool {
        !self.set_if_object.is_empty() || !self.set.is_empty() || !self.fill.is_empty()
    }
}

/// Changes of `_meta` a sender hands the engine with a request (in
/// `RequestOptions`), made in one edit of the params together with the
/// members the engine stamps itself: a proxy's changes of a forwarded
/// request. They apply when `_meta` is an object or absent; a `_meta` that
/// is not an object is left as it is (or replaced by the engine's own
/// members, when it has some). A `_meta` left empty is taken out, and so
/// are params left empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetaChanges {
    /// Keys taken out.
    pub remove: &'static [&'static str],
    /// Members written, replacing any of the same key.
    pub set: Vec<(&'static str, Value)>,
}

/// What an edit of params text saw of the members that HTTP transports
/// mirror in headers, as the edited text has them: a transport handed this
/// with the request need not read the text again to find them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EditedHead {
    /// `_meta`'s protocol version (`io.modelcontextprotocol/protocolVersion`),
    /// when `_meta` is an object and the version a string.
    pub version: Option<String>,
    /// `name`, whatever its type (`null` included), when present.
    pub name: Option<Value>,
    /// `uri`, whatever its type, when present.
    pub uri: Option<Value>,
}

impl Params {
    /// Applies `edit` to `_meta`: on the text when the params are text (only
    /// `_meta`'s own members are looked at; every other member is copied as
    /// the text it is), on the tree otherwise. Params without `_meta` that
    /// the edit adds nothing to are left untouched.
    ///
    /// When the text was written again, returns what the edit saw of the
    /// mirrored members ([`EditedHead`]); `None` otherwise (a tree, or text
    /// left as it was).
    pub fn edit_meta(&mut self, edit: &MetaEdit<'_>) -> Option<EditedHead> {
        if let Some(text) = self.raw() {
            // No `_meta` (nor a `\u` escape that could spell it): nothing to
            // remove, so only additions change anything.
            if !edit.adds() && !self.may_have(META) {
                return None;
            }
            let quick = self
                .meta_place()
                .and_then(|place| splice::splice_placed(text.get(), &place, edit))
                .or_else(|| splice::splice(text.get(), edit));
            match quick {
                Some(splice::Spliced::Unchanged) => return None,
                Some(splice::Spliced::Edited(edited, head)) => {
                    if let Some(edited) = crate::params::raw_of_written(edited) {
                        self.set_text(edited);
                        return Some(head);
                    }
                }
                // Keys given twice or escaped, or `_meta` taken out.
                None => {}
            }
            let (edited, head) = edit_text(text.get(), edit)?;
            self.set_text(edited);
            return Some(head);
        }
        edit_tree(self.object_mut(), edit);
        None
    }

    /// Whether the params are `{}` (read from the text when there is one).
    pub fn is_empty_object(&self) -> bool {
        match self.raw() {
            Some(t) => {
                let inner = t.get().trim();
                inner.len() >= 2
                    && inner[1..inner.len() - 1]
                        .trim_matches(|c: char| c.is_ascii_whitespace())
                        .is_empty()
            }
            None => self.object().is_empty(),
        }
    }
}

/// Applies `edit` to optional params: absent params become `{"_meta": …}`
/// when the edit adds members, and stay absent otherwise. Returns what
/// [`Params::edit_meta`] returns.
pub fn edit_meta_of(params: &mut Option<Params>, edit: &MetaEdit<'_>) -> Option<EditedHead> {
    match params {
        Some(p) => p.edit_meta(edit),
        None if edit.adds() => {
            let mut p = Params::empty_text();
            let head = p.edit_meta(edit);
            *params = Some(p);
            head
        }
        None => None,
    }
}

/// The same edit on a tree.
fn edit_tree(params: &mut JsonObject, edit: &MetaEdit<'_>) {
    let replaced = matches!(params.get(META), Some(m) if !m.is_object());
    let meta = match params.get_mut(META) {
        Some(Value::Object(m)) => m,
        Some(_) if edit.not_object == NotObject::Keep => return,
        Some(slot) => {
            *slot = Value::Object(JsonObject::new());
            slot.as_object_mut().expect("just made an object")
        }
        None if !edit.adds() => return,
        None => params
            .entry(META)
            .or_insert_with(|| Value::Object(JsonObject::new()))
            .as_object_mut()
            .expect("just made an object"),
    };
    if !replaced {
        for k in edit.remove {
            meta.remove(*k);
        }
        for (k, v) in edit.set_if_object {
            meta.insert((*k).to_owned(), v.clone().into_owned());
        }
    }
    for (k, v) in edit.set {
        meta.insert((*k).to_owned(), v.clone().into_owned());
    }
    for (k, v) in edit.fill {
        if !meta.contains_key(*k) {
            meta.insert((*k).to_owned(), v.clone().into_owned());
        }
    }
    if edit.drop_empty && meta.is_empty() {
        params.remove(META);
    }
}

/// One member of an object read off its text: the key (unescaped) and the
/// value's text.
type Member<'a> = (BorrowedStr<'a>, &'a RawValue);

/// An object's members in order, each key once (a key given twice keeps its
/// first place and its last value, as a tree keeps the last).
struct Members<'a>(Vec<Member<'a>>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(MembersVisitor)
    }
}

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Members<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
        let mut out: Vec<Member<'de>> = Vec::with_capacity(map.size_hint().unwrap_or(4));
        while let Some(key) = map.next_key::<BorrowedStr<'de>>()? {
            let value: &'de RawValue = map.next_value()?;
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => out.push((key, value)),
            }
        }
        Ok(Members(out))
    }
}

/// The edited text, or `None` when the params stay as they are (a `_meta`
/// that is not an object, kept; text that does not read, which a checked
/// [`Params`] never has).
fn edit_text(text: &str, edit: &MetaEdit<'_>) -> Option<(Box<RawValue>, EditedHead)> {
    let top: Members<'_> = serde_json::from_str(text).ok()?;
    let at = top.0.iter().position(|(k, _)| *k == META);
    let mut meta: Vec<(Cow<'_, str>, Out<'_>)> = Vec::new();
    let mut replaced = false;
    match at.map(|i| top.0[i].1) {
        Some(m) if m.get().starts_with('{') => {
            let Members(members) = serde_json::from_str(m.get()).ok()?;
            meta.extend(members.into_iter().map(|(k, v)| (k.0, Out::Raw(v))));
        }
        Some(_) if edit.not_object == NotObject::Keep => return None,
        Some(_) => replaced = true,
        None if !edit.adds() => return None,
        None => {}
    }
    if !replaced {
        meta.retain(|e| !edit.remove.contains(&&*e.0));
        for (k, v) in edit.set_if_object {
            match meta.iter_mut().find(|e| e.0 == *k) {
                Some(slot) => slot.1 = Out::Value(v),
                None => meta.push((Cow::Borrowed(*k), Out::Value(v))),
            }
        }
    }
    for (k, v) in edit.set {
        match meta.iter_mut().find(|e| e.0 == *k) {
            Some(slot) => slot.1 = Out::Value(v),
            None => meta.push((Cow::Borrowed(*k), Out::Value(v))),
        }
    }
    for (k, v) in edit.fill {
        if !meta.iter().any(|e| e.0 == *k) {
            meta.push((Cow::Borrowed(*k), Out::Value(v)));
        }
    }
    let meta = (!(edit.drop_empty && meta.is_empty())).then_some(meta);
    let head = head_of(&top.0, meta.as_deref());
    let written = Edited {
        top: &top.0,
        at,
        meta: meta.as_deref(),
    };
    // Writing strings and text that was read as JSON cannot fail; the
    // result is not read again to be checked.
    let text = serde_json::value::to_raw_value(&written).ok()?;
    Some((text, head))
}

/// The mirrored members of the params about to be written: `name` and
/// `uri` of the top level (each key is there once), the version of the
/// written `_meta`.
fn head_of(top: &[Member<'_>], meta: Option<&[(Cow<'_, str>, Out<'_>)]>) -> EditedHead {
    let top_value = |key: &str| {
        top.iter()
            .find(|(k, _)| **k == *key)
            .and_then(|(_, v)| serde_json::from_str::<Value>(v.get()).ok())
    };
    let version = meta
        .and_then(|m| m.iter().find(|(k, _)| k == crate::meta::PROTOCOL_VERSION))
        .and_then(|(_, v)| match v {
            Out::Value(Value::String(s)) => Some(s.clone()),
            Out::Value(_) => None,
            Out::Raw(r) if r.get().starts_with('"') => serde_json::from_str(r.get()).ok(),
            Out::Raw(_) => None,
        });
    EditedHead {
        version,
        name: top_value("name"),
        uri: top_value("uri"),
    }
}

/// A `_meta` value to write: the text it was read from, or a new value.
enum Out<'a> {
    Raw(&'a RawValue),
    Value(&'a Value),
}

impl Serialize for Out<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Out::Raw(r) => r.serialize(s),
            Out::Value(v) => v.serialize(s),
        }
    }
}

/// The params written again: the members as read, with `_meta` (at `at`, or
/// last when it was absent) replaced by `meta` (left out when `None`).
struct Edited<'a> {
    top: &'a [Member<'a>],
    at: Option<usize>,
    meta: Option<&'a [(Cow<'a, str>, Out<'a>)]>,
}

/// `_meta`'s members as an object.
struct MetaOut<'a>(&'a [(Cow<'a, str>, Out<'a>)]);

impl Serialize for MetaOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            m.serialize_entry(&**k, v)?;
        }
        m.end()
    }
}

impl Serialize for Edited<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for (i, (k, v)) in self.top.iter().enumerate() {
            if Some(i) != self.at {
                m.serialize_entry(&**k, v)?;
            } else if let Some(meta) = self.meta {
                m.serialize_entry(META, &MetaOut(meta))?;
            }
        }
        if let (None, Some(meta)) = (self.at, self.meta) {
            m.serialize_entry(META, &MetaOut(meta))?;
        }
        m.end()
    }
}

#[path = "meta_splice.rs"]
mod splice;

#[cfg(test)]
#[path = "meta_edit_tests.rs"]
mod tests;
