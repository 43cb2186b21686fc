//! Cancellation by dropping a call, and timeouts restarted by progress under
//! a hard maximum, on tokio's virtual clock.

use std::sync::Mutex;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tessera_client::CallOptions;
use tessera_server::{Args, RequestContext, Server, State, tool};
use tessera_testkit::prelude::*;
use tessera_types::CallToolRequestParams;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The cancellation token of the running `slow` call, once it started.
#[derive(Default)]
struct Signals {
    started: Notify,
    token: Mutex<Option<CancellationToken>>,
}

async fn slow(ctx: RequestContext, State(s): State<Signals>) -> &'static str {
    *s.token.lock().unwrap() = Some(ctx.cancellation().clone());
    s.started.notify_one();
    ctx.cancelled().await;
    "cancelled"
}

async fn echo(Args(a): Args<Echo>) -> String {
    a.text
}

#[derive(Deserialize, JsonSchema)]
struct Echo {
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct Ticks {
    /// How many progress notifications.
    ticks: u32,
    /// Seconds between them.
    every: u64,
}

async fn ticker(ctx: RequestContext, Args(t): Args<Ticks>) -> String {
    for i in 1..=t.ticks {
        tokio::time::sleep(Duration::from_secs(t.every)).await;
        ctx.progress(f64::from(i), Some(f64::from(t.ticks)), None);
    }
    "done".into()
}

fn server() -> Server<Signals> {
    Server::with_state(Signals::default())
        .tool(tool("slow").handler(slow))
        .tool(tool("echo").handler(echo))
        .tool(tool("ticker").handler(ticker))
        .build()
        .unwrap()
}

#[tokio::test]
async fn dropping_a_call_cancels_it_on_the_server() {
    for v in ERAS {
        let server = server();
        let client = in_process(&server, builder(v)).await;
        let signals = server.state().clone();
        bounded("the slow call to start", async {
            tokio::select! {
                r = client.call_tool("slow", json!({})) => panic!("the call finished: {r:?}"),
                _ = signals.started.notified() => {}
            }
            // The call's future is dropped here.
        })
        .await;
        let token = signals
            .token
            .lock()
            .unwrap()
            .clone()
            .expect("the handler's token");
        bounded("the server's handler token to fire", token.cancelled()).await;
        let r = client
            .call_tool("echo", json!({"text": "still here"}))
            .await
            .unwrap();
        assert_eq!(text(&r), "still here", "{v}");
        client.close().await;
    }
}

fn ticks(ticks: u32, every: u64) -> CallToolRequestParams {
    let mut p = CallToolRequestParams::new("ticker");
    p.arguments = Some(obj(json!({"ticks": ticks, "every": every})));
    p
}

#[tokio::test(start_paused = true)]
async fn progress_restarts_the_timeout() {
    for v in ERAS {
        let client = in_process(&server(), builder(v)).await;
        // Four steps of 40 s: longer than the 60 s timeout in all, but each
        // progress notification restarts it.
        let start = Instant::now();
        let options = CallOptions::new()
            .timeout(Duration::from_secs(60))
            .reset_timeout_on_progress(true);
        let r = client.call_tool_with(ticks(4, 40), &options).await.unwrap();
        assert_eq!(text(&r), "done");
        assert_eq!(start.elapsed().as_secs(), 160, "{v}");
        client.close().await;
    }
}

#[tokio::test(start_paused = true)]
async fn without_reset_the_timeout_holds() {
    for v in ERAS {
        let client = in_process(&server(), builder(v)).await;
        let start = Instant::now();
        let options = CallOptions::new()
            .timeout(Duration::from_secs(60))
            .reset_timeout_on_progress(false);
        let e = client
            .call_tool_with(ticks(4, 40), &options)
            .await
            .unwrap_err();
        assert!(e.is_timeout(), "{e}");
        assert_eq!(start.elapsed().as_secs(), 60, "{v}");
        client.close().await;
    }
}

#[tokio::test(start_paused = true)]
async fn the_hard_maximum_wins_over_progress() {
    for v in ERAS {
        let client = in_process(&server(), builder(v)).await;
        let start = Instant::now();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = seen.clone();
        let options = CallOptions::new()
            .timeout(Duration::from_secs(60))
            .max_timeout(Duration::from_secs(100))
            .on_progress(move |p| sink.lock().unwrap().push(p.progress));
        let e = client
            .call_tool_with(ticks(4, 40), &options)
            .await
            .unwrap_err();
        assert!(e.is_timeout(), "{e}");
        assert_eq!(start.elapsed().as_secs(), 100, "{v}");
        assert_eq!(
            *seen.lock().unwrap(),
            [1.0, 2.0],
            "progress at 40 s and 80 s"
        );
        client.close().await;
    }
}

#[tokio::test(start_paused = true)]
async fn the_client_default_timeout_applies() {
    let client = in_process(
        &server(),
        builder(ERAS[1]).request_timeout(Some(Duration::from_secs(10))),
    )
    .await;
    let start = Instant::now();
    let e = client
        .call_tool_with(ticks(1, 30), &CallOptions::new())
        .await
        .unwrap_err();
    assert!(e.is_timeout(), "{e}");
    assert_eq!(start.elapsed().as_secs(), 10);
    let ok = client
        .call_tool_with(ticks(1, 30), &CallOptions::new().no_timeout())
        .await
        .unwrap();
    assert_eq!(text(&ok), "done");
}
