//! A fault-injecting pipe for newline-delimited JSON-RPC (stdio and child
//! process connections, or anything [`crate::spawn`] and
//! `Client::connect_io` run over): messages between the two ends are
//! dropped, delayed, duplicated, reordered, truncated, or the connection is
//! closed in the middle of one, as a [`FaultPlan`] says.
//!
//! Everything is deterministic: random faults come from a seeded generator
//! (one per direction), delays are tokio timers (instant and ordered on a
//! paused clock), and scripted faults hit exactly the n-th message of a
//! direction. The [`FaultLog`] records what was done to which message, so a
//! failing seed can be replayed and explained.
//!
//! ```
//! use std::time::Duration;
//! use tessera_runtime::testing::faults::{Fault, FaultPlan, faulty_pipe};
//!
//! # async fn demo() {
//! // Client to server: the third message is lost; server to client: one
//! // message in ten comes twice, and each may be up to 50 ms late.
//! let (client_io, server_io, log) = faulty_pipe(
//!     7,
//!     FaultPlan::new().at(2, Fault::Drop),
//!     FaultPlan::new().duplicate(0.1).delay(1.0, Duration::from_millis(50)),
//! );
//! // Serve one end, connect a client to the other, then read `log.events()`.
//! # drop((client_io, server_io, log));
//! # }
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio_util::sync::CancellationToken;

/// Size of the in-memory buffers between each end and the relay.
const BUFFER: usize = 256 * 1024;

/// What can happen to one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// Never delivered.
    Drop,
    /// Delivered after this long (later messages wait behind it).
    Delay(Duration),
    /// Delivered twice.
    Duplicate,
    /// Held back and delivered after the next message (or after the plan's
    /// hold time if no message follows).
    Reorder,
    /// Cut to the first half of its bytes, then a newline: the receiver gets
    /// a line that is not JSON.
    Truncate,
    /// The first half of its bytes is written, then the connection closes in
    /// both directions.
    CloseMidMessage,
}

/// What a direction of the pipe does to its messages: scripted faults for
/// given message indexes (0-based, per direction) and probabilities for the
/// others. At most one fault hits a message; scripted faults win, then the
/// probabilities are tried in the order of the builder methods below.
#[derive(Debug, Clone, Default)]
pub struct FaultPlan {
    scripted: BTreeMap<u64, Fault>,
    drop: f64,
    duplicate: f64,
    reorder: f64,
    truncate: f64,
    close: f64,
    delay: f64,
    max_delay: Duration,
    hold: Duration,
}

impl FaultPlan {
    /// A plan that delivers everything intact.
    pub fn new() -> FaultPlan {
        FaultPlan {
            hold: Duration::from_millis(100),
            ..FaultPlan::default()
        }
    }

    /// Applies `fault` to the message with this index.
    pub fn at(mut self, index: u64, fault: Fault) -> FaultPlan {
        self.scripted.insert(index, fault);
        self
    }

    /// Drops each message with probability `p`.
    pub fn drop(mut self, p: f64) -> FaultPlan {
        self.drop = p;
        self
    }

    /// Delivers each message twice with probability `p`.
    pub fn duplicate(mut self, p: f64) -> FaultPlan {
        self.duplicate = p;
        self
    }

    /// Swaps each message with the next one with probability `p`.
    pub fn reorder(mut self, p: f64) -> FaultPlan {
        self.reorder = p;
        self
    }

    /// Truncates each message with probability `p`.
    pub fn truncate(mut self, p: f64) -> FaultPlan {
        self.truncate = p;
        self
    }

    /// Closes the connection in the middle of each message with probability `p`.
    pub fn close(mut self, p: f64) -> FaultPlan {
        self.close = p;
        self
    }

    /// Delays each message with probability `p`, by up to `max`.
    pub fn delay(mut self, p: f64, max: Duration) -> FaultPlan {
        self.delay = p;
        self.max_delay = max;
        self
    }

