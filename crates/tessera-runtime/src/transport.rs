//! [`Transport`]: what the driver reads frames from and writes messages to.

use std::future::Future;

use bytes::BytesMut;
use tessera_proto::Transmit;
use tessera_proto::decode::Inbound;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::lines::{Frame, LineReader};

/// One inbound frame.
#[derive(Debug)]
pub enum Incoming {
    /// Raw bytes of one message or batch (a stdio line, an HTTP body).
    Bytes(BytesMut),
    /// An already decoded frame.
    Decoded(Inbound),
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
#[derive(Debug)]
pub struct LineTransport<R, W> {
    reader: LineReader<R>,
    writer: W,
    limit: usize,
    buf: Vec<u8>,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// Wraps a reader and a writer; lines over `max_message_size` bytes are refused.
    pub fn new(reader: R, writer: W, max_message_size: usize) -> Self {
        LineTransport {
            reader: LineReader::new(reader, max_message_size),
            writer,
            limit: max_message_size,
            buf: Vec::with_capacity(8 * 1024),
        }
    }
}

impl<R, W> Transport for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    async fn recv(&mut self) -> std::io::Result<Option<Incoming>> {
        Ok(self.reader.next().await?.map(|f| match f {
            Frame::Line(b) => Incoming::Bytes(b),
            Frame::TooLong { len, response_to } => Incoming::TooLong {
                len,
                limit: self.limit,
                response_to,
            },
        }))
    }

    async fn send(&mut self, out: &mut Vec<Transmit>) -> std::io::Result<()> {
        self.buf.clear();
        for t in out.drain(..) {
            // Serialised straight into the write buffer: no copy per message.
            t.message.write_to(&mut self.buf)?;
            self.buf.push(b'\n');
        }
        self.writer.write_all(&self.buf).await?;
        self.writer.flush().await
    }

    async fn close(&mut self) {
        let _ = self.writer.shutdown().await;
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
