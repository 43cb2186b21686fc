//! [`LineSession`]: a client that speaks raw newline-delimited JSON-RPC, for
//! tests that check a server's exact answers (no client library between).

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// How long [`LineSession::call`] waits for its answer.
const ANSWER_WAIT: Duration = Duration::from_secs(30);

/// One connection's client side, sending JSON values as lines and reading
/// the answers back as values.
pub struct LineSession<R, W> {
    read: BufReader<R>,
    write: W,
    next: i64,
}

impl<R, W> std::fmt::Debug for LineSession<R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineSession")
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}

impl<R, W> LineSession<R, W>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    /// A session over `read`/`write`, with no handshake yet.
    pub fn new(read: R, write: W) -> Self {
        LineSession {
            read: BufReader::new(read),
            write,
            next: 0,
        }
    }

    /// A session after a legacy handshake at `version` (`initialize`, its
    /// answer checked, then `notifications/initialized`).
    pub async fn legacy(read: R, write: W, version: &str) -> Self {
        let mut s = Self::new(read, write);
        let r = s
            .call(
                "initialize",
                json!({"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "line-session", "version": "1"}}),
            )
            .await;
        assert_eq!(r["result"]["protocolVersion"], version, "{r}");
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        s
    }

    /// Writes `message` as one line.
    pub async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).expect("a JSON value serializes");
        line.push(b'\n');
        self.write
            .write_all(&line)
            .await
            .expect("the write side is open");
    }

    /// Sends request `method` with `params` and returns its answer (the
    /// whole response), skipping what the server sends meanwhile. Panics
    /// when no answer comes within 30 s.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let mut line = String::new();
            let n = tokio::time::timeout(ANSWER_WAIT, self.read.read_line(&mut line))
                .await
                .expect("an answer in time")
                .expect("the read side is readable");
            assert!(n > 0, "the connection ended before the answer to {method}");
            let m: Value = serde_json::from_str(&line).expect("each line is JSON");
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return m;
            }
        }
    }
}
