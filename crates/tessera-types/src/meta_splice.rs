//! The quick way of a [`MetaEdit`] on params text: the params' members are
//! located by [`crate::json_scan`] (nothing read into values), `_meta` is
//! written anew in place of its old text, and everything around it is
//! copied as it is. Used when the text is plain: no key given twice and no
//! key written with an escape (at the top level and in `_meta`), and the
//! edit does not take `_meta` out; anything else goes the way of
//! [`super::edit_text`], which reads the members with serde_json.
//!
//! The two ways give the same params; this one keeps the whitespace around
//! `_meta` as written, and writes no text that serde_json reads again.

use serde_json::Value;

use super::{EditedHead, META, MetaEdit, NotObject};
use crate::json_scan::Object;
use crate::params::MetaPlace;
use crate::received_meta::WELL_KNOWN;

/// Where a value is in a text: `start..end`.
type Span = (usize, usize);

/// What [`splice`] made of params text.
pub(super) enum Spliced {
    /// Nothing to change: the params stay as they are.
    Unchanged,
    /// The edited text, and what it has of the mirrored members.
    Edited(String, EditedHead),
}

/// A `_meta` value to write: the text it was read from, or a new value.
enum Out<'a> {
    Raw(&'a str),
    Value(&'a Value),
}

/// Applies `edit` to the params `text` (see the module docs): `None` when
/// the text or the edit is not one this way takes.
pub(super) fn splice(text: &str, edit: &MetaEdit<'_>) -> Option<Spliced> {
    let top = Object::scan(text)?;
    if top.has_odd_keys() {
        return None;
    }
    let at = top.find(META);
    let mut meta: Vec<(&str, Out<'_>)> = Vec::with_capacity(8);
    let mut replaced = false;
    match at {
        Some(m) if text.as_bytes().get(m.value.0) == Some(&b'{') => {
            let inner_text = text.get(m.value.0..m.value.1)?;
            let inner = Object::scan(inner_text)?;
            if inner.has_odd_keys() {
                return None;
            }
            for member in &inner.members {
                let value = inner_text.get(member.value.0..member.value.1)?;
                meta.push((member.raw_key, Out::Raw(value)));
            }
        }
        Some(_) if edit.not_object == NotObject::Keep => return Some(Spliced::Unchanged),
        Some(_) => replaced = true,
        None if !edit.adds() => return Some(Spliced::Unchanged),
        None => {}
    }
    let plain = |k: &str| !k.bytes().any(|c| c == b'"' || c == b'\\' || c < 0x20);
    let added = edit.set_if_object.iter().chain(edit.set).chain(edit.fill);
    if !added.clone().all(|(k, _)| plain(k)) {
        return None;
    }
    if !replaced {
        meta.retain(|(k, _)| !edit.remove.contains(k));
        for (k, v) in edit.set_if_object {
            put(&mut meta, k, v.as_ref());
        }
    }
    for (k, v) in edit.set {
        put(&mut meta, k, v.as_ref());
    }
    for (k, v) in edit.fill {
        if !meta.iter().any(|(key, _)| key == k) {
            meta.push((k, Out::Value(v)));
        }
    }
    if meta.is_empty() && edit.drop_empty {
        // `_meta` taken out: its key and a comma go too (the other way).
        return None;
    }
    let mut out: Vec<u8> = Vec::with_capacity(text.len() + 128);
    match at {
        Some(m) => {
            out.extend_from_slice(text.get(..m.value.0)?.as_bytes());
            write_meta(&mut out, &meta)?;
            out.extend_from_slice(text.get(m.value.1..)?.as_bytes());
        }
        None => {
            // Last, after the last member.
            let after = top.members.last().map_or(top.close, |m| m.value.1);
            out.extend_from_slice(text.get(..after)?.as_bytes());
            if !top.members.is_empty() {
                out.push(b',');
            }
            out.extend_from_slice(b"\"_meta\":");
            write_meta(&mut out, &meta)?;
            out.extend_from_slice(text.get(after..)?.as_bytes());
        }
    }
    let head = EditedHead {
        version: meta
            .iter()
            .find(|(k, _)| *k == crate::meta::PROTOCOL_VERSION)
            .and_then(|(_, v)| match v {
                Out::Value(Value::String(s)) => Some(s.clone()),
                Out::Value(_) => None,
                Out::Raw(r) => string_of(r),
            }),
        name: top_value(text, &top, "name"),
        uri: top_value(text, &top, "uri"),
    };
    Some(Spliced::Edited(String::from_utf8(out).ok()?, head))
}

/// Sets `k` to `v`, in the place of a member of that key when there is one.
fn put<'a>(meta: &mut Vec<(&'a str, Out<'a>)>, k: &'a str, v: &'a Value) {
    match meta.iter_mut().find(|(key, _)| *key == k) {
        Some(slot) => slot.1 = Out::Value(v),
        None => meta.push((k, Out::Value(v))),
    }
}

/// Writes `_meta`'s members as an object (keys are plain: see [`splice`]).
fn write_meta(out: &mut Vec<u8>, meta: &[(&str, Out<'_>)]) -> Option<()> {
    out.push(b'{');
    for (i, (k, v)) in meta.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(k.as_bytes());
        out.extend_from_slice(b"\":");
        match v {
            Out::Raw(r) => out.extend_from_slice(r.as_bytes()),
            Out::Value(v) => serde_json::to_writer(&mut *out, v).ok()?,
        }
    }
    out.push(b'}');
    Some(())
}

/// The content of a JSON string's text (`None` when it is not a string).
fn string_of(text: &str) -> Option<String> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str(text).ok()
    } else {
        Some(inner.to_owned())
    }
}

