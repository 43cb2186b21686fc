//! The [`TaskStore`] trait: where tasks live between the request that
//! created them and the last `tasks/get` before they expire.

use std::future::Future;

use futures::future::BoxFuture;
use tessera_types::tasks::TaskStatus;
use tessera_types::{ErrorObject, JsonObject};

/// One stored task: its identity, owner, state and (when terminal) payload.
///
/// Times are Unix milliseconds; the store never reads a clock of its own,
/// every operation is given `now_ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    /// The task's identifier (unguessable; see [`new_task_id`](super::new_task_id)).
    pub task_id: String,
    /// Who may see the task (a principal, a session or a client). Every
    /// read is scoped to it.
    pub owner: String,
    /// The method the task runs (`tools/call`).
    pub method: String,
    /// The current status.
    pub status: TaskStatus,
    /// A human-readable description of the state.
    pub status_message: Option<String>,
    /// Creation time.
    pub created_at_ms: u64,
    /// Time of the last change.
    pub updated_at_ms: u64,
    /// Lifetime from creation; `None` means unlimited.
    pub ttl_ms: Option<u64>,
    /// Suggested polling interval.
    pub poll_interval_ms: Option<u64>,
    /// Outstanding requests to the client (status `input_required`), keyed as
    /// in `inputRequests`.
    pub input_requests: Option<JsonObject>,
    /// The final result (status `completed`).
    pub result: Option<JsonObject>,
    /// The JSON-RPC error the request ended with (status `failed`).
    pub error: Option<ErrorObject>,
}

impl TaskRecord {
    /// A new `working` task created at `now_ms`.
    pub fn working(
        task_id: impl Into<String>,
        owner: impl Into<String>,
        method: impl Into<String>,
        now_ms: u64,
        ttl_ms: Option<u64>,
        poll_interval_ms: Option<u64>,
    ) -> Self {
        TaskRecord {
            task_id: task_id.into(),
            owner: owner.into(),
            method: method.into(),
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
            ttl_ms,
            poll_interval_ms,
            input_requests: None,
            result: None,
            error: None,
        }
    }

    /// Whether the task's lifetime is over at `now_ms`.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.ttl_ms
            .is_some_and(|ttl| now_ms >= self.created_at_ms.saturating_add(ttl))
    }

    /// Applies a change (the store checks that the task is not terminal first).
    pub fn apply(&mut self, change: &TaskChange, now_ms: u64) {
        self.status = change.status;
        self.status_message = change.status_message.clone();
        self.input_requests = change.input_requests.clone();
        self.result = change.result.clone();
        self.error = change.error.clone();
        self.updated_at_ms = now_ms.max(self.updated_at_ms);
    }
}

/// A status transition: the whole new state of the mutable members.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskChange {
    /// The new status.
    pub status: TaskStatus,
    /// The new status message.
    pub status_message: Option<String>,
    /// Outstanding requests (only with `input_required`).
    pub input_requests: Option<JsonObject>,
    /// The result (only with `completed`).
    pub result: Option<JsonObject>,
    /// The error (only with `failed`).
    pub error: Option<ErrorObject>,
}

impl TaskChange {
    /// Back to (or still) `working`.
    pub fn working(message: Option<String>) -> Self {
        TaskChange {
            status: TaskStatus::Working,
            status_message: message,
            input_requests: None,
            result: None,
            error: None,
        }
    }

    /// Waiting for the client to answer `requests`.
    pub fn input_required(requests: JsonObject) -> Self {
        TaskChange {
            status: TaskStatus::InputRequired,
            status_message: Some("waiting for input from the client".into()),
            input_requests: Some(requests),
            result: None,
            error: None,
        }
    }

    /// Finished with `result`.
    pub fn completed(result: JsonObject) -> Self {
        TaskChange {
            status: TaskStatus::Completed,
            status_message: None,
            input_requests: None,
            result: Some(result),
            error: None,
        }
    }

    /// Finished with a JSON-RPC error.
    pub fn failed(error: ErrorObject, message: Option<String>) -> Self {
        TaskChange {
            status: TaskStatus::Failed,
            status_message: message.or_else(|| Some(error.message.clone())),
            input_requests: None,
            result: None,
            error: Some(error),
        }
    }

    /// Cancelled by the client.
    pub fn cancelled() -> Self {
        TaskChange {
            status: TaskStatus::Cancelled,
            status_message: Some("cancelled by the client".into()),
            input_requests: None,
            result: None,
            error: None,
        }
    }
}

