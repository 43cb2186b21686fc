//! The members of a JSON object found on its text, for text that was
//! already read as JSON (a [`Params`](crate::Params)' text, a
//! [`RawValue`]): keys and values are located,
//! nothing is built or checked again.
//!
//! Cheaper than serde_json's deserializer for telling where each member is
//! (it only looks for quotes, backslashes and brackets), which is all an
//! edit of a few members needs. Given text that is not valid JSON, it never
//! panics: it reports `None` (or members that make no sense), and its
//! callers fall back to reading the text with serde_json.

use std::borrow::Cow;

use serde_json::value::RawValue;

/// One member of an object, by place in the object's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member<'a> {
    /// The key's text between its quotes, escapes as written.
    pub raw_key: &'a str,
    /// Where the key's opening quote is.
    pub key_start: usize,
    /// Where the value's text starts and ends (`start..end`).
    pub value: (usize, usize),
}

impl<'a> Member<'a> {
    /// Whether the key is written with an escape (`\`).
    pub fn escaped(&self) -> bool {
        self.raw_key.contains('\\')
    }

    /// The key, unescaped (`None` when its escapes do not read).
    pub fn key(&self) -> Option<Cow<'a, str>> {
        if !self.escaped() {
            return Some(Cow::Borrowed(self.raw_key));
        }
        serde_json::from_str::<String>(&format!("\"{}\"", self.raw_key))
            .ok()
            .map(Cow::Owned)
    }
}

/// An object's members read off its text, in order (see the module docs):
/// `None` when the text is not an object as far as the scanner can tell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Object<'a> {
    /// The members, in the order written (a key given twice appears twice).
    pub members: Vec<Member<'a>>,
    /// Where the object's closing `}` is.
    pub close: usize,
}

impl<'a> Object<'a> {
    /// Scans the object `text` (leading and trailing whitespace allowed).
    pub fn scan(text: &'a str) -> Option<Object<'a>> {
        let b = text.as_bytes();
        let mut i = skip_ws(b, 0);
        if b.get(i) != Some(&b'{') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let mut members = Vec::with_capacity(4);
        if b.get(i) == Some(&b'}') {
            return Some(Object { members, close: i });
        }
        loop {
            if b.get(i) != Some(&b'"') {
                return None;
            }
            let key_end = skip_string(b, i)?;
            let raw_key = text.get(i + 1..key_end - 1)?;
            let key_start = i;
            i = skip_ws(b, key_end);
            if b.get(i) != Some(&b':') {
                return None;
            }
            let start = skip_ws(b, i + 1);
            let end = skip_value(b, start)?;
            members.push(Member {
                raw_key,
                key_start,
                value: (start, end),
            });
            i = skip_ws(b, end);
            match b.get(i)? {
                b',' => i = skip_ws(b, i + 1),
                b'}' => return Some(Object { members, close: i }),
                _ => return None,
            }
        }
    }

    /// Whether any key is given twice, or written with an escape (which
    /// could make two differently written keys the same).
    pub fn has_odd_keys(&self) -> bool {
        self.members
            .iter()
            .enumerate()
            .any(|(i, m)| m.escaped() || self.members[..i].iter().any(|o| o.raw_key == m.raw_key))
    }

    /// The member whose key is written as `key` (the first one).
    pub fn find(&self, key: &str) -> Option<&Member<'a>> {
        self.members.iter().find(|m| m.raw_key == key)
    }
}

/// What [`strip_member`] found.
#[derive(Debug)]
pub enum Stripped {
    /// No member of that key.
    Absent,
    /// The member is there with another value: the text is as it was.
    Kept,
    /// The text without the member (the others as they were written).
    Removed(Box<RawValue>),
}

/// `raw`, an object, without its member `key` when that member's value is
/// written exactly as `value` (the whitespace and the other members are
/// kept as written; nothing is read again). `None` when the scanner
/// declines the text (not an object, or a key given twice or written with
/// an escape): read it with serde_json instead.
pub fn strip_member(raw: &RawValue, key: &str, value: &str) -> Option<Stripped> {
    let text = raw.get();
    let object = Object::scan(text)?;
    if object.has_odd_keys() {
        return None;
    }
    let Some(i) = object.members.iter().position(|m| m.raw_key == key) else {
        return Some(Stripped::Absent);
    };
    let m = object.members[i];
    if text.get(m.value.0..m.value.1)? != value {
        return Some(Stripped::Kept);
    }
    // The comma before it goes with it; for the first member, the one after.
    let (from, to) = match (i.checked_sub(1), object.members.get(i + 1)) {
        (Some(before), _) => (object.members[before].value.1, m.value.1),
        (None, Some(next)) => (m.key_start, next.key_start),
        (None, None) => (m.key_start, m.value.1),
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(text.get(..from)?);
    out.push_str(text.get(to..)?);
    crate::params::raw_of_written(out).map(Stripped::Removed)
}

/// The index of the first byte at or after `i` that is not JSON whitespace.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(c) = b.get(i) {
        if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        i += 1;
    }
    i
}

