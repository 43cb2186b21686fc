//! [`Tap`]: a transport wrapper that copies every JSON-RPC message of a
//! connection, both ways and in the order the connection handles them, into
//! the [`Journal`]. It sits between the client's connection core and the
//! real transport (a child's stdio, Streamable HTTP), so what it records is
//! exactly what crossed the wire.

use tessera::client::{Connector, Launch, Started};
use tessera::proto::Transmit;
use tessera::proto::decode::Inbound;
use tessera::runtime::{ChildCommand, ChildProcess, Incoming, LineTransport, Transport};

use super::journal::Journal;

/// A message the server sent that is not valid JSON-RPC, as recorded.
#[derive(serde::Serialize)]
struct Invalid<'a> {
    invalid: &'a str,
}

/// A `notice` event: something the page should know about a connection.
#[derive(serde::Serialize)]
struct Notice {
    connection: u64,
    text: String,
}

/// A `console` event: a line a stdio server wrote on stderr.
#[derive(serde::Serialize)]
struct ConsoleLine<'a> {
    connection: u64,
    line: &'a str,
    cut: bool,
}

/// A transport whose messages are recorded.
pub struct Tap<T> {
    inner: T,
    journal: Journal,
    conn: u64,
    buf: Vec<u8>,
}

impl<T: Transport> Tap<T> {
    /// Wraps `inner`; its messages are recorded as connection `conn`'s.
    pub fn new(inner: T, journal: Journal, conn: u64) -> Self {
        Tap {
            inner,
            journal,
            conn,
            buf: Vec::new(),
        }
    }

    fn record_incoming(&mut self, frame: &Incoming) {
        match frame {
            Incoming::Bytes(b) => self.journal.message(self.conn, "in", b),
            Incoming::Result { bytes, .. } => self.journal.message(self.conn, "in", bytes),
            Incoming::Decoded(d) => {
                self.buf.clear();
                let written = match d {
                    Inbound::Message(m) => serde_json::to_writer(&mut self.buf, m),
                    Inbound::Batch(items) => {
                        let ok: Vec<_> = items.iter().filter_map(|i| i.as_ref().ok()).collect();
                        serde_json::to_writer(&mut self.buf, &ok)
                    }
                    Inbound::Invalid(r) => serde_json::to_writer(
                        &mut self.buf,
                        &Invalid {
                            invalid: &r.error.message,
                        },
                    ),
                };
                if written.is_ok() {
                    self.journal.message(self.conn, "in", &self.buf);
                }
            }
            Incoming::WithExtensions { frame, .. } | Incoming::Synced { frame, .. } => {
                self.record_incoming(frame)
            }
            Incoming::TooLong { len, limit, .. } => self.journal.record(
                "notice",
                Notice {
                    connection: self.conn,
                    text: format!(
                        "the server sent a message of {len} bytes, over the limit of {limit}: refused"
                    ),
                },
            ),
        }
    }
}

impl<T: Transport> Transport for Tap<T> {
    async fn recv(&mut self) -> std::io::Result<Option<Incoming>> {
        let frame = self.inner.recv().await?;
        if let Some(f) = &frame {
            self.record_incoming(f);
        }
        Ok(frame)
    }

    async fn send(&mut self, out: &mut Vec<Transmit>) -> std::io::Result<()> {
        for t in out.iter() {
            self.buf.clear();
            if t.message.write_to(&mut self.buf).is_ok() {
                self.journal.message(self.conn, "out", &self.buf);
            }
        }
        self.inner.send(out).await
    }

    async fn close(&mut self) {
        self.inner.close().await
    }
}

/// Starts a stdio server as a child process, its stdio tapped. Serves
/// reconnections too (each starts the command again).
pub struct TappedChild {
    /// The command.
    pub command: ChildCommand,
    /// Where messages are recorded.
    pub journal: Journal,
    /// The connection's id in the journal.
    pub conn: u64,
}

/// The longest stderr line recorded (a longer one is cut).
const MAX_CONSOLE_LINE: usize = 8 * 1024;

/// Records what a stdio server writes on stderr, line by line, as
/// `console` events, until it closes stderr.
async fn console(mut stderr: tokio::process::ChildStderr, journal: Journal, conn: u64) {
    use tokio::io::AsyncReadExt as _;
    let emit = |line: &[u8], cut: bool| {
        journal.record(
            "console",
            ConsoleLine {
                connection: conn,
                line: &String::from_utf8_lossy(line),
                cut,
            },
        )
    };
    let mut pending = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        pending.extend_from_slice(&chunk[..n]);
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let line = line.strip_suffix(b"\n").unwrap_or(&line);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            emit(
                &line[..line.len().min(MAX_CONSOLE_LINE)],
                line.len() > MAX_CONSOLE_LINE,
            );
        }
        if pending.len() > MAX_CONSOLE_LINE {
            emit(&pending[..MAX_CONSOLE_LINE], true);
            pending.clear();
        }
    }
    if !pending.is_empty() {
        emit(&pending, false);
    }
}

/// The largest message line accepted from a child server.
const MAX_LINE: usize = 16 * 1024 * 1024;

impl Connector for TappedChild {
    async fn start(&self, launch: Launch) -> std::io::Result<Started> {
        let (child, pipes, stderr) = ChildProcess::spawn_with_stderr(&self.command)?;
        tokio::spawn(console(stderr, self.journal.clone(), self.conn));
        let lines = LineTransport::new(pipes.stdout, pipes.stdin, MAX_LINE);
        Ok(launch
            .run(Tap::new(lines, self.journal.clone(), self.conn))
            .with_child(child))
    }
}
