//! Bodies: [`McpBody`], the response body (empty, one buffer, or an SSE
//! stream), and reading a request body under a size limit.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use super::batch_scan::BatchScan;
use super::connection::ConnectionBusy;
use crate::sse;

/// The response body of every [`McpHttp`](super::McpHttp) response.
pub struct McpBody {
    kind: Kind,
}

enum Kind {
    Full(Option<Bytes>),
    Stream(Box<SseStream>),
}

impl std::fmt::Debug for McpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            Kind::Full(b) => f
                .debug_struct("McpBody")
                .field("len", &b.as_ref().map_or(0, Bytes::len))
                .finish(),
            Kind::Stream(_) => f.debug_struct("McpBody").field("sse", &true).finish(),
        }
    }
}

/// Runs a closure when dropped (the body was finished or abandoned).
pub(crate) struct OnDrop(Option<Box<dyn FnOnce() + Send + Sync>>);

impl OnDrop {
    pub(crate) fn new(f: impl FnOnce() + Send + Sync + 'static) -> Self {
        OnDrop(Some(Box::new(f)))
    }
}

impl Drop for OnDrop {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

/// The keep-alive of an SSE stream: its timer is made only once the stream
/// has nothing to send (a response stream that never waits never has one),
/// and moved on after traffic only when the stream waits again (not once per
/// event).
struct KeepAlive {
    every: Duration,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Something was sent since the timer was last set.
    traffic: bool,
}

impl KeepAlive {
    fn new(every: Duration) -> Self {
        KeepAlive {
            every,
            timer: None,
            traffic: false,
        }
    }

    /// The stream waits: whether a keep-alive comment is due (`every` since
    /// the stream last sent something, or since it started waiting).
    fn poll_due(&mut self, cx: &mut Context<'_>) -> bool {
        let every = self.every;
        let timer = match &mut self.timer {
            Some(t) => {
                if std::mem::take(&mut self.traffic) {
                    t.as_mut().reset(tokio::time::Instant::now() + every);
                }
                t
            }
            None => {
                self.traffic = false;
                self.timer.insert(Box::pin(tokio::time::sleep(every)))
            }
        };
        if timer.as_mut().poll(cx).is_ready() {
            timer.as_mut().reset(tokio::time::Instant::now() + every);
            return true;
        }
        false
    }
}

/// An SSE response stream fed by a bounded channel of encoded events.
pub(crate) struct SseStream {
    rx: mpsc::Receiver<Bytes>,
    keep_alive: Option<KeepAlive>,
    closing: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    /// Kept until the body is dropped: drop hooks and tracker tokens (one
    /// box of all of them).
    _guards: Option<Box<dyn Send + Sync>>,
    done: bool,
}

impl McpBody {
    /// An empty body.
    pub fn empty() -> Self {
        McpBody {
            kind: Kind::Full(None),
        }
    }

    /// A body of one buffer.
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        let b: Bytes = bytes.into();
        McpBody {
            kind: Kind::Full((!b.is_empty()).then_some(b)),
        }
    }

    /// An SSE stream: every item received is written as is; a keep-alive
    /// comment is written after `keep_alive` without traffic; the stream ends
    /// when the channel closes or `closing` fires.
    pub(crate) fn sse(
        rx: mpsc::Receiver<Bytes>,
        keep_alive: Option<Duration>,
        closing: Option<CancellationToken>,
        guards: Option<Box<dyn Send + Sync>>,
    ) -> Self {
        let keep_alive = keep_alive.filter(|d| !d.is_zero()).map(KeepAlive::new);
        McpBody {
            kind: Kind::Stream(Box::new(SseStream {
                rx,
                keep_alive,
                closing: closing.map(|t| Box::pin(t.cancelled_owned())),
                _guards: guards,
                done: false,
            })),
        }
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match &mut self.get_mut().kind {
            Kind::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Kind::Stream(s) => s.poll_next(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Full(b) => b.is_none(),
            Kind::Stream(s) => s.done,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Kind::Full(None) => SizeHint::with_exact(0),
            Kind::Stream(_) => SizeHint::default(),
        }
    }
}

impl SseStream {
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if self.done {
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(b)) => {
                if let Some(k) = &mut self.keep_alive {
                    k.traffic = true;
                }
                return Poll::Ready(Some(b));
            }
            Poll::Ready(None) => {
                self.done = true;
                return Poll::Ready(None);
            }
            Poll::Pending => {}
        }
        if let Some(c) = &mut self.closing {
            if c.as_mut().poll(cx).is_ready() {
                self.done = true;
                return Poll::Ready(None);
            }
        }
        if let Some(k) = &mut self.keep_alive {
            if k.poll_due(cx) {
                return Poll::Ready(Some(sse::comment("")));
            }
        }
        Poll::Pending
    }
}

