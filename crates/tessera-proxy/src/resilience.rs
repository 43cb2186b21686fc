//! Resilience per upstream of an aggregating proxy: a cap on the requests
//! in flight, a circuit breaker, and the one retry a request may get.
//!
//! - **Concurrency cap** (`maxConcurrent`, default
//!   [`DEFAULT_MAX_CONCURRENT`]): a request beyond it waits for a place, at
//!   most the upstream's request timeout, then is refused with an error
//!   naming the limit.
//! - **Circuit breaker** (`circuitBreaker`, default
//!   [`Breaker::default`]): after `failures` consecutive requests that were
//!   sent and not answered (a timeout, or the connection ended first) the
//!   circuit opens: requests are refused at once, and the upstream's items
//!   are left out of lists, for `cooldown`. Then one request goes through
//!   as a probe (half-open): an answer closes the circuit, a failure opens
//!   it again. A JSON-RPC error is an answer: the upstream is alive, and
//!   so is an HTTP 4xx status; an HTTP client's own error with no answer
//!   or a 5xx status is a failure. For an upstream reached on one
//!   connection per caller, a caller's connection that cannot be made
//!   (unreachable, or a handshake broken off) is a failure too, while a
//!   caller refused before the upstream is asked (no token, a refused
//!   token exchange) counts for nothing.
//! - **Retry**: a request is sent again (once, on the next connection)
//!   only when it provably never reached the upstream
//!   ([`Fate::Unsent`]); one that may have run is never sent twice.

use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tessera_types::ErrorObject;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::forward::Fate;
use crate::refusal::RefusalData;

/// The default of an upstream's `maxConcurrent`.
pub const DEFAULT_MAX_CONCURRENT: usize = 64;

/// How long a request that was never written waits for the upstream's next
/// connection before its one retry is given up.
pub(crate) const RETRY_WAIT: Duration = Duration::from_secs(2);

/// The circuit breaker of one upstream (`circuitBreaker` in its entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Breaker {
    /// Consecutive failures that open the circuit (at least 1).
    pub failures: u32,
    /// How long the circuit stays open before a probe request is let
    /// through.
    pub cooldown: Duration,
}

impl Default for Breaker {
    /// Opens after 5 consecutive failures, probes after 30 s.
    fn default() -> Self {
        Breaker {
            failures: 5,
            cooldown: Duration::from_secs(30),
        }
    }
}

/// Where a circuit stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Requests pass; `failures` in a row so far.
    Closed { failures: u32 },
    /// Requests are refused until `until`.
    Open { until: Instant },
    /// One probe request is in flight (`probing`), or the next request is
    /// the probe.
    HalfOpen { probing: bool },
}

/// What [`Circuit::state_name`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CircuitState {
    /// Requests pass.
    Closed,
    /// Requests are refused.
    Open,
    /// A probe decides.
    HalfOpen,
}

/// One upstream's circuit.
#[derive(Debug)]
pub(crate) struct Circuit {
    settings: Option<Breaker>,
    state: Mutex<State>,
}

/// A request let through a [`Circuit`]; tell it how the request ended with
/// [`Pass::finish`] (dropped unfinished, it counts for nothing).
#[derive(Debug)]
pub(crate) struct Pass<'a> {
    circuit: &'a Circuit,
    probe: bool,
    done: bool,
}

impl Circuit {
    /// A circuit with these settings (`None`: always closed).
    pub fn new(settings: Option<Breaker>) -> Self {
        Circuit {
            settings,
            state: Mutex::new(State::Closed { failures: 0 }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Where the circuit stands at `now` (an open one whose cool-down is
    /// over reads as half-open).
    pub fn state_at(&self, now: Instant) -> CircuitState {
        match *self.lock() {
            State::Closed { .. } => CircuitState::Closed,
            State::Open { until } if now < until => CircuitState::Open,
            State::Open { .. } | State::HalfOpen { .. } => CircuitState::HalfOpen,
        }
    }

    /// Lets a request to `upstream` through, or refuses it with the error
    /// the client gets (naming the circuit and when to retry).
    pub fn admit(&self, upstream: &str, now: Instant) -> Result<Pass<'_>, ErrorObject> {
        let Some(settings) = self.settings else {
            return Ok(self.pass(false));
        };
        let mut state = self.lock();
        match *state {
            State::Closed { .. } => Ok(self.pass(false)),
            State::Open { until } if now < until => {
                let wait = until - now;
                Err(refusal(upstream, "open", settings, wait))
            }
            State::Open { .. } | State::HalfOpen { probing: false } => {
                *state = State::HalfOpen { probing: true };
                Ok(self.pass(true))
            }
            State::HalfOpen { probing: true } => Err(refusal(
                upstream,
                "half-open",
                settings,
                Duration::from_secs(1),
            )),
        }
    }

    fn pass(&self, probe: bool) -> Pass<'_> {
        Pass {
            circuit: self,
            probe,
            done: false,
        }
    }

    fn record(&self, probe: bool, fate: Option<Fate>, now: Instant) {
        let Some(settings) = self.settings else {
            return;
        };
        let mut state = self.lock();
        match fate {
            Some(Fate::Answered) => *state = State::Closed { failures: 0 },
            Some(Fate::Lost) => {
                *state = match *state {
                    State::Closed { failures } if failures + 1 < settings.failures => {
                        State::Closed {
                            failures: failures + 1,
                        }
                    }
                    // A failure after the probe went out (or the probe's
                    // own) opens the circuit again.
                    _ => State::Open {
                        until: now + settings.cooldown,
                    },
                }
            }
            // Nothing learnt; a probe that learnt nothing lets the next
            // request probe.
            Some(Fate::Unsent | Fate::Cancelled) | None => {
                if probe && *state == (State::HalfOpen { probing: true }) {
                    *state = State::HalfOpen { probing: false };
                }
            }
        }
    }
}

impl Pass<'_> {
    /// Records how the request ended.
    pub fn finish(mut self, fate: Fate) {
        self.done = true;
        self.circuit.record(self.probe, Some(fate), Instant::now());
    }
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.circuit.record(self.probe, None, Instant::now());
        }
    }
}

