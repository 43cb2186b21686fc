//! `tessera serve --http … --task-store sqlite:FILE` survives `kill -9`: a
//! task finished before the kill keeps its result, a task running at the
//! kill is reported `failed` (never stuck in `working`). The real binary,
//! driven over HTTP on the 2026-07-28 wire by the same client.
//! Also the CLI's task commands: `tessera call … --task` followed to the
//! end or interrupted with Ctrl-C (the task is cancelled), and `tessera tasks`.

use crate::common;

use std::process::{Command, Stdio};

use std::time::{Duration, Instant};
use tessera_testkit::Running;

use serde_json::{Value, json};

const DEADLINE: Duration = Duration::from_secs(30);

/// A `tessera serve` child process; killed when dropped.
struct Served {
    child: Running,
    port: u16,
}

/// Starts the server on a port of its choosing and waits (bounded) until it listens.
async fn start(store: &str) -> Served {
    let (child, port) = common::spawn_serving(
        Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(["--task-store", store]),
        DEADLINE,
    );
    Served {
        child: Running(child),
        port,
    }
}

/// One 2026-07-28 request from the client `restart-test`, declaring the
/// Tasks extension; returns the JSON-RPC message.
async fn rpc(s: &Served, method: &str, name: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "restart-test", "version": "1"}
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let r = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{}/mcp", s.port))
        .timeout(Duration::from_secs(10))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let sse = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"));
    let text = r.text().await.unwrap();
    if !sse {
        return serde_json::from_str(&text).unwrap();
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m.get("id").is_some())
        .unwrap_or_else(|| panic!("no response in {text}"))
}

async fn sleep_task(s: &Served, ms: u64) -> String {
    let r = rpc(
        s,
        "tools/call",
        "sleep",
        json!({"name": "sleep", "arguments": {"ms": ms}}),
    )
    .await;
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    r["result"]["taskId"].as_str().unwrap().to_owned()
}

async fn get(s: &Served, id: &str) -> Value {
    rpc(s, "tasks/get", id, json!({"taskId": id})).await
}