/// Why a request body could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// More than the limit.
    TooLarge,
    /// A JSON array with more elements than allowed: `seen` so far, all of
    /// them when `whole` (the array's end was seen).
    BatchTooLarge {
        /// Elements seen before the read stopped.
        seen: usize,
        /// Whether `seen` is the array's whole length.
        whole: bool,
    },
    /// The connection failed mid-body.
    Io(String),
    /// Nothing arrived for this long.
    Stalled(Duration),
    /// The whole body did not arrive within this long.
    Deadline(Duration),
    /// The body arrived slower than the minimum rate (bytes per second)
    /// allows: `received` bytes after `elapsed`.
    TooSlow {
        /// The minimum rate, in bytes per second.
        min_rate: u64,
        /// What had arrived.
        received: usize,
        /// Since the body started.
        elapsed: Duration,
    },
}

/// How long a request body may take.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BodyTimeouts {
    /// The longest gap between two reads.
    pub stall: Option<Duration>,
    /// The longest time for the whole body.
    pub total: Option<Duration>,
    /// The slowest average rate, in bytes per second, after
    /// [`BODY_RATE_GRACE`]: a body may take the grace plus one second per
    /// `min_rate` bytes received.
    pub min_rate: Option<u64>,
}

/// The time any body gets before the minimum rate applies.
pub(crate) const BODY_RATE_GRACE: Duration = Duration::from_secs(10);

/// Which bound a wait for the next frame hits first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    Stall,
    Total,
    Rate,
}

impl BodyTimeouts {
    /// The deadline for the next frame and the bound it comes from, with
    /// `received` bytes in since `start`.
    fn next_deadline(
        &self,
        start: tokio::time::Instant,
        now: tokio::time::Instant,
        received: usize,
    ) -> Option<(tokio::time::Instant, Bound)> {
        let rate = self.min_rate.filter(|r| *r > 0).map(|r| {
            let earned = Duration::from_secs_f64(received as f64 / r as f64);
            (start + BODY_RATE_GRACE + earned, Bound::Rate)
        });
        [
            self.stall.map(|t| (now + t, Bound::Stall)),
            self.total.map(|t| (start + t, Bound::Total)),
            rate,
        ]
        .into_iter()
        .flatten()
        .min_by_key(|(at, _)| *at)
    }
}

/// [`read_message_body`] without a batch limit (tests of the limits and
/// timeouts).
#[cfg(test)]
pub(crate) async fn read_limited<B>(
    body: B,
    limit: usize,
    timeouts: BodyTimeouts,
) -> Result<Bytes, ReadError>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    read_message_body(body, limit, timeouts, usize::MAX, None).await
}

