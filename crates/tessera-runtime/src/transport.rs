//! [`Transport`]: what the driver reads frames from and writes messages to.

use std::future::Future;

use bytes::BytesMut;
use tessera_proto::Transmit;
use tessera_proto::decode::Inbound;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::lines::{LineFrame, LineReader};

/// One inbound frame.
#[derive(Debug)]
pub enum Incoming {
    /// Raw bytes of one message or batch (a stdio line, an HTTP body).
    Bytes(BytesMut),
    /// An already decoded frame.
    Decoded(Inbound),
    /// A result response the transport already read as far as its id and
    /// its result's text
    /// ([`RawResult::read_response`](tessera_proto::RawResult::read_response)
    /// of `bytes`): the engine takes the answer to a request it sent for a
    /// result as text without reading `bytes` again, and reads `bytes` as
    /// a [`Bytes`](Incoming::Bytes) frame otherwise
    /// ([`Engine::handle_result`](tessera_proto::Engine::handle_result)).
    Result {
        /// The whole message.
        bytes: bytes::Bytes,
        /// The id of the request it answers.
        id: tessera_types::RequestId,
        /// Its result, as text.
        result: tessera_proto::RawResult,
    },
    /// A frame with values for the handlers of the requests it carries (HTTP
    /// headers, authentication, stream control).
    WithExtensions {
        /// The frame.
        frame: Box<Incoming>,
        /// What the handlers of its requests can read.
        extensions: crate::Extensions,
    },
    /// A frame whose sender waits until the engine has handled it: `done`
    /// fires once it has (and, with
    /// [`ConnectionOptions::export_session`](crate::ConnectionOptions::export_session),
    /// once the session state it changed is exported).
    Synced {
        /// The frame (bytes or decoded).
        frame: Box<Incoming>,
        /// Fired when the frame is handled.
        done: tokio::sync::oneshot::Sender<()>,
    },
    /// A frame that exceeded the size limit: the answer to a request this
    /// side sent (`response_to`) fails that request with
    /// [`CallError::TooLarge`](tessera_proto::CallError::TooLarge); anything
    /// else is answered with `-32600`.
    TooLong {
        /// Its size in bytes (at least).
        len: usize,
        /// The limit.
        limit: usize,
        /// The id of the response it was, when that could be read.
        response_to: Option<tessera_types::RequestId>,
    },
}

/// A bidirectional message channel the driver runs a connection over.
pub trait Transport: Send + 'static {
    /// The next inbound frame, `None` when the peer closed its side.
    /// Must be cancel-safe: the driver polls it inside `select!`.
    fn recv(&mut self) -> impl Future<Output = std::io::Result<Option<Incoming>>> + Send;

    /// Writes messages (drains `out`).
    fn send(&mut self, out: &mut Vec<Transmit>)
    -> impl Future<Output = std::io::Result<()>> + Send;

    /// Flushes and closes the sending side.
    fn close(&mut self) -> impl Future<Output = ()> + Send;
}

/// Newline-delimited JSON-RPC over a byte stream pair (stdio, a child
/// process, a socket).
///
/// Reading never waits on writing: [`Transport::send`] queues the bytes and
/// writes what the peer takes at once, and the rest is written while
/// [`Transport::recv`] waits for the next frame, so a peer that writes a
/// flood while not reading what it is sent cannot stop this side from
/// reading. The queue is bounded in bytes ([`LineTransport::MAX_QUEUED`]
/// beyond one message of the size limit): past it, `send` waits until the
/// peer has read enough.
#[derive(Debug)]
pub struct LineTransport<R, W> {
    reader: LineReader<R>,
    writer: W,
    limit: usize,
    /// Bytes for the peer; those before `head` are written.
    queued: Vec<u8>,
    head: usize,
    /// Written bytes not yet flushed.
    unflushed: bool,
    /// The peer's side ended: nothing more to read, so `send` writes all.
    read_done: bool,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// How many bytes may wait for the peer to read them, beyond one
    /// message of the size limit, before [`Transport::send`] waits.
    pub const MAX_QUEUED: usize = 1024 * 1024;

    /// Wraps a reader and a writer; lines over `max_message_size` bytes are refused.
    pub fn new(reader: R, writer: W, max_message_size: usize) -> Self {
        LineTransport {
            reader: LineReader::new(reader, max_message_size),
            writer,
            limit: max_message_size,
            queued: Vec::with_capacity(8 * 1024),
            head: 0,
            unflushed: false,
            read_done: false,
        }
    }

    fn pending(&self) -> usize {
        self.queued.len() - self.head
    }

    /// Records `n` bytes written.
    fn wrote(&mut self, n: usize) -> std::io::Result<()> {
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        self.head += n;
        self.unflushed = true;
        if self.head == self.queued.len() {
            self.queued.clear();
            self.head = 0;
        } else if self.head >= 64 * 1024 && self.head * 2 >= self.queued.len() {
            // Written bytes are not kept: at most as many as are pending.
            self.queued.drain(..self.head);
            self.head = 0;
        }
        Ok(())
    }

