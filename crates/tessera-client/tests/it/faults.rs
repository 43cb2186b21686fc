//! A client and a server talking through the fault-injecting pipe of
//! `tessera_runtime::testing::faults` (dropped, delayed, duplicated,
//! reordered and truncated messages, connections closed mid-message), on a
//! paused clock: nobody waits beyond its timeout, cancellations are sent,
//! nothing is left pending on either side, and a client reconnects after a
//! connection cut mid-message.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tessera_client::{Client, ClientError, ConnectMode, Connector, Launch, Started};
use tessera_runtime::testing::faults::{Direction, Fault, FaultLog, FaultPlan, faulty_pipe};
use tessera_runtime::{Outstanding, Peer};
use tessera_server::{RawArgs, RequestContext, Server, tool};
use tessera_types::ProtocolVersion;

const TIMEOUT: Duration = Duration::from_secs(5);

/// What the server's handlers saw.
#[derive(Clone, Default)]
struct Seen {
    /// `wait` handlers that ended (cancelled, or dropped with their connection).
    ended: Arc<AtomicUsize>,
    /// `echo` runs.
    echoes: Arc<AtomicUsize>,
}

/// Counts a handler's end, however it ends.
struct Ends(Arc<AtomicUsize>);

impl Drop for Ends {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn server(seen: &Seen) -> Server {
    let (ended, echoes) = (seen.ended.clone(), seen.echoes.clone());
    Server::builder()
        .name_version("faulty", "1.0.0")
        .tool(tool("echo").handler(move |RawArgs(a): RawArgs| {
            let echoes = echoes.clone();
            async move {
                echoes.fetch_add(1, Ordering::SeqCst);
                a["text"].as_str().unwrap_or_default().to_owned()
            }
        }))
        .tool(tool("wait").handler(move |ctx: RequestContext| {
            let end = Ends(ended.clone());
            async move {
                let _end = end;
                ctx.cancelled().await;
                "cancelled".to_owned()
            }
        }))
        .build()
        .unwrap()
}

/// The server side of a pair: its peer and its driver task.
struct ServerSide {
    peer: Peer,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// A client and a server joined by a faulty pipe.
async fn pair(
    seed: u64,
    to_server: FaultPlan,
    to_client: FaultPlan,
    seen: &Seen,
) -> (Result<Client, ClientError>, ServerSide, FaultLog) {
    let (client_io, server_io, log) = faulty_pipe(seed, to_server, to_client);
    let (sr, sw) = tokio::io::split(server_io);
    let (peer, task) = server(seen).serve_io(sr, sw);
    let server_side = ServerSide { peer, task };
    let (cr, cw) = tokio::io::split(client_io);
    let client = Client::builder("faulty-client", "1")
        .mode(ConnectMode::Legacy(ProtocolVersion::LATEST_LEGACY))
        .request_timeout(Some(TIMEOUT))
        .connect_io(cr, cw)
        .await;
    (client, server_side, log)
}

/// Lets the drivers run until both sides have published what they hold.
async fn settle() {
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
}

fn idle() -> Outstanding {
    Outstanding::default()
}

fn text(r: &tessera_types::CallToolResult) -> String {
    serde_json::to_value(r).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

// Message indexes client → server in the legacy era: 0 initialize,
// 1 notifications/initialized, then the calls. Server → client: 0 the
// initialize result, then the answers.

#[tokio::test(start_paused = true)]
async fn a_lost_request_times_out_is_cancelled_and_leaves_nothing_pending() {
    let seen = Seen::default();
    let (client, server, log) = pair(
        1,
        FaultPlan::new().at(2, Fault::Drop),
        FaultPlan::new(),
        &seen,
    )
    .await;
    let client = client.unwrap();
    let started = tokio::time::Instant::now();
    let e = client
        .call_tool("echo", json!({"text": "lost"}))
        .await
        .unwrap_err();
    assert!(e.is_timeout(), "{e}");
    let took = started.elapsed();
    assert!(
        took >= TIMEOUT && took <= TIMEOUT + Duration::from_millis(1),
        "the request timeout, {took:?}"
    );
    settle().await;
    let sent = log.delivered(Direction::ToServer);
    assert!(
        sent.last().unwrap().contains("notifications/cancelled"),
        "{sent:?}"
    );
    assert_eq!(client.peer().outstanding(), idle());
    assert_eq!(server.peer.outstanding(), idle());
    // The connection goes on.
    let r = client
        .call_tool("echo", json!({"text": "next"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "next");
    assert_eq!(seen.echoes.load(Ordering::SeqCst), 1);
    client.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_lost_answer_times_out_and_the_server_forgets_the_request() {
    let seen = Seen::default();
    let (client, server, _log) = pair(
        2,
        FaultPlan::new(),
        FaultPlan::new().at(1, Fault::Drop),
        &seen,
    )
    .await;
    let client = client.unwrap();
    let e = client
        .call_tool("echo", json!({"text": "answered, lost"}))
        .await
        .unwrap_err();
    assert!(e.is_timeout(), "{e}");
    settle().await;
    assert_eq!(seen.echoes.load(Ordering::SeqCst), 1, "the handler ran");
    assert_eq!(client.peer().outstanding(), idle());
    assert_eq!(server.peer.outstanding(), idle());
    client.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_cancels_the_running_handler() {
    let seen = Seen::default();
    let (client, server, _log) = pair(3, FaultPlan::new(), FaultPlan::new(), &seen).await;
    let client = client.unwrap();
    let e = client.call_tool("wait", json!({})).await.unwrap_err();
    assert!(e.is_timeout(), "{e}");
    settle().await;
    assert_eq!(
        seen.ended.load(Ordering::SeqCst),
        1,
        "the handler was cancelled"
    );
    assert_eq!(client.peer().outstanding(), idle());
    assert_eq!(server.peer.outstanding(), idle());
    client.close().await;
}

#[tokio::test(start_paused = true)]
async fn duplicated_reordered_and_truncated_messages_are_survived() {
    let seen = Seen::default();
    // To the server: the first call duplicated, the second and third
    // swapped, the fourth truncated. To the client: an answer duplicated.
    let (client, server, log) = pair(
        4,
        FaultPlan::new()
            .at(2, Fault::Duplicate)
            .at(3, Fault::Reorder)
            .at(5, Fault::Truncate),
        FaultPlan::new().at(2, Fault::Duplicate),
        &seen,
    )
    .await;
    let client = Arc::new(client.unwrap());
    let one = client
        .call_tool("echo", json!({"text": "one"}))
        .await
        .unwrap();
    assert_eq!(text(&one), "one");
    let (two, three) = tokio::join!(
        client.call_tool("echo", json!({"text": "two"})),
        client.call_tool("echo", json!({"text": "three"}))
    );
    assert_eq!(text(&two.unwrap()), "two");
    assert_eq!(text(&three.unwrap()), "three");
    // The truncated request never arrives whole: its call times out.
    let cut = client
        .call_tool("echo", json!({"text": "four"}))
        .await
        .unwrap_err();
    assert!(cut.is_timeout(), "{cut}");
    let five = client
        .call_tool("echo", json!({"text": "five"}))
        .await
        .unwrap();
    assert_eq!(text(&five), "five");
    settle().await;
    assert_eq!(client.peer().outstanding(), idle());
    assert_eq!(server.peer.outstanding(), idle());
    let faults: Vec<Fault> = log.events().iter().map(|e| e.fault).collect();
    assert_eq!(
        faults.len(),
        4,
        "every scripted fault was applied: {:?}",
        log.events()
    );
    // The duplicated request was answered as what it is: the server ran it
    // twice (JSON-RPC has no deduplication), the client took one answer.
    assert_eq!(seen.echoes.load(Ordering::SeqCst), 5);
}

#[tokio::test(start_paused = true)]
async fn a_connection_cut_mid_message_fails_calls_at_once_and_the_client_reconnects() {
    /// Each connection through a new faulty pipe; the first is cut in the
    /// middle of the first call's answer.
    #[derive(Clone, Default)]
    struct Flaky {
        seen: Seen,
        starts: Arc<AtomicUsize>,
        server_peers: Arc<std::sync::Mutex<Vec<Peer>>>,
    }
    impl Connector for Flaky {
        async fn start(&self, launch: Launch) -> std::io::Result<Started> {
            let n = self.starts.fetch_add(1, Ordering::SeqCst);
            let to_client = if n == 0 {
                FaultPlan::new().at(1, Fault::CloseMidMessage)
            } else {
                FaultPlan::new()
            };
            let (client_io, server_io, _log) = faulty_pipe(5, FaultPlan::new(), to_client);
            let (sr, sw) = tokio::io::split(server_io);
            let (peer, _task) = server(&self.seen).serve_io(sr, sw);
            self.server_peers.lock().unwrap().push(peer);
            let (r, w) = tokio::io::split(client_io);
            Ok(launch.run_io(r, w))
        }
    }
    let flaky = Flaky::default();
    let client = Client::builder("faulty-client", "1")
        .mode(ConnectMode::Legacy(ProtocolVersion::LATEST_LEGACY))
        .request_timeout(Some(TIMEOUT))
        .connect_with(flaky.clone())
        .await
        .unwrap();
    let started = tokio::time::Instant::now();
    let e = client
        .call_tool("echo", json!({"text": "cut"}))
        .await
        .unwrap_err();
    assert!(e.is_closed(), "{e}");
    assert!(
        started.elapsed() < TIMEOUT,
        "failed at once, not by timeout"
    );
    settle().await;
    assert_eq!(client.peer().outstanding(), idle());
    assert!(!flaky.server_peers.lock().unwrap()[0].is_open());
    client.reconnect().await.unwrap();
    assert_eq!(flaky.starts.load(Ordering::SeqCst), 2);
    let r = client
        .call_tool("echo", json!({"text": "again"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "again");
    client.close().await;
}

#[tokio::test(start_paused = true)]
async fn random_faults_never_hang_anyone_and_leak_nothing() {
    let (mut connected, mut answered, mut failed) = (0, 0, 0);
    for seed in 0..12u64 {
        let seen = Seen::default();
        let plan = || {
            FaultPlan::new()
                .drop(0.05)
                .duplicate(0.05)
                .reorder(0.05)
                .truncate(0.03)
                .delay(0.2, Duration::from_millis(300))
        };
        // The handshake itself may be hit: connecting is bounded too.
        let connecting = tokio::time::timeout(2 * TIMEOUT, pair(seed, plan(), plan(), &seen));
        let Ok((client, server, log)) = connecting.await else {
            panic!("seed {seed}: connecting hung");
        };
        let Ok(client) = client else {
            continue;
        };
        connected += 1;
        let client = Arc::new(client);
        let mut calls = tokio::task::JoinSet::new();
        for i in 0..40 {
            let c = client.clone();
            calls.spawn(async move {
                let started = tokio::time::Instant::now();
                let r = c.call_tool("echo", json!({"text": format!("m{i}")})).await;
                (i, r.map(|r| text(&r)), started.elapsed())
            });
        }
        let mut ok = 0;
        while let Some(done) = calls.join_next().await {
            let (i, r, took) = done.unwrap();
            assert!(
                took <= TIMEOUT + Duration::from_millis(1),
                "seed {seed}: call {i} took {took:?} (faults: {:?})",
                log.events()
            );
            match r {
                Ok(t) => {
                    assert_eq!(t, format!("m{i}"), "seed {seed}: an answer to another call");
                    ok += 1;
                }
                Err(e) => assert!(e.is_timeout() || e.is_closed(), "seed {seed}: {e}"),
            }
        }
        assert!(ok > 0, "seed {seed}: some calls get through");
        answered += ok;
        failed += 40 - ok;
        settle().await;
        assert_eq!(client.peer().outstanding(), idle(), "seed {seed}");
        // Requests the server is still running when it gets a truncated or
        // lost cancellation finish by themselves: echo returns at once.
        assert_eq!(server.peer.outstanding(), idle(), "seed {seed}");
        drop(client);
    }
    // The faults were felt, and most of the work still got done.
    assert!(connected >= 6, "{connected} of 12 seeds connected");
    assert!(
        failed > 0 && answered > failed,
        "{answered} answered, {failed} failed"
    );
}

#[tokio::test(start_paused = true)]
async fn a_closed_pipe_ends_the_server_connection_and_its_handlers() {
    let seen = Seen::default();
    let (client, server, log) = pair(
        6,
        FaultPlan::new().at(3, Fault::CloseMidMessage),
        FaultPlan::new(),
        &seen,
    )
    .await;
    let client = Arc::new(client.unwrap());
    // A call left running on the server, then the next message is cut.
    let waiting = {
        let c = client.clone();
        tokio::spawn(async move { c.call_tool("wait", json!({})).await })
    };
    settle().await;
    let e = client
        .call_tool("echo", json!({"text": "cut"}))
        .await
        .unwrap_err();
    assert!(e.is_closed(), "{e}");
    assert!(log.closed());
    let w = waiting.await.unwrap().unwrap_err();
    assert!(w.is_closed(), "{w}");
    // The server sees the connection end, and stops within its drain time:
    // the handler still running is dropped.
    let peer = server.peer.clone();
    tokio::time::timeout(Duration::from_secs(60), server.task)
        .await
        .expect("the server connection ends")
        .unwrap()
        .unwrap();
    assert!(!peer.is_open());
    assert_eq!(seen.ended.load(Ordering::SeqCst), 1);
    assert_eq!(peer.outstanding(), idle());
    assert_eq!(client.peer().outstanding(), idle());
}
