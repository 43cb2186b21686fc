//! [`TaskStats`]: what a server counts of its tasks for its operators — the
//! tasks running in this process, the tasks that entered each status, and
//! the new tasks each cap refused. Read through
//! [`Server::task_stats`](crate::Server::task_stats); `tessera-telemetry`
//! exports them as `tessera.tasks.running`, `tessera.tasks` (by
//! `tessera.task.status`) and `tessera.requests.refused` (by
//! `tessera.limit`).

use tessera_runtime::tally::Tally;
use tessera_types::tasks::TaskStatus;

/// The caps on tasks whose refusals are counted, by the name of their
/// [`TaskSettings`](super::TaskSettings) member.
pub mod limit {
    /// [`TaskSettings::max_running_per_owner`](super::super::TaskSettings::max_running_per_owner).
    pub const MAX_RUNNING_TASKS_PER_OWNER: &str = "max_running_tasks_per_owner";
    /// [`TaskSettings::max_running`](super::super::TaskSettings::max_running).
    pub const MAX_RUNNING_TASKS: &str = "max_running_tasks";
    /// [`TaskSettings::max_stored_per_owner`](super::super::TaskSettings::max_stored_per_owner).
    pub const MAX_STORED_TASKS_PER_OWNER: &str = "max_stored_tasks_per_owner";
    /// [`TaskSettings::max_stored`](super::super::TaskSettings::max_stored).
    pub const MAX_STORED_TASKS: &str = "max_stored_tasks";

    /// Every cap counted, in a fixed order.
    pub const ALL: &[&str] = &[
        MAX_RUNNING_TASKS_PER_OWNER,
        MAX_RUNNING_TASKS,
        MAX_STORED_TASKS_PER_OWNER,
        MAX_STORED_TASKS,
    ];
}

/// The statuses, as the protocol spells them.
const STATUSES: &[&str] = &[
    "working",
    "input_required",
    "completed",
    "failed",
    "cancelled",
];

/// The wire name of `status`.
pub fn status_name(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Working => STATUSES[0],
        TaskStatus::InputRequired => STATUSES[1],
        TaskStatus::Completed => STATUSES[2],
        TaskStatus::Failed => STATUSES[3],
        TaskStatus::Cancelled => STATUSES[4],
    }
}

/// The counts a task hub keeps.
#[derive(Debug)]
pub(crate) struct TaskTally {
    entered: Tally,
    refused: Tally,
}

impl Default for TaskTally {
    fn default() -> Self {
        TaskTally {
            entered: Tally::new(STATUSES),
            refused: Tally::new(limit::ALL),
        }
    }
}

impl TaskTally {
    /// A task of this process entered `status` (created, or a transition
    /// this process applied).
    pub fn entered(&self, status: TaskStatus) {
        self.entered.add(status_name(status));
    }

    /// A new task was refused by the cap `limit`.
    pub fn refused(&self, limit: &'static str) {
        self.refused.add(limit);
    }

    /// The counts now, with `running` tasks running here.
    pub fn read(&self, running: usize) -> TaskStats {
        TaskStats {
            running,
            entered: self.entered.read().collect(),
            refused: self.refused.read().collect(),
        }
    }
}

/// A server's task counts at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskStats {
    /// Tasks running in this process now.
    pub running: usize,
    /// By status (`working`, `input_required`, `completed`, `failed`,
    /// `cancelled`): how many times a task of this process entered it since
    /// the server started (created tasks enter `working`). Transitions
    /// applied by another instance sharing the store are counted there.
    pub entered: Vec<(&'static str, u64)>,
    /// By cap ([`limit`]): the new tasks it refused.
    pub refused: Vec<(&'static str, u64)>,
}
