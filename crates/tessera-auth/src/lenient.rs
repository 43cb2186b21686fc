//! Reading optional members of documents from other parties (authorization
//! servers, tokens, proofs) leniently: a member of an unexpected type reads
//! as absent instead of failing the whole document.

use serde::de::DeserializeOwned;
#[cfg(feature = "server")]
use serde::de::value::MapDeserializer;
use serde::{Deserialize, Deserializer};
#[cfg(feature = "server")]
use serde_json::Map;
use serde_json::Value;

/// A `deserialize_with` for `Option<T>` members: `None` when the member is
/// not a `T` (use with `#[serde(default)]` for absent members).
pub(crate) fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    Ok(T::deserialize(v).ok())
}

/// A `deserialize_with` for `Option<Value>` members: `Some` whenever the
/// member is present, whatever its value (`null` included).
#[cfg(feature = "server")]
pub(crate) fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Reads `doc` as `T`, or `T::default()` when it is not one (not an
/// object; with lenient members, an object always reads).
pub(crate) fn read<T: DeserializeOwned + Default>(doc: &Value) -> T {
    T::deserialize(doc).unwrap_or_default()
}

/// Reads `map` as `T` without copying it, or `T::default()` when it does
/// not read.
#[cfg(feature = "server")]
pub(crate) fn read_map<T: DeserializeOwned + Default>(map: &Map<String, Value>) -> T {
    let de = MapDeserializer::<_, serde_json::Error>::new(map.iter().map(|(k, v)| (k.as_str(), v)));
    T::deserialize(de).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Default, Deserialize)]
    struct Doc {
        #[serde(default, deserialize_with = "lenient")]
        n: Option<u64>,
        #[serde(default, deserialize_with = "lenient")]
        s: Option<String>,
    }

    #[test]
    fn members_of_other_types_read_as_absent() {
        let d: Doc = read(&json!({"n": "x", "s": "y"}));
        assert_eq!((d.n, d.s.as_deref()), (None, Some("y")));
        let d: Doc = read(&json!({"n": 4}));
        assert_eq!((d.n, d.s), (Some(4), None));
        let d: Doc = read(&json!(null));
        assert_eq!((d.n, d.s), (None, None));
    }
}
