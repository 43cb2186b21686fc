//! `tessera replay`: a transcript exported by `tessera inspect`, replayed
//! against `tessera serve --stdio`; the same answers exit 0, a changed one
//! exits 12 and says which.

use crate::common;

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

async fn post(http: &reqwest::Client, i: &common::Inspector, path: &str, body: Value) -> Value {
    let r = http
        .post(format!("{}/api/{path}", i.base))
        .bearer_auth(&i.token)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{path}");
    r.json().await.unwrap()
}

fn replay(file: &std::path::Path, json: bool) -> std::process::Output {
    let bin = env!("CARGO_BIN_EXE_tessera");
    let mut c = Command::new(bin);
    c.arg("replay").arg(file);
    if json {
        c.arg("--json");
    }
    c.args(["--", bin, "serve", "--stdio"]).output().unwrap()
}

#[tokio::test]
async fn a_recorded_session_replays_the_same_and_a_changed_answer_differs() {
    let inspector = common::start_inspect(&[], Duration::from_secs(30));
    let http = reqwest::Client::new();
    let id = post(
        &http,
        &inspector,
        "connections",
        json!({"command": env!("CARGO_BIN_EXE_tessera"), "args": ["serve", "--stdio"]}),
    )
    .await["id"]
        .as_u64()
        .unwrap();
    post(
        &http,
        &inspector,
        &format!("connections/{id}/tools/call"),
        json!({"name": "add", "arguments": {"a": 40, "b": 2}}),
    )
    .await;
    post(
        &http,
        &inspector,
        &format!("connections/{id}/resources/read"),
        json!({"uri": "test://static-text"}),
    )
    .await;
    let transcript: Value = http
        .get(format!("{}/api/transcript", inspector.base))
        .bearer_auth(&inspector.token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let same = dir.join("same.json");
    std::fs::write(&same, transcript.to_string()).unwrap();

    let out = replay(&same, false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("same     tools/call add"), "{stdout}");
    assert!(
        stdout.contains("same     resources/read test://static-text"),
        "{stdout}"
    );
    assert!(
        stdout.contains("2 request(s) replayed, 0 differ"),
        "{stdout}"
    );

    // The recorded sum changed: that request differs, exit 12.
    let changed = transcript
        .to_string()
        .replace(r#""text":"42""#, r#""text":"43""#);
    assert_ne!(changed, transcript.to_string());
    let file = dir.join("changed.json");
    std::fs::write(&file, changed).unwrap();
    let out = replay(&file, true);
    assert_eq!(out.status.code(), Some(12));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["equal"], false);
    let add = &doc["requests"][0];
    assert_eq!(add["equal"], false);
    assert_eq!(add["expected"]["result"]["content"][0]["text"], "43");
    assert_eq!(add["actual"]["result"]["content"][0]["text"], "42");
    assert_eq!(doc["requests"][1]["equal"], true);

    // Not a transcript: a usage error.
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{}").unwrap();
    let out = replay(&bad, false);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tessera-inspect-transcript"));
    let _ = std::fs::remove_dir_all(&dir);
}
