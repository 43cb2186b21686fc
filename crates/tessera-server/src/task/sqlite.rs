//! [`SqliteTaskStore`]: tasks in an SQLite file, so that a single server's
//! tasks survive a restart (feature `sqlite`).
//!
//! SQLite is embedded (no service to run), transactional (a transition reads
//! and writes the row in one `BEGIN IMMEDIATE` transaction, so it is atomic even
//! across processes sharing the file) and durable once a statement returns
//! (write-ahead log, `synchronous=FULL`). Calls run on tokio's blocking pool.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use tessera_types::tasks::TaskStatus;

use super::store::{
    TaskChange, TaskCount, TaskPage, TaskRecord, TaskStore, TaskStoreError, Transition,
    decode_cursor, encode_cursor,
};

/// Tasks in an SQLite database file.
#[derive(Debug, Clone)]
pub struct SqliteTaskStore {
    conn: Arc<Mutex<Connection>>,
    /// The file opened and what identified it then (none in memory).
    file: Option<(PathBuf, FileId)>,
}

/// What tells one file from another at the same path: device and inode
/// (on other systems, nothing: only a deleted file is noticed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId(u64, u64);

impl FileId {
    fn of(meta: &std::fs::Metadata) -> FileId {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            FileId(meta.dev(), meta.ino())
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            FileId(0, 0)
        }
    }
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tessera_tasks (
    task_id TEXT PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL,
    method TEXT NOT NULL,
    status TEXT NOT NULL,
    status_message TEXT,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    ttl_ms INTEGER,
    expires_at_ms INTEGER,
    poll_interval_ms INTEGER,
    input_requests TEXT,
    result TEXT,
    error TEXT
);
CREATE INDEX IF NOT EXISTS tessera_tasks_by_owner
    ON tessera_tasks (owner, created_at_ms, task_id);
CREATE INDEX IF NOT EXISTS tessera_tasks_by_expiry
    ON tessera_tasks (expires_at_ms);
";

const COLUMNS: &str = "task_id, owner, method, status, status_message, created_at_ms, \
    updated_at_ms, ttl_ms, poll_interval_ms, input_requests, result, error";

fn backend(e: impl std::fmt::Display) -> TaskStoreError {
    TaskStoreError::Backend(e.to_string())
}

fn to_sql(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn from_sql(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn status_text(s: TaskStatus) -> &'static str {
    match s {
        TaskStatus::Working => "working",
        TaskStatus::InputRequired => "input_required",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
    }
}

fn json_text<T: serde::Serialize>(v: &Option<T>) -> Option<String> {
    v.as_ref().and_then(|v| serde_json::to_string(v).ok())
}

fn read_row(row: &Row<'_>) -> rusqlite::Result<TaskRecord> {
    fn json<T: serde::de::DeserializeOwned>(s: Option<String>) -> Option<T> {
        s.and_then(|s| serde_json::from_str(&s).ok())
    }
    let status: String = row.get(3)?;
    let status =
        serde_json::from_value(serde_json::Value::String(status)).unwrap_or(TaskStatus::Failed);
    Ok(TaskRecord {
        task_id: row.get(0)?,
        owner: row.get(1)?,
        method: row.get(2)?,
        status,
        status_message: row.get(4)?,
        created_at_ms: from_sql(row.get(5)?),
        updated_at_ms: from_sql(row.get(6)?),
        ttl_ms: row.get::<_, Option<i64>>(7)?.map(from_sql),
        poll_interval_ms: row.get::<_, Option<i64>>(8)?.map(from_sql),
        input_requests: json(row.get(9)?),
        result: json(row.get(10)?),
        error: json(row.get(11)?),
    })
}

impl SqliteTaskStore {
    /// Opens (creating if needed) the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, TaskStoreError> {
        let path = path.as_ref();
        let conn = Connection::open(path).map_err(backend)?;
        let mut store = Self::init(conn)?;
        let meta = std::fs::metadata(path).map_err(backend)?;
        store.file = Some((path.to_path_buf(), FileId::of(&meta)));
        Ok(store)
    }

    /// A private in-memory database (for tests).
    pub fn open_in_memory() -> Result<Self, TaskStoreError> {
        Self::init(Connection::open_in_memory().map_err(backend)?)
    }

    fn init(conn: Connection) -> Result<Self, TaskStoreError> {
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(backend)?;
        // In-memory databases answer "memory" to the WAL request; both are fine.
        conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .map_err(backend)?;
        conn.execute_batch("PRAGMA synchronous=FULL;")
            .map_err(backend)?;
        conn.execute_batch(SCHEMA).map_err(backend)?;
        Ok(SqliteTaskStore {
            conn: Arc::new(Mutex::new(conn)),
            file: None,
        })
    }

    /// Runs `f` with the connection on the blocking pool.
    async fn with<T, F>(&self, f: F) -> Result<T, TaskStoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, TaskStoreError> + Send + 'static,
    {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            let mut c = conn
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            f(&mut c)
        })
        .await
        .map_err(backend)?
    }
}

