//! Shutting down a child process the way the stdio transport asks: close its
//! stdin, wait, SIGTERM its process group, then SIGKILL.

use std::time::{Duration, Instant};

use tessera_runtime::{ChildCommand, ChildProcess};

fn sh(script: &str, grace_ms: u64) -> ChildCommand {
    let mut c = ChildCommand::new("sh", ["-c", script]);
    c.inherit_stderr = false;
    c.shutdown_grace = Duration::from_millis(grace_ms);
    c
}

#[tokio::test]
async fn a_child_that_exits_on_eof_stops_when_stdin_closes() {
    // `cat` exits as soon as its input ends.
    let (child, pipes) = ChildProcess::spawn(&sh("cat >/dev/null", 5_000)).unwrap();
    drop(pipes);
    let started = Instant::now();
    let status = child.shutdown().await.unwrap();
    assert!(status.success(), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "it did not need a signal"
    );
}

#[tokio::test]
async fn a_child_that_ignores_eof_gets_sigterm() {
    let (child, pipes) = ChildProcess::spawn(&sh("exec sleep 60", 200)).unwrap();
    drop(pipes);
    let status = child.shutdown().await.unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(15), "{status:?}");
}

#[tokio::test]
async fn a_child_that_ignores_sigterm_gets_sigkill() {
    let (child, pipes) =
        ChildProcess::spawn(&sh("trap '' TERM; while :; do sleep 1; done", 200)).unwrap();
    drop(pipes);
    let status = child.shutdown().await.unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9), "{status:?}");
}

#[tokio::test]
async fn dropping_the_handle_leaves_no_orphan() {
    let (child, pipes) = ChildProcess::spawn(&sh("exec sleep 60", 100)).unwrap();
    let pid = child.id().unwrap();
    drop(pipes);
    drop(child);
    // The background shutdown reaps it; wait (bounded) for the pid to disappear.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false);
        if !alive {
            break;
        }
        assert!(Instant::now() < deadline, "child {pid} is still running");
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn spawn_with_stderr_hands_back_what_the_child_writes_there() {
    use tokio::io::AsyncReadExt as _;
    let (child, pipes, mut stderr) =
        ChildProcess::spawn_with_stderr(&sh("echo 'to stderr' >&2; cat >/dev/null", 5_000))
            .unwrap();
    drop(pipes);
    let mut said = String::new();
    stderr.read_to_string(&mut said).await.unwrap();
    assert_eq!(said, "to stderr\n");
    assert!(child.shutdown().await.unwrap().success());
}