/// What [`TaskStore::update`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Transition {
    /// The change was applied; the task as it is now.
    Applied(TaskRecord),
    /// The task was already terminal and is unchanged; the task as it is.
    Terminal(TaskRecord),
    /// No such task (never created, expired or swept).
    NotFound,
}

/// One page of [`TaskStore::list`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TaskPage {
    /// The tasks, oldest first.
    pub tasks: Vec<TaskRecord>,
    /// The cursor of the next page, if there is one.
    pub next_cursor: Option<String>,
}

/// Why a store operation failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// A task with this id already exists.
    #[error("a task with id {0} already exists")]
    Duplicate(String),
    /// The cursor was not issued by this store.
    #[error("invalid cursor")]
    InvalidCursor,
    /// The backend failed (I/O, database, network).
    #[error("task store backend error: {0}")]
    Backend(String),
}

/// Durable storage of tasks.
///
/// The contract (checked by `task::contract`, feature `testing`, which every
/// implementation must pass):
///
/// - [`create`](TaskStore::create) returns only once the task is stored: a
///   [`get`](TaskStore::get) that starts after it returns finds the task;
/// - [`update`](TaskStore::update) is atomic: a task that is terminal
///   (`completed`, `failed`, `cancelled`) never changes again, so of two racing
///   transitions out of `working` exactly one wins;
/// - a task is kept until `created + ttl`; after that every read treats it as
///   absent, and [`sweep`](TaskStore::sweep) deletes it;
/// - reads are scoped to the owner: another owner's task is `None`, exactly as
///   a task that does not exist;
/// - [`list`](TaskStore::list) pages one owner's live tasks, oldest first,
///   with opaque cursors.
///
/// Methods are asynchronous, so networked stores (Redis) fit; implement
/// them with `async fn` (the server boxes the futures where it holds the
/// store behind a trait object). A store that wraps another and logs each
/// task created:
///
/// ```
/// use tessera_server::task::{
///     MemoryTaskStore, TaskChange, TaskCount, TaskPage, TaskRecord, TaskStore, TaskStoreError,
///     Transition,
/// };
///
/// struct Logged(MemoryTaskStore);
///
/// impl TaskStore for Logged {
///     async fn create(&self, record: TaskRecord) -> Result<(), TaskStoreError> {
///         println!("task {} created", record.task_id);
///         self.0.create(record).await
///     }
///     async fn get(
///         &self,
///         owner: &str,
///         task_id: &str,
///         now_ms: u64,
///     ) -> Result<Option<TaskRecord>, TaskStoreError> {
///         self.0.get(owner, task_id, now_ms).await
///     }
///     async fn update(
///         &self,
///         task_id: &str,
///         change: TaskChange,
///         now_ms: u64,
///     ) -> Result<Transition, TaskStoreError> {
///         self.0.update(task_id, change, now_ms).await
///     }
///     async fn list(
///         &self,
///         owner: &str,
///         cursor: Option<&str>,
///         limit: usize,
///         now_ms: u64,
///     ) -> Result<TaskPage, TaskStoreError> {
///         self.0.list(owner, cursor, limit, now_ms).await
///     }
///     async fn sweep(&self, now_ms: u64) -> Result<usize, TaskStoreError> {
///         self.0.sweep(now_ms).await
///     }
///     async fn fail_unfinished(&self, message: &str, now_ms: u64) -> Result<usize, TaskStoreError> {
///         self.0.fail_unfinished(message, now_ms).await
///     }
///     async fn count(&self, owner: &str, now_ms: u64) -> Result<TaskCount, TaskStoreError> {
///         self.0.count(owner, now_ms).await
///     }
/// }
///
/// let server = tessera_server::Server::builder().task_store(Logged(MemoryTaskStore::new()));
/// # let _ = server;
/// ```
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task. Fails with [`TaskStoreError::Duplicate`] when the id
    /// is taken.
    fn create(&self, record: TaskRecord)
    -> impl Future<Output = Result<(), TaskStoreError>> + Send;

    /// The task `task_id` of `owner`, unless it does not exist, belongs to
    /// someone else or has expired at `now_ms`.
    fn get(
        &self,
        owner: &str,
        task_id: &str,
        now_ms: u64,
    ) -> impl Future<Output = Result<Option<TaskRecord>, TaskStoreError>> + Send;

    /// Applies `change` to task `task_id` unless it is terminal or gone.
    fn update(
        &self,
        task_id: &str,
        change: TaskChange,
        now_ms: u64,
    ) -> impl Future<Output = Result<Transition, TaskStoreError>> + Send;

    /// One page of `owner`'s live tasks (at most `limit`), after `cursor`.
    fn list(
        &self,
        owner: &str,
        cursor: Option<&str>,
        limit: usize,
        now_ms: u64,
    ) -> impl Future<Output = Result<TaskPage, TaskStoreError>> + Send;

    /// Deletes every task expired at `now_ms`; returns how many.
    fn sweep(&self, now_ms: u64) -> impl Future<Output = Result<usize, TaskStoreError>> + Send;

    /// Marks every task that is not terminal as `failed` with `message` (an
    /// internal error): called when a server starts, because the tasks a
    /// previous process was running died with it. Returns how many. A store
    /// shared by several live servers must scope this to the restarted one.
    fn fail_unfinished(
        &self,
        message: &str,
        now_ms: u64,
    ) -> impl Future<Output = Result<usize, TaskStoreError>> + Send;

    /// How many tasks not expired at `now_ms` the store holds: of `owner`,
    /// and in all (the server's caps on stored tasks), and, for a store
    /// shared by several instances, how many are unfinished (the caps on
    /// running tasks, then held across instances). A store may count tasks
    /// that expired but were not swept yet.
    fn count(
        &self,
        owner: &str,
        now_ms: u64,
    ) -> impl Future<Output = Result<TaskCount, TaskStoreError>> + Send;

    /// Whether the store still works: a file store checks that its file is
    /// still the one it opened and is not corrupted. The server runs it at
    /// every sweep and logs a failure; the default does nothing.
    fn check(&self) -> impl Future<Output = Result<(), TaskStoreError>> + Send {
        std::future::ready(Ok(()))
    }
}

