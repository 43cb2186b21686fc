//! Resilience of the aggregating proxy (issue 28): an upstream killed and
//! restarted under load (its tools vanish and come back, the other
//! upstream's calls all succeed, and an upstream-side counter proves that
//! no call ran twice), and a circuit breaker that opens after consecutive
//! timeouts, says so in `/readyz`'s state and in the refusal, probes after
//! its cool-down and closes again.
//!
//! The killed upstream is `tessera proxy --stdio URL` in front of a counting
//! server in this process: killing the process is killing a stdio upstream,
//! while the counter, upstream of it, survives to say how often each call
//! ran.

#![cfg(unix)]

use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tessera::client::Client;
use tessera::server::{RawArgs, Server, tool};
use tessera::types::ProtocolVersion;
use tessera_http::HttpClientTransport;
use tessera_proxy::{Aggregator, Breaker, UpstreamConfig, UpstreamOptions, UpstreamSpec};
use tokio::sync::{Barrier, Notify, mpsc};
use tokio_util::sync::CancellationToken;

const BOUND: Duration = Duration::from_secs(60);
const CALLERS: usize = 4;
const ROUNDS: usize = 5;

async fn bounded<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {BOUND:?}"))
}

/// How often each call id ran, upstream.
#[derive(Clone, Default)]
struct Counter {
    runs: Arc<Mutex<HashMap<String, usize>>>,
    /// Told when a call with `"hold": true` has been counted.
    held: Option<mpsc::UnboundedSender<String>>,
    /// Lets held calls finish.
    release: Arc<Notify>,
}

impl Counter {
    fn runs(&self, id: &str) -> usize {
        self.runs.lock().unwrap().get(id).copied().unwrap_or(0)
    }
}

/// A server counting its `hit` calls by id; a call with `"hold": true`
/// waits for `release`, and one with `"sleep": true` never answers.
async fn serve_counter(name: &str, counter: Counter, stop: &CancellationToken) -> String {
    let c = counter.clone();
    let server = Server::builder()
        .name_version(name, "1.0.0")
        .tool(tool("hit").handler(move |RawArgs(a): RawArgs| {
            let c = c.clone();
            async move {
                let a = Value::Object(a);
                let id = a["id"].as_str().unwrap_or_default().to_owned();
                *c.runs.lock().unwrap().entry(id.clone()).or_default() += 1;
                if a["hold"] == true {
                    let released = c.release.notified();
                    if let Some(h) = &c.held {
                        let _ = h.send(id.clone());
                    }
                    released.await;
                }
                if a["sleep"] == true {
                    std::future::pending::<()>().await;
                }
                format!("hit {id}")
            }
        }))
        .build()
        .expect("builds");
    common::serve_loopback(server, stop).await
}

/// Serves `agg` over HTTP and connects a client to it.
async fn client_of(agg: &Aggregator, stop: &CancellationToken) -> Client {
    let url = common::serve_loopback(agg.clone(), stop).await;
    bounded(
        "connecting to the aggregator",
        Client::builder("resilience-test", "1.0")
            .protocol_version(ProtocolVersion::V2025_11_25)
            .connect_transport(HttpClientTransport::new(&url).unwrap()),
    )
    .await
    .expect("connects")
}

async fn tool_names(c: &Client) -> Vec<String> {
    let mut v: Vec<String> = bounded("tools/list", c.list_tools())
        .await
        .expect("lists tools")
        .into_iter()
        .map(|t| t.name)
        .collect();
    v.sort();
    v
}

