//! Typed views of the few members the client reads from, or rewrites in,
//! messages it does not otherwise decode (the rest kept as it came).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_types::{JsonObject, Loose, decode_object_params};

/// Reads params or a result into `T` (the default when absent, or when
/// they do not read: the types here read every object).
pub(crate) fn read<T: DeserializeOwned + Default>(object: Option<&JsonObject>) -> T {
    object
        .and_then(|o| decode_object_params(Some(o)).ok())
        .unwrap_or_default()
}

/// Reads an owned object into `T`, moving its members.
pub(crate) fn take<T: DeserializeOwned + Default>(object: JsonObject) -> T {
    serde_json::from_value(Value::Object(object)).unwrap_or_default()
}

/// Writes `value` as an object (an empty one if it is not an object).
pub(crate) fn write<T: Serialize>(value: &T) -> JsonObject {
    crate::input::to_object(value)
}

/// The resource a request or notification names.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct UriOf {
    /// `uri`.
    pub uri: Loose<String>,
}

/// The cursor of a list request.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct CursorOf {
    /// `cursor`.
    pub cursor: Loose<String>,
}

/// The task a tasks request names.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct TaskIdOf {
    /// `taskId`.
    pub task_id: Loose<String>,
}