/// Reads a whole body, refusing more than `limit` bytes (without buffering
/// past the limit) and giving up when no data arrives for `timeouts.stall`,
/// when the whole body takes longer than `timeouts.total`, or when it
/// arrives slower than `timeouts.min_rate` (a body trickling in a byte at a
/// time holds a connection no longer than these allow).
///
/// The elements of a JSON array (a batch) are counted as the body arrives:
/// as soon as more than `max_batch` are seen, it stops with
/// [`ReadError::BatchTooLarge`], without keeping what arrived or reading
/// the rest itself. The rest is then read and dropped by a task of its
/// own, within the same limits and at most [`DRAIN_TIME`] (the client gets
/// its answer and the connection can serve the next request); past them
/// the body is dropped, which closes the connection. Meanwhile `busy` (the
/// request's connection, under [`serve`](super::serve)) counts as busy.
pub(crate) async fn read_message_body<B>(
    body: B,
    limit: usize,
    timeouts: BodyTimeouts,
    max_batch: usize,
    busy: Option<&ConnectionBusy>,
) -> Result<Bytes, ReadError>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut reader = Reader::new(body, limit, timeouts);
    // The chunks are kept as they arrive and joined once at the end into a
    // buffer of the exact size: a growing buffer would double past the
    // body's length and copy on the way. Nothing is reserved on the word of
    // a Content-Length header alone.
    let mut buf = Chunks::default();
    let mut scan = BatchScan::default();
    while let Some(data) = reader.next().await? {
        let last = reader.ended();
        if scan.feed(&data) > max_batch {
            let refused = ReadError::BatchTooLarge {
                seen: scan.elements(),
                whole: scan.closed(),
            };
            drop((buf, data));
            if !reader.ended() {
                let held = busy.map(ConnectionBusy::hold);
                tokio::spawn(async move {
                    reader.drain().await;
                    drop(held);
                });
            }
            return Err(refused);
        }
        buf.push(data);
        if last {
            // The body says it has ended (its length is all in): no poll
            // for the end, which would wait for the connection to close the
            // body's channel.
            break;
        }
    }
    Ok(buf.join())
}

/// How long the rest of a refused body may take to arrive, at most (the
/// body timeouts still apply).
pub(crate) const DRAIN_TIME: Duration = Duration::from_secs(30);

/// A request body read frame by frame under a size limit and the body
/// timeouts.
struct Reader<B> {
    body: Pin<Box<B>>,
    limit: usize,
    timeouts: BodyTimeouts,
    start: tokio::time::Instant,
    received: usize,
}

impl<B> Reader<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    fn new(body: B, limit: usize, timeouts: BodyTimeouts) -> Self {
        Reader {
            body: Box::pin(body),
            limit,
            timeouts,
            start: tokio::time::Instant::now(),
            received: 0,
        }
    }

    /// Whether the body has ended (nothing more to read).
    fn ended(&self) -> bool {
        self.body.is_end_stream()
    }

    /// The next chunk of data (`None` at the end of the body); an error
    /// past the limit or a timeout.
    async fn next(&mut self) -> Result<Option<Bytes>, ReadError> {
        loop {
            // A frame already in (nearly always: a small body comes with its
            // head) needs no deadline and no timer.
            let ready = std::future::poll_fn(|cx| {
                Poll::Ready(match self.body.as_mut().poll_frame(cx) {
                    Poll::Ready(frame) => Some(frame.transpose().map_err(io_error)),
                    Poll::Pending => None,
                })
            })
            .await;
            let next = match ready {
                Some(frame) => frame?,
                None => self.wait().await?,
            };
            let Some(frame) = next else { return Ok(None) };
            if let Ok(data) = frame.into_data() {
                if self.received + data.len() > self.limit {
                    return Err(ReadError::TooLarge);
                }
                self.received += data.len();
                return Ok(Some(data));
            }
        }
    }

    /// Waits for the next frame of a body that has none ready, within the
    /// timeouts.
    async fn wait(&mut self) -> Result<Option<Frame<Bytes>>, ReadError> {
        let now = tokio::time::Instant::now();
        let timeouts = self.timeouts;
        let Some((at, bound)) = timeouts.next_deadline(self.start, now, self.received) else {
            return self
                .body
                .as_mut()
                .frame()
                .await
                .transpose()
                .map_err(io_error);
        };
        match tokio::time::timeout_at(at, self.body.as_mut().frame()).await {
            Ok(next) => next.transpose().map_err(io_error),
            Err(_) => Err(match bound {
                Bound::Stall => ReadError::Stalled(timeouts.stall.unwrap_or_default()),
                Bound::Total => ReadError::Deadline(timeouts.total.unwrap_or_default()),
                Bound::Rate => ReadError::TooSlow {
                    min_rate: timeouts.min_rate.unwrap_or_default(),
                    received: self.received,
                    elapsed: self.start.elapsed(),
                },
            }),
        }
    }

    /// Reads the rest of the body and drops it, until it ends, passes the
    /// limit or a timeout, or [`DRAIN_TIME`] has passed; then drops the body.
    async fn drain(mut self) {
        let rest = async { while let Ok(Some(_)) = self.next().await {} };
        let _ = tokio::time::timeout(DRAIN_TIME, rest).await;
    }
}

