//! [`CallOptions`]: per-request timeout, progress callback, log level and
//! `_meta`, and [`ReconnectPolicy`].

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tessera_proto::RequestOptions;
use tessera_types::{JsonObject, LoggingLevel, ProgressNotificationParams};

/// Called with each progress notification of a request.
pub type ProgressCallback = Arc<dyn Fn(ProgressNotificationParams) + Send + Sync>;

/// Options of one call (each round of a multi round-trip request uses them).
///
/// ```
/// use std::time::Duration;
/// use tessera_client::CallOptions;
/// use tessera_types::LoggingLevel;
///
/// let options = CallOptions::new()
///     .timeout(Duration::from_secs(30))       // restarted by each progress notification
///     .max_timeout(Duration::from_secs(300))  // whatever progress arrives
///     .on_progress(|p| println!("{}/{:?} {:?}", p.progress, p.total, p.message))
///     .log_level(LoggingLevel::Info);         // 2026-07-28: logs for this request
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
pub struct CallOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_timeout: Option<Duration>,
    pub(crate) no_timeout: bool,
    pub(crate) reset_on_progress: Option<bool>,
    pub(crate) progress: Option<ProgressCallback>,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) meta: JsonObject,
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("max_timeout", &self.max_timeout)
            .field("no_timeout", &self.no_timeout)
            .field("reset_on_progress", &self.reset_on_progress)
            .field("progress", &self.progress.is_some())
            .field("log_level", &self.log_level)
            .field("meta", &self.meta)
            .finish()
    }
}

impl CallOptions {
    /// The client's defaults.
    pub fn new() -> Self {
        CallOptions::default()
    }

    /// How long to wait for the answer (overrides the client's default). With
    /// progress (a callback or [`CallOptions::reset_timeout_on_progress`]),
    /// each progress notification restarts it.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }

    /// The hard limit, whatever progress arrives (overrides the client's default).
    pub fn max_timeout(mut self, t: Duration) -> Self {
        self.max_timeout = Some(t);
        self
    }

    /// Waits as long as it takes (no timeout, no hard limit).
    pub fn no_timeout(mut self) -> Self {
        self.no_timeout = true;
        self
    }

    /// Whether progress restarts the timeout. `true` asks the server for
    /// progress (a `progressToken`) even without a callback, since only
    /// progress can restart it; `false` keeps the deadline fixed. The default
    /// restarts it when a progress callback is set.
    pub fn reset_timeout_on_progress(mut self, on: bool) -> Self {
        self.reset_on_progress = Some(on);
        self
    }

    /// Asks for progress and calls `f` with each notification (also delivered
    /// as [`ClientEvent::Progress`](crate::ClientEvent::Progress)).
    pub fn on_progress(
        mut self,
        f: impl Fn(ProgressNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// The lowest log level the server may send for this request
    /// (2026-07-28 `_meta` `io.modelcontextprotocol/logLevel`; without it a
    /// modern server sends no logs). Ignored in the legacy era, where
    /// [`Client::set_log_level`](crate::Client::set_log_level) sets the
    /// session's level.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Adds a `_meta` entry to the request.
    pub fn meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.meta.insert(key.into(), value);
        self
    }

    /// Whether the request carries a progress token.
    pub(crate) fn wants_progress(&self) -> bool {
        self.progress.is_some() || self.reset_on_progress == Some(true)
    }

    pub(crate) fn request_options(&self) -> RequestOptions {
        RequestOptions {
            timeout: self.timeout,
            max_timeout: self.max_timeout,
            no_timeout: self.no_timeout,
            reset_on_progress: self.reset_on_progress.unwrap_or(true),
            progress: self.wants_progress(),
            related: None,
            meta: None,
        }
    }
}

/// How [`Client::reconnect`](crate::Client::reconnect) retries: the first
/// attempt at once, then after `initial_delay`, growing by `multiplier` up
/// to `max_delay`, at most `max_attempts` attempts in all.
#[derive(Debug, Clone, PartialEq)]
pub struct ReconnectPolicy {
    /// Attempts in all (at least 1).
    pub max_attempts: u32,
    /// The wait after the first failed attempt.
    pub initial_delay: Duration,
    /// The longest wait between attempts.
    pub max_delay: Duration,
    /// How much each wait grows.
    pub multiplier: f64,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            max_attempts: 5,
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(5),
            multiplier: 2.0,
        }
    }
}

impl ReconnectPolicy {
    /// The wait after failed attempt `n` (1-based).
    pub fn delay_after(&self, n: u32) -> Duration {
        let factor = self
            .multiplier
            .max(1.0)
            .powi(n.saturating_sub(1).min(64) as i32);
        let d = self.initial_delay.as_secs_f64() * factor;
        if !d.is_finite() || d >= self.max_delay.as_secs_f64() {
            self.max_delay
        } else {
            Duration::from_secs_f64(d)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = ReconnectPolicy::default();
        assert_eq!(p.delay_after(1), Duration::from_millis(100));
        assert_eq!(p.delay_after(2), Duration::from_millis(200));
        assert_eq!(p.delay_after(4), Duration::from_millis(800));
        assert_eq!(p.delay_after(30), Duration::from_secs(5));
    }

    #[test]
    fn progress_token_only_when_useful() {
        assert!(!CallOptions::new().wants_progress());
        assert!(CallOptions::new().on_progress(|_| {}).wants_progress());
        assert!(
            CallOptions::new()
                .reset_timeout_on_progress(true)
                .wants_progress()
        );
        let o = CallOptions::new()
            .reset_timeout_on_progress(false)
            .request_options();
        assert!(!o.reset_on_progress && !o.progress);
    }
}
