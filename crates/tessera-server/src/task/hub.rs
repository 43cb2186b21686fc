//! [`TaskHub`]: the server's task registry — the store, the clock, the tasks
//! this process is running, and the fan-out of status changes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tessera_types::methods;

use tessera_runtime::{DynBus, Peer, Request};
use tessera_types::{ErrorObject, JsonObject};
use tokio::sync::{OnceCell, broadcast};
use tokio_util::sync::CancellationToken;

use super::live::TaskInput;
use super::relay;
use super::store::{DynTaskStore, TaskChange, TaskRecord, TaskStore, TaskStoreError, Transition};
use super::wire;

/// The message of tasks that were running when their server stopped.
pub const RESTART_MESSAGE: &str =
    "the server restarted while this task was running; its work was lost";

/// How a server runs tasks: the store, lifetimes, polling hint and clock.
#[derive(Clone)]
pub struct TaskSettings {
    /// Where tasks live.
    pub store: Arc<dyn DynTaskStore>,
    /// The lifetime given to a task whose client asked for none (default 1 hour).
    pub default_ttl: Duration,
    /// The longest lifetime a client may ask for (default 24 hours).
    pub max_ttl: Duration,
    /// The suggested polling interval (default 500 ms).
    pub poll_interval: Duration,
    /// How often expired tasks are deleted (default 60 s).
    pub sweep_every: Duration,
    /// Instances sharing one store tell each other about tasks over this
    /// bus (default none: one instance): a `tasks/update` or `tasks/cancel`
    /// that reaches an instance other than the one running the task is
    /// relayed to it, and every status change reaches the `tasks/result`
    /// waiters and `subscriptions/listen` streams of every instance.
    pub bus: Option<Arc<dyn DynBus>>,
    /// The most tasks one owner (principal, session or client) may have
    /// running in this process at once (default 16); more are refused.
    pub max_running_per_owner: usize,
    /// The most tasks running in this process at once (default 256).
    pub max_running: usize,
    /// The most unexpired tasks one owner may have in the store (default
    /// 100): finished ones count until their lifetime ends.
    pub max_stored_per_owner: usize,
    /// The most unexpired tasks in the store (default 1,000).
    pub max_stored: usize,
    /// The largest result a task keeps, as JSON (default 1 MiB): a bigger
    /// one fails the task with an error naming the size.
    pub max_result_bytes: usize,
}

/// The default [`TaskSettings::max_running_per_owner`].
pub const DEFAULT_MAX_RUNNING_TASKS_PER_OWNER: usize = 16;
/// The default [`TaskSettings::max_running`].
pub const DEFAULT_MAX_RUNNING_TASKS: usize = 256;
/// The default [`TaskSettings::max_stored_per_owner`].
pub const DEFAULT_MAX_STORED_TASKS_PER_OWNER: usize = 100;
/// The default [`TaskSettings::max_stored`].
pub const DEFAULT_MAX_STORED_TASKS: usize = 1000;
/// The default [`TaskSettings::max_result_bytes`].
pub const DEFAULT_MAX_TASK_RESULT_BYTES: usize = 1 << 20;

impl std::fmt::Debug for TaskSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskSettings")
            .field("default_ttl", &self.default_ttl)
            .field("max_ttl", &self.max_ttl)
            .field("poll_interval", &self.poll_interval)
            .field("bus", &self.bus.is_some())
            .field("max_running_per_owner", &self.max_running_per_owner)
            .field("max_running", &self.max_running)
            .field("max_stored_per_owner", &self.max_stored_per_owner)
            .field("max_stored", &self.max_stored)
            .field("max_result_bytes", &self.max_result_bytes)
            .finish_non_exhaustive()
    }
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            store: Arc::new(super::MemoryTaskStore::new()),
            default_ttl: Duration::from_secs(3600),
            max_ttl: Duration::from_secs(24 * 3600),
            poll_interval: Duration::from_millis(500),
            sweep_every: Duration::from_secs(60),
            bus: None,
            max_running_per_owner: DEFAULT_MAX_RUNNING_TASKS_PER_OWNER,
            max_running: DEFAULT_MAX_RUNNING_TASKS,
            max_stored_per_owner: DEFAULT_MAX_STORED_TASKS_PER_OWNER,
            max_stored: DEFAULT_MAX_STORED_TASKS,
            max_result_bytes: DEFAULT_MAX_TASK_RESULT_BYTES,
        }
    }
}

