//! [`MemoryTaskStore`]: tasks in process memory (the default store).

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use super::store::{
    TaskChange, TaskCount, TaskPage, TaskRecord, TaskStore, TaskStoreError, Transition,
    decode_cursor, encode_cursor,
};

/// Tasks kept in memory: fast, and gone when the process ends.
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    inner: Mutex<Tables>,
}

#[derive(Debug, Default)]
struct Tables {
    tasks: HashMap<String, TaskRecord>,
    /// (owner, created, id): the listing order.
    by_owner: BTreeSet<(String, u64, String)>,
}

impl Tables {
    fn remove(&mut self, id: &str) {
        if let Some(r) = self.tasks.remove(id) {
            self.by_owner.remove(&(r.owner, r.created_at_ms, r.task_id));
        }
    }
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryTaskStore::default()
    }

    fn tables(&self) -> std::sync::MutexGuard<'_, Tables> {
        // A poisoned lock only means a panic elsewhere mid-update of plain data.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl TaskStore for MemoryTaskStore {
    async fn create(&self, record: TaskRecord) -> Result<(), TaskStoreError> {
        let mut t = self.tables();
        if t.tasks.contains_key(&record.task_id) {
            Err(TaskStoreError::Duplicate(record.task_id))
        } else {
            t.by_owner.insert((
                record.owner.clone(),
                record.created_at_ms,
                record.task_id.clone(),
            ));
            t.tasks.insert(record.task_id.clone(), record);
            Ok(())
        }
    }

    async fn get(
        &self,
        owner: &str,
        task_id: &str,
        now_ms: u64,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        let found = self
            .tables()
            .tasks
            .get(task_id)
            .filter(|r| r.owner == owner && !r.is_expired(now_ms))
            .cloned();
        Ok(found)
    }

    async fn update(
        &self,
        task_id: &str,
        change: TaskChange,
        now_ms: u64,
    ) -> Result<Transition, TaskStoreError> {
        let mut t = self.tables();
        let out = match t.tasks.get_mut(task_id) {
            None => Transition::NotFound,
            Some(r) if r.is_expired(now_ms) => Transition::NotFound,
            Some(r) if r.status.is_terminal() => Transition::Terminal(r.clone()),
            Some(r) => {
                r.apply(&change, now_ms);
                Transition::Applied(r.clone())
            }
        };
        Ok(out)
    }

    async fn list(
        &self,
        owner: &str,
        cursor: Option<&str>,
        limit: usize,
        now_ms: u64,
    ) -> Result<TaskPage, TaskStoreError> {
        let start = match cursor {
            Some(c) => {
                let (t, id) = decode_cursor(c)?;
                std::ops::Bound::Excluded((owner.to_owned(), t, id))
            }
            None => std::ops::Bound::Included((owner.to_owned(), 0, String::new())),
        };
        let tables = self.tables();
        let mut tasks = Vec::new();
        let mut more = false;
        let range = tables
            .by_owner
            .range((start, std::ops::Bound::Unbounded))
            .take_while(|(o, _, _)| o == owner);
        for (_, _, id) in range {
            let Some(r) = tables.tasks.get(id).filter(|r| !r.is_expired(now_ms)) else {
                continue;
            };
            if tasks.len() == limit.max(1) {
                more = true;
                break;
            }
            tasks.push(r.clone());
        }
        let next_cursor = if more {
            tasks
                .last()
                .map(|r: &TaskRecord| encode_cursor(r.created_at_ms, &r.task_id))
        } else {
            None
        };
        Ok(TaskPage { tasks, next_cursor })
    }

    async fn sweep(&self, now_ms: u64) -> Result<usize, TaskStoreError> {
        let mut t = self.tables();
        let expired: Vec<String> = t
            .tasks
            .values()
            .filter(|r| r.is_expired(now_ms))
            .map(|r| r.task_id.clone())
            .collect();
        for id in &expired {
            t.remove(id);
        }
        let n = expired.len();
        Ok(n)
    }

    async fn fail_unfinished(&self, message: &str, now_ms: u64) -> Result<usize, TaskStoreError> {
        let mut t = self.tables();
        let mut n = 0;
        for r in t.tasks.values_mut() {
            if !r.status.is_terminal() {
                r.apply(&super::restart_failure(message), now_ms);
                n += 1;
            }
        }
        Ok(n)
    }

    async fn count(&self, owner: &str, now_ms: u64) -> Result<TaskCount, TaskStoreError> {
        let t = self.tables();
        let live = |id: &String| t.tasks.get(id).is_some_and(|r| !r.is_expired(now_ms));
        let start = (owner.to_owned(), 0, String::new());
        let owned = t
            .by_owner
            .range(start..)
            .take_while(|(o, _, _)| o == owner)
            .filter(|(_, _, id)| live(id))
            .count();
        let total = t.tasks.values().filter(|r| !r.is_expired(now_ms)).count();
        let out = TaskCount {
            owner: owned,
            total,
            ..TaskCount::default()
        };
        Ok(out)
    }
}