/// Past the string that opens at `i` (on its `"`).
fn skip_string(b: &[u8], i: usize) -> Option<usize> {
    let mut at = i + 1;
    loop {
        let found = at + memchr::memchr2(b'"', b'\\', b.get(at..)?)?;
        if b[found] == b'"' {
            return Some(found + 1);
        }
        // A backslash and the character it escapes (for `\u`, the four hex
        // digits hold no quote or backslash).
        at = found + 2;
    }
}

/// Past the value that starts at `i`.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut at = i;
            loop {
                match b.get(at)? {
                    b'"' => {
                        at = skip_string(b, at)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
        _ => {
            // A number, `true`, `false` or `null`: up to what follows it.
            let len = b
                .get(i..)?
                .iter()
                .position(|c| matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(b.len() - i);
            (len > 0).then_some(i + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_and_values(text: &str) -> Vec<(String, String)> {
        let o = Object::scan(text).expect("an object");
        o.members
            .iter()
            .map(|m| {
                (
                    m.key().unwrap().into_owned(),
                    text[m.value.0..m.value.1].to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn members_are_found_as_serde_json_reads_them() {
        let texts = [
            r#"{}"#,
            r#" { } "#,
            r#"{"a":1}"#,
            r#"{ "a" : -1.5e3 , "b" : [1, {"c": "]}"}], "d\"q": "x\\\"y", "e":{"f":null},"g":true,"h":false}"#,
            r#"{"name":"ec\u0068o","arguments":{"text":"\u00e9 } ]"},"_meta":{"k":[[],{}]}}"#,
            "{\n\t\"a\"\r\n:\n\"b\"\n}",
        ];
        for text in texts {
            let tree: Vec<(String, String)> =
                serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text)
                    .unwrap()
                    .into_iter()
                    .map(|(k, v)| (k, v.to_string()))
                    .collect();
            let scanned: Vec<(String, String)> = keys_and_values(text)
                .into_iter()
                .map(|(k, v)| {
                    let v: serde_json::Value = serde_json::from_str(&v).unwrap();
                    (k, v.to_string())
                })
                .collect();
            let mut sorted = scanned.clone();
            sorted.sort();
            let mut tree = tree;
            tree.sort();
            assert_eq!(sorted, tree, "{text}");
            let o = Object::scan(text).unwrap();
            assert_eq!(&text[o.close..=o.close], "}", "{text}");
        }
    }

    #[test]
    fn text_that_is_no_object_is_refused_without_a_panic() {
        for text in [
            "",
            "[]",
            "1",
            "{",
            "{\"a\"",
            "{\"a\":",
            "{\"a\":1",
            "{\"a\":1,",
            "{\"a\" 1}",
            "{a:1}",
            "{\"a\":\"x",
            "{\"a\":[1,2}",
            "{\"a\":\"\\",
            "{\"a\":1 2}",
        ] {
            assert_eq!(Object::scan(text), None, "{text:?}");
        }
    }

    #[test]
    fn a_member_is_stripped_with_its_comma() {
        let raw = |s: &str| RawValue::from_string(s.to_owned()).unwrap();
        let strip = |s: &str| match strip_member(&raw(s), "t", "\"c\"") {
            Some(Stripped::Removed(r)) => r.get().to_owned(),
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(strip(r#"{"a":1,"t":"c","b":[2]}"#), r#"{"a":1,"b":[2]}"#);
        assert_eq!(strip(r#"{ "t" : "c" , "b":2 }"#), r#"{ "b":2 }"#);
        assert_eq!(strip(r#"{"a":{"t":"c"}, "t":"c"}"#), r#"{"a":{"t":"c"}}"#);
        assert_eq!(strip(r#"{"t":"c"}"#), r#"{}"#);
        assert!(matches!(
            strip_member(&raw(r#"{"t":"d"}"#), "t", "\"c\""),
            Some(Stripped::Kept)
        ));
        assert!(matches!(
            strip_member(&raw(r#"{"a":"t"}"#), "t", "\"c\""),
            Some(Stripped::Absent)
        ));
        assert!(strip_member(&raw(r#"{"t":"c","t":"c"}"#), "t", "\"c\"").is_none());
    }

    #[test]
    fn keys_given_twice_or_escaped_are_odd() {
        assert!(!Object::scan(r#"{"a":1,"b":2}"#).unwrap().has_odd_keys());
        assert!(Object::scan(r#"{"a":1,"a":2}"#).unwrap().has_odd_keys());
        assert!(Object::scan(r#"{"\u0061":1}"#).unwrap().has_odd_keys());
    }
}