impl<T: TaskStore + ?Sized> TaskStore for std::sync::Arc<T> {
    fn create(
        &self,
        record: TaskRecord,
    ) -> impl Future<Output = Result<(), TaskStoreError>> + Send {
        (**self).create(record)
    }
    fn get(
        &self,
        owner: &str,
        task_id: &str,
        now_ms: u64,
    ) -> impl Future<Output = Result<Option<TaskRecord>, TaskStoreError>> + Send {
        (**self).get(owner, task_id, now_ms)
    }
    fn update(
        &self,
        task_id: &str,
        change: TaskChange,
        now_ms: u64,
    ) -> impl Future<Output = Result<Transition, TaskStoreError>> + Send {
        (**self).update(task_id, change, now_ms)
    }
    fn list(
        &self,
        owner: &str,
        cursor: Option<&str>,
        limit: usize,
        now_ms: u64,
    ) -> impl Future<Output = Result<TaskPage, TaskStoreError>> + Send {
        (**self).list(owner, cursor, limit, now_ms)
    }
    fn sweep(&self, now_ms: u64) -> impl Future<Output = Result<usize, TaskStoreError>> + Send {
        (**self).sweep(now_ms)
    }
    fn fail_unfinished(
        &self,
        message: &str,
        now_ms: u64,
    ) -> impl Future<Output = Result<usize, TaskStoreError>> + Send {
        (**self).fail_unfinished(message, now_ms)
    }
    fn count(
        &self,
        owner: &str,
        now_ms: u64,
    ) -> impl Future<Output = Result<TaskCount, TaskStoreError>> + Send {
        (**self).count(owner, now_ms)
    }
    fn check(&self) -> impl Future<Output = Result<(), TaskStoreError>> + Send {
        (**self).check()
    }
}

/// The object-safe form of [`TaskStore`] that the library holds
/// (`Arc<dyn DynTaskStore>`): every `TaskStore` is one. Not for implementing or naming
/// in user code; implement [`TaskStore`].
#[doc(hidden)]
pub trait DynTaskStore: Send + Sync + 'static {
    /// [`TaskStore::create`], boxed.
    fn create_boxed<'a>(&'a self, record: TaskRecord) -> BoxFuture<'a, Result<(), TaskStoreError>>;
    /// [`TaskStore::get`], boxed.
    fn get_boxed<'a>(
        &'a self,
        owner: &'a str,
        task_id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;
    /// [`TaskStore::update`], boxed.
    fn update_boxed<'a>(
        &'a self,
        task_id: &'a str,
        change: TaskChange,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, TaskStoreError>>;
    /// [`TaskStore::list`], boxed.
    fn list_boxed<'a>(
        &'a self,
        owner: &'a str,
        cursor: Option<&'a str>,
        limit: usize,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<TaskPage, TaskStoreError>>;
    /// [`TaskStore::sweep`], boxed.
    fn sweep_boxed<'a>(&'a self, now_ms: u64) -> BoxFuture<'a, Result<usize, TaskStoreError>>;
    /// [`TaskStore::fail_unfinished`], boxed.
    fn fail_unfinished_boxed<'a>(
        &'a self,
        message: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<usize, TaskStoreError>>;
    /// [`TaskStore::count`], boxed.
    fn count_boxed<'a>(
        &'a self,
        owner: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<TaskCount, TaskStoreError>>;
    /// [`TaskStore::check`], boxed.
    fn check_boxed<'a>(&'a self) -> BoxFuture<'a, Result<(), TaskStoreError>>;
}

