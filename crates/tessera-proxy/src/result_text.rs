//! A result's top-level members read as text: how a 2026-07-28 result
//! loses its `resultType` on its way to a legacy client without being
//! built into a tree (the other members' values are copied as they came).

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;

/// The member a legacy client does not get.
const RESULT_TYPE: &str = "resultType";

/// What [`strip_complete`] made of a result.
#[derive(Debug)]
pub(crate) enum Stripped {
    /// No `resultType`: the text as it is.
    Unchanged,
    /// A complete result, without its `resultType`.
    Text(Box<RawValue>),
    /// Anything else (input asked for, a task, a member given twice, text
    /// that is not an object): for the caller to read whole.
    ReadWhole,
}

/// [`strip_complete`] on a result's text, the members located by
/// [`tessera_types::json_scan`] (none read) when the text is plain (no key
/// given twice or written with an escape): the member and a comma are cut
/// out, everything else kept as written.
pub(crate) fn strip_complete_raw(raw: &RawValue) -> Stripped {
    use tessera_types::json_scan::{self, Stripped as Cut};
    match json_scan::strip_member(raw, RESULT_TYPE, "\"complete\"") {
        Some(Cut::Absent) => Stripped::Unchanged,
        Some(Cut::Removed(text)) => Stripped::Text(text),
        // Another `resultType`: read whole, as the other way decides.
        Some(Cut::Kept) => Stripped::ReadWhole,
        None => strip_complete(raw.get()),
    }
}

/// `text`, a result object, without its `resultType` when that is
/// `"complete"`; the members keep their order and their text.
pub(crate) fn strip_complete(text: &str) -> Stripped {
    let Ok(Members(members)) = serde_json::from_str::<Members<'_>>(text) else {
        return Stripped::ReadWhole;
    };
    // A member given twice: a tree keeps the last, this reading would keep
    // both, so the caller reads it whole.
    for (i, (k, _)) in members.iter().enumerate() {
        if members[..i].iter().any(|(seen, _)| seen == k) {
            return Stripped::ReadWhole;
        }
    }
    match members.iter().find(|(k, _)| k == RESULT_TYPE) {
        None => Stripped::Unchanged,
        Some((_, v)) if v.get() == "\"complete\"" => {
            match serde_json::value::to_raw_value(&Without(&members)) {
                Ok(t) => Stripped::Text(t),
                Err(_) => Stripped::ReadWhole,
            }
        }
        Some(_) => Stripped::ReadWhole,
    }
}

/// An object's members in order: keys borrowed when they have no escape,
/// values as their text.
struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

/// A key, borrowed from the text when it can be.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some((Key(k), v)) = map.next_entry::<Key<'de>, &'de RawValue>()? {
                    out.push((k, v));
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(MembersVisitor)
    }
}

/// The members but `resultType`, written as an object.
struct Without<'m, 'a>(&'m [(Cow<'a, str>, &'a RawValue)]);

impl Serialize for Without<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for (k, v) in self.0.iter().filter(|(k, _)| k != RESULT_TYPE) {
            m.serialize_entry(k.as_ref(), v)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Option<String> {
        match strip_complete(s) {
            Stripped::Text(t) => Some(t.get().to_owned()),
            Stripped::Unchanged => Some(s.to_owned()),
            Stripped::ReadWhole => None,
        }
    }

    #[test]
    fn a_complete_result_loses_only_its_result_type_in_order() {
        assert_eq!(
            text(r#"{"content":[{"type":"text","text":"hi \u00e9"}],"resultType":"complete","isError":false}"#)
                .as_deref(),
            Some(r#"{"content":[{"type":"text","text":"hi \u00e9"}],"isError":false}"#)
        );
        // An escaped key is the same key, and written back escaped as JSON needs.
        assert_eq!(
            text(r#"{"result\u0054ype":"complete","a\"b":1}"#).as_deref(),
            Some(r#"{"a\"b":1}"#)
        );
        assert_eq!(text(r#"{"resultType":"complete"}"#).as_deref(), Some("{}"));
        assert!(matches!(
            strip_complete(r#"{"tools":[]}"#),
            Stripped::Unchanged
        ));
    }

    #[test]
    fn the_scanned_way_agrees_with_the_read_one() {
        for s in [
            r#"{"content":[{"type":"text","text":"hi \u00e9"}],"resultType":"complete","isError":false}"#,
            r#"{ "resultType" : "complete" , "a\"b" : 1 }"#,
            r#"{"result\u0054ype":"complete","a\"b":1}"#,
            r#"{"resultType":"complete"}"#,
            r#"{"tools":[],"_meta":{"resultType":"complete"}}"#,
            r#"{"resultType":"input_required","inputRequests":{}}"#,
            r#"{"resultType":"complete","a":1,"a":2}"#,
            r#"{"resultType":"complete","resultType":"complete"}"#,
        ] {
            let raw = RawValue::from_string(s.to_owned()).unwrap();
            let value = |t: &Stripped| match t {
                Stripped::Text(t) => {
                    Some(serde_json::from_str::<serde_json::Value>(t.get()).unwrap())
                }
                Stripped::Unchanged => Some(serde_json::from_str(s).unwrap()),
                Stripped::ReadWhole => None,
            };
            assert_eq!(
                value(&strip_complete_raw(&raw)),
                value(&strip_complete(s)),
                "{s}"
            );
        }
    }

    #[test]
    fn anything_but_a_plain_complete_result_is_read_whole() {
        for s in [
            r#"{"resultType":"input_required","inputRequests":{}}"#,
            r#"{"resultType":"task","task":{"taskId":"t"}}"#,
            r#"{"resultType":"complete","a":1,"a":2}"#,
            r#"{"resultType":"complete","resultType":"complete"}"#,
            r#"[1]"#,
            r#"{"a":"#,
        ] {
            assert!(matches!(strip_complete(s), Stripped::ReadWhole), "{s}");
        }
    }
}
