//! Strings read from JSON text without a copy where the text allows it.
//!
//! serde's `Deserialize` for `Cow<str>` always copies (it cannot tell a
//! borrowed string from a transient one); [`BorrowedStr`] borrows from the
//! input whenever the string has no escapes, which is nearly always for
//! object keys and method names.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;

use serde::de::{Deserialize, Deserializer, Error, Visitor};
use serde_json::value::RawValue;

/// A JSON string as read: borrowed from the input when it has no escapes,
/// copied otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BorrowedStr<'a>(pub Cow<'a, str>);

impl Deref for BorrowedStr<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for BorrowedStr<'_> {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for BorrowedStr<'_> {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

struct BorrowedStrVisitor;

impl<'de> Visitor<'de> for BorrowedStrVisitor {
    type Value = BorrowedStr<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(BorrowedStr(Cow::Borrowed(v)))
    }

    fn visit_str<E: Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(BorrowedStr(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(BorrowedStr(Cow::Owned(v)))
    }
}

impl<'de> Deserialize<'de> for BorrowedStr<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(BorrowedStrVisitor)
    }
}

/// The string a JSON value's text holds, unescaped: borrowed from the text
/// when it has no escapes. `None` when the value is not a string.
pub fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get().trim_start();
    if !text.starts_with('"') {
        return None;
    }
    // Valid JSON text (a `RawValue` is checked): a string without a
    // backslash is its own content between its quotes.
    let inner = text.trim_end().strip_prefix('"')?.strip_suffix('"')?;
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<BorrowedStr<'_>>(text)
        .ok()
        .map(|s| s.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrows_plain_strings_and_copies_escaped_ones() {
        let s: BorrowedStr<'_> = serde_json::from_str(r#""tools/call""#).unwrap();
        assert!(matches!(s.0, Cow::Borrowed("tools/call")));
        let s: BorrowedStr<'_> = serde_json::from_str(r#""a\u0062c""#).unwrap();
        assert!(matches!(&s.0, Cow::Owned(o) if o == "abc"));
        assert!(serde_json::from_str::<BorrowedStr<'_>>("1").is_err());
    }

    #[test]
    fn raw_strings() {
        let raw: &RawValue = serde_json::from_str(r#" "2.0" "#).unwrap();
        assert!(matches!(raw_str(raw), Some(Cow::Borrowed("2.0"))));
        let raw: &RawValue = serde_json::from_str(r#""2\u002e0""#).unwrap();
        assert_eq!(raw_str(raw).as_deref(), Some("2.0"));
        let raw: &RawValue = serde_json::from_str(r#""a\"b""#).unwrap();
        assert_eq!(raw_str(raw).as_deref(), Some("a\"b"));
        let raw: &RawValue = serde_json::from_str("20").unwrap();
        assert_eq!(raw_str(raw), None);
        let raw: &RawValue = serde_json::from_str(r#""""#).unwrap();
        assert_eq!(raw_str(raw).as_deref(), Some(""));
    }
}