impl<T: TaskStore> DynTaskStore for T {
    fn create_boxed<'a>(&'a self, record: TaskRecord) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(self.create(record))
    }
    fn get_boxed<'a>(
        &'a self,
        owner: &'a str,
        task_id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(self.get(owner, task_id, now_ms))
    }
    fn update_boxed<'a>(
        &'a self,
        task_id: &'a str,
        change: TaskChange,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, TaskStoreError>> {
        Box::pin(self.update(task_id, change, now_ms))
    }
    fn list_boxed<'a>(
        &'a self,
        owner: &'a str,
        cursor: Option<&'a str>,
        limit: usize,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<TaskPage, TaskStoreError>> {
        Box::pin(self.list(owner, cursor, limit, now_ms))
    }
    fn sweep_boxed<'a>(&'a self, now_ms: u64) -> BoxFuture<'a, Result<usize, TaskStoreError>> {
        Box::pin(self.sweep(now_ms))
    }
    fn fail_unfinished_boxed<'a>(
        &'a self,
        message: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<usize, TaskStoreError>> {
        Box::pin(self.fail_unfinished(message, now_ms))
    }
    fn count_boxed<'a>(
        &'a self,
        owner: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<TaskCount, TaskStoreError>> {
        Box::pin(self.count(owner, now_ms))
    }
    fn check_boxed<'a>(&'a self) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(self.check())
    }
}

/// A held [`DynTaskStore`] is used through [`TaskStore`] like any other (one box
/// per call).
impl TaskStore for dyn DynTaskStore {
    async fn create(&self, record: TaskRecord) -> Result<(), TaskStoreError> {
        self.create_boxed(record).await
    }
    async fn get(
        &self,
        owner: &str,
        task_id: &str,
        now_ms: u64,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        self.get_boxed(owner, task_id, now_ms).await
    }
    async fn update(
        &self,
        task_id: &str,
        change: TaskChange,
        now_ms: u64,
    ) -> Result<Transition, TaskStoreError> {
        self.update_boxed(task_id, change, now_ms).await
    }
    async fn list(
        &self,
        owner: &str,
        cursor: Option<&str>,
        limit: usize,
        now_ms: u64,
    ) -> Result<TaskPage, TaskStoreError> {
        self.list_boxed(owner, cursor, limit, now_ms).await
    }
    async fn sweep(&self, now_ms: u64) -> Result<usize, TaskStoreError> {
        self.sweep_boxed(now_ms).await
    }
    async fn fail_unfinished(&self, message: &str, now_ms: u64) -> Result<usize, TaskStoreError> {
        self.fail_unfinished_boxed(message, now_ms).await
    }
    async fn count(&self, owner: &str, now_ms: u64) -> Result<TaskCount, TaskStoreError> {
        self.count_boxed(owner, now_ms).await
    }
    async fn check(&self) -> Result<(), TaskStoreError> {
        self.check_boxed().await
    }
}

/// How many tasks a store holds ([`TaskStore::count`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TaskCount {
    /// Those of the owner asked about.
    pub owner: usize,
    /// All of them.
    pub total: usize,
    /// Those of the owner that are not finished, on every instance sharing
    /// the store; `None` when the store does not count them (a store of
    /// one process: the server counts the tasks it runs itself).
    pub running_of_owner: Option<usize>,
    /// All unfinished tasks, on every instance (`None` as above).
    pub running: Option<usize>,
}

/// Encodes a list cursor: the position after (`created_at_ms`, `task_id`).
pub(crate) fn encode_cursor(created_at_ms: u64, task_id: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{created_at_ms}:{task_id}"))
}

/// Decodes a cursor made by [`encode_cursor`].
pub(crate) fn decode_cursor(cursor: &str) -> Result<(u64, String), TaskStoreError> {
    use base64::Engine as _;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| TaskStoreError::InvalidCursor)?;
    let text = String::from_utf8(raw).map_err(|_| TaskStoreError::InvalidCursor)?;
    let (t, id) = text.split_once(':').ok_or(TaskStoreError::InvalidCursor)?;
    let t = t.parse().map_err(|_| TaskStoreError::InvalidCursor)?;
    Ok((t, id.to_owned()))
}