    /// Writes some of the queue: one `write` call, cancel-safe (nothing is
    /// counted as written unless the call completed).
    async fn write_some(&mut self) -> std::io::Result<()> {
        let n = self.writer.write(&self.queued[self.head..]).await?;
        self.wrote(n)
    }

    /// Writes what the peer takes now, without waiting.
    fn write_ready(&mut self) -> std::io::Result<()> {
        use futures::FutureExt as _;
        while self.pending() > 0 {
            match self.write_some().now_or_never() {
                Some(r) => r?,
                None => return Ok(()),
            }
        }
        if self.unflushed {
            if let Some(r) = self.writer.flush().now_or_never() {
                r?;
                self.unflushed = false;
            }
        }
        Ok(())
    }

    /// Writes and flushes the whole queue.
    async fn drain(&mut self) -> std::io::Result<()> {
        while self.pending() > 0 {
            self.write_some().await?;
        }
        if self.unflushed {
            self.writer.flush().await?;
            self.unflushed = false;
        }
        Ok(())
    }
}

impl<R, W> Transport for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    async fn recv(&mut self) -> std::io::Result<Option<Incoming>> {
        let frame = self.next_frame().await;
        if !matches!(frame, Ok(Some(_))) {
            self.read_done = true;
        }
        frame
    }

    async fn send(&mut self, out: &mut Vec<Transmit>) -> std::io::Result<()> {
        for t in out.drain(..) {
            // Serialised straight into the queue: no copy per message.
            t.message.write_to(&mut self.queued)?;
            self.queued.push(b'\n');
        }
        if self.read_done || self.pending() > self.limit.saturating_add(Self::MAX_QUEUED) {
            // Nothing more to read, or the peer does not read: write it all
            // now (the queue stays bounded).
            self.drain().await
        } else {
            self.write_ready()
        }
    }

    async fn close(&mut self) {
        let _ = self.drain().await;
        let _ = self.writer.shutdown().await;
    }
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// The next frame, writing what is queued while waiting for it; every
    /// branch is cancel-safe (the driver polls `recv` inside `select!`).
    async fn next_frame(&mut self) -> std::io::Result<Option<Incoming>> {
        let frame = loop {
            if self.pending() == 0 && !self.unflushed {
                break self.reader.next().await?;
            }
            let out = write_out(&mut self.writer, &self.queued[self.head..]);
            let step = tokio::select! {
                biased;
                frame = self.reader.next() => break frame?,
                step = out => step?,
            };
            match step {
                Step::Wrote(n) => self.wrote(n)?,
                Step::Flushed => self.unflushed = false,
            }
        };
        Ok(frame.map(|f| match f {
            LineFrame::Line(b) => Incoming::Bytes(b),
            LineFrame::TooLong { len, response_to } => Incoming::TooLong {
                len,
                limit: self.limit,
                response_to,
            },
        }))
    }
}

/// What one turn of writing did.
enum Step {
    Wrote(usize),
    Flushed,
}

/// One `write` of `pending` (when there is some), else a flush. Cancel-safe:
/// a write counts only once it completed; a flush can be asked again.
async fn write_out<W: AsyncWrite + Unpin>(writer: &mut W, pending: &[u8]) -> std::io::Result<Step> {
    if pending.is_empty() {
        writer.flush().await?;
        Ok(Step::Flushed)
    } else {
        Ok(Step::Wrote(writer.write(pending).await?))
    }
}

/// A transport made of two channels: frames in, transmits out. Used by
/// transports that route messages themselves (Streamable HTTP) and by tests.
#[derive(Debug)]
pub struct ChannelTransport {
    inbound: mpsc::Receiver<Incoming>,
    outbound: mpsc::UnboundedSender<Transmit>,
}

impl ChannelTransport {
    /// A transport and the two ends the owner keeps: the sender of inbound
    /// frames and the receiver of outbound transmits.
    pub fn new(
        capacity: usize,
    ) -> (
        ChannelTransport,
        mpsc::Sender<Incoming>,
        mpsc::UnboundedReceiver<Transmit>,
    ) {
        let (in_tx, in_rx) = mpsc::channel(capacity.max(1));
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        (
            ChannelTransport {
                inbound: in_rx,
                outbound: out_tx,
            },
            in_tx,
            out_rx,
        )
    }
}

impl Transport for ChannelTransport {
    async fn recv(&mut self) -> std::io::Result<Option<Incoming>> {
        Ok(self.inbound.recv().await)
    }

    async fn send(&mut self, out: &mut Vec<Transmit>) -> std::io::Result<()> {
        for t in out.drain(..) {
            self.outbound.send(t).map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::BrokenPipe, "receiver gone")
            })?;
        }
        Ok(())
    }

    async fn close(&mut self) {}
}