/// Wall-clock milliseconds that follow tokio's clock, so a paused test clock
/// moves task lifetimes too.
#[derive(Debug, Clone, Copy)]
struct Clock {
    base_ms: u64,
    start: tokio::time::Instant,
}

impl Clock {
    fn new() -> Self {
        let base_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        Clock {
            base_ms,
            start: tokio::time::Instant::now(),
        }
    }

    fn now_ms(&self) -> u64 {
        let e = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.base_ms.saturating_add(e)
    }
}

/// A task this process is running.
pub(crate) struct LiveTask {
    /// Fires on `tasks/cancel`; the runner then drops the handler.
    pub cancel: CancellationToken,
    /// Questions the handler is waiting on (2026-07-28 tasks).
    pub input: Arc<TaskInput>,
    /// The session to send 2025-11-25 status notifications to.
    pub notify: Option<Peer>,
    /// Who owns the task.
    pub owner: String,
}

/// The registry of tasks.
pub(crate) struct TaskHub {
    settings: TaskSettings,
    clock: OnceCell<Clock>,
    ready: OnceCell<()>,
    live: Mutex<HashMap<String, Arc<LiveTask>>>,
    changes: broadcast::Sender<Arc<TaskRecord>>,
    /// The bus listeners of the tasks running here, by task id.
    relays: Mutex<HashMap<String, tokio::task::JoinHandle<()>>>,
    /// This hub's id on the bus (its own announcements are skipped).
    origin: String,
    /// What the last store check found wrong, if anything.
    store_fault: Mutex<Option<String>>,
    /// Statuses entered and caps hit, for the operators.
    tally: super::stats::TaskTally,
    me: Weak<TaskHub>,
}

impl TaskHub {
    pub fn new(settings: TaskSettings) -> Arc<Self> {
        Arc::new_cyclic(|me| TaskHub {
            settings,
            clock: OnceCell::new(),
            ready: OnceCell::new(),
            live: Mutex::new(HashMap::new()),
            changes: broadcast::channel(256).0,
            relays: Mutex::new(HashMap::new()),
            origin: super::new_task_id(),
            store_fault: Mutex::new(None),
            tally: super::stats::TaskTally::default(),
            me: me.clone(),
        })
    }

    /// Now, in Unix milliseconds (the clock starts on first use, inside the runtime).
    pub fn now_ms(&self) -> u64 {
        match self.clock.get() {
            Some(c) => c.now_ms(),
            None => {
                let _ = self.clock.set(Clock::new());
                self.clock.get().map_or(0, Clock::now_ms)
            }
        }
    }

