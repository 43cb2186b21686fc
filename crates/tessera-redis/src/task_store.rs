//! [`RedisTaskStore`]: tasks in Redis, shared by every instance of an
//! endpoint, surviving the restart of any of them.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use redis::{Script, Value};
use tessera_server::task::{
    TaskChange, TaskCount, TaskPage, TaskRecord, TaskStore, TaskStoreError, Transition,
};
use tessera_types::ErrorObject;
use tessera_types::tasks::TaskStatus;

use crate::connection::Redis;
use crate::error::Error;
use crate::task_scripts;

/// How long Redis keeps a task after its lifetime is over (the server's
/// sweep deletes it first; this only bounds what a stopped cluster leaves).
const GRACE: Duration = Duration::from_secs(60);

/// How many expired tasks one sweep script deletes before yielding.
const SWEEP_BATCH: usize = 500;

/// Tasks in Redis: a [`TaskStore`] that any instance of an endpoint can
/// read and update, with atomic transitions (each one a Lua script) and
/// [`fail_unfinished`](TaskStore::fail_unfinished) scoped to the instance
/// it is called on (the tasks it created that are not finished).
///
/// Every key has a Redis TTL: a task's lifetime plus a minute; a task
/// created without a lifetime (the server always gives one) is kept for
/// [`RedisTaskStore::unbounded_retention`] (default 7 days).
#[derive(Clone)]
pub struct RedisTaskStore {
    redis: Redis,
    scripts: Arc<Scripts>,
    unbounded: Duration,
}

struct Scripts {
    create: Script,
    update: Script,
    list: Script,
    sweep: Script,
    fail_unfinished: Script,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("redis", &self.redis)
            .finish_non_exhaustive()
    }
}

impl Redis {
    /// The task store of this instance.
    pub fn task_store(&self) -> RedisTaskStore {
        RedisTaskStore {
            redis: self.clone(),
            scripts: Arc::new(Scripts {
                create: task_scripts::create(),
                update: task_scripts::update(),
                list: task_scripts::list(),
                sweep: task_scripts::sweep(),
                fail_unfinished: task_scripts::fail_unfinished(),
            }),
            unbounded: Duration::from_secs(7 * 24 * 3600),
        }
    }
}

impl RedisTaskStore {
    /// How long Redis keeps a task created without a lifetime.
    pub fn unbounded_retention(mut self, keep: Duration) -> Self {
        self.unbounded = keep;
        self
    }

    fn task_key(&self, id: &str) -> String {
        self.redis.key(&format!("task:{id}"))
    }
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

fn parse_status(s: &str) -> Result<TaskStatus, Error> {
    Ok(match s {
        "working" => TaskStatus::Working,
        "input_required" => TaskStatus::InputRequired,
        "completed" => TaskStatus::Completed,
        "failed" => TaskStatus::Failed,
        "cancelled" => TaskStatus::Cancelled,
        other => return Err(Error::Corrupt(format!("unknown task status {other:?}"))),
    })
}

/// The owner-index member of a task: sorts by creation time, then id.
fn index_member(created_ms: u64, id: &str) -> String {
    format!("{created_ms:020}:{id}")
}

fn encode_cursor(created_ms: u64, id: &str) -> String {
    URL_SAFE_NO_PAD.encode(index_member(created_ms, id))
}

fn decode_cursor(cursor: &str) -> Result<String, TaskStoreError> {
    let raw = URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| TaskStoreError::InvalidCursor)?;
    let member = String::from_utf8(raw).map_err(|_| TaskStoreError::InvalidCursor)?;
    let (t, _) = member
        .split_once(':')
        .ok_or(TaskStoreError::InvalidCursor)?;
    if t.len() != 20 || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TaskStoreError::InvalidCursor);
    }
    Ok(member)
}

fn json_text<T: serde::Serialize>(v: &Option<T>) -> Option<String> {
    v.as_ref().and_then(|v| serde_json::to_string(v).ok())
}

/// `+value` or `-`: an optional field for the update script.
fn optional(v: Option<String>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("+{v}"))
}

