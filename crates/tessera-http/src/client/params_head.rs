//! What the HTTP client reads of an outgoing request's params text to mirror
//! it in headers: `_meta`'s protocol version, `name` and `uri`, in one pass
//! over the text, with no tree of `_meta` built (a forwarded request's
//! params stay text all the way to the wire).

use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;
use tessera_types::EditedHead;

/// The members of params text the headers mirror.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ParamsHead {
    /// `_meta`'s protocol version, when `_meta` is an object and it is a
    /// string.
    pub version: Option<String>,
    /// `name`, whatever its type (`null` included), when present.
    pub name: Option<Value>,
    /// `uri`, whatever its type, when present.
    pub uri: Option<Value>,
}

/// The members as found in the text, values unread.
#[derive(Deserialize)]
struct Top<'a> {
    #[serde(rename = "_meta", default, borrow, deserialize_with = "present")]
    meta: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    name: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    uri: Option<&'a RawValue>,
}

/// `_meta`'s protocol version.
#[derive(Deserialize)]
struct Meta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    version: Option<Value>,
}

/// A member that is there, `null` included.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

impl From<&EditedHead> for ParamsHead {
    /// The members as the engine noted them when it wrote the params text.
    fn from(h: &EditedHead) -> Self {
        ParamsHead {
            version: h.version.clone(),
            name: h.name.clone(),
            uri: h.uri.clone(),
        }
    }
}

impl ParamsHead {
    /// Reads `text` (a JSON object); `None` when it cannot be read this way
    /// (one of these members given twice): the caller then reads the params
    /// the usual way, which keeps the last.
    pub(crate) fn read(text: &str) -> Option<ParamsHead> {
        let top: Top<'_> = serde_json::from_str(text).ok()?;
        let version = match top.meta {
            Some(m) if m.get().starts_with('{') => {
                let meta: Meta = serde_json::from_str(m.get()).ok()?;
                match meta.version {
                    Some(Value::String(v)) => Some(v),
                    _ => None,
                }
            }
            _ => None,
        };
        let value = |raw: Option<&RawValue>| raw.and_then(|r| serde_json::from_str(r.get()).ok());
        Some(ParamsHead {
            version,
            name: value(top.name),
            uri: value(top.uri),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_mirrored_members_without_the_rest() {
        let h = ParamsHead::read(
            r#"{"name":"echo","arguments":{"name":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","clientInfo":{"name":"c"}}}"#,
        )
        .unwrap();
        assert_eq!(h.version.as_deref(), Some("2026-07-28"));
        assert_eq!(h.name, Some(json!("echo")));
        assert_eq!(h.uri, None);
        // Present with another type, `null` included: still there.
        let h = ParamsHead::read(r#"{"name":null,"uri":7,"_meta":[]}"#).unwrap();
        assert_eq!(
            (h.name, h.uri, h.version),
            (Some(Value::Null), Some(json!(7)), None)
        );
        let h =
            ParamsHead::read(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":1}}"#).unwrap();
        assert_eq!(h, ParamsHead::default());
    }

    #[test]
    fn a_member_given_twice_is_left_to_the_whole_reader() {
        assert!(ParamsHead::read(r#"{"name":"a","name":"b"}"#).is_none());
        let twice = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"a","io.modelcontextprotocol/protocolVersion":"b"}}"#;
        assert!(ParamsHead::read(twice).is_none());
        // Keys spelled with escapes are read as what they spell.
        let h =
            ParamsHead::read(r#"{"n\u0061me":"caf\u00e9","\u005fmeta":{"k":1,"k":2}}"#).unwrap();
        assert_eq!(h.name, Some(json!("café")));
    }
}
