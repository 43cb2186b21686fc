//! Reloading the configuration of `tessera proxy --config` on SIGHUP and
//! when the file changes (its modification time or size, looked at every
//! second): the new file is validated whole first; a bad one is reported
//! with the field at fault and the running configuration stays. The
//! gateway section (rules, rate limits, API keys) takes effect at once for
//! new requests; sessions in progress go on. Upstreams (`mcpServers`) added
//! to the file are connected, removed ones closed, and changed ones
//! reconnected with their new entry; the others keep their connections,
//! and every session is told the lists changed.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;
use std::sync::Arc;

use tessera_proxy::{Aggregator, ApiKeyLayer, parse_config};
use tokio::task::JoinHandle;

/// What the file looks like from outside: its modification time and size.
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// The `mcpServers` section of a configuration text, for comparison.
fn servers_of(text: &str) -> Option<Value> {
    /// The section compared.
    #[derive(serde::Deserialize)]
    struct Servers {
        #[serde(
            rename = "mcpServers",
            default,
            deserialize_with = "tessera::types::loose::present_value"
        )]
        servers: Option<Value>,
    }
    let v = serde_json::from_str::<Value>(text).ok()?;
    tessera::types::loose::view::<Servers>(&v)?.servers
}

/// Starts watching `path`; the task runs until aborted.
pub fn spawn(
    path: PathBuf,
    text: &str,
    aggregator: Aggregator,
    keys: ApiKeyLayer,
    buckets: Option<Arc<crate::proxy_redis::RedisBuckets>>,
    oauth_front: bool,
) -> JoinHandle<()> {
    let mut running_servers = servers_of(text);
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
            let running = Running {
                servers: running_servers.as_ref(),
                aggregator: &aggregator,
                keys: &keys,
                buckets: buckets.as_ref(),
                oauth_front,
            };
            if let Some(servers) = reload(&path, why, &running) {
                running_servers = Some(servers);
            }
        }
    })
}

/// What a reload changes.
struct Running<'a> {
    /// The `mcpServers` section running now.
    servers: Option<&'a Value>,
    aggregator: &'a Aggregator,
    keys: &'a ApiKeyLayer,
    /// Where the rate-limit buckets live when shared (`--redis`).
    buckets: Option<&'a Arc<crate::proxy_redis::RedisBuckets>>,
    /// Whether the proxy verifies OAuth tokens (`--auth-issuer`).
    oauth_front: bool,
}

/// Reloads `path`; the `mcpServers` now running when it was applied.
fn reload(path: &Path, why: &str, running: &Running<'_>) -> Option<Value> {
    let Running {
        servers: running_servers,
        aggregator,
        keys,
        buckets,
        oauth_front,
    } = *running;
    let shown = path.display();
    let outcome = std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| {
            parse_config(&text, |var| std::env::var(var).ok())
                .and_then(|c| c.check_front(oauth_front).map(|()| c))
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
            return None;
        }
    };
    let entry_of = |all: Option<&Value>, name: &str| all.and_then(|s| s.get(name)).cloned();
    let unchanged = |name: &str| {
        let before = entry_of(running_servers, name);
        before.is_some() && before == entry_of(servers.as_ref(), name)
    };
    // The upstreams in one step: going from several to one shown without
    // prefix (or back) never passes through a list that mixes them.
    let said = match aggregator.reconfigure(config.servers, unchanged) {
        Ok(said) => said,
        Err(e) => {
            eprintln!(
                "tessera: {shown} not reloaded ({why}): {}; the running configuration stays",
                crate::peer_text::line(&e.to_string())
            );
            return None;
        }
    };
    aggregator.set_policy(config.gateway.policy);
    aggregator.set_rate_limits(crate::proxy_redis::limits(
        config.gateway.rate_limits,
        buckets,
    ));
    keys.set_keys(config.gateway.api_keys);
    let mut line = String::from("gateway rules, rate limits and API keys");
    for (what, names) in [
        ("upstreams added", &said.added),
        ("reconnected", &said.changed),
        ("removed", &said.removed),
    ] {
        if !names.is_empty() {
            line.push_str(&format!("; {what}: {}", names.join(", ")));
        }
    }
    eprintln!("tessera: {shown} reloaded ({why}): {line}");
    servers
}
