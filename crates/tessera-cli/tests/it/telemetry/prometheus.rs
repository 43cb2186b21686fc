//! `tessera serve --metrics ADDR` scraped by a real Prometheus (Debian's
//! `prometheus`, started on a free loopback port with a generated scrape
//! configuration); the series are read back through its HTTP API.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::common::{Running, free_port, served_port};
use super::{BOUND, TESSERA, verb};

/// The convention's advised buckets, and `+Inf`.
const BUCKETS: [f64; 15] = [
    0.01,
    0.02,
    0.05,
    0.1,
    0.2,
    0.5,
    1.0,
    2.0,
    5.0,
    10.0,
    30.0,
    60.0,
    120.0,
    300.0,
    f64::INFINITY,
];

/// Starts `tessera serve --http 127.0.0.1:0 --metrics 127.0.0.1:0` with
/// `extra` arguments; returns it, its MCP URL and its metrics address.
fn serve_with_metrics(extra: &[String]) -> (Running, String, String) {
    let mut child = Command::new(TESSERA)
        .args(["serve", "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts tessera serve");
    let stderr = child.stderr.take().expect("stderr is piped");
    let running = Running(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut metrics = None;
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.strip_prefix("tessera: metrics at http://") {
                metrics = rest.strip_suffix("/metrics").map(str::to_owned);
            }
            if let (Some(port), Some(m)) = (served_port(&line), metrics.clone()) {
                let _ = tx.send((port, m));
            }
        }
    });
    let (port, metrics) = rx
        .recv_timeout(BOUND)
        .expect("tessera serve names its MCP and metrics addresses");
    (running, format!("http://127.0.0.1:{port}/mcp"), metrics)
}

