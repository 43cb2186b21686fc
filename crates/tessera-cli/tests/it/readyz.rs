//! The task store of `tessera serve --http` from outside: `GET /readyz`
//! answers `200 ok` while the SQLite task store is sound and, once its file
//! is deleted, `503` naming the reason (issue 32 item 14: a deleted store
//! went unnoticed until the restart that lost its tasks), without a token
//! on a protected server; and `--max-tasks` caps the tasks stored (item 8).

use crate::common;

use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_reports_a_deleted_task_store() {
    let dir = std::env::temp_dir().join(format!("tessera-readyz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("tasks.db");
    let asrv = tessera_auth::testing::TestAuthorizationServer::start()
        .await
        .unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tessera"));
    cmd.args(["serve", "--http", "127.0.0.1:0", "--task-store"])
        .arg(format!("sqlite:{}", db.display()))
        .arg("--auth-issuer")
        .arg(asrv.issuer())
        .arg("--auth-jwks")
        .arg(asrv.jwks_uri());
    let (child, port) = common::spawn_serving(&mut cmd, DEADLINE);
    let _server = common::Running(child);
    let url = format!("http://127.0.0.1:{port}/readyz");

    let r = reqwest::get(&url).await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "ok\n");
    // The MCP endpoint still wants a token.
    let r = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/mcp"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let r = reqwest::get(&url).await.unwrap();
    assert_eq!(r.status(), 503);
    let text = r.text().await.unwrap();
    assert!(text.contains("was deleted"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_tasks_refuses_a_task_naming_the_limit() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tessera"));
    cmd.args(["serve", "--http", "127.0.0.1:0", "--max-tasks", "1"]);
    let (child, port) = common::spawn_serving(&mut cmd, DEADLINE);
    let _server = common::Running(child);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let call = || {
        Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args(["call", "sleep", r#"{"ms":1}"#, "--task", &url])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let first = call();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let second = call();
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{err}");
    assert!(
        err.contains("too many tasks") && err.contains("max_stored"),
        "{err}"
    );
}
