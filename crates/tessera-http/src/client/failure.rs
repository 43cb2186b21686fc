//! Errors the HTTP client makes up itself when the server gives no JSON-RPC
//! answer (the connection failed, an HTTP error status, a stream that ended):
//! the request is answered locally with `-32603` and a marker in `data`, so a
//! caller can tell them from errors the server sent.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_types::{ErrorObject, Loose, decode_object_params};

/// The `data` member that marks a locally made transport error.
pub const TRANSPORT_FAILURE_KEY: &str = tessera_runtime::TRANSPORT_FAILURE_KEY;

/// The member of the marker saying the session was lost.
#[cfg(test)]
const SESSION_LOST_KEY: &str = tessera_runtime::SESSION_LOST_KEY;

/// The `data` of a marked error: the marker under [`TRANSPORT_FAILURE_KEY`].
#[derive(Debug, Serialize)]
struct Marked {
    #[serde(rename = "io.tessera/transportFailure")]
    marker: Marker,
}

/// The marker as written: the status (`null` without one) and, when the
/// session was lost, `sessionLost`.
#[derive(Debug, Serialize)]
struct Marker {
    status: Option<u16>,
    #[serde(rename = "sessionLost", skip_serializing_if = "std::ops::Not::not")]
    session_lost: bool,
}

/// The `data` of an error, as far as the marker.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct MarkedData {
    #[serde(rename = "io.tessera/transportFailure")]
    marker: Loose<MarkerRead>,
}

/// The marker as read (members of other types are ignored).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct MarkerRead {
    status: Loose<u16>,
    #[serde(rename = "sessionLost")]
    session_lost: Loose<bool>,
    /// Other members (ignored; they make only objects read as a marker).
    #[serde(flatten)]
    _others: tessera_types::JsonObject,
}

/// `marker` as an error's `data`.
fn marked(marker: Marker) -> Value {
    // A number, a boolean and `null`: always serialised.
    serde_json::to_value(Marked { marker }).unwrap_or_default()
}

/// What went wrong on the HTTP level, read back from a marked error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransportFailure {
    /// The HTTP status the server answered with, when there was an answer.
    pub status: Option<u16>,
    /// Whether the server forgot the session (`404` to a request that
    /// carried one): the request was not served, the connection ended, and
    /// it is safe to send the request again once a new session exists.
    pub session_lost: bool,
}

impl TransportFailure {
    /// Whether the server asked for (other) credentials: HTTP 401 or 403.
    pub fn is_auth(&self) -> bool {
        matches!(self.status, Some(401 | 403))
    }

    /// Reads the marker of an error answered by the HTTP client itself;
    /// `None` for an error the server sent.
    pub fn of(error: &ErrorObject) -> Option<TransportFailure> {
        let Some(Value::Object(data)) = &error.data else {
            return None;
        };
        let marked: MarkedData = decode_object_params(Some(data)).ok()?;
        let marker = match marked.marker {
            Loose::Absent => return None,
            Loose::Valid(m) => m,
            Loose::Malformed(_) => MarkerRead::default(),
        };
        Some(TransportFailure {
            status: marker.status.into_valid(),
            session_lost: marker.session_lost.valid() == Some(&true),
        })
    }
}

/// The error answering a request the server did not answer. The status is
/// the first `HTTP NNN` the message names (the client's own messages put it
/// there), if any.
pub(crate) fn local_error(message: String) -> ErrorObject {
    let status = leading_status(&message);
    let mut e = ErrorObject::internal(message);
    e.data = Some(marked(Marker {
        status,
        session_lost: false,
    }));
    e
}

/// The error answering a request the server refused because it forgot the
/// session (`404`): marked like [`local_error`], with `sessionLost: true`.
pub(crate) fn session_lost_error(message: String) -> ErrorObject {
    let mut e = ErrorObject::internal(message);
    e.data = Some(marked(Marker {
        status: Some(404),
        session_lost: true,
    }));
    e
}

fn leading_status(message: &str) -> Option<u16> {
    let at = message.find("HTTP ")?;
    let digits: String = message[at + 5..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    (digits.len() == 3).then(|| digits.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_and_reads_back() {
        let e = local_error("HTTP 401 Unauthorized from the server: no".into());
        assert_eq!(e.code, ErrorObject::internal("").code);
        let f = TransportFailure::of(&e).unwrap();
        assert_eq!(f.status, Some(401));
        assert!(f.is_auth());
        let e = local_error("HTTP request failed: connection refused".into());
        assert_eq!(
            TransportFailure::of(&e),
            Some(TransportFailure {
                status: None,
                session_lost: false
            })
        );
        let lost = TransportFailure::of(&session_lost_error("gone".into())).unwrap();
        assert_eq!((lost.status, lost.session_lost), (Some(404), true));
        let e = local_error("GET /sse answered HTTP 404 Not Found without an event stream".into());
        assert_eq!(TransportFailure::of(&e).unwrap().status, Some(404));
        assert_eq!(TransportFailure::of(&ErrorObject::internal("boom")), None);
    }

    #[test]
    fn the_marker_is_written_under_its_keys() {
        let e = session_lost_error("gone".into());
        let mut marker = serde_json::Map::new();
        marker.insert("status".to_owned(), Value::from(404));
        marker.insert(SESSION_LOST_KEY.to_owned(), Value::Bool(true));
        let mut data = serde_json::Map::new();
        data.insert(TRANSPORT_FAILURE_KEY.to_owned(), Value::Object(marker));
        assert_eq!(e.data, Some(Value::Object(data)));
        let e = local_error("no status".into());
        assert_eq!(
            e.data.unwrap().to_string(),
            format!(r#"{{"{TRANSPORT_FAILURE_KEY}":{{"status":null}}}}"#)
        );
    }
}
