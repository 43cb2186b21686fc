//! `tessera serve --metrics ADDR` scraped by a real Prometheus (Debian's
//! `prometheus`, started on a free loopback port with a generated scrape
//! configuration); the series are read back through its HTTP API.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::{Running, free_port, served_port};
use crate::{BOUND, TESSERA, verb};

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

/// Starts `tessera serve --http 127.0.0.1:0 --metrics 127.0.0.1:0`;
/// returns it, its MCP URL and its metrics address.
fn serve_with_metrics() -> (Running, String, String) {
    let mut child = Command::new(TESSERA)
        .args(["serve", "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0"])
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
fn start_prometheus(target: &str) -> (Running, String, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("tessera-prometheus-{}", std::process::id()));
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
    let (_server, url, metrics) = tokio::task::spawn_blocking(serve_with_metrics)
        .await
        .unwrap();
    let (_prometheus, api, dir) = start_prometheus(&metrics);
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
