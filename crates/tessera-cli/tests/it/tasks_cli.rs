//! `tessera tasks list` where there is no listing: a 2026-07-28 server (the
//! tasks extension lists no tasks) and a legacy version without tasks get a
//! clear message and exit 9 ("unsupported"), and so does a 2025-11-25
//! session, whose tasks are those of another session. `tessera call --task`
//! shows progress and prints a follow-up that works, or says why none does.

use crate::common;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_tessera");

fn tessera(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run tessera")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[tokio::test]
async fn tasks_list_where_there_is_no_listing_is_unsupported() {
    let (child, port) = common::spawn_serving(
        Command::new(BIN).args(["serve", "--http", "127.0.0.1:0"]),
        Duration::from_secs(30),
    );
    let _server = common::Running(child);
    let url = format!("http://127.0.0.1:{port}/mcp");

    // The era is detected: a 2026-07-28 server. Nothing is listed, exit 9.
    let o = tessera(&["tasks", "list", &url]);
    assert_eq!(o.status.code(), Some(9), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("does not support tasks/list")
            && e.contains("2026-07-28")
            && e.contains("tessera tasks get TASK-ID"),
        "{e}"
    );
    assert!(o.stdout.is_empty());

    // 2025-06-18 has no tasks at all: the server's -32601 becomes exit 9.
    let o = tessera(&["tasks", "list", "--protocol-version", "2025-06-18", &url]);
    assert_eq!(o.status.code(), Some(9), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("does not support tasks/list"),
        "{}",
        stderr(&o)
    );

    // A 2025-11-25 session of its own has no tasks: it says why, exit 9.
    let o = tessera(&["tasks", "list", "--protocol-version", "2025-11-25", &url]);
    assert_eq!(o.status.code(), Some(9), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no tasks in this session")
            && stderr(&o).contains("belong to the session that created them"),
        "{}",
        stderr(&o)
    );
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// The task id `tessera call --task` prints on its first line.
fn task_id(o: &Output) -> String {
    let e = stderr(o);
    e.lines()
        .find_map(|l| l.strip_prefix("task "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no task id in {e}"))
        .to_owned()
}

/// `tessera call --task --era legacy` shows the task's progress and says the
/// task lives in its session; a later `tasks get`/`list` in a new session
/// says why it cannot see it (exit 9). In 2026-07-28 the follow-up command
/// `call --task` prints works from another process.
#[tokio::test]
async fn call_task_follow_ups_work_or_say_why_not() {
    let (child, port) = common::spawn_serving(
        Command::new(BIN).args(["serve", "--http", "127.0.0.1:0"]),
        Duration::from_secs(30),
    );
    let _server = common::Running(child);
    let url = format!("http://127.0.0.1:{port}/mcp");

    let o = tessera(&[
        "call",
        "sleep",
        r#"{"ms":250}"#,
        "--task",
        "--era",
        "legacy",
        &url,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "slept 250 ms");
    let e = stderr(&o);
    // Progress every 100 ms, then the last report at the end: at least two
    // lines, the last one complete.
    let reports: Vec<&str> = e.lines().filter(|l| l.starts_with("progress: ")).collect();
    assert!(reports.len() >= 2, "{e}");
    assert_eq!(reports.last(), Some(&"progress: 250/250 (100%)"), "{e}");
    assert!(
        e.contains("lives in this command's 2025-11-25 session"),
        "{e}"
    );
    let id = task_id(&o);

    let o = tessera(&["tasks", "get", &id, "--era", "legacy", &url]);
    assert_eq!(o.status.code(), Some(9), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("task {id} is not in this session"))
            && stderr(&o).contains("belong to the session that created them"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());

    // 2026-07-28: the printed follow-up is a command that works.
    let o = tessera(&["call", "sleep", r#"{"ms":50}"#, "--task", &url]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let id = task_id(&o);
    let e = stderr(&o);
    let follow = format!("tessera tasks get {id} {url}");
    assert!(e.contains(&follow), "{e}");
    let o = tessera(&["tasks", "get", &id, &url]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&format!("{id} completed")),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// A task id that starts with `-` (as ids of other servers may) is an id,
/// not an option: the command gets as far as connecting.
#[test]
fn a_task_id_may_start_with_a_hyphen() {
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    for verb in ["get", "result", "cancel"] {
        let o = tessera(&["tasks", verb, "-CX5MukxPPA5oqaWXHAHYw", &url]);
        assert_eq!(o.status.code(), Some(3), "{verb}: {}", stderr(&o));
    }
}
