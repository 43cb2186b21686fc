//! Number formatting: whole floats are written as JSON integers.

use serde::Serializer;

/// Largest integer an `f64` holds exactly (2^53 - 1).
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// Serialises a whole-valued `f64` as a JSON integer (`50`, not `50.0`), so
/// that numbers written as integers on the wire round-trip unchanged.
pub(crate) fn ser_f64<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() && v.fract() == 0.0 && v.abs() <= MAX_SAFE {
        s.serialize_i64(*v as i64)
    } else {
        s.serialize_f64(*v)
    }
}

/// [`ser_f64`] for optional numbers.
pub(crate) fn ser_opt_f64<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => ser_f64(x, s),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize)]
    struct N {
        #[serde(serialize_with = "super::ser_f64")]
        n: f64,
    }

    #[test]
    fn whole_floats_serialise_as_integers() {
        assert_eq!(
            serde_json::to_string(&N { n: 50.0 }).unwrap(),
            r#"{"n":50}"#
        );
        assert_eq!(
            serde_json::to_string(&N { n: 0.5 }).unwrap(),
            r#"{"n":0.5}"#
        );
        assert_eq!(
            serde_json::to_string(&N { n: -3.0 }).unwrap(),
            r#"{"n":-3}"#
        );
    }
}