    /// How long a reordered message waits for a successor before it is
    /// delivered anyway (default 100 ms).
    pub fn hold(mut self, d: Duration) -> FaultPlan {
        self.hold = d;
        self
    }

    fn pick(&self, index: u64, rng: &mut SplitMix) -> Option<Fault> {
        if let Some(f) = self.scripted.get(&index) {
            return Some(*f);
        }
        let mut roll = |p: f64| p > 0.0 && rng.unit() < p;
        if roll(self.drop) {
            Some(Fault::Drop)
        } else if roll(self.duplicate) {
            Some(Fault::Duplicate)
        } else if roll(self.reorder) {
            Some(Fault::Reorder)
        } else if roll(self.truncate) {
            Some(Fault::Truncate)
        } else if roll(self.close) {
            Some(Fault::CloseMidMessage)
        } else if roll(self.delay) {
            let nanos = u64::try_from(self.max_delay.as_nanos()).unwrap_or(u64::MAX);
            Some(Fault::Delay(Duration::from_nanos(rng.below(nanos))))
        } else {
            None
        }
    }
}

/// Which way a message was going.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the first end of the pipe (the client's) to the second.
    ToServer,
    /// From the second end to the first.
    ToClient,
}

/// One fault applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultEvent {
    /// The direction of the message.
    pub direction: Direction,
    /// Its index in that direction (0-based).
    pub index: u64,
    /// What was done to it.
    pub fault: Fault,
    /// The message (what was sent, before the fault).
    pub message: String,
}

/// What the pipe did: every fault applied, and every message delivered.
#[derive(Debug, Clone, Default)]
pub struct FaultLog {
    inner: Arc<Mutex<LogInner>>,
}

#[derive(Debug, Default)]
struct LogInner {
    events: Vec<FaultEvent>,
    delivered: Vec<(Direction, String)>,
    closed: bool,
}

