//! `tessera tasks list` where there is no listing: a 2026-07-28 server (the
//! tasks extension lists no tasks) and a legacy version without tasks get a
//! clear message and exit 9 ("unsupported"); a 2025-11-25 session lists.

mod common;

use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_tessera");

/// `tessera serve --http` on a free loopback port; killed on drop.
struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

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
    let _server = Serve(child);
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

    // A 2025-11-25 session lists its tasks (none yet): success, no output.
    let o = tessera(&["tasks", "list", "--protocol-version", "2025-11-25", &url]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        o.stdout.is_empty(),
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