/// Calls `name` with `args`: the text, or the error's message and data.
async fn hit(c: &Client, name: &str, args: Value) -> Result<String, (String, Option<Value>)> {
    match bounded(name, c.call_tool(name, args)).await {
        Ok(r) if r.is_error != Some(true) => {
            Ok(r.content[0].as_text().unwrap_or_default().to_owned())
        }
        Ok(r) => Err((format!("{:?}", r.content), None)),
        Err(e) => Err((e.to_string(), e.remote().and_then(|r| r.data.clone()))),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_killed_under_load_comes_back_and_no_call_runs_twice() {
    let stop = CancellationToken::new();
    let (held_tx, mut held_rx) = mpsc::unbounded_channel();
    let flaky_count = Counter {
        held: Some(held_tx),
        ..Counter::default()
    };
    let steady_count = Counter::default();
    let flaky_url = serve_counter("flaky", flaky_count.clone(), &stop).await;
    let steady_url = serve_counter("steady", steady_count.clone(), &stop).await;

    // The flaky upstream: a stdio proxy in front of the counting server.
    let flaky = common::Killable::new(
        "gw-resilience",
        &format!(
            "'{}' proxy --stdio '{flaky_url}'",
            env!("CARGO_BIN_EXE_tessera")
        ),
    );
    let agg = Aggregator::start(
        vec![
            UpstreamConfig::new("flaky", UpstreamSpec::Stdio(flaky.command.clone())),
            UpstreamConfig::new("steady", UpstreamSpec::http(steady_url, Default::default())),
        ],
        UpstreamOptions::default(),
    )
    .expect("starts");
    assert!(bounded("flaky connects", agg.wait_connected("flaky", true)).await);
    assert!(bounded("steady connects", agg.wait_connected("steady", true)).await);
    let client = client_of(&agg, &stop).await;
    assert_eq!(tool_names(&client).await, ["flaky__hit", "steady__hit"]);

    // Four callers, three phases: before the kill (all succeed), from the
    // kill on (the flaky upstream's calls may fail, the steady one's all
    // succeed), and after it is back (all succeed).
    let barrier = Arc::new(Barrier::new(CALLERS + 1));
    let mut callers = Vec::new();
    for k in 0..CALLERS {
        let (c, b) = (client.clone(), barrier.clone());
        callers.push(tokio::spawn(async move {
            let mut failed = Vec::new();
            for phase in 1..=3 {
                for n in 0..ROUNDS {
                    let id = format!("p{phase}-c{k}-{n}");
                    let steady = hit(&c, "steady__hit", json!({"id": id})).await;
                    assert_eq!(steady, Ok(format!("hit {id}")), "steady in phase {phase}");
                    match hit(&c, "flaky__hit", json!({"id": id})).await {
                        Ok(text) => assert_eq!(text, format!("hit {id}")),
                        Err((e, _)) if phase == 2 => failed.push((id, e)),
                        Err(e) => panic!("flaky {id} failed in phase {phase}: {e:?}"),
                    }
                }
                // Phase 1 ends with the kill, phase 2 with the restart.
                if phase < 3 {
                    b.wait().await;
                    b.wait().await;
                }
            }
            failed
        }));
    }

    // Phase 1 is over: a call is held in the flaky upstream, and the
    // process is killed while it is in flight.
    bounded("the callers", barrier.wait()).await;
    let held = {
        let c = client.clone();
        tokio::spawn(
            async move { hit(&c, "flaky__hit", json!({"id": "held", "hold": true})).await },
        )
    };
    assert_eq!(
        bounded("the held call", held_rx.recv()).await.as_deref(),
        Some("held")
    );
    flaky.kill_and_hold();
    bounded("the callers", barrier.wait()).await;
    // Phase 2 runs while the proxy finds the upstream dead.
    assert!(bounded("flaky seen dead", agg.wait_connected("flaky", false)).await);
    let (e, _) = bounded("the held call", held)
        .await
        .unwrap()
        .expect_err("its upstream died");
    assert!(e.contains("closed the connection"), "{e}");
    assert_eq!(tool_names(&client).await, ["steady__hit"]);
    assert_eq!(agg.readiness().upstreams["flaky"], "reconnecting");
    bounded("the callers", barrier.wait()).await;

    // Phase 2 is over: the upstream may come back, and its tools do.
    flaky.release();
    assert!(bounded("flaky back", agg.wait_connected("flaky", true)).await);
    assert_eq!(tool_names(&client).await, ["flaky__hit", "steady__hit"]);
    bounded("the callers", barrier.wait()).await;

    let mut failed = Vec::new();
    for c in callers {
        failed.extend(bounded("a caller", c).await.expect("caller passes"));
    }
    flaky_count.release.notify_waiters();

    // Every call ran at most once upstream, even those whose answer was lost.
    assert_eq!(flaky_count.runs("held"), 1, "the held call ran once");
    for counts in [&flaky_count, &steady_count] {
        let runs = counts.runs.lock().unwrap();
        let twice: Vec<_> = runs.iter().filter(|(_, n)| **n > 1).collect();
        assert!(twice.is_empty(), "ran more than once: {twice:?}");
    }
    for k in 0..CALLERS {
        for n in 0..ROUNDS {
            for phase in 1..=3 {
                let id = format!("p{phase}-c{k}-{n}");
                assert_eq!(steady_count.runs(&id), 1, "steady {id}");
                if !failed.iter().any(|(f, _)| *f == id) {
                    assert_eq!(flaky_count.runs(&id), 1, "flaky {id} succeeded");
                }
            }
        }
    }
    // A failed call says why: the upstream is reconnecting, or its
    // connection ended before the answer.
    for (id, e) in &failed {
        assert!(
            e.contains("unavailable") || e.contains("closed the connection"),
            "{id}: {e}"
        );
    }

    client.close().await;
    agg.close();
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_circuit_opens_after_timeouts_probes_and_closes() {
    let stop = CancellationToken::new();
    let count = Counter::default();
    let url = serve_counter("slow", count.clone(), &stop).await;
    let mut entry = UpstreamConfig::new("slow", UpstreamSpec::http(url, Default::default()));
    entry.timeout = Some(Duration::from_millis(300));
    entry.breaker = Some(Breaker {
        failures: 2,
        cooldown: Duration::from_millis(500),
    });
    let agg = Aggregator::start(vec![entry], UpstreamOptions::default()).expect("starts");
    assert!(bounded("slow connects", agg.wait_connected("slow", true)).await);
    let client = client_of(&agg, &stop).await;
    assert_eq!(agg.readiness().upstreams["slow"], "connected");

    // Two calls time out: the circuit opens.
    for n in 0..2 {
        let (e, _) = hit(
            &client,
            "slow__hit",
            json!({"id": format!("t{n}"), "sleep": true}),
        )
        .await
        .expect_err("times out");
        assert!(e.contains("did not answer"), "{e}");
    }
    assert_eq!(agg.readiness().upstreams["slow"], "circuit-open");
    assert!(!agg.readiness().ready);
    // Refused at once, without reaching the upstream, saying when to retry.
    let (e, data) = hit(&client, "slow__hit", json!({"id": "refused"}))
        .await
        .expect_err("refused");
    assert!(e.contains("circuit breaker opened after 2"), "{e}");
    let data = data.expect("error data");
    assert_eq!(data["upstream"], "slow");
    assert_eq!(data["circuit"], "open");
    assert!(
        data["retryAfterMs"].as_u64().is_some_and(|ms| ms <= 500),
        "{data}"
    );
    assert_eq!(count.runs("refused"), 0);
    // Its tools are left out of lists while it is open.
    assert!(tool_names(&client).await.is_empty());

    // After the cool-down one probe goes through; it is answered, and the
    // circuit closes.
    bounded("the cool-down", async {
        while agg.readiness().upstreams["slow"] != "circuit-half-open" {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert_eq!(
        hit(&client, "slow__hit", json!({"id": "probe"})).await,
        Ok("hit probe".to_owned())
    );
    assert_eq!(agg.readiness().upstreams["slow"], "connected");
    assert_eq!(tool_names(&client).await, ["slow__hit"]);
    assert_eq!(count.runs("probe"), 1);

    client.close().await;
    agg.close();
    stop.cancel();
}
