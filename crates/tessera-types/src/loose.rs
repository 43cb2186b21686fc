//! [`Loose`]: a member of a peer's message read as a type when it has that
//! type, and kept as it came otherwise; [`Present`]: whether a member is
//! there at all.
//!
//! Code that passes messages on (a proxy) or reads a few members of a
//! larger message reads them into structs of `Loose` fields, with
//! `#[serde(default)]` (an absent member is [`Loose::Absent`]) and
//! `skip_serializing_if = "Loose::is_absent"` when written back: a member of
//! an unexpected shape neither fails the whole message nor changes on the
//! way through.
//!
//! ```
//! use serde::Deserialize;
//! use tessera_types::Loose;
//!
//! #[derive(Deserialize, Default)]
//! #[serde(default)]
//! struct Page {
//!     #[serde(rename = "nextCursor")]
//!     next_cursor: Loose<String>,
//! }
//!
//! let odd: Page = serde_json::from_str(r#"{"nextCursor": 7}"#).unwrap();
//! assert_eq!(odd.next_cursor, Loose::Malformed(serde_json::json!(7)));
//! let none: Page = serde_json::from_str("{}").unwrap();
//! assert!(none.next_cursor.is_absent());
//! ```

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A member as read from a peer: absent, of the expected type, or of some
/// other shape (kept, and written back as it came).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Loose<T> {
    /// Not in the message.
    #[default]
    Absent,
    /// Present with the expected type.
    Valid(T),
    /// Present with another shape.
    Malformed(Value),
}

impl<T> Loose<T> {
    /// Whether the member was not in the message (it is then not written).
    pub fn is_absent(&self) -> bool {
        matches!(self, Loose::Absent)
    }

    /// The value, when it has the expected type.
    pub fn valid(&self) -> Option<&T> {
        match self {
            Loose::Valid(v) => Some(v),
            _ => None,
        }
    }

    /// The value, mutably, when it has the expected type.
    pub fn valid_mut(&mut self) -> Option<&mut T> {
        match self {
            Loose::Valid(v) => Some(v),
            _ => None,
        }
    }

    /// The value, taken, when it has the expected type.
    pub fn into_valid(self) -> Option<T> {
        match self {
            Loose::Valid(v) => Some(v),
            _ => None,
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Loose<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(match T::deserialize(&v) {
            Ok(t) => Loose::Valid(t),
            Err(_) => Loose::Malformed(v),
        })
    }
}

impl<T: Serialize> Serialize for Loose<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Loose::Valid(t) => t.serialize(s),
            Loose::Malformed(v) => v.serialize(s),
            Loose::Absent => s.serialize_none(),
        }
    }
}

/// Whether a member is there, whatever its value (`null` included); the
/// value is skipped, not built. Use with `#[serde(default)]`.
///
/// ```
/// use serde::Deserialize;
/// use tessera_types::Present;
///
/// #[derive(Deserialize)]
/// struct Message {
///     #[serde(default)]
///     method: Present,
/// }
///
/// let m: Message = serde_json::from_str(r#"{"method": null, "id": 1}"#).unwrap();
/// assert!(m.method.0);
/// let m: Message = serde_json::from_str(r#"{"id": 1}"#).unwrap();
/// assert!(!m.method.0);
/// ```
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Present(pub bool);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| Present(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Default, Deserialize, Serialize)]
    #[serde(default)]
    struct Msg {
        #[serde(skip_serializing_if = "Loose::is_absent")]
        n: Loose<u64>,
        #[serde(skip_serializing_if = "Loose::is_absent")]
        s: Loose<String>,
    }

    #[test]
    fn members_keep_their_shape_through() {
        for text in [
            r#"{"n":1,"s":"x"}"#,
            r#"{"n":"one","s":null}"#,
            r#"{"n":-1}"#,
            "{}",
        ] {
            let m: Msg = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&m).unwrap(), text);
        }
        let m: Msg = serde_json::from_value(json!({"n": 2.5})).unwrap();
        assert_eq!(m.n, Loose::Malformed(json!(2.5)));
        assert_eq!(m.n.valid(), None);
        assert!(m.s.is_absent());
    }
}
