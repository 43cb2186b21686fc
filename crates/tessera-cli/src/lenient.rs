//! Reading what a peer (or a file) sent into local typed views, leniently:
//! a view's members are `Option`s, and a value of another shape reads as
//! missing rather than as an error, as the string-keyed lookups these
//! views replace did.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// `v` read as `T` when it is an object of that shape, else `None`.
pub fn object<'a, T: Deserialize<'a>>(v: &'a Value) -> Option<T> {
    if v.is_object() {
        T::deserialize(v).ok()
    } else {
        None
    }
}

/// `v` read as `T` when it is an object of that shape, else `T::default()`.
pub fn object_or_default<'a, T: Deserialize<'a> + Default>(v: &'a Value) -> T {
    object(v).unwrap_or_default()
}

/// For `#[serde(deserialize_with)]`: a member read as `T`, or `None` when
/// it has another shape (use with `#[serde(default)]`).
pub fn member<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    Ok(T::deserialize(v).ok())
}

/// For `#[serde(deserialize_with)]`: a member that is there, even as
/// `null` (`Some(Value::Null)`), told from one that is missing (`None`,
/// with `#[serde(default)]`).
pub fn present<'de, D>(d: D) -> Result<Option<Value>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Value::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Default, Deserialize, PartialEq)]
    struct View {
        #[serde(default)]
        name: Option<String>,
        #[serde(default, deserialize_with = "member")]
        count: Option<u64>,
    }

    #[test]
    fn other_shapes_read_as_missing() {
        let v = json!({"name": "a", "count": "x"});
        assert_eq!(
            object::<View>(&v),
            Some(View {
                name: Some("a".into()),
                count: None
            })
        );
        // An array is not read positionally.
        assert_eq!(object::<View>(&json!(["a", 1])), None);
        assert_eq!(object_or_default::<View>(&json!(3)), View::default());
    }
}