/// The top-level member `key` as a value, when present.
fn top_value(text: &str, top: &Object<'_>, key: &str) -> Option<Value> {
    let m = top.find(key)?;
    let value = text.get(m.value.0..m.value.1)?;
    if value.starts_with('"') {
        if let Some(s) = string_of(value) {
            return Some(Value::String(s));
        }
    }
    serde_json::from_str(value).ok()
}

/// What becomes of one [`WELL_KNOWN`] member of `_meta` in
/// [`splice_placed`].
#[derive(Clone, Copy)]
enum Fate<'v> {
    /// Not in `_meta` (or added at its end: see `added`).
    Absent,
    /// Kept as written.
    Kept,
    /// Taken out.
    Cut,
    /// Its value replaced, in its place.
    Replaced(&'v Value),
}

/// The same edit as [`splice`], when the params' head was read from this
/// text (`place`) and the edit touches only [`WELL_KNOWN`] keys of a
/// `_meta` written plainly (no key escaped or given twice): `_meta`'s
/// place and its well-known members' places are known, so nothing is
/// scanned again. `None` when that is not so.
pub(super) fn splice_placed(
    text: &str,
    place: &MetaPlace<'_>,
    edit: &MetaEdit<'_>,
) -> Option<Spliced> {
    let slot = |k: &str| WELL_KNOWN.iter().position(|w| *w == k);
    let sets = || edit.set_if_object.iter().chain(edit.set);
    if edit.remove.iter().any(|k| slot(k).is_none())
        || sets().chain(edit.fill).any(|(k, _)| slot(k).is_none())
    {
        return None;
    }
    let places = match place.at {
        Some((meta, _)) => meta.plain_places()?,
        None if !edit.adds() => return Some(Spliced::Unchanged),
        None => [None; WELL_KNOWN.len()],
    };
    let mut fate = places.map(|p| {
        if p.is_some() {
            Fate::Kept
        } else {
            Fate::Absent
        }
    });
    for k in edit.remove {
        let i = slot(k)?;
        if matches!(fate[i], Fate::Kept) {
            fate[i] = Fate::Cut;
        }
    }
    // Members added at the end, in the order the full way adds them.
    let mut added: Vec<(&str, &Value)> = Vec::with_capacity(4);
    for (k, v) in sets() {
        let i = slot(k)?;
        match fate[i] {
            Fate::Kept | Fate::Replaced(_) => fate[i] = Fate::Replaced(v.as_ref()),
            Fate::Absent | Fate::Cut => match added.iter_mut().find(|(key, _)| key == k) {
                Some(a) => a.1 = v.as_ref(),
                None => added.push((k, v.as_ref())),
            },
        }
    }
    for (k, v) in edit.fill {
        let i = slot(k)?;
        let there = matches!(fate[i], Fate::Kept | Fate::Replaced(_));
        if !there && !added.iter().any(|(key, _)| key == k) {
            added.push((k, v.as_ref()));
        }
    }
    let mut out: Vec<u8> = Vec::with_capacity(text.len() + 128);
    let mut meta_out = MetaOut {
        out: &mut out,
        empty: true,
    };
    let (after, version) = match place.at {
        Some((meta, (start, end))) => {
            meta_out
                .out
                .extend_from_slice(text.get(..start)?.as_bytes());
            let m = meta.text();
            if text.get(start..end)? != m || !m.ends_with('}') {
                return None;
            }
            meta_out.out.push(b'{');
            let mut order: Vec<(usize, Span, usize)> = places
                .iter()
                .enumerate()
                .filter_map(|(i, p)| p.map(|(key, value)| (key, value, i)))
                .collect();
            order.sort_unstable_by_key(|(key, _, _)| *key);
            let mut pos = 1;
            for (key, (vs, ve), i) in order {
                if key < pos || vs <= key || ve < vs {
                    return None;
                }
                meta_out.piece(gap(m.get(pos..key)?));
                match fate[i] {
                    Fate::Kept => meta_out.piece(m.get(key..ve)?),
                    Fate::Replaced(v) => meta_out.member(WELL_KNOWN[i], v)?,
                    Fate::Cut | Fate::Absent => {}
                }
                pos = ve;
            }
            meta_out.piece(gap(m.get(pos..m.len() - 1)?));
            let version = match (fate[0], places[0]) {
                (Fate::Kept, Some((_, (vs, ve)))) => string_of(m.get(vs..ve)?),
                (Fate::Replaced(Value::String(s)), _) => Some(s.clone()),
                _ => None,
            };
            (end, version)
        }
        None => {
            // Last, after the last member.
            let body = text.trim_end_matches(JSON_SPACE).strip_suffix('}')?;
            let at = body.trim_end_matches(JSON_SPACE).len();
            meta_out.out.extend_from_slice(text.get(..at)?.as_bytes());
            if !text.get(..at)?.ends_with('{') {
                meta_out.out.push(b',');
            }
            meta_out.out.extend_from_slice(b"\"_meta\":{");
            (at, None)
        }
    };
    let mut version = version;
    for (k, v) in &added {
        meta_out.member(k, v)?;
        if *k == crate::meta::PROTOCOL_VERSION {
            version = v.as_str().map(str::to_owned);
        }
    }
    if meta_out.empty && edit.drop_empty {
        // `_meta` taken out: its key and a comma go too (the other way).
        return None;
    }
    out.push(b'}');
    out.extend_from_slice(text.get(after..)?.as_bytes());
    let head = EditedHead {
        version,
        name: place.name.cloned(),
        uri: place.uri.cloned(),
    };
    Some(Spliced::Edited(String::from_utf8(out).ok()?, head))
}

/// JSON's whitespace.
const JSON_SPACE: [char; 4] = [' ', '\t', '\n', '\r'];

/// The members between two well-known ones (or an end of the object), as
/// written, without the commas and whitespace around them.
fn gap(text: &str) -> &str {
    let t = text.trim_matches(JSON_SPACE);
    let t = t.strip_prefix(',').unwrap_or(t);
    let t = t.strip_suffix(',').unwrap_or(t);
    t.trim_matches(JSON_SPACE)
}

/// `_meta`'s members being written, comma-separated.
struct MetaOut<'o> {
    out: &'o mut Vec<u8>,
    empty: bool,
}

impl MetaOut<'_> {
    /// Members written as they were (nothing when empty).
    fn piece(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        self.out.extend_from_slice(text.as_bytes());
    }

    /// A member of a plain key and a new value.
    fn member(&mut self, key: &str, value: &Value) -> Option<()> {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
        serde_json::to_writer(&mut *self.out, value).ok()
    }
}