impl FaultLog {
    fn with<R>(&self, f: impl FnOnce(&mut LogInner) -> R) -> R {
        f(&mut self.inner.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The faults applied so far, in order.
    pub fn events(&self) -> Vec<FaultEvent> {
        self.with(|l| l.events.clone())
    }

    /// The messages delivered whole so far in `direction`, in order
    /// (duplicates appear twice).
    pub fn delivered(&self, direction: Direction) -> Vec<String> {
        self.with(|l| {
            l.delivered
                .iter()
                .filter(|(d, _)| *d == direction)
                .map(|(_, m)| m.clone())
                .collect()
        })
    }

    /// Whether the pipe closed the connection (a [`Fault::CloseMidMessage`]).
    pub fn closed(&self) -> bool {
        self.with(|l| l.closed)
    }
}

/// A pipe whose first end is for the client and second for the server, with
/// `to_server` applied to what the client writes and `to_client` to what the
/// server writes. `seed` makes the random faults reproducible. Must be
/// called inside a tokio runtime (it spawns the relay tasks).
pub fn faulty_pipe(
    seed: u64,
    to_server: FaultPlan,
    to_client: FaultPlan,
) -> (DuplexStream, DuplexStream, FaultLog) {
    let (client, client_relay) = tokio::io::duplex(BUFFER);
    let (server, server_relay) = tokio::io::duplex(BUFFER);
    let log = FaultLog::default();
    let stop = CancellationToken::new();
    let (from_client, to_client_w) = tokio::io::split(client_relay);
    let (from_server, to_server_w) = tokio::io::split(server_relay);
    tokio::spawn(relay(Relay {
        direction: Direction::ToServer,
        plan: to_server,
        rng: SplitMix(seed ^ 0x5eed_0001),
        log: log.clone(),
        stop: stop.clone(),
        from: from_client,
        to: to_server_w,
    }));
    tokio::spawn(relay(Relay {
        direction: Direction::ToClient,
        plan: to_client,
        rng: SplitMix(seed ^ 0x5eed_0002),
        log: log.clone(),
        stop,
        from: from_server,
        to: to_client_w,
    }));
    (client, server, log)
}

struct Relay {
    direction: Direction,
    plan: FaultPlan,
    rng: SplitMix,
    log: FaultLog,
    stop: CancellationToken,
    from: ReadHalf<DuplexStream>,
    to: WriteHalf<DuplexStream>,
}

/// Copies one direction message by message, applying the plan. Ends when
/// the source closes, the destination is gone, or either direction closed
/// the connection (then both ends see EOF).
async fn relay(mut r: Relay) {
    let mut reader = BufReader::new(r.from);
    let mut held: Option<Vec<u8>> = None;
    let mut index = 0u64;
    // A line being read: `read_until` appends, so a read cut short by the
    // hold timeout goes on where it stopped.
    let mut partial = Vec::new();
    loop {
        let holding = held.is_some();
        let read = async {
            let next = reader.read_until(b'\n', &mut partial);
            if holding {
                // A held message goes out when its successor arrives, or after the hold time.
                tokio::time::timeout(r.plan.hold, next).await.ok()
            } else {
                Some(next.await)
            }
        };
        let got = tokio::select! {
            _ = r.stop.cancelled() => break,
            got = read => got,
        };
        match got {
            None => {
                if let Some(h) = held.take() {
                    if deliver(&mut r.to, &h, r.direction, &r.log).await.is_err() {
                        break;
                    }
                }
                continue;
            }
            Some(Ok(0) | Err(_)) => break,
            Some(Ok(_)) => {}
        }
        let line = std::mem::take(&mut partial);
        if line.last() != Some(&b'\n') {
            // The writer closed in the middle of a line: pass it on as is.
            let _ = r.to.write_all(&line).await;
            break;
        }
        let fault = r.plan.pick(index, &mut r.rng);
        if let Some(f) = fault {
            let message = String::from_utf8_lossy(line.strip_suffix(b"\n").unwrap_or(&line));
            r.log.with(|l| {
                l.events.push(FaultEvent {
                    direction: r.direction,
                    index,
                    fault: f,
                    message: message.into_owned(),
                });
            });
        }
        index += 1;
        let ok = match fault {
            None => deliver(&mut r.to, &line, r.direction, &r.log).await.is_ok(),
            Some(Fault::Drop) => true,
            Some(Fault::Delay(d)) => {
                tokio::select! {
                    _ = r.stop.cancelled() => break,
                    _ = tokio::time::sleep(d) => {}
                }
                deliver(&mut r.to, &line, r.direction, &r.log).await.is_ok()
            }
            Some(Fault::Duplicate) => {
                deliver(&mut r.to, &line, r.direction, &r.log).await.is_ok()
                    && deliver(&mut r.to, &line, r.direction, &r.log).await.is_ok()
            }
            Some(Fault::Reorder) => {
                // If one is already held, it goes first: only adjacent pairs swap.
                let before = held.replace(line);
                match before {
                    Some(h) => deliver(&mut r.to, &h, r.direction, &r.log).await.is_ok(),
                    None => true,
                }
            }
            Some(Fault::Truncate) => {
                let mut cut = line[..line.len() / 2].to_vec();
                cut.push(b'\n');
                r.to.write_all(&cut).await.is_ok() && r.to.flush().await.is_ok()
            }
            Some(Fault::CloseMidMessage) => {
                let _ = r.to.write_all(&line[..line.len() / 2]).await;
                let _ = r.to.flush().await;
                r.log.with(|l| l.closed = true);
                r.stop.cancel();
                break;
            }
        };
        if !ok {
            break;
        }
        if !matches!(fault, Some(Fault::Reorder)) {
            if let Some(h) = held.take() {
                if deliver(&mut r.to, &h, r.direction, &r.log).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = r.to.shutdown().await;
    // Dropping the halves closes this relay's sides: with `stop` cancelled,
    // the other relay ends too, and both ends of the pipe see EOF.
    r.stop.cancel();
}

async fn deliver(
    to: &mut WriteHalf<DuplexStream>,
    line: &[u8],
    direction: Direction,
    log: &FaultLog,
) -> std::io::Result<()> {
    to.write_all(line).await?;
    to.flush().await?;
    let message = String::from_utf8_lossy(line.strip_suffix(b"\n").unwrap_or(line)).into_owned();
    log.with(|l| l.delivered.push((direction, message)));
    Ok(())
}

/// SplitMix64: small, fast and good enough to pick faults reproducibly.
#[derive(Debug, Clone)]
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in [0, 1).
    fn unit(&mut self) -> f64 {
        // 53 random bits: exactly representable.
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A number in [0, n) (0 when n is 0).
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn exchange(plan: FaultPlan, lines: &[&str]) -> (String, FaultLog) {
        let (mut client, mut server, log) = faulty_pipe(1, plan, FaultPlan::new());
        for l in lines {
            client.write_all(format!("{l}\n").as_bytes()).await.unwrap();
        }
        client.shutdown().await.unwrap();
        let mut got = String::new();
        server.read_to_string(&mut got).await.unwrap();
        (got, log)
    }

    #[tokio::test(start_paused = true)]
    async fn scripted_faults_hit_exactly_their_message() {
        let (got, log) = exchange(
            FaultPlan::new()
                .at(1, Fault::Drop)
                .at(2, Fault::Duplicate)
                .at(3, Fault::Reorder)
                .at(5, Fault::Truncate),
            &["a0", "b1", "c2", "d3", "e4", "f6f6"],
        )
        .await;
        assert_eq!(got, "a0\nc2\nc2\ne4\nd3\nf6\n");
        let kinds: Vec<(u64, Fault)> = log.events().iter().map(|e| (e.index, e.fault)).collect();
        assert_eq!(
            kinds,
            [
                (1, Fault::Drop),
                (2, Fault::Duplicate),
                (3, Fault::Reorder),
                (5, Fault::Truncate)
            ]
        );
        assert!(!log.closed());
    }

    #[tokio::test(start_paused = true)]
    async fn a_held_message_goes_out_after_the_hold_time() {
        let (mut client, mut server, _log) =
            faulty_pipe(1, FaultPlan::new().at(0, Fault::Reorder), FaultPlan::new());
        client.write_all(b"only\n").await.unwrap();
        let mut buf = [0u8; 5];
        let started = tokio::time::Instant::now();
        server.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"only\n");
        assert_eq!(started.elapsed(), Duration::from_millis(100));
    }

    #[tokio::test(start_paused = true)]
    async fn closing_mid_message_ends_both_directions() {
        let (mut client, mut server, log) = faulty_pipe(
            1,
            FaultPlan::new().at(1, Fault::CloseMidMessage),
            FaultPlan::new(),
        );
        client.write_all(b"first\nsecond\n").await.unwrap();
        let mut got = String::new();
        server.read_to_string(&mut got).await.unwrap();
        assert_eq!(got, "first\nsec");
        let mut back = Vec::new();
        assert_eq!(client.read_to_end(&mut back).await.unwrap(), 0);
        assert!(log.closed());
    }

    #[tokio::test(start_paused = true)]
    async fn the_same_seed_gives_the_same_faults() {
        let plan = || {
            FaultPlan::new()
                .drop(0.2)
                .duplicate(0.2)
                .truncate(0.1)
                .delay(0.3, Duration::from_millis(20))
        };
        let lines: Vec<String> = (0..200).map(|i| format!("m{i}")).collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (a, la) = exchange(plan(), &refs).await;
        let (b, lb) = exchange(plan(), &refs).await;
        assert_eq!(a, b);
        assert_eq!(la.events(), lb.events());
        assert!(la.events().len() > 50, "{}", la.events().len());
    }
}