fn refusal(upstream: &str, state: &str, settings: Breaker, wait: Duration) -> ErrorObject {
    let ms = wait.as_millis().max(1) as u64;
    let why = if state == "open" {
        format!(
            "its circuit breaker opened after {} consecutive failures",
            settings.failures
        )
    } else {
        "its circuit breaker is half-open and a probe request is in flight".to_owned()
    };
    ErrorObject::internal(format!(
        "upstream {upstream} is failing: {why}; retry in {:.1} s",
        ms as f64 / 1000.0
    ))
    .with_data(
        RefusalData {
            circuit: Some(state.to_owned()),
            ..RefusalData::upstream(upstream).retry_after_ms(ms)
        }
        .to_value(),
    )
}

/// The places for requests in flight to one upstream (`maxConcurrent`).
#[derive(Debug)]
pub(crate) struct Places {
    max: usize,
    places: std::sync::Arc<Semaphore>,
}

impl Places {
    /// `max` places.
    pub fn new(max: usize) -> Self {
        let max = max.clamp(1, Semaphore::MAX_PERMITS);
        Places {
            max,
            places: std::sync::Arc::new(Semaphore::new(max)),
        }
    }

    /// A place for one request to `upstream`, waiting at most `wait` (none:
    /// as long as the caller does).
    pub async fn take(
        &self,
        upstream: &str,
        wait: Option<Duration>,
    ) -> Result<OwnedSemaphorePermit, ErrorObject> {
        let acquire = self.places.clone().acquire_owned();
        let permit = match wait {
            Some(w) => tokio::time::timeout(w, acquire).await.ok(),
            None => Some(acquire.await),
        };
        match permit {
            Some(Ok(p)) => Ok(p),
            _ => Err(ErrorObject::internal(format!(
                "upstream {upstream} has its limit of {} requests in flight (maxConcurrent) and \
                 none ended within {} s; retry later or raise maxConcurrent",
                self.max,
                wait.unwrap_or_default().as_secs_f64()
            ))
            .with_data(
                RefusalData::upstream(upstream)
                    .limit("maxConcurrent")
                    .max(self.max)
                    .to_value(),
            )),
        }
    }
}

/// Reads an entry's `maxConcurrent` (`None` when absent).
pub(crate) fn parse_max_concurrent(v: Option<&Value>) -> Result<Option<usize>, String> {
    match v {
        None => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(n) if n >= 1 => Ok(Some(usize::try_from(n).unwrap_or(usize::MAX))),
            _ => Err("maxConcurrent must be a whole number of at least 1".into()),
        },
        Some(_) => Err("maxConcurrent must be a whole number of at least 1".into()),
    }
}

