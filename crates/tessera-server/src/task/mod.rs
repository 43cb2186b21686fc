//! Tasks: durable handles for long-running tool calls, in both designs.
//!
//! - **2025-11-25** (experimental tasks): the client asks for a task by adding
//!   `task` to the `tools/call` params; the server answers at once with
//!   `{task}` and the client polls `tasks/get`, fetches the payload with
//!   `tasks/result`, lists with `tasks/list` and cancels with `tasks/cancel`.
//! - **2026-07-28**, extension `io.modelcontextprotocol/tasks`: a client that
//!   declares the extension on a request lets the server decide to answer
//!   with `resultType: "task"`; the client polls `tasks/get` (the result is
//!   inlined), answers input with `tasks/update` and cancels with
//!   `tasks/cancel`. The extension is a [`ServerExtension`](crate::ServerExtension),
//!   [`TasksExtension`], which every server registers when it is built.
//!
//! Tasks live in a [`TaskStore`]: [`MemoryTaskStore`] by default,
//! [`SqliteTaskStore`] (feature `sqlite`) to survive a restart.

pub(crate) mod call;
#[cfg(any(test, feature = "testing"))]
pub mod contract;
mod extension;
pub(crate) mod hub;
pub(crate) mod legacy;
pub(crate) mod live;
mod memory;
pub(crate) mod relay;
#[cfg(feature = "sqlite")]
mod sqlite;
mod stats;
mod store;
pub(crate) mod wire;

pub use call::TaskStart;
pub use extension::TasksExtension;
pub use hub::{
    DEFAULT_MAX_RUNNING_TASKS, DEFAULT_MAX_RUNNING_TASKS_PER_OWNER, DEFAULT_MAX_STORED_TASKS,
    DEFAULT_MAX_STORED_TASKS_PER_OWNER, DEFAULT_MAX_TASK_RESULT_BYTES, RESTART_MESSAGE,
    TaskSettings,
};
pub use legacy::RELATED_TASK;
pub use memory::MemoryTaskStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteTaskStore;
pub use stats::{TaskStats, limit, status_name};
pub use store::{
    DynTaskStore, TaskChange, TaskCount, TaskPage, TaskRecord, TaskStore, TaskStoreError,
    Transition,
};

/// Whether a tool can run as a task (re-exported for the `#[tool]` macro).
pub use tessera_types::tool::TaskSupport;

use rand::RngCore;
use tessera_types::ErrorObject;

/// A fresh task id: 127 random bits, URL-safe (unguessable, so an id alone
/// reveals nothing about other tasks), starting with a letter: an id that
/// began with `-` would be taken for an option on a command line.
pub fn new_task_id() -> String {
    use base64::Engine as _;
    let mut b = [0u8; 16];
    rand::rng().fill_bytes(&mut b);
    // The first character encodes the top six bits: below 32 it is A-Z or a-f.
    b[0] &= 0x7f;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

/// The change recorded for a task that was running when its server stopped.
pub(crate) fn restart_failure(message: &str) -> TaskChange {
    TaskChange::failed(
        ErrorObject::internal(format!("Internal error: {message}")),
        Some(message.to_owned()),
    )
}

/// Formats Unix milliseconds as an RFC 3339 / ISO 8601 UTC time.
pub fn iso_time(ms: u64) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn task_ids_start_with_a_letter_and_differ() {
        let ids: std::collections::HashSet<String> =
            (0..4096).map(|_| super::new_task_id()).collect();
        assert_eq!(ids.len(), 4096);
        for id in &ids {
            assert_eq!(id.len(), 22, "{id}");
            assert!(id.starts_with(|c: char| c.is_ascii_alphabetic()), "{id}");
        }
    }
}
