//! The progress display of `tessera call --task`: on a terminal an indicatif
//! bar (a spinner until the server reports a total) whose message is the
//! latest status or progress message; otherwise one line per report on
//! stderr.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use tessera::types::ProgressNotificationParams;

/// The bar's resolution: progress is shown in thousandths of the total.
const STEPS: u64 = 1000;

/// Where progress and status changes go. Cheap to clone.
#[derive(Clone)]
pub struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    /// A bar on a terminal; plain lines otherwise.
    pub fn new(terminal: bool) -> Self {
        let bar = terminal.then(|| {
            let p = ProgressBar::new_spinner();
            p.enable_steady_tick(Duration::from_millis(100));
            p
        });
        Bar { bar }
    }

    /// Shows one progress notification.
    pub fn progress(&self, p: &ProgressNotificationParams) {
        let counted = match p.total {
            Some(t) => format!("{}/{}", number(p.progress), number(t)),
            None => number(p.progress),
        };
        let text = match &p.message {
            Some(m) => format!("progress {counted}: {m}"),
            None => format!("progress {counted}"),
        };
        let Some(bar) = &self.bar else {
            eprintln!("{text}");
            return;
        };
        if let Some(total) = p.total.filter(|t| *t > 0.0 && t.is_finite()) {
            if bar.length() != Some(STEPS) {
                bar.set_style(
                    ProgressStyle::with_template("{spinner} [{bar:30}] {percent:>3}% {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                );
                bar.set_length(STEPS);
            }
            let fraction = (p.progress / total).clamp(0.0, 1.0);
            bar.set_position((fraction * STEPS as f64).round() as u64);
        }
        bar.set_message(text);
    }

    /// Shows a status change.
    pub fn status(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.set_message(text.to_owned()),
            None => eprintln!("{text}"),
        }
    }

    /// Prints a line above the bar.
    pub fn println(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    /// Removes the bar.
    pub fn clear(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A progress figure without a trailing `.0`.
fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn whole_numbers_print_without_a_fraction() {
        assert_eq!(super::number(3.0), "3");
        assert_eq!(super::number(0.25), "0.25");
    }
}