#[tokio::test]
async fn finished_tasks_survive_kill_9_and_running_ones_fail() {
    let dir = std::env::temp_dir().join(format!(
        "tessera-task-restart-{}-{}",
        std::process::id(),
        Instant::now().elapsed().as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let store = format!("sqlite:{}", dir.join("tasks.db").display());

    let mut first = start(&store).await;
    let done = sleep_task(&first, 10).await;
    let running = sleep_task(&first, 60_000).await;
    // Wait (bounded) for the short one to finish.
    let until = Instant::now() + DEADLINE;
    loop {
        let t = get(&first, &done).await;
        if t["result"]["status"] == "completed" {
            break;
        }
        assert!(Instant::now() < until, "the 10 ms task did not finish: {t}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(get(&first, &running).await["result"]["status"], "working");
    // kill -9 (SIGKILL on Unix): no chance to clean up.
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    drop(first);

    let second = start(&store).await;
    let t = get(&second, &done).await;
    assert_eq!(t["result"]["status"], "completed", "{t}");
    assert_eq!(
        t["result"]["result"]["content"][0]["text"], "slept 10 ms",
        "{t}"
    );
    let t = get(&second, &running).await;
    assert_eq!(t["result"]["status"], "failed", "{t}");
    let msg = t["result"]["statusMessage"].as_str().unwrap_or_default();
    assert!(msg.contains("restarted"), "{t}");
    assert_eq!(t["result"]["error"]["code"], -32603, "{t}");
    // Another client does not see them.
    let mut other = json!({"taskId": done});
    other["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "someone-else", "version": "1"}
    });
    let r = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{}/mcp", second.port))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tasks/get")
        .header("mcp-name", done.as_str())
        .body(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": other}).to_string(),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(r.contains("-32602"), "{r}");
    drop(second);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `tessera call … --task` prints the task id, one line per status change
/// (stderr is not a terminal here) and the result; `tessera tasks get` and
/// `tessera tasks cancel` follow a task by id.
#[tokio::test]
async fn the_cli_runs_and_follows_tasks() {
    let served = start("memory").await;
    let url = format!("http://127.0.0.1:{}/mcp", served.port);
    let bin = env!("CARGO_BIN_EXE_tessera");
    let out = tokio::process::Command::new(bin)
        .args(["call", "sleep", r#"{"ms":200}"#, "--task", &url])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "slept 200 ms");
    let id = stderr
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("task "))
        .unwrap_or_else(|| panic!("no task id first: {stderr}"))
        .to_owned();
    assert!(stderr.contains(&format!("{id} completed")), "{stderr}");
    let out = tokio::process::Command::new(bin)
        .args(["tasks", "get", &id, &url])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("{id} completed")
    );
    // A long task, cancelled by id from another process.
    let running = sleep_task_as(&served, "tessera-cli").await;
    let out = tokio::process::Command::new(bin)
        .args(["tasks", "cancel", &running, &url])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = tokio::process::Command::new(bin)
        .args(["tasks", "get", &running, &url])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let line = String::from_utf8_lossy(&out.stdout);
    assert!(line.starts_with(&format!("{running} cancelled")), "{line}");
    // Unknown ids are an error, exit 1.
    let out = tokio::process::Command::new(bin)
        .args(["tasks", "get", "no-such-task", &url])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

/// A 60 s `sleep` task created by the client named `client` (the CLI's
/// tasks are owned by its client name, `tessera-cli`).
async fn sleep_task_as(s: &Served, client: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "sleep", "arguments": {"ms": 60000},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
            "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"}
        }
    }});
    let text = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{}/mcp", s.port))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "sleep")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let v: Value = serde_json::from_str(&text)
        .or_else(|_| {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .find_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .ok_or(())
        })
        .unwrap_or_else(|_| panic!("no JSON in {text}"));
    v["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_owned()
}

/// Ctrl-C during `tessera call … --task`: the CLI sends `tasks/cancel`, says
/// so and exits 130; on the 2026-07-28 wire the server then reports the task
/// `cancelled` to another `tessera tasks get` (legacy tasks belong to the
/// session, which has ended, so there the acknowledged cancel is the proof).
#[tokio::test]
async fn ctrl_c_cancels_the_task() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let served = start("memory").await;
    let url = format!("http://127.0.0.1:{}/mcp", served.port);
    let bin = env!("CARGO_BIN_EXE_tessera");
    for era in ["modern", "legacy"] {
        let mut child = tokio::process::Command::new(bin)
            .args([
                "call",
                "sleep",
                r#"{"ms":60000}"#,
                "--task",
                "--era",
                era,
                &url,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let first = tokio::time::timeout(DEADLINE, lines.next_line())
            .await
            .expect("the task id within the deadline")
            .unwrap()
            .unwrap_or_default();
        let id = first
            .strip_prefix("task ")
            .unwrap_or_else(|| panic!("{era}: no task id first: {first:?}"))
            .to_owned();
        let pid = child.id().expect("running").to_string();
        let kill = Command::new("kill").args(["-INT", &pid]).status().unwrap();
        assert!(kill.success());
        let mut rest = Vec::new();
        let status = tokio::time::timeout(DEADLINE, async {
            while let Ok(Some(l)) = lines.next_line().await {
                rest.push(l);
            }
            child.wait().await.unwrap()
        })
        .await
        .expect("tessera exits within the deadline after Ctrl-C");
        assert_eq!(status.code(), Some(130), "{era}: {rest:?}");
        assert!(
            rest.iter().any(|l| l == &format!("task {id} cancelled")),
            "{era}: {rest:?}"
        );
        if era == "modern" {
            let out = tokio::process::Command::new(bin)
                .args(["tasks", "get", &id, &url])
                .stdin(Stdio::null())
                .output()
                .await
                .unwrap();
            let line = String::from_utf8_lossy(&out.stdout);
            assert!(line.starts_with(&format!("{id} cancelled")), "{line}");
        }
    }
}