/// A body's error as the reading's.
fn io_error(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> ReadError {
    ReadError::Io(e.into().to_string())
}

/// A body as the chunks it arrived in.
#[derive(Default)]
struct Chunks {
    parts: Vec<Bytes>,
    len: usize,
}

impl Chunks {
    fn push(&mut self, data: Bytes) {
        self.len += data.len();
        if !data.is_empty() {
            self.parts.push(data);
        }
    }

    /// The body in one buffer (the chunk itself when there is one).
    fn join(mut self) -> Bytes {
        if self.parts.len() <= 1 {
            return self.parts.pop().unwrap_or_default();
        }
        let mut out = BytesMut::with_capacity(self.len);
        for p in &self.parts {
            out.extend_from_slice(p);
        }
        out.freeze()
    }
}

/// Polls a body frame future to completion (used by tests of the body).
#[allow(dead_code)]
pub(crate) async fn next_data(body: &mut McpBody) -> Option<Bytes> {
    std::future::poll_fn(|cx| {
        let p = ready!(Pin::new(&mut *body).poll_frame(cx));
        Poll::Ready(p.and_then(|f| f.ok()).and_then(|f| f.into_data().ok()))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn keep_alive_and_close() {
        let (tx, rx) = mpsc::channel(4);
        let closing = CancellationToken::new();
        let mut body = McpBody::sse(
            rx,
            Some(Duration::from_secs(5)),
            Some(closing.clone()),
            None,
        );
        tx.send(Bytes::from_static(b"data: 1\n\n")).await.unwrap();
        assert_eq!(next_data(&mut body).await.unwrap(), "data: 1\n\n");
        // Nothing for 5 s: a keep-alive comment.
        assert_eq!(next_data(&mut body).await.unwrap(), ":\n\n");
        closing.cancel();
        assert!(next_data(&mut body).await.is_none());
        assert!(body.is_end_stream());
    }

    /// The stream of `body`, to look at its keep-alive.
    fn stream(body: &McpBody) -> &SseStream {
        match &body.kind {
            Kind::Stream(s) => s,
            Kind::Full(_) => panic!("not a stream"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_keep_alive_timer_is_made_when_the_stream_waits_and_counts_from_traffic() {
        let (tx, rx) = mpsc::channel(4);
        let mut body = McpBody::sse(rx, Some(Duration::from_secs(5)), None, None);
        tx.send(Bytes::from_static(b"data: 1\n\n")).await.unwrap();
        tx.send(Bytes::from_static(b"data: 2\n\n")).await.unwrap();
        assert_eq!(next_data(&mut body).await.unwrap(), "data: 1\n\n");
        assert_eq!(next_data(&mut body).await.unwrap(), "data: 2\n\n");
        let ka = stream(&body).keep_alive.as_ref().unwrap();
        assert!(ka.timer.is_none(), "no timer while the stream has data");
        // Waits from 0 s: the comment comes at 5 s.
        let start = tokio::time::Instant::now();
        assert_eq!(next_data(&mut body).await.unwrap(), ":\n\n");
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        // Traffic at 7 s moves the next comment to 12 s, not 10 s.
        tokio::time::advance(Duration::from_secs(2)).await;
        tx.send(Bytes::from_static(b"data: 3\n\n")).await.unwrap();
        assert_eq!(next_data(&mut body).await.unwrap(), "data: 3\n\n");
        assert_eq!(next_data(&mut body).await.unwrap(), ":\n\n");
        assert_eq!(start.elapsed(), Duration::from_secs(12));
        drop(tx);
        assert!(next_data(&mut body).await.is_none());
    }

    #[tokio::test]
    async fn limits() {
        let body = http_body_util::Full::new(Bytes::from(vec![b'x'; 10]));
        assert!(matches!(
            read_limited(body, 9, BodyTimeouts::default()).await,
            Err(ReadError::TooLarge)
        ));
        let body = http_body_util::Full::new(Bytes::from(vec![b'x'; 10]));
        assert_eq!(
            read_limited(body, 10, BodyTimeouts::default())
                .await
                .unwrap()
                .len(),
            10
        );
    }

    #[tokio::test]
    async fn a_batch_over_the_limit_stops_the_read() {
        let read = |text: &'static str, max| {
            let body = http_body_util::Full::new(Bytes::from_static(text.as_bytes()));
            read_message_body(body, 100, BodyTimeouts::default(), max, None)
        };
        assert!(matches!(
            read("[1, 2, 3]", 2).await,
            Err(ReadError::BatchTooLarge {
                seen: 3,
                whole: true
            })
        ));
        assert!(matches!(
            read("[1, 2, 3", 2).await,
            Err(ReadError::BatchTooLarge {
                seen: 3,
                whole: false
            })
        ));
        assert_eq!(read("[1, 2]", 2).await.unwrap(), "[1, 2]");
        assert_eq!(read("[1, 2, 3]", 3).await.unwrap(), "[1, 2, 3]");
        // Not a batch, or not JSON: read whole, for the parser to judge.
        assert_eq!(
            read("{\"a\": [1, 2, 3]}", 1).await.unwrap(),
            "{\"a\": [1, 2, 3]}"
        );
        assert_eq!(read("[1 2 3 4", 1).await.unwrap(), "[1 2 3 4");
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stops_arriving_is_given_up() {
        use futures::StreamExt;
        // One byte, then nothing more, without the body ending.
        let frames = futures::stream::iter([Ok::<_, std::io::Error>(Frame::data(
            Bytes::from_static(b"{"),
        ))])
        .chain(futures::stream::pending());
        let body = http_body_util::StreamBody::new(frames);
        let stall = BodyTimeouts {
            stall: Some(Duration::from_secs(30)),
            ..BodyTimeouts::default()
        };
        let r = read_limited(body, 100, stall).await;
        assert!(matches!(r, Err(ReadError::Stalled(d)) if d == Duration::from_secs(30)));
    }

    /// A body of one byte every `every`, for ever (never stalling 30 s).
    fn trickle(every: Duration) -> impl Body<Data = Bytes, Error = std::io::Error> {
        use futures::StreamExt;
        let frames = futures::stream::unfold((), move |()| async move {
            tokio::time::sleep(every).await;
            Some((
                Ok::<_, std::io::Error>(Frame::data(Bytes::from_static(b" "))),
                (),
            ))
        });
        http_body_util::StreamBody::new(frames.boxed())
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickling_body_is_given_up_by_its_rate_or_its_deadline() {
        // The attack: a byte every 10 s never trips the 30 s gap timeout
        // (before: 50 of 50 such bodies still open after 100 s).
        let gap_only = BodyTimeouts {
            stall: Some(Duration::from_secs(30)),
            ..BodyTimeouts::default()
        };
        let r = tokio::time::timeout(
            Duration::from_secs(3600),
            read_limited(trickle(Duration::from_secs(10)), 1 << 20, gap_only),
        )
        .await;
        assert!(r.is_err(), "the gap timeout alone never ends it");

        // The minimum rate (1 KiB/s after a 10 s grace) ends it at 10 s.
        let started = tokio::time::Instant::now();
        let rate = BodyTimeouts {
            stall: Some(Duration::from_secs(30)),
            total: Some(Duration::from_secs(60)),
            min_rate: Some(1024),
        };
        let r = read_limited(trickle(Duration::from_secs(10)), 1 << 20, rate).await;
        let took = started.elapsed();
        assert!(
            matches!(r, Err(ReadError::TooSlow { min_rate: 1024, received, .. }) if received <= 1),
            "{r:?}"
        );
        assert!(
            took >= BODY_RATE_GRACE && took < Duration::from_secs(11),
            "{took:?}"
        );

        // Fast enough for the rate (2 KiB/s), but the body never ends: the
        // total deadline ends it at 60 s.
        let started = tokio::time::Instant::now();
        let r = read_limited(trickle(Duration::from_micros(488)), 1 << 30, rate).await;
        assert!(
            matches!(r, Err(ReadError::Deadline(d)) if d == Duration::from_secs(60)),
            "{r:?}"
        );
        let took = started.elapsed();
        assert!(
            took >= Duration::from_secs(60) && took < Duration::from_secs(61),
            "{took:?}"
        );

        // A small body sent at once passes all three.
        let body = http_body_util::Full::new(Bytes::from_static(b"{}"));
        assert_eq!(read_limited(body, 100, rate).await.unwrap(), "{}");
    }
}
