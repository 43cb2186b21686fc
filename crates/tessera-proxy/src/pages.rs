//! Pages of the aggregator's combined lists.
//!
//! The combined list of `tools/list` (and prompts, resources, templates) is
//! the upstreams' lists one after the other, in configuration order. A page
//! holds at most the aggregator's page size; its cursor says where the next
//! page starts: which upstream, which of that upstream's own pages (its
//! cursor), and how many items of that page were already given. The cursor is
//! opaque to clients (base64url of a small JSON document). It carries nothing
//! a client could not ask for anyway, so it is not sealed: an altered cursor
//! at worst points at another upstream or page, and one that does not decode
//! is refused with `-32602`.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use tessera_types::ErrorObject;

use crate::shapes::{self, Loose};

/// Items per page of a combined list unless set otherwise.
pub(crate) const DEFAULT_PAGE_SIZE: usize = 100;

/// Where a page of a combined list starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Position {
    /// The list method (`tools/list`, …): a cursor of one list is refused by
    /// another.
    #[serde(rename = "m")]
    pub method: String,
    /// The upstream's name.
    #[serde(rename = "u")]
    pub upstream: String,
    /// The upstream's own cursor (its first page when `None`).
    #[serde(rename = "c", default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Items of that upstream page already given.
    #[serde(rename = "s", default)]
    pub skip: usize,
}

impl Position {
    /// The cursor string of this position.
    pub fn seal(&self) -> String {
        // A struct of strings and an integer always serialises.
        let bytes = serde_json::to_vec(self).unwrap_or_default();
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The position a cursor of `method` names.
    pub fn open(method: &str, cursor: &str) -> Result<Position, ErrorObject> {
        let bad =
            || ErrorObject::invalid_params(format!("Invalid params: invalid cursor for {method}"));
        if cursor.len() > 16 * 1024 {
            return Err(bad());
        }
        let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| bad())?;
        let p: Position = serde_json::from_slice(&bytes).map_err(|_| bad())?;
        if p.method != method {
            return Err(bad());
        }
        Ok(p)
    }
}

/// The cursor member of a list request's params.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CursorParams {
    cursor: Loose<String>,
}

/// The cursor a request carries: `None` for the first page, an error when it
/// is not a string.
pub(crate) fn requested_cursor(
    params: Option<&tessera_types::JsonObject>,
) -> Result<Option<String>, ErrorObject> {
    let read: CursorParams = params.map(shapes::read).unwrap_or_default();
    match read.cursor {
        Loose::Absent | Loose::Malformed(serde_json::Value::Null) => Ok(None),
        Loose::Valid(s) => Ok(Some(s)),
        Loose::Malformed(_) => Err(ErrorObject::invalid_params(
            "Invalid params: cursor must be a string",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_types::methods;

    #[test]
    fn positions_round_trip_and_bad_cursors_are_refused() {
        let p = Position {
            method: methods::TOOLS_LIST.into(),
            upstream: "local".into(),
            cursor: Some("opaque==".into()),
            skip: 3,
        };
        let c = p.seal();
        assert_eq!(Position::open(methods::TOOLS_LIST, &c).expect("opens"), p);
        for bad in [
            Position::open(methods::PROMPTS_LIST, &c),
            Position::open(methods::TOOLS_LIST, "not base64!"),
            Position::open(methods::TOOLS_LIST, &URL_SAFE_NO_PAD.encode(b"[1,2]")),
            Position::open(methods::TOOLS_LIST, &"A".repeat(20_000)),
        ] {
            assert_eq!(bad.expect_err("refused").code, -32602);
        }
        let mut params = tessera_types::JsonObject::new();
        assert_eq!(requested_cursor(Some(&params)).expect("none"), None);
        params.insert("cursor".into(), serde_json::json!(7));
        assert!(requested_cursor(Some(&params)).is_err());
    }
}
