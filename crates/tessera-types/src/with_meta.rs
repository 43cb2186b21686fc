//! [`WithMeta`]: a params or result object split into its `_meta` and the
//! other members, for code that rewrites `_meta` and passes the rest on
//! untouched (a proxy, telemetry). Splitting and joining move the members:
//! nothing is copied.

use serde_json::Value;

use crate::meta::META;
use crate::{JsonObject, Loose};

/// A params or result object: its `_meta`, and the other members as they
/// came.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WithMeta {
    /// `_meta` ([`Loose::Malformed`] when it is not an object).
    pub meta: Loose<JsonObject>,
    /// Every other member.
    pub rest: JsonObject,
}

impl WithMeta {
    /// Splits `object`, moving its members.
    pub fn split(mut object: JsonObject) -> WithMeta {
        let meta = match object.remove(META) {
            None => Loose::Absent,
            Some(Value::Object(m)) => Loose::Valid(m),
            Some(other) => Loose::Malformed(other),
        };
        WithMeta { meta, rest: object }
    }

    /// Splits `object`, or gives an empty one for `None`.
    pub fn split_option(object: Option<JsonObject>) -> WithMeta {
        object.map(WithMeta::split).unwrap_or_default()
    }

    /// Changes `_meta` through `f` (a missing `_meta`, or one that is not an
    /// object, starts empty).
    pub fn edit_meta<R>(&mut self, f: impl FnOnce(&mut JsonObject) -> R) -> R {
        let mut m = std::mem::take(&mut self.meta)
            .into_valid()
            .unwrap_or_default();
        let r = f(&mut m);
        self.meta = Loose::Valid(m);
        r
    }

    /// Joins the members back into one object (`_meta` left out when
    /// absent).
    pub fn join(self) -> JsonObject {
        let mut out = self.rest;
        match self.meta {
            Loose::Absent => {}
            Loose::Valid(m) => {
                out.insert(META.to_owned(), Value::Object(m));
            }
            Loose::Malformed(v) => {
                out.insert(META.to_owned(), v);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn splits_and_joins_back_the_same() {
        for v in [
            json!({"name": "t", "_meta": {"progressToken": 1}, "arguments": {"_meta": 2}}),
            json!({"_meta": 3, "x": null}),
            json!({"x": [1, 2.5, "s"]}),
            json!({}),
        ] {
            let o = obj(v);
            assert_eq!(WithMeta::split(o.clone()).join(), o);
        }
        let w = WithMeta::split(obj(json!({"_meta": {"a": 1}, "b": 2})));
        assert_eq!(w.meta, Loose::Valid(obj(json!({"a": 1}))));
        assert_eq!(w.rest, obj(json!({"b": 2})));
    }

    #[test]
    fn an_edited_meta_is_an_object() {
        let mut w = WithMeta::split(obj(json!({"_meta": "odd", "b": 2})));
        w.edit_meta(|m| m.insert("k".into(), json!(true)));
        assert_eq!(w.join(), obj(json!({"_meta": {"k": true}, "b": 2})));
        let mut empty = WithMeta::split_option(None);
        empty.edit_meta(|_| ());
        assert_eq!(empty.join(), obj(json!({"_meta": {}})));
    }
}