    fn store(&self) -> &dyn DynTaskStore {
        self.settings.store.as_ref()
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<LiveTask>>> {
        self.live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Once per process: fails the tasks a previous process left unfinished,
    /// and starts the sweeper of expired tasks.
    pub async fn ready(&self) -> Result<(), ErrorObject> {
        self.ready
            .get_or_try_init(|| async {
                let n = self
                    .store()
                    .fail_unfinished(RESTART_MESSAGE, self.now_ms())
                    .await
                    .map_err(store_error)?;
                if n > 0 {
                    tracing::warn!(
                        tasks = n,
                        "tasks left running by a previous process marked failed"
                    );
                }
                if let Some(bus) = self.bus() {
                    relay::watch_changes(bus.clone(), self.me.clone()).await;
                }
                let hub = self.me.clone();
                let every = self.settings.sweep_every.max(Duration::from_millis(10));
                tokio::spawn(async move {
                    let mut tick = tokio::time::interval(every);
                    tick.tick().await;
                    loop {
                        tick.tick().await;
                        let Some(hub) = hub.upgrade() else { return };
                        if let Err(e) = hub.store().sweep(hub.now_ms()).await {
                            tracing::warn!(error = %e, "sweeping expired tasks failed");
                        }
                        let _ = hub.check_store().await;
                    }
                });
                Ok(())
            })
            .await
            .map(|_| ())
    }

    /// Checks the store; a failure is logged as an error once (and its end
    /// once), and returned.
    pub async fn check_store(&self) -> Result<(), String> {
        let now = self.store().check().await.map_err(|e| e.to_string());
        let mut last = self
            .store_fault
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match (&now, last.as_ref()) {
            (Err(e), Some(before)) if e == before => {}
            (Err(e), _) => tracing::error!(error = %e, "the task store is failing"),
            (Ok(()), Some(_)) => tracing::info!("the task store works again"),
            (Ok(()), None) => {}
        }
        *last = now.as_ref().err().cloned();
        now
    }

    /// The lifetime of a new task, from the client's wish (2025-11-25 `ttl`).
    pub fn ttl_for(&self, asked: Option<u64>) -> u64 {
        let max = duration_ms(self.settings.max_ttl);
        asked
            .map(|t| t.min(max))
            .unwrap_or_else(|| duration_ms(self.settings.default_ttl).min(max))
            .max(1)
    }

    /// Stores a new task (durably, before anyone hears of it) and registers
    /// it as running here.
    pub async fn create(
        &self,
        owner: &str,
        method: &str,
        ttl_ms: u64,
        notify: Option<Peer>,
        cancel: CancellationToken,
        input: Arc<TaskInput>,
    ) -> Result<(TaskRecord, Arc<LiveTask>), ErrorObject> {
        self.ready().await?;
        self.check_room(owner).await?;
        let record = TaskRecord::working(
            super::new_task_id(),
            owner,
            method,
            self.now_ms(),
            Some(ttl_ms),
            Some(duration_ms(self.settings.poll_interval)),
        );
        self.store()
            .create(record.clone())
            .await
            .map_err(store_error)?;
        self.tally.entered(record.status);
        let live = Arc::new(LiveTask {
            cancel,
            input,
            notify,
            owner: owner.to_owned(),
        });
        self.live().insert(record.task_id.clone(), live.clone());
        if let Some(bus) = self.bus() {
            // Listening before anyone hears of the task: a tasks/update or
            // tasks/cancel that reaches another instance is not missed.
            let id = record.task_id.clone();
            if let Some(h) = relay::serve_task(
                bus.clone(),
                self.me.clone(),
                id.clone(),
                Arc::downgrade(&live),
            )
            .await
            {
                self.relays().insert(id, h);
            }
        }
        Ok((record, live))
    }

    /// Refuses a new task of `owner` when a cap on running or stored tasks
    /// is reached, naming it.
    async fn check_room(&self, owner: &str) -> Result<(), ErrorObject> {
        let st = &self.settings;
        use super::stats::limit;
        let refuse = |cap: &'static str, what: String| {
            self.tally.refused(cap);
            tracing::info!(owner, "task refused: {what}");
            Err(ErrorObject::invalid_request(format!(
                "Invalid Request: too many tasks: {what}; wait for some to finish or expire"
            )))
        };
        let count = self
            .store()
            .count(owner, self.now_ms())
            .await
            .map_err(store_error)?;
        // Those running here, or on every instance when the store counts
        // them (a shared store): the caps then hold across instances.
        let (mine, all) = {
            let live = self.live();
            let mine = live.values().filter(|l| l.owner == owner).count();
            (mine, live.len())
        };
        let mine = mine.max(count.running_of_owner.unwrap_or(0));
        let all = all.max(count.running.unwrap_or(0));
        if mine >= st.max_running_per_owner {
            return refuse(
                limit::MAX_RUNNING_TASKS_PER_OWNER,
                format!(
                    "this client has {mine} running, the limit (TaskSettings::max_running_per_owner)"
                ),
            );
        }
        if all >= st.max_running {
            return refuse(
                limit::MAX_RUNNING_TASKS,
                format!("the server has {all} running, the limit (TaskSettings::max_running)"),
            );
        }
        if count.owner >= st.max_stored_per_owner {
            return refuse(
                limit::MAX_STORED_TASKS_PER_OWNER,
                format!(
                    "this client has {} stored, the limit (TaskSettings::max_stored_per_owner)",
                    count.owner
                ),
            );
        }
        if count.total >= st.max_stored {
            return refuse(
                limit::MAX_STORED_TASKS,
                format!(
                    "the server has {} stored, the limit (TaskSettings::max_stored)",
                    count.total
                ),
            );
        }
        Ok(())
    }

    /// The bus shared with other instances, if any.
    pub fn bus(&self) -> Option<&Arc<dyn DynBus>> {
        self.settings.bus.as_ref()
    }

    fn relays(&self) -> std::sync::MutexGuard<'_, HashMap<String, tokio::task::JoinHandle<()>>> {
        self.relays
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// This hub's id on the bus.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// A transition announced by another instance: this hub's watchers get
    /// the task as the store has it now.
    pub async fn heard_change(&self, owner: &str, task_id: &str) {
        match self.store().get(owner, task_id, self.now_ms()).await {
            Ok(Some(r)) => {
                let _ = self.changes.send(Arc::new(r));
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(task = task_id, error = %e, "task change not read"),
        }
    }

    /// Reads a task of `owner`.
    pub async fn get(&self, owner: &str, task_id: &str) -> Result<Option<TaskRecord>, ErrorObject> {
        self.ready().await?;
        self.store()
            .get(owner, task_id, self.now_ms())
            .await
            .map_err(store_error)
    }

    /// One page of `owner`'s tasks.
    pub async fn list(
        &self,
        owner: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<super::TaskPage, ErrorObject> {
        self.ready().await?;
        self.store()
            .list(owner, cursor, limit, self.now_ms())
            .await
            .map_err(|e| match e {
                TaskStoreError::InvalidCursor => {
                    ErrorObject::invalid_params("Invalid params: invalid cursor")
                }
                e => store_error(e),
            })
    }

    /// Applies a transition; on success tells the watchers.
    pub async fn apply(
        &self,
        task_id: &str,
        change: TaskChange,
    ) -> Result<Transition, ErrorObject> {
        let t = self
            .store()
            .update(task_id, change, self.now_ms())
            .await
            .map_err(store_error)?;
        if let Transition::Applied(r) = &t {
            self.tally.entered(r.status);
            self.announce(r);
        }
        Ok(t)
    }

    fn announce(&self, r: &TaskRecord) {
        let notify = self.live().get(&r.task_id).and_then(|l| l.notify.clone());
        if let Some(peer) = notify {
            let _ = peer.notify(
                methods::NOTIFICATIONS_TASKS_STATUS,
                tessera_types::encode_params(&wire::legacy_notification(r)).ok(),
                None,
            );
        }
        let _ = self.changes.send(Arc::new(r.clone()));
        if let Some(bus) = self.bus().cloned() {
            let (id, owner, origin) = (r.task_id.clone(), r.owner.clone(), self.origin.clone());
            tokio::spawn(async move {
                relay::send_changed(bus.as_ref(), &origin, &id, &owner).await;
            });
        }
    }

    /// The task counts now ([`super::TaskStats`]).
    pub fn stats(&self) -> super::TaskStats {
        self.tally.read(self.live().len())
    }

    /// Status changes as they happen.
    pub fn watch(&self) -> broadcast::Receiver<Arc<TaskRecord>> {
        self.changes.subscribe()
    }

    /// The running task `task_id`, if this process runs it.
    pub fn running(&self, task_id: &str) -> Option<Arc<LiveTask>> {
        self.live().get(task_id).cloned()
    }

    /// Forgets a task that stopped running.
    pub fn forget(&self, task_id: &str) {
        self.live().remove(task_id);
        if let Some(h) = self.relays().remove(task_id) {
            h.abort();
        }
    }

    /// Writes the outstanding questions of a running task to the store
    /// (`input_required` with them, or back to `working` when none is left).
    pub async fn publish_input(&self, task_id: &str, live: &LiveTask) -> Result<(), ErrorObject> {
        let input = &live.input;
        let _turn = input.publishing().await;
        let pending = input.outstanding();
        let change = if pending.is_empty() {
            TaskChange::working(None)
        } else {
            TaskChange::input_required(pending)
        };
        // Only a change of state is written.
        if let Some(current) = self.get(&live.owner, task_id).await? {
            let same =
                current.status == change.status && current.input_requests == change.input_requests;
            if same || current.status.is_terminal() {
                return Ok(());
            }
        }
        self.apply(task_id, change).await.map(|_| ())
    }

    /// Records the outcome of a task's handler (a cancelled task stays cancelled).
    pub async fn finish(&self, task_id: &str, out: Result<JsonObject, ErrorObject>, legacy: bool) {
        let out = match out {
            Ok(result) => {
                let size = json_size(&result);
                let max = self.settings.max_result_bytes;
                if size > max {
                    tracing::info!(
                        task = task_id,
                        size,
                        max,
                        "a task's result is over the limit"
                    );
                    Err(ErrorObject::internal(format!(
                        "Internal error: the task's result is {size} bytes; the limit is {max} \
                         (TaskSettings::max_result_bytes)"
                    )))
                } else {
                    Ok(result)
                }
            }
            e => e,
        };
        let change = match out {
            Ok(result) => {
                let is_error = <ErrorFlag as serde::Deserialize>::deserialize(&result)
                    .is_ok_and(|f| f.is_error);
                if legacy && is_error {
                    // 2025-11-25: a tool result with isError fails the task;
                    // tasks/result still returns the result.
                    TaskChange {
                        status: tessera_types::tasks::TaskStatus::Failed,
                        status_message: Some("the tool reported an error".into()),
                        input_requests: None,
                        result: Some(result),
                        error: None,
                    }
                } else {
                    TaskChange::completed(result)
                }
            }
            Err(e) => TaskChange::failed(e, None),
        };
        if let Err(e) = self.apply(task_id, change).await {
            tracing::warn!(task = task_id, error = %e.message, "could not record a task's outcome");
        }
    }
}

/// Who owns the tasks a request creates or reads: its authenticated
/// principal; without one, its session (2025-11-25) or its client
/// (2026-07-28, by `clientInfo.name`).
pub(crate) fn owner_of(r: &Request) -> String {
    if let Some(p) = r.extensions.get::<tessera_runtime::Principal>() {
        return format!("principal:{}", p.0);
    }
    if r.context.era == tessera_types::Era::Legacy {
        if let Some(s) = r.extensions.get::<tessera_runtime::SessionId>() {
            // A session that may be served by several instances.
            return format!("mcp-session:{}", s.0);
        }
        // A session of this process alone: its connection, told apart from
        // those of other processes on the same store.
        return format!("session:{:016x}:{}", process_tag(), r.peer.connection_id());
    }
    let named = r
        .context
        .peer_info
        .as_deref()
        .and_then(|i| <ClientName as serde::Deserialize>::deserialize(i).ok());
    match named.and_then(|n| n.name) {
        Some(name) => format!("client:{name}"),
        None => "anonymous".to_owned(),
    }
}

/// A random number drawn once per process.
fn process_tag() -> u64 {
    static TAG: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TAG.get_or_init(rand::random)
}

/// The size of `v` as JSON, counted without keeping the text.
fn json_size(v: &JsonObject) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

pub(crate) fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn store_error(e: TaskStoreError) -> ErrorObject {
    tracing::warn!(error = %e, "task store");
    ErrorObject::internal(format!("Internal error: task store: {e}"))
}

/// The `isError` flag of a tool result.
#[derive(serde::Deserialize)]
struct ErrorFlag {
    #[serde(rename = "isError", default)]
    is_error: bool,
}

/// The `name` of a client's `clientInfo`.
#[derive(serde::Deserialize)]
struct ClientName<'a> {
    #[serde(default, borrow)]
    name: Option<&'a str>,
}