/// A Prometheus scraping `target` every 200 ms; returns it, its API base
/// and its data directory (removed by the caller).
fn start_prometheus(target: &str, name: &str) -> (Running, String, std::path::PathBuf) {
    let dir =
        std::env::temp_dir().join(format!("tessera-prometheus-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 200ms\n  scrape_timeout: 200ms\nscrape_configs:\n  - job_name: tessera\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    let port = free_port();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("prometheus runs (Debian's `prometheus` package; .ci/run installs it)");
    (Running(child), format!("http://127.0.0.1:{port}"), dir)
}

/// The result vector of an instant query, or `None` while Prometheus is
/// not answering yet.
async fn query(http: &reqwest::Client, api: &str, q: &str) -> Option<Vec<Value>> {
    let r = http
        .get(format!("{api}/api/v1/query"))
        .query(&[("query", q)])
        .send()
        .await
        .ok()?;
    let body: Value = r.json().await.ok()?;
    body["data"]["result"].as_array().cloned()
}

/// Polls `q` until `done` holds for its result, failing after [`BOUND`].
async fn poll(
    http: &reqwest::Client,
    api: &str,
    q: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + BOUND;
    let mut last = None;
    loop {
        if let Some(r) = query(http, api, q).await {
            if done(&r) {
                return r;
            }
            last = Some(r);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "Prometheus query {q} did not settle within {BOUND:?}: {last:?}"
        );
        // The next scrape is at most one interval away.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn value(sample: &Value) -> f64 {
    sample["value"][1]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(f64::NAN)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn prometheus_scrapes_the_duration_histograms() {
    let (_server, url, metrics) = tokio::task::spawn_blocking(|| serve_with_metrics(&[]))
        .await
        .unwrap();
    let (_prometheus, api, dir) = start_prometheus(&metrics, "durations");
    const CALLS: usize = 5;
    for i in 0..CALLS {
        let args = format!(r#"{{"a":{i},"b":1}}"#);
        let (ok, out) = verb(
            "",
            "call",
            &[
                "call",
                "add",
                &args,
                &url,
                "--protocol-version",
                "2025-11-25",
            ],
        )
        .await;
        assert!(ok, "{out}");
    }
    let http = reqwest::Client::new();
    let count = r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="add"}"#;
    let r = poll(&http, &api, count, |r| {
        r.iter().map(value).sum::<f64>() >= CALLS as f64
    })
    .await;
    assert_eq!(r.iter().map(value).sum::<f64>(), CALLS as f64, "{r:?}");
    let sample = &r[0]["metric"];
    assert_eq!(sample["gen_ai_operation_name"], "execute_tool");
    assert_eq!(sample["mcp_protocol_version"], "2025-11-25");
    assert_eq!(sample["network_transport"], "tcp");
    assert_eq!(
        sample.get("error_type"),
        None,
        "a successful call has no error.type"
    );

    let buckets = r#"mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call",gen_ai_tool_name="add"}"#;
    let r = poll(&http, &api, buckets, |r| r.len() >= BUCKETS.len()).await;
    let mut les: Vec<f64> = r
        .iter()
        .map(|s| {
            let le = s["metric"]["le"].as_str().unwrap();
            if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().unwrap()
            }
        })
        .collect();
    les.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(les, BUCKETS.to_vec(), "the convention's advised buckets");
    let inf = r
        .iter()
        .find(|s| s["metric"]["le"] == "+Inf")
        .map(value)
        .unwrap();
    assert_eq!(inf, CALLS as f64);

    // The sessions gauge: the verbs' sessions were each closed.
    poll(&http, &api, "tessera_sessions_open", |r| !r.is_empty()).await;
    let _ = std::fs::remove_dir_all(dir);
}

/// The sum of the values of `q`'s series.
fn sum(r: &[Value]) -> f64 {
    r.iter().map(value).sum()
}

/// Polls `q` until the sum of its series is `want`, and returns it.
async fn poll_sum(http: &reqwest::Client, api: &str, q: &str, want: f64) -> Vec<Value> {
    poll(http, api, q, |r| !r.is_empty() && sum(r) == want).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn prometheus_scrapes_the_operational_counts() {
    let redis = tessera_redis::testing::RedisServer::start().expect("start redis-server");
    let extra = vec![
        "--redis".to_owned(),
        redis.url(),
        "--max-body-bytes".to_owned(),
        "4096".to_owned(),
    ];
    let (_server, url, metrics) = tokio::task::spawn_blocking(move || serve_with_metrics(&extra))
        .await
        .unwrap();
    let (_prometheus, api, dir) = start_prometheus(&metrics, "operational");
    let http = reqwest::Client::new();

    // A body over --max-body-bytes is refused, and counted under its limit.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(8192)
    );
    let r = http
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    let refused = poll_sum(
        &http,
        &api,
        r#"tessera_requests_refused_total{tessera_limit="max_body_bytes"}"#,
        1.0,
    )
    .await;
    assert_eq!(refused.len(), 1, "{refused:?}");
    // Every other limit is a series at zero.
    let r = poll(&http, &api, "tessera_requests_refused_total", |r| {
        r.len() >= 15
    })
    .await;
    assert_eq!(sum(&r), 1.0, "{r:?}");
    for limit in [
        "max_batch",
        "max_sessions",
        "max_requests_per_session",
        "max_running_tasks",
    ] {
        assert!(
            r.iter().any(|s| s["metric"]["tessera_limit"] == limit),
            "no series for {limit}: {r:?}"
        );
    }

    // A task runs to completion: it entered `working`, then `completed`.
    let (ok, out) = verb(
        "",
        "call",
        &["call", "sleep", r#"{"ms":10}"#, "--task", &url],
    )
    .await;
    assert!(ok, "{out}");
    poll_sum(
        &http,
        &api,
        r#"tessera_tasks_entered_total{tessera_task_status="completed"}"#,
        1.0,
    )
    .await;
    poll_sum(
        &http,
        &api,
        r#"tessera_tasks_entered_total{tessera_task_status="working"}"#,
        1.0,
    )
    .await;
    poll_sum(&http, &api, "tessera_tasks_running", 0.0).await;
    // Sessions and tasks live in Redis: round trips, no errors.
    poll(&http, &api, "tessera_redis_round_trips_total", |r| {
        sum(r) > 0.0
    })
    .await;
    poll_sum(&http, &api, "tessera_redis_errors_total", 0.0).await;

    // A legacy session's standalone GET stream: one stream and at least
    // one connection open while it is held, none once it is dropped.
    let init = http
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(init.status(), 200);
    let sid = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = init.bytes().await.unwrap();
    let headers = |rb: reqwest::RequestBuilder| {
        rb.header("mcp-session-id", &sid)
            .header("mcp-protocol-version", "2025-11-25")
    };
    let done = headers(http.post(&url))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), 202);
    let stream = headers(http.get(&url))
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    poll_sum(&http, &api, "tessera_streams_open", 1.0).await;
    poll(&http, &api, "tessera_connections_open", |r| sum(r) >= 1.0).await;
    poll_sum(&http, &api, "tessera_sessions_open", 1.0).await;
    drop(stream);
    poll_sum(&http, &api, "tessera_streams_open", 0.0).await;
    let _ = std::fs::remove_dir_all(dir);
}
