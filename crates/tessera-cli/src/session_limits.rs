//! The session limits `tessera serve --http` and `tessera proxy --http`
//! share: how many sessions, per client and in all, how long an idle or
//! silent one is kept, and how many requests one client may have in progress.

use std::time::Duration;

use clap::Args;
use tessera_http::McpHttpBuilder;

/// The session limits of an HTTP endpoint.
#[derive(Debug, Clone, Args)]
pub struct SessionLimits {
    /// Close a session after this many seconds without requests or open streams (0 = never).
    #[arg(long, value_name = "SECS", default_value_t = 1800, requires = "http")]
    pub session_idle_timeout: u64,

    /// The most sessions open at once; at the cap the least recently used idle
    /// session is ended, and a new one gets 503 only when all are busy.
    #[arg(long, value_name = "N", default_value_t = 1024, requires = "http")]
    pub max_sessions: usize,

    /// The most sessions one client (authenticated principal, else IP address)
    /// may hold; checked before --max-sessions (429 when all of them are busy).
    #[arg(long, value_name = "N", default_value_t = 256, requires = "http")]
    pub max_sessions_per_client: usize,

    /// End a new session whose client sends nothing after initialize within
    /// this many seconds (0 = only the idle timeout applies).
    #[arg(long, value_name = "SECS", default_value_t = 10, requires = "http")]
    pub handshake_timeout: u64,

    /// The most requests one client (authenticated principal, else IP address)
    /// may have in progress at once, over all its sessions, connections and
    /// HTTP/2 streams; beyond it a request gets 429 with Retry-After at once.
    /// Behind a reverse proxy every client has its address: raise it there.
    #[arg(long, value_name = "N", default_value_t = 256, requires = "http")]
    pub max_requests_per_client: usize,
}

impl SessionLimits {
    /// The first of these flags set to other than its default (given
    /// without `--http`, where clap's `requires` does not catch it once
    /// `--stdio` is given).
    pub fn changed_flag(&self) -> Option<&'static str> {
        [
            (self.session_idle_timeout != 1800, "--session-idle-timeout"),
            (self.max_sessions != 1024, "--max-sessions"),
            (
                self.max_sessions_per_client != 256,
                "--max-sessions-per-client",
            ),
            (self.handshake_timeout != 10, "--handshake-timeout"),
            (
                self.max_requests_per_client != 256,
                "--max-requests-per-client",
            ),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }

    /// Sets these limits on `b`.
    pub fn apply(&self, b: McpHttpBuilder) -> McpHttpBuilder {
        let secs = |n: u64| (n > 0).then(|| Duration::from_secs(n));
        b.session_idle_timeout(secs(self.session_idle_timeout))
            .max_sessions(self.max_sessions)
            .max_sessions_per_client(self.max_sessions_per_client)
            .handshake_timeout(secs(self.handshake_timeout))
            .max_requests_per_client(self.max_requests_per_client)
    }
}
