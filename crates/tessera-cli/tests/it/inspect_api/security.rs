//! The security rules: the token, the Host and Origin checks, loopback binding.

use std::process::Command;

use serde_json::json;

use super::client::*;
use super::common::start_inspect;

#[tokio::test]
async fn the_token_host_and_origin_are_checked() {
    let inspector = start_inspect(&[], START);
    let http = reqwest::Client::new();
    let url = format!("{}/api/connections", inspector.base);
    let status = |r: reqwest::Response| r.status().as_u16();

    // Missing token.
    let r = http.get(&url).send().await.unwrap();
    assert_eq!(status(r), 401);
    // Also for the event stream.
    let r = http
        .get(format!("{}/api/events", inspector.base))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 401);
    // Wrong token (header or query).
    let r = http
        .get(&url)
        .bearer_auth("0".repeat(32))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 401);
    let r = http
        .get(format!("{}/api/events?token=nope", inspector.base))
        .send()
        .await
        .unwrap();
    let s = r.status().as_u16();
    let body = r.text().await.unwrap();
    assert_eq!(s, 401);
    assert!(body.contains("wrong token"), "{body}");
    // The right token.
    let ok = http
        .get(&url)
        .bearer_auth(&inspector.token)
        .send()
        .await
        .unwrap();
    assert_eq!(status(ok), 200);
    // A foreign Origin, even with the token.
    let r = http
        .get(&url)
        .bearer_auth(&inspector.token)
        .header("Origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 403);
    // The inspector's own origin is fine.
    let r = http
        .post(&url)
        .bearer_auth(&inspector.token)
        .header("Origin", &inspector.base)
        .json(&json!({"command": ""}))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 400);
    // A rebound name (DNS rebinding): refused even for the page.
    let port = inspector.base.rsplit(':').next().unwrap();
    let r = http
        .get(format!("{}/", inspector.base))
        .header("Host", format!("evil.example:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 403);
    // The page itself is served (no token needed), with a strict policy.
    let r = http
        .get(format!("{}/", inspector.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert!(r.text().await.unwrap().contains("tessera inspect"));
}

#[test]
fn a_non_loopback_host_is_refused_naming_the_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["inspect", "--host", "0.0.0.0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--host") && err.contains("--dangerously-bind-all"),
        "{err}"
    );
}

/// `--open` hands the very URL printed (token included) to the desktop's
/// opener (`xdg-open`, here a script on `PATH` that writes its argument into
/// a FIFO the test reads: no waiting on time).
#[test]
fn open_hands_the_printed_url_to_the_desktops_opener() {
    let dir = std::env::temp_dir().join(format!("inspect-open-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("opened");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let opener = dir.join("xdg-open");
    std::fs::write(
        &opener,
        "#!/bin/sh\nprintf '%s\\n' \"$1\" > \"$(dirname \"$0\")/opened\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let inspector =
        super::common::start_inspect_env(&["--open"], &[("PATH", path.as_str())], START);
    let (tx, rx) = std::sync::mpsc::channel();
    let reading = fifo.clone();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::read_to_string(reading));
    });
    let opened = rx
        .recv_timeout(START)
        .expect("the opener was never run")
        .unwrap();
    assert_eq!(opened.trim_end(), inspector.url);
    drop(inspector);
    let _ = std::fs::remove_dir_all(&dir);
}
