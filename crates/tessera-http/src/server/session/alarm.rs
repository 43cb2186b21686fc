//! [`Alarm`]: the one timer a session's task keeps across its turns.
//!
//! The task wakes for its idle deadline, its relay deadlines and (until the
//! client has sent something after `initialize`) its handshake deadline. Building a
//! timer on every turn of the task registered it with the runtime's timer
//! wheel and took it out again each time (a few turns per request); this
//! one is built once and only moved when a deadline comes *earlier* than
//! the one it is set for. A deadline that moved later (the session was used
//! again) lets the alarm go off early: the task checks its deadlines when
//! it does, and sets the alarm again.

use std::pin::Pin;

use tokio::time::{Instant, Sleep};

/// A timer kept across turns, set for the earliest deadline asked since it
/// last went off.
#[derive(Default)]
pub(super) struct Alarm {
    sleep: Option<Pin<Box<Sleep>>>,
    /// The instant it is set for; `None` when it is not set.
    at: Option<Instant>,
}

impl Alarm {
    /// Sets the alarm for `at`, unless it is set for an earlier instant.
    pub(super) fn set(&mut self, at: Instant) {
        if self.at.is_some_and(|set| set <= at) {
            return;
        }
        match &mut self.sleep {
            Some(s) => s.as_mut().reset(at),
            None => self.sleep = Some(Box::pin(tokio::time::sleep_until(at))),
        }
        self.at = Some(at);
    }

    /// Resolves when the instant it is set for has passed (then it is no
    /// longer set); never, while it is not set.
    pub(super) async fn rung(&mut self) {
        match (&mut self.sleep, self.at) {
            (Some(s), Some(_)) => {
                s.as_mut().await;
                self.at = None;
            }
            _ => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn goes_off_at_the_earliest_instant_set() {
        let start = Instant::now();
        let mut alarm = Alarm::default();
        alarm.set(start + Duration::from_secs(10));
        // A later instant does not move it; an earlier one does.
        alarm.set(start + Duration::from_secs(20));
        alarm.set(start + Duration::from_secs(5));
        alarm.rung().await;
        assert_eq!(Instant::now(), start + Duration::from_secs(5));
        // Gone off: it is not set, so any instant sets it.
        alarm.set(start + Duration::from_secs(30));
        alarm.rung().await;
        assert_eq!(Instant::now(), start + Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn an_alarm_not_set_never_goes_off() {
        let mut alarm = Alarm::default();
        let r = tokio::time::timeout(Duration::from_secs(3600), alarm.rung()).await;
        assert!(r.is_err(), "an unset alarm went off");
    }
}