fn write_change(c: &Connection, task_id: &str, r: &TaskRecord) -> Result<(), TaskStoreError> {
    c.execute(
        "UPDATE tessera_tasks SET status = ?2, status_message = ?3, updated_at_ms = ?4, \
         input_requests = ?5, result = ?6, error = ?7 WHERE task_id = ?1",
        params![
            task_id,
            status_text(r.status),
            r.status_message,
            to_sql(r.updated_at_ms),
            json_text(&r.input_requests),
            json_text(&r.result),
            json_text(&r.error),
        ],
    )
    .map_err(backend)?;
    Ok(())
}

impl TaskStore for SqliteTaskStore {
    async fn create(&self, record: TaskRecord) -> Result<(), TaskStoreError> {
        self.with(move |c| {
            let expires = record
                .ttl_ms
                .map(|t| to_sql(record.created_at_ms.saturating_add(t)));
            let n = c
                .execute(
                    "INSERT OR IGNORE INTO tessera_tasks (task_id, owner, method, status, \
                     status_message, created_at_ms, updated_at_ms, ttl_ms, expires_at_ms, \
                     poll_interval_ms, input_requests, result, error) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                    params![
                        record.task_id,
                        record.owner,
                        record.method,
                        status_text(record.status),
                        record.status_message,
                        to_sql(record.created_at_ms),
                        to_sql(record.updated_at_ms),
                        record.ttl_ms.map(to_sql),
                        expires,
                        record.poll_interval_ms.map(to_sql),
                        json_text(&record.input_requests),
                        json_text(&record.result),
                        json_text(&record.error),
                    ],
                )
                .map_err(backend)?;
            if n == 0 {
                return Err(TaskStoreError::Duplicate(record.task_id));
            }
            Ok(())
        })
        .await
    }

    async fn get(
        &self,
        owner: &str,
        task_id: &str,
        now_ms: u64,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        let (owner, task_id) = (owner.to_owned(), task_id.to_owned());
        self.with(move |c| {
            let r = c
                .query_row(
                    &format!(
                        "SELECT {COLUMNS} FROM tessera_tasks WHERE task_id = ?1 AND owner = ?2"
                    ),
                    params![task_id, owner],
                    read_row,
                )
                .optional()
                .map_err(backend)?;
            Ok(r.filter(|r| !r.is_expired(now_ms)))
        })
        .await
    }

    async fn update(
        &self,
        task_id: &str,
        change: TaskChange,
        now_ms: u64,
    ) -> Result<Transition, TaskStoreError> {
        let task_id = task_id.to_owned();
        self.with(move |c| {
            let tx = c
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let current = tx
                .query_row(
                    &format!("SELECT {COLUMNS} FROM tessera_tasks WHERE task_id = ?1"),
                    params![task_id],
                    read_row,
                )
                .optional()
                .map_err(backend)?;
            let out = match current {
                None => Transition::NotFound,
                Some(r) if r.is_expired(now_ms) => Transition::NotFound,
                Some(r) if r.status.is_terminal() => Transition::Terminal(r),
                Some(mut r) => {
                    r.apply(&change, now_ms);
                    write_change(&tx, &task_id, &r)?;
                    Transition::Applied(r)
                }
            };
            tx.commit().map_err(backend)?;
            Ok(out)
        })
        .await
    }

    async fn list(
        &self,
        owner: &str,
        cursor: Option<&str>,
        limit: usize,
        now_ms: u64,
    ) -> Result<TaskPage, TaskStoreError> {
        let owner = owner.to_owned();
        let after = match cursor.map(decode_cursor).transpose() {
            Ok(a) => a,
            Err(e) => return Err(e),
        };
        let limit = limit.max(1);
        self.with(move |c| {
            let (t, id) = after.unwrap_or((0, String::new()));
            let inclusive = cursor_is_none(&id, t);
            let mut stmt = c
                .prepare(&format!(
                    "SELECT {COLUMNS} FROM tessera_tasks WHERE owner = ?1 \
                     AND (expires_at_ms IS NULL OR expires_at_ms > ?2) \
                     AND (created_at_ms > ?3 OR (created_at_ms = ?3 AND task_id {} ?4)) \
                     ORDER BY created_at_ms, task_id LIMIT ?5",
                    if inclusive { ">=" } else { ">" }
                ))
                .map_err(backend)?;
            let rows = stmt
                .query_map(
                    params![
                        owner,
                        to_sql(now_ms),
                        to_sql(t),
                        id,
                        to_sql(limit as u64 + 1)
                    ],
                    read_row,
                )
                .map_err(backend)?;
            let mut tasks = rows.collect::<Result<Vec<_>, _>>().map_err(backend)?;
            let next_cursor = if tasks.len() > limit {
                tasks.truncate(limit);
                tasks
                    .last()
                    .map(|r| encode_cursor(r.created_at_ms, &r.task_id))
            } else {
                None
            };
            Ok(TaskPage { tasks, next_cursor })
        })
        .await
    }

    async fn sweep(&self, now_ms: u64) -> Result<usize, TaskStoreError> {
        self.with(move |c| {
            c.execute(
                "DELETE FROM tessera_tasks WHERE expires_at_ms IS NOT NULL AND expires_at_ms <= ?1",
                params![to_sql(now_ms)],
            )
            .map_err(backend)
        })
        .await
    }

    async fn fail_unfinished(&self, message: &str, now_ms: u64) -> Result<usize, TaskStoreError> {
        let change = super::restart_failure(message);
        self.with(move |c| {
            c.execute(
                "UPDATE tessera_tasks SET status = 'failed', status_message = ?1, \
                 updated_at_ms = MAX(updated_at_ms, ?2), input_requests = NULL, result = NULL, \
                 error = ?3 WHERE status IN ('working', 'input_required')",
                params![
                    change.status_message,
                    to_sql(now_ms),
                    json_text(&change.error)
                ],
            )
            .map_err(backend)
        })
        .await
    }

    async fn count(&self, owner: &str, now_ms: u64) -> Result<TaskCount, TaskStoreError> {
        let owner = owner.to_owned();
        self.with(move |c| {
            let live = "(expires_at_ms IS NULL OR expires_at_ms > ?1)";
            let owned: i64 = c
                .query_row(
                    &format!("SELECT COUNT(*) FROM tessera_tasks WHERE owner = ?2 AND {live}"),
                    params![to_sql(now_ms), owner],
                    |r| r.get(0),
                )
                .map_err(backend)?;
            let total: i64 = c
                .query_row(
                    &format!("SELECT COUNT(*) FROM tessera_tasks WHERE {live}"),
                    params![to_sql(now_ms)],
                    |r| r.get(0),
                )
                .map_err(backend)?;
            Ok(TaskCount {
                owner: usize::try_from(owned).unwrap_or(0),
                total: usize::try_from(total).unwrap_or(0),
                ..TaskCount::default()
            })
        })
        .await
    }

    /// The file must still be the one opened (not deleted nor replaced:
    /// writes to a deleted file are lost at the restart they are meant to
    /// survive), and `PRAGMA quick_check` must find it sound.
    async fn check(&self) -> Result<(), TaskStoreError> {
        let file = self.file.clone();
        self.with(move |c| {
            if let Some((path, id)) = &file {
                match std::fs::metadata(path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        return Err(TaskStoreError::Backend(format!(
                            "the database file {} was deleted: tasks written from now on \
                             are lost at the next restart",
                            path.display()
                        )));
                    }
                    Err(e) => return Err(backend(format!("{}: {e}", path.display()))),
                    Ok(meta) if FileId::of(&meta) != *id => {
                        return Err(TaskStoreError::Backend(format!(
                            "the database file {} was replaced by another file",
                            path.display()
                        )));
                    }
                    Ok(_) => {}
                }
            }
            let verdict: String = c
                .query_row("PRAGMA quick_check", [], |r| r.get(0))
                .map_err(|e| backend(format!("the database is unreadable: {e}")))?;
            if verdict != "ok" {
                return Err(TaskStoreError::Backend(format!(
                    "the database is corrupted: {verdict}"
                )));
            }
            Ok(())
        })
        .await
    }
}

/// A list without a cursor starts at the first row (inclusive bound).
fn cursor_is_none(id: &str, t: u64) -> bool {
    id.is_empty() && t == 0
}
