//! `GET /readyz` of `tessera serve --http`: `200 ok` while the SQLite task
//! store is sound; once its file is deleted, `503` naming the reason (issue
//! 32 item 14: a deleted store went unnoticed until the restart that lost
//! its tasks). It answers without a token on a protected server.

mod common;

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