/// Reads an entry's `circuitBreaker`: absent is the default breaker,
/// `false` none, an object `{"failures": N, "cooldown": SECS}` (each
/// optional).
pub(crate) fn parse_breaker(v: Option<&Value>) -> Result<Option<Breaker>, String> {
    let mut b = Breaker::default();
    let o = match v {
        None | Some(Value::Bool(true)) => return Ok(Some(b)),
        Some(Value::Bool(false)) => return Ok(None),
        Some(Value::Object(o)) => o,
        Some(_) => {
            return Err(
                "circuitBreaker must be false or an object {\"failures\": N, \"cooldown\": SECS}"
                    .into(),
            );
        }
    };
    for (k, v) in o {
        match k.as_str() {
            "failures" => match v.as_u64() {
                Some(n) if n >= 1 => b.failures = u32::try_from(n).unwrap_or(u32::MAX),
                _ => {
                    return Err(
                        "circuitBreaker.failures must be a whole number of at least 1".into(),
                    );
                }
            },
            "cooldown" => match v.as_f64() {
                Some(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => {
                    b.cooldown = Duration::from_secs_f64(s)
                }
                _ => {
                    return Err(
                        "circuitBreaker.cooldown must be a positive number of seconds (at most \
                         86400)"
                            .into(),
                    );
                }
            },
            other => {
                return Err(format!(
                    "circuitBreaker.{other}: unknown field (known: failures, cooldown)"
                ));
            }
        }
    }
    Ok(Some(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn circuit(failures: u32, cooldown_s: u64) -> Circuit {
        Circuit::new(Some(Breaker {
            failures,
            cooldown: Duration::from_secs(cooldown_s),
        }))
    }

    fn fail(c: &Circuit, now: Instant) {
        let pass = c.admit("up", now).expect("admitted");
        let probe = pass.probe;
        std::mem::forget(pass);
        c.record(probe, Some(Fate::Lost), now);
    }

    #[test]
    fn opens_after_consecutive_failures_and_an_answer_resets_the_count() {
        let c = circuit(3, 10);
        let t0 = Instant::now();
        fail(&c, t0);
        fail(&c, t0);
        // An answer (even a JSON-RPC error) starts the count again.
        c.admit("up", t0).unwrap().finish(Fate::Answered);
        fail(&c, t0);
        fail(&c, t0);
        assert_eq!(c.state_at(t0), CircuitState::Closed);
        // Unsent and cancelled requests say nothing of the upstream.
        c.admit("up", t0).unwrap().finish(Fate::Unsent);
        c.admit("up", t0).unwrap().finish(Fate::Cancelled);
        assert_eq!(c.state_at(t0), CircuitState::Closed);
        fail(&c, t0);
        assert_eq!(c.state_at(t0), CircuitState::Open);
        let e = c.admit("up", t0 + Duration::from_secs(4)).unwrap_err();
        let data = e.data.clone().unwrap();
        assert_eq!(data["circuit"], "open");
        assert_eq!(data["upstream"], "up");
        assert_eq!(data["retryAfterMs"], 6000);
        assert!(
            e.message.contains("3 consecutive failures"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_half_open_circuit_lets_one_probe_through() {
        let c = circuit(1, 10);
        let t0 = Instant::now();
        fail(&c, t0);
        let later = t0 + Duration::from_secs(10);
        assert_eq!(c.state_at(later), CircuitState::HalfOpen);
        let probe = c.admit("up", later).expect("the probe");
        let e = c.admit("up", later).unwrap_err();
        assert_eq!(e.data.unwrap()["circuit"], "half-open");
        // The probe fails: open again for a whole cool-down.
        assert!(probe.probe);
        std::mem::forget(probe);
        c.record(true, Some(Fate::Lost), later);
        assert_eq!(c.state_at(later), CircuitState::Open);
        let again = later + Duration::from_secs(10);
        // A probe dropped unfinished (its client went away) lets the next probe.
        drop(c.admit("up", again).expect("a probe"));
        let probe = c.admit("up", again).expect("the next probe");
        probe.finish(Fate::Answered);
        assert_eq!(c.state_at(again), CircuitState::Closed);
        assert!(c.admit("up", again).is_ok());
    }

    #[test]
    fn without_settings_it_never_opens() {
        let c = Circuit::new(None);
        let t0 = Instant::now();
        for _ in 0..100 {
            fail(&c, t0);
        }
        assert_eq!(c.state_at(t0), CircuitState::Closed);
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_upstream_makes_requests_wait_then_refuses_naming_the_limit() {
        let p = Places::new(2);
        let a = p.take("up", Some(Duration::from_secs(1))).await.unwrap();
        let _b = p.take("up", Some(Duration::from_secs(1))).await.unwrap();
        let e = p
            .take("up", Some(Duration::from_secs(1)))
            .await
            .unwrap_err();
        assert_eq!(
            e.data.unwrap(),
            json!({"upstream": "up", "limit": "maxConcurrent", "max": 2})
        );
        // A place given back is taken by the one waiting.
        let waiting = p.take("up", Some(Duration::from_secs(1)));
        drop(a);
        assert!(waiting.await.is_ok());
    }

    #[test]
    fn settings_are_read_and_checked() {
        assert_eq!(parse_breaker(None).unwrap(), Some(Breaker::default()));
        assert_eq!(parse_breaker(Some(&json!(false))).unwrap(), None);
        assert_eq!(
            parse_breaker(Some(&json!({"failures": 2, "cooldown": 0.5}))).unwrap(),
            Some(Breaker {
                failures: 2,
                cooldown: Duration::from_millis(500)
            })
        );
        for bad in [
            json!({"failures": 0}),
            json!({"cooldown": -1}),
            json!({"cooldwn": 1}),
            json!(3),
        ] {
            assert!(parse_breaker(Some(&bad)).is_err(), "{bad}");
        }
        assert_eq!(parse_max_concurrent(Some(&json!(8))).unwrap(), Some(8));
        assert!(parse_max_concurrent(Some(&json!(0))).is_err());
        assert!(parse_max_concurrent(Some(&json!("8"))).is_err());
    }
}
