//! Reloading the configuration of `tessera proxy --config` on SIGHUP and
//! when the file changes (its modification time or size, looked at every
//! second): the new file is validated whole first; a bad one is reported
//! with the field at fault and the running configuration stays. The
//! gateway section (rules, rate limits, API keys) takes effect at once for
//! new requests; sessions in progress go on. Upstreams (`mcpServers`) are
//! not reloaded: a change there is reported, and applies at the next start.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tessera_proxy::{Aggregator, ApiKeyLayer, RateLimits, parse_config};
use tokio::task::JoinHandle;

/// What the file looks like from outside: its modification time and size.
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// The `mcpServers` section of a configuration text, for comparison.
fn servers_of(text: &str) -> Option<Value> {
    serde_json::from_str::<Value>(text)
        .ok()?
        .get("mcpServers")
        .cloned()
}

/// Starts watching `path`; the task runs until aborted.
pub fn spawn(
    path: PathBuf,
    text: &str,
    aggregator: Aggregator,
    keys: ApiKeyLayer,
) -> JoinHandle<()> {
    let running_servers = servers_of(text);
    tokio::spawn(async move {
        #[cfg(unix)]
        let mut hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        let mut seen = stamp(&path);
        loop {
            #[cfg(unix)]
            let hangup = async {
                match hup.as_mut() {
                    Some(h) => {
                        h.recv().await;
                    }
                    None => std::future::pending().await,
                }
            };
            #[cfg(not(unix))]
            let hangup = std::future::pending::<()>();
            let why = tokio::select! {
                _ = hangup => "SIGHUP",
                _ = tick.tick() => {
                    let now = stamp(&path);
                    if now == seen {
                        continue;
                    }
                    "the file changed"
                }
            };
            seen = stamp(&path);
            reload(&path, why, running_servers.as_ref(), &aggregator, &keys);
        }
    })
}

fn reload(
    path: &Path,
    why: &str,
    running_servers: Option<&Value>,
    aggregator: &Aggregator,
    keys: &ApiKeyLayer,
) {
    let shown = path.display();
    let outcome = std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| {
            parse_config(&text, |var| std::env::var(var).ok())
                .map(|c| (c, servers_of(&text)))
                .map_err(|e| e.to_string())
        });
    let (config, servers) = match outcome {
        Ok(c) => c,
        Err(e) => {
            // The error text may quote the file: peer-controlled text.
            eprintln!(
                "tessera: {shown} not reloaded ({why}): {}; the running configuration stays",
                crate::peer_text::line(&e)
            );
            return;
        }
    };
    aggregator.set_policy(config.gateway.policy);
    aggregator.set_rate_limits(RateLimits::new(config.gateway.rate_limits));
    keys.set_keys(config.gateway.api_keys);
    eprintln!("tessera: {shown} reloaded ({why}): gateway rules, rate limits and API keys");
    if servers.as_ref() != running_servers {
        eprintln!(
            "tessera: {shown}: mcpServers changed; upstreams are not reloaded, restart the \
             proxy to apply"
        );
    }
}
