//! What the server reports while a verb runs: progress notifications (a
//! progress bar on a terminal, one line per update otherwise) and log
//! messages (one line each, with their level), all on stderr so that stdout
//! holds only the result.

use std::io::IsTerminal as _;
use std::sync::{Arc, Mutex};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;
use tessera::client::{Client, ClientEvent};
use tessera::types::{LoggingMessageNotificationParams, ProgressNotificationParams};

use crate::peer_text;

/// Reports progress and logs on stderr. Cheap to clone.
#[derive(Clone)]
pub struct Notices {
    inner: Arc<Inner>,
}

struct Inner {
    terminal: bool,
    bar: Mutex<Option<ProgressBar>>,
    watcher: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Notices {
    /// Reporting on stderr; a progress bar only when stderr is a terminal.
    pub fn new(_json: bool) -> Notices {
        Notices::with_terminal(std::io::stderr().is_terminal())
    }

    /// Reporting with the terminal decided by the caller (tests).
    pub fn with_terminal(terminal: bool) -> Notices {
        Notices {
            inner: Arc::new(Inner {
                terminal,
                bar: Mutex::new(None),
                watcher: Mutex::new(None),
            }),
        }
    }

    fn bar(&self) -> std::sync::MutexGuard<'_, Option<ProgressBar>> {
        self.inner
            .bar
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Shows one progress notification.
    pub fn progress(&self, p: &ProgressNotificationParams) {
        if !self.inner.terminal {
            eprintln!("{}", progress_line(p));
            return;
        }
        let mut guard = self.bar();
        let bar = guard.get_or_insert_with(new_bar);
        if let Some(t) = p.total.filter(|t| t.is_finite() && *t >= 0.0) {
            bar.set_length(t.round() as u64);
        }
        if p.progress.is_finite() && p.progress >= 0.0 {
            bar.set_position(p.progress.round() as u64);
        }
        if let Some(m) = &p.message {
            bar.set_message(peer_text::line(m).into_owned());
        }
    }

    /// Shows a status (a task's, for instance): the bar's message on a
    /// terminal, one line otherwise.
    pub fn status(&self, text: &str) {
        if !self.inner.terminal {
            eprintln!("{text}");
            return;
        }
        self.bar()
            .get_or_insert_with(new_bar)
            .set_message(text.to_owned());
    }

    /// Prints a line on stderr, above the bar if there is one.
    pub fn line(&self, text: &str) {
        match self.bar().as_ref() {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    /// Shows one log message.
    pub fn log(&self, m: &LoggingMessageNotificationParams) {
        let line = log_line(m);
        match self.bar().as_ref() {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    /// Prints the client's log messages as they arrive, until it closes.
    pub fn watch(&self, client: &Client) {
        let mut events = client.events();
        let me = self.clone();
        let handle = tokio::spawn(async move {
            while let Some(e) = events.recv().await {
                match e {
                    ClientEvent::Log(m) => me.log(&m),
                    ClientEvent::Disconnected => break,
                    _ => {}
                }
            }
        });
        if let Some(old) = self
            .inner
            .watcher
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .replace(handle)
        {
            old.abort();
        }
    }

    /// Clears the progress bar.
    pub fn finish(&self) {
        if let Some(bar) = self.bar().take() {
            bar.finish_and_clear();
        }
    }

    /// Stops watching and waits until every log already received is printed.
    pub async fn drain(&self) {
        let handle = self
            .inner
            .watcher
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(h) = handle {
            // The watcher ends on Disconnected, sent when the client closes.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), h).await;
        }
    }
}

/// The progress bar, drawn on stderr.
fn new_bar() -> ProgressBar {
    let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    b.set_style(
        ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    b
}

/// One progress update as a line: `progress: 3/10 (30%) copying` (the
/// message's control characters shown as escapes).
pub fn progress_line(p: &ProgressNotificationParams) -> String {
    let mut s = format!("progress: {}", number(p.progress));
    if let Some(t) = p.total {
        s.push_str(&format!("/{}", number(t)));
        if t > 0.0 {
            s.push_str(&format!(
                " ({:.0}%)",
                (p.progress / t * 100.0).clamp(0.0, 100.0)
            ));
        }
    }
    if let Some(m) = &p.message {
        s.push(' ');
        s.push_str(&peer_text::line(m));
    }
    s
}

/// One log message as a line: `[warning] db: connection slow`. Control
/// characters of the server's text, newlines included, are shown as escapes.
pub fn log_line(m: &LoggingMessageNotificationParams) -> String {
    let data = match &m.data {
        Value::String(s) => peer_text::line(s).into_owned(),
        other => peer_text::line(&other.to_string()).into_owned(),
    };
    let logger = m.logger.as_deref().map(peer_text::line);
    match &logger {
        Some(l) => format!("[{}] {l}: {data}", m.level.as_str()),
        None => format!("[{}] {data}", m.level.as_str()),
    }
}

fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        let p: ProgressNotificationParams = serde_json::from_value(serde_json::json!({
            "progressToken": 1, "progress": 3, "total": 10, "message": "copying"
        }))
        .unwrap();
        assert_eq!(progress_line(&p), "progress: 3/10 (30%) copying");
        let p: ProgressNotificationParams =
            serde_json::from_value(serde_json::json!({"progressToken": "a", "progress": 0.5}))
                .unwrap();
        assert_eq!(progress_line(&p), "progress: 0.5");
        let m: LoggingMessageNotificationParams = serde_json::from_value(
            serde_json::json!({"level": "warning", "logger": "db", "data": "slow"}),
        )
        .unwrap();
        assert_eq!(log_line(&m), "[warning] db: slow");
        let m: LoggingMessageNotificationParams =
            serde_json::from_value(serde_json::json!({"level": "info", "data": {"a": 1}})).unwrap();
        assert_eq!(log_line(&m), "[info] {\"a\":1}");
        let m: LoggingMessageNotificationParams = serde_json::from_value(serde_json::json!({
            "level": "info", "logger": "x\u{1b}]0;t\u{7}", "data": "a\nb\u{9b}2J"
        }))
        .unwrap();
        assert_eq!(log_line(&m), "[info] x\\x1b]0;t\\x07: a\\x0ab\\u{9b}2J");
    }
}
