//! `--sampling-command CMD`: a sampling request answered by a command. The
//! command runs under `sh -c`, gets the request params as one JSON document
//! on stdin, and prints either a `CreateMessageResult` in JSON or plain text
//! (taken as the assistant's reply).

use std::process::Stdio;
use std::time::Duration;

use tessera::types::{CreateMessageRequestParams, CreateMessageResult, ErrorObject};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// The most output read from the command.
const MAX_OUTPUT: u64 = 16 * 1024 * 1024;

/// Runs `cmd` for one sampling request.
pub async fn run(
    cmd: &str,
    req: &CreateMessageRequestParams,
    timeout: Duration,
) -> Result<CreateMessageResult, ErrorObject> {
    let fail = |why: String| {
        eprintln!("tessera: --sampling-command: {why}");
        ErrorObject::internal(format!("the sampling command failed: {why}"))
    };
    let input = serde_json::to_vec(req).map_err(|e| fail(e.to_string()))?;
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| fail(format!("cannot start sh -c {cmd:?}: {e}")))?;
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let work = async {
        if let Some(mut s) = stdin.take() {
            // A command that does not read its input is fine.
            let _ = s.write_all(&input).await;
            drop(s);
        }
        let mut out = Vec::new();
        if let Some(s) = stdout.take() {
            s.take(MAX_OUTPUT)
                .read_to_end(&mut out)
                .await
                .map_err(|e| format!("reading its output: {e}"))?;
        }
        let status = child
            .wait()
            .await
            .map_err(|e| format!("waiting for it: {e}"))?;
        Ok::<_, String>((status, out))
    };
    let (status, out) = match crate::ask::bounded(timeout) {
        Some(t) => tokio::time::timeout(t, work)
            .await
            .map_err(|_| fail(format!("no answer within {t:?}")))?,
        None => work.await,
    }
    .map_err(fail)?;
    if !status.success() {
        return Err(fail(format!("it exited with {status}")));
    }
    let text = String::from_utf8(out).map_err(|_| fail("its output is not UTF-8".into()))?;
    let trimmed = text.trim();
    if trimmed.starts_with('{') {
        return serde_json::from_str(trimmed)
            .map_err(|e| fail(format!("its JSON output is not a CreateMessageResult: {e}")));
    }
    if trimmed.is_empty() {
        return Err(fail("it printed nothing".into()));
    }
    Ok(crate::ask::text_reply(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> CreateMessageRequestParams {
        serde_json::from_value(serde_json::json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 10
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn text_json_and_failures() {
        let t = Duration::from_secs(20);
        let r = run("cat >/dev/null; echo hello", &req(), t).await.unwrap();
        assert_eq!(r.model, "sampling-command");
        assert_eq!(serde_json::to_value(&r.content).unwrap()["text"], "hello");
        // The request arrives on stdin.
        let r = run(
            r#"grep -q '"maxTokens":10' && echo '{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}'"#,
            &req(),
            t,
        )
        .await
        .unwrap();
        assert_eq!(r.model, "m");
        assert!(
            run("exit 3", &req(), t)
                .await
                .unwrap_err()
                .message
                .contains("exited")
        );
        assert!(
            run("echo '{bad'", &req(), t)
                .await
                .unwrap_err()
                .message
                .contains("not a CreateMessageResult")
        );
        assert!(
            run("true", &req(), t)
                .await
                .unwrap_err()
                .message
                .contains("printed nothing")
        );
    }
}
