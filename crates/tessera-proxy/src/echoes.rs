//! The list changes an upstream reached per caller tells each of its
//! connections: one change, heard once per caller's connection, is passed
//! on once.
//!
//! A list-change notification carries nothing that tells one change from
//! another, so the rule is about connections: each connection tells of each
//! change once. The first connection to tell of a change opens a window of
//! [`WINDOW`]; the other connections telling of it within the window repeat
//! it and are dropped. A connection telling again within the window tells
//! of a new change, which is passed on and opens a new window. A connection
//! slower than the window makes a session hear of a change twice, never of
//! none.
//!
//! One connection per upstream driving the lists (the other choice) would
//! lose the changes an upstream tells only the caller they concern, and
//! would need a new driver whenever the driving caller's connection is
//! closed as idle.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// How long after a change other connections' notices of it are dropped.
pub(crate) const WINDOW: Duration = Duration::from_secs(1);
/// The most connections remembered in one window (more opens a new one).
const MAX_HEARD: usize = 1024;

/// One upstream's latest change of one list.
struct Window {
    opened: Instant,
    /// The connections that told of it.
    heard: HashSet<u64>,
}

/// The latest change of each list of each upstream reached per caller.
#[derive(Default)]
pub(crate) struct Echoes {
    windows: Mutex<HashMap<(String, String), Window>>,
}

impl Echoes {
    /// Whether `method` from upstream `upstream`, heard on connection `conn`
    /// at `now`, tells of a change not passed on yet.
    pub(crate) fn first(&self, upstream: &str, method: &str, conn: u64, now: Instant) -> bool {
        let mut w = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        w.retain(|_, x| now.saturating_duration_since(x.opened) < WINDOW);
        let key = (upstream.to_owned(), method.to_owned());
        if let Some(x) = w.get_mut(&key) {
            if !x.heard.contains(&conn) && x.heard.len() < MAX_HEARD {
                x.heard.insert(conn);
                return false;
            }
        }
        w.insert(
            key,
            Window {
                opened: now,
                heard: HashSet::from([conn]),
            },
        );
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: &str = "notifications/tools/list_changed";
    const PROMPTS: &str = "notifications/prompts/list_changed";

    #[tokio::test(start_paused = true)]
    async fn one_change_heard_on_every_connection_is_passed_on_once() {
        let e = Echoes::default();
        let t0 = Instant::now();
        assert!(e.first("up", TOOLS, 1, t0));
        assert!(!e.first("up", TOOLS, 2, t0), "connection 2 repeats it");
        assert!(!e.first("up", TOOLS, 3, t0 + WINDOW / 2));
        // Another list, another upstream: changes of their own.
        assert!(e.first("up", PROMPTS, 2, t0));
        assert!(e.first("other", TOOLS, 2, t0));
        // Connection 1 again: a second change, passed on; the others'
        // notices of it are dropped.
        assert!(e.first("up", TOOLS, 1, t0 + WINDOW / 2));
        assert!(!e.first("up", TOOLS, 3, t0 + WINDOW / 2));
        assert!(!e.first("up", TOOLS, 2, t0 + WINDOW / 2));
        // After the window, a notice is a change again.
        assert!(e.first("up", TOOLS, 2, t0 + WINDOW * 2));
    }

    #[tokio::test(start_paused = true)]
    async fn bounded_in_windows_and_connections() {
        let e = Echoes::default();
        let t0 = Instant::now();
        assert!(e.first("up", TOOLS, 0, t0));
        for conn in 1..MAX_HEARD as u64 {
            assert!(!e.first("up", TOOLS, conn, t0));
        }
        // The window is full: the next connection opens a new one.
        assert!(e.first("up", TOOLS, MAX_HEARD as u64, t0));
        for i in 0..100 {
            e.first(&format!("u{i}"), TOOLS, 1, t0);
        }
        assert!(e.windows.lock().unwrap().len() > 100);
        e.first("up", TOOLS, 1, t0 + WINDOW);
        assert_eq!(e.windows.lock().unwrap().len(), 1, "expired windows go");
    }
}
