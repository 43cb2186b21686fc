//! A stateless Streamable HTTP server with the telemetry layer, as a program
//! wires it: the `echo` tool (`{"text": string}` → the text) at
//! `http://ADDR/mcp`. The benchmark's telemetry cost figures
//! (`bench/telemetry_cost.sh`) run it three ways:
//!
//! - `--telemetry none`: no layer at all;
//! - `--telemetry layer`: the layer, but no tracer or meter provider (the
//!   layer is inactive and stays out of the stack);
//! - `--telemetry otlp`: the layer exporting over OTLP as the `OTEL_*`
//!   variables say (`OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318`).
//!
//! `cargo run -p tessera-examples --example telemetry_http -- 127.0.0.1:8000 --telemetry otlp`

use schemars::JsonSchema;
use serde::Deserialize;
use tessera::server::{Args, Server, tool};
use tessera::telemetry::Telemetry;
use tessera_http::{McpHttp, ResponseMode};

#[derive(Deserialize, JsonSchema)]
struct Echo {
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or("127.0.0.1:8000".into());
    let mode = match (args.next().as_deref(), args.next()) {
        (Some("--telemetry"), Some(m)) => m,
        (None, _) => "otlp".to_owned(),
        _ => return Err("usage: telemetry_http ADDR [--telemetry none|layer|otlp]".into()),
    };
    let mut exporting = None;
    let mut builder = Server::builder().name_version("telemetry-example", "1.0.0");
    match mode.as_str() {
        "none" => {}
        "layer" => builder = builder.layer(Telemetry::builder().build().layer()),
        "otlp" => {
            let e = tessera_telemetry::export::init_from_env("telemetry_http", false)?
                .ok_or("set OTEL_EXPORTER_OTLP_ENDPOINT to export")?;
            let t = e.telemetry().clone();
            builder = builder.middleware(|s| t.install(s));
            exporting = Some(e);
        }
        other => return Err(format!("--telemetry {other}: none, layer or otlp").into()),
    }
    let server = builder
        .tool(
            tool("echo")
                .description("Echoes the text")
                .handler(|Args(e): Args<Echo>| async move { e.text }),
        )
        .build()?;
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let local = listener.local_addr()?;
    let mcp = McpHttp::builder(server)
        .bind_address(local)
        .stateless(true)
        .response_mode(ResponseMode::Json)
        .build();
    eprintln!("serving MCP at http://{local}/mcp (telemetry: {mode})");
    tessera_http::serve(listener, mcp, stopped()).await?;
    // The spans still queued are exported before the program ends.
    if let Some(e) = exporting {
        e.shutdown().await;
    }
    Ok(())
}

/// Completes on Ctrl-C or SIGTERM.
async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