fn opt_ms(v: Option<u64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// Reads a task from its hash fields.
fn decode(task_id: &str, f: &HashMap<String, String>) -> Result<TaskRecord, Error> {
    let text = |k: &str| {
        f.get(k)
            .cloned()
            .ok_or_else(|| Error::Corrupt(format!("task {task_id} has no field {k}")))
    };
    let ms = |k: &str| -> Result<Option<u64>, Error> {
        match f.get(k).map(String::as_str) {
            None | Some("") => Ok(None),
            Some(v) => v
                .parse()
                .map(Some)
                .map_err(|_| Error::Corrupt(format!("task {task_id}: {k} is not a number"))),
        }
    };
    fn json<T: serde::de::DeserializeOwned>(
        f: &HashMap<String, String>,
        k: &str,
        id: &str,
    ) -> Result<Option<T>, Error> {
        f.get(k)
            .map(|v| serde_json::from_str(v))
            .transpose()
            .map_err(|e| Error::Corrupt(format!("task {id}: {k}: {e}")))
    }
    Ok(TaskRecord {
        task_id: task_id.to_owned(),
        owner: text("o")?,
        method: text("m")?,
        status: parse_status(&text("s")?)?,
        status_message: f.get("sm").cloned(),
        created_at_ms: ms("c")?.unwrap_or(0),
        updated_at_ms: ms("u")?.unwrap_or(0),
        ttl_ms: ms("t")?,
        poll_interval_ms: ms("p")?,
        input_requests: json(f, "ir", task_id)?,
        result: json(f, "r", task_id)?,
        error: json::<ErrorObject>(f, "e", task_id)?,
    })
}

/// A flat `field, value, …` array as a map.
fn pairs(items: &[Value]) -> Result<HashMap<String, String>, Error> {
    let mut out = HashMap::with_capacity(items.len() / 2);
    for kv in items.chunks(2) {
        match kv {
            [k, v] => {
                out.insert(text_of(k)?, text_of(v)?);
            }
            _ => return Err(Error::Corrupt("odd field list".into())),
        }
    }
    Ok(out)
}

fn text_of(v: &Value) -> Result<String, Error> {
    match v {
        Value::BulkString(b) => String::from_utf8(b.clone())
            .map_err(|_| Error::Corrupt("a stored text is not UTF-8".into())),
        Value::SimpleString(s) => Ok(s.clone()),
        Value::Int(n) => Ok(n.to_string()),
        other => Err(Error::Corrupt(format!("unexpected reply {other:?}"))),
    }
}

fn array(v: Value) -> Result<Vec<Value>, Error> {
    match v {
        Value::Array(items) => Ok(items),
        Value::Nil => Ok(Vec::new()),
        other => Err(Error::Corrupt(format!("expected an array, got {other:?}"))),
    }
}

fn backend(e: Error) -> TaskStoreError {
    e.into()
}

impl TaskStore for RedisTaskStore {
    async fn create(&self, record: TaskRecord) -> Result<(), TaskStoreError> {
        let id = record.task_id.clone();
        let lifetime = record.ttl_ms.map_or(self.unbounded, Duration::from_millis);
        let px = u64::try_from(lifetime.saturating_add(GRACE).as_millis()).unwrap_or(u64::MAX);
        let member = index_member(record.created_at_ms, &id);
        let expires = record
            .ttl_ms
            .map(|t| record.created_at_ms.saturating_add(t).to_string())
            .unwrap_or_default();
        let mut fields: Vec<(&str, String)> = vec![
            ("o", record.owner.clone()),
            ("m", record.method.clone()),
            ("c", record.created_at_ms.to_string()),
            ("t", opt_ms(record.ttl_ms)),
            ("p", opt_ms(record.poll_interval_ms)),
            ("s", status_text(record.status).to_owned()),
            ("u", record.updated_at_ms.to_string()),
            ("i", self.redis.instance_id().to_owned()),
            ("x", member.clone()),
        ];
        for (k, v) in [
            ("sm", record.status_message.clone()),
            ("ir", json_text(&record.input_requests)),
            ("r", json_text(&record.result)),
            ("e", json_text(&record.error)),
        ] {
            if let Some(v) = v {
                fields.push((k, v));
            }
        }
        let keys = [
            self.task_key(&id),
            self.redis.key(&format!("owner:{}", record.owner)),
            self.redis.key("expiry"),
            self.redis
                .key(&format!("running:{}", self.redis.instance_id())),
            self.redis.key("unfinished"),
            self.redis.key(&format!("unfinished:{}", record.owner)),
        ];
        let unfinished = if record.status.is_terminal() {
            "0"
        } else {
            "1"
        };
        let script = &self.scripts.create;
        let created: i64 = self
            .redis
            .run(|mut c| async move {
                let mut inv = script.prepare_invoke();
                for k in &keys {
                    inv.key(k);
                }
                inv.arg(px)
                    .arg(&member)
                    .arg(&expires)
                    .arg(&id)
                    .arg(unfinished);
                for (k, v) in &fields {
                    inv.arg(*k).arg(v);
                }
                inv.invoke_async(&mut c).await
            })
            .await
            .map_err(backend)?;
        if created == 0 {
            return Err(TaskStoreError::Duplicate(record.task_id));
        }
        Ok(())
    }

    async fn get(
        &self,
        owner: &str,
        task_id: &str,
        now_ms: u64,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        let key = self.task_key(task_id);
        let fields: HashMap<String, String> = self
            .redis
            .run(|mut c| async move { redis::cmd("HGETALL").arg(&key).query_async(&mut c).await })
            .await
            .map_err(backend)?;
        if fields.is_empty() || fields.get("o").map(String::as_str) != Some(owner) {
            return Ok(None);
        }
        let r = decode(task_id, &fields).map_err(backend)?;
        Ok((!r.is_expired(now_ms)).then_some(r))
    }

    async fn update(
        &self,
        task_id: &str,
        change: TaskChange,
        now_ms: u64,
    ) -> Result<Transition, TaskStoreError> {
        let key = self.task_key(task_id);
        let running = self.redis.key("running:");
        let unfinished = self.redis.key("unfinished");
        let script = &self.scripts.update;
        let reply: Value = self
            .redis
            .run(|mut c| async move {
                script
                    .key(&key)
                    .arg(now_ms.to_string())
                    .arg(status_text(change.status))
                    .arg(optional(change.status_message.clone()))
                    .arg(optional(json_text(&change.input_requests)))
                    .arg(optional(json_text(&change.result)))
                    .arg(optional(json_text(&change.error)))
                    .arg(&running)
                    .arg(task_id)
                    .arg(&unfinished)
                    .invoke_async(&mut c)
                    .await
            })
            .await
            .map_err(backend)?;
        let items = array(reply).map_err(backend)?;
        let Some((tag, rest)) = items.split_first() else {
            return Err(backend(Error::Corrupt("empty reply".into())));
        };
        let tag = text_of(tag).map_err(backend)?;
        if tag == "none" {
            return Ok(Transition::NotFound);
        }
        let record = decode(task_id, &pairs(rest).map_err(backend)?).map_err(backend)?;
        Ok(match tag.as_str() {
            "applied" => Transition::Applied(record),
            _ => Transition::Terminal(record),
        })
    }

    async fn list(
        &self,
        owner: &str,
        cursor: Option<&str>,
        limit: usize,
        now_ms: u64,
    ) -> Result<TaskPage, TaskStoreError> {
        let from = match cursor {
            Some(c) => format!("({}", decode_cursor(c)?),
            None => "-".to_owned(),
        };
        let limit = limit.max(1);
        let index = self.redis.key(&format!("owner:{owner}"));
        let task_prefix = self.redis.key("task:");
        let script = &self.scripts.list;
        let reply: Value = self
            .redis
            .run(|mut c| async move {
                script
                    .key(&index)
                    .arg(&task_prefix)
                    .arg(&from)
                    .arg(now_ms.to_string())
                    .arg(limit + 1)
                    .arg(owner)
                    .invoke_async(&mut c)
                    .await
            })
            .await
            .map_err(backend)?;
        let items = array(reply).map_err(backend)?;
        let mut tasks = Vec::with_capacity(items.len() / 2);
        for pair in items.chunks(2) {
            let [id, fields] = pair else {
                return Err(backend(Error::Corrupt("odd task list".into())));
            };
            let id = text_of(id).map_err(backend)?;
            let fields = pairs(&array(fields.clone()).map_err(backend)?).map_err(backend)?;
            tasks.push(decode(&id, &fields).map_err(backend)?);
        }
        let next_cursor = if tasks.len() > limit {
            tasks.truncate(limit);
            tasks
                .last()
                .map(|r| encode_cursor(r.created_at_ms, &r.task_id))
        } else {
            None
        };
        Ok(TaskPage { tasks, next_cursor })
    }

    async fn sweep(&self, now_ms: u64) -> Result<usize, TaskStoreError> {
        let expiry = self.redis.key("expiry");
        let prefixes = [
            self.redis.key("task:"),
            self.redis.key("owner:"),
            self.redis.key("running:"),
            self.redis.key("unfinished"),
        ];
        let mut total = 0usize;
        loop {
            let script = &self.scripts.sweep;
            let (expiry, prefixes) = (&expiry, &prefixes);
            let (deleted, looked): (usize, usize) = self
                .redis
                .run(|mut c| async move {
                    script
                        .key(expiry)
                        .arg(&prefixes[0])
                        .arg(&prefixes[1])
                        .arg(&prefixes[2])
                        .arg(now_ms.to_string())
                        .arg(SWEEP_BATCH)
                        .arg(&prefixes[3])
                        .invoke_async(&mut c)
                        .await
                })
                .await
                .map_err(backend)?;
            total += deleted;
            if looked < SWEEP_BATCH {
                return Ok(total);
            }
        }
    }

    async fn fail_unfinished(&self, message: &str, now_ms: u64) -> Result<usize, TaskStoreError> {
        // The same record the other stores write for a task cut short by
        // a restart.
        let error = ErrorObject::internal(format!("Internal error: {message}"));
        let error = serde_json::to_string(&error).unwrap_or_default();
        let running = self
            .redis
            .key(&format!("running:{}", self.redis.instance_id()));
        let task_prefix = self.redis.key("task:");
        let unfinished = self.redis.key("unfinished");
        let script = &self.scripts.fail_unfinished;
        self.redis
            .run(|mut c| async move {
                script
                    .key(&running)
                    .arg(&task_prefix)
                    .arg(now_ms.to_string())
                    .arg(message)
                    .arg(&error)
                    .arg(&unfinished)
                    .invoke_async(&mut c)
                    .await
            })
            .await
            .map_err(backend)
    }

    /// The owner's index and the expiry index, by `ZCARD` (tasks past their
    /// lifetime count until the next sweep deletes them).
    async fn count(&self, owner: &str, _now_ms: u64) -> Result<TaskCount, TaskStoreError> {
        let index = self.redis.key(&format!("owner:{owner}"));
        let expiry = self.redis.key("expiry");
        let unfinished = self.redis.key("unfinished");
        let mine = self.redis.key(&format!("unfinished:{owner}"));
        let keys = (&index, &expiry, &unfinished, &mine);
        let (owned, total, running, running_mine): (usize, usize, usize, usize) = self
            .redis
            .run(|mut c| async move {
                redis::pipe()
                    .cmd("ZCARD")
                    .arg(keys.0)
                    .cmd("ZCARD")
                    .arg(keys.1)
                    .cmd("SCARD")
                    .arg(keys.2)
                    .cmd("SCARD")
                    .arg(keys.3)
                    .query_async(&mut c)
                    .await
            })
            .await
            .map_err(backend)?;
        Ok(TaskCount {
            owner: owned,
            total,
            running_of_owner: Some(running_mine),
            running: Some(running),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_garbage() {
        let c = encode_cursor(17, "abc:d");
        assert_eq!(decode_cursor(&c).unwrap(), index_member(17, "abc:d"));
        assert!(decode_cursor("not a cursor!").is_err());
        assert!(decode_cursor(&URL_SAFE_NO_PAD.encode("12:x")).is_err());
    }

    #[test]
    fn index_members_sort_like_created_then_id() {
        let mut v = vec![
            index_member(5, "b"),
            index_member(10, "a"),
            index_member(5, "a"),
            index_member(5, "ab"),
        ];
        v.sort();
        assert_eq!(
            v,
            [
                index_member(5, "a"),
                index_member(5, "ab"),
                index_member(5, "b"),
                index_member(10, "a")
            ]
        );
    }
}
