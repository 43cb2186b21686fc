//! [`Loose`]: a member of a peer's message read as a type when it has that
//! type, and kept as it came otherwise; [`Present`]: whether a member is
//! there at all; and the lenient readers of documents from other parties
//! ([`view`], [`view_map`], and [`lenient`] and [`present_value`] for
//! `#[serde(deserialize_with)]`), where a value of another shape reads as
//! missing rather than failing the whole document.
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
use serde::de::value::MapDeserializer;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

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

/// `v` read as the view `T` when `v` is an object of that shape, else
/// `None`; an array is never read positionally. Give the view `Option`
/// members, [`lenient`] ones where another type must not fail the read.
///
/// ```
/// use serde::Deserialize;
/// use tessera_types::loose::view;
///
/// #[derive(Deserialize, Debug, PartialEq)]
/// struct Named {
///     name: Option<String>,
/// }
///
/// let v = serde_json::json!({"name": "a", "other": 1});
/// assert_eq!(view::<Named>(&v), Some(Named { name: Some("a".into()) }));
/// assert_eq!(view::<Named>(&serde_json::json!(["a"])), None);
/// ```
pub fn view<'a, T: Deserialize<'a>>(v: &'a Value) -> Option<T> {
    if v.is_object() {
        T::deserialize(v).ok()
    } else {
        None
    }
}

/// [`view`], or `T::default()` when `v` does not read as `T`.
pub fn view_or_default<'a, T: Deserialize<'a> + Default>(v: &'a Value) -> T {
    view(v).unwrap_or_default()
}

/// `map` read as the view `T` without copying it, or `None` when it does
/// not read.
pub fn view_map<T: DeserializeOwned>(map: &Map<String, Value>) -> Option<T> {
    let de = MapDeserializer::<_, serde_json::Error>::new(map.iter().map(|(k, v)| (k.as_str(), v)));
    T::deserialize(de).ok()
}

/// For `#[serde(default, deserialize_with = "…")]` on an `Option<T>`
/// member: the member read as `T`, or `None` when it has another shape.
pub fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    Loose::<T>::deserialize(d).map(Loose::into_valid)
}

/// For `#[serde(default, deserialize_with = "…")]` on an `Option<Value>`
/// member: `Some` whenever the member is there, `null` included
/// (`Some(Value::Null)`), told from a missing member (`None`).
pub fn present_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
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

    #[derive(Debug, Default, Deserialize, PartialEq)]
    struct View {
        #[serde(default)]
        name: Option<String>,
        #[serde(default, deserialize_with = "lenient")]
        count: Option<u64>,
        #[serde(default, deserialize_with = "present_value")]
        extra: Option<Value>,
    }

    #[test]
    fn views_read_other_shapes_as_missing() {
        let v = json!({"name": "a", "count": "x", "extra": null});
        let want = View {
            name: Some("a".into()),
            count: None,
            extra: Some(Value::Null),
        };
        assert_eq!(view::<View>(&v), Some(want));
        let v = json!({"count": 3});
        let read = view_map::<View>(v.as_object().unwrap()).unwrap();
        assert_eq!((read.count, read.extra), (Some(3), None));
        // Neither an array (positionally) nor a scalar reads.
        assert_eq!(view::<View>(&json!(["a", 1, null])), None);
        assert_eq!(view_or_default::<View>(&json!(3)), View::default());
    }
}
