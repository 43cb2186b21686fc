//! [`DpopNonces`]: server-provided nonces (RFC 9449 §8, §9) that rotate on
//! a schedule.
//!
//! A nonce is derived from a secret and the number of the current period
//! (`now / period`), so no nonce is stored and instances that share the
//! secret agree on it. The nonce of the current period and of the one
//! before are accepted, so a client that fetched a nonce just before a
//! rotation is not refused.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore as _;
use sha2::{Digest, Sha256};

/// The default rotation period: five minutes.
pub const DEFAULT_NONCE_PERIOD_SECS: u64 = 300;

/// Rotating DPoP nonces.
#[derive(Clone)]
pub struct DpopNonces {
    secret: [u8; 32],
    period: u64,
}

impl std::fmt::Debug for DpopNonces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never log the secret.
        f.debug_struct("DpopNonces")
            .field("period", &self.period)
            .finish_non_exhaustive()
    }
}

impl DpopNonces {
    /// Nonces from a random secret, rotating every `period_secs` (at least 1).
    pub fn random(period_secs: u64) -> DpopNonces {
        let mut secret = [0u8; 32];
        rand::rng().fill_bytes(&mut secret);
        DpopNonces::with_secret(secret, period_secs)
    }

    /// Nonces from `secret` (share it between the instances of one
    /// endpoint), rotating every `period_secs` (at least 1).
    pub fn with_secret(secret: [u8; 32], period_secs: u64) -> DpopNonces {
        DpopNonces {
            secret,
            period: period_secs.max(1),
        }
    }

    /// The rotation period in seconds.
    pub fn period(&self) -> u64 {
        self.period
    }

    fn of_period(&self, n: u64) -> String {
        let mut h = Sha256::new();
        h.update(b"tessera dpop nonce\0");
        h.update(self.secret);
        h.update(n.to_be_bytes());
        URL_SAFE_NO_PAD.encode(h.finalize())
    }

    /// The nonce to hand out at `now` (Unix seconds).
    pub fn current(&self, now: u64) -> String {
        self.of_period(now / self.period)
    }

    /// Whether `nonce` is the current nonce or the one before it.
    pub fn accepts(&self, nonce: &str, now: u64) -> bool {
        let n = now / self.period;
        nonce == self.of_period(n) || (n > 0 && nonce == self.of_period(n - 1))
    }

    /// Whether `nonce` is the current one (a client holding the previous one
    /// is sent the current one with its answer).
    pub fn is_current(&self, nonce: &str, now: u64) -> bool {
        nonce == self.current(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_and_previous_are_accepted() {
        let n = DpopNonces::with_secret([7; 32], 60);
        let first = n.current(1_000);
        assert_eq!(first, n.current(1_019), "stable within a period");
        assert!(n.accepts(&first, 1_000));
        let second = n.current(1_020);
        assert_ne!(first, second, "rotates at the period boundary");
        assert!(n.accepts(&first, 1_020), "the previous nonce still works");
        assert!(n.accepts(&second, 1_020));
        assert!(!n.accepts(&first, 1_080), "two periods old: refused");
        assert!(!n.accepts("made-up", 1_000));
        let other = DpopNonces::with_secret([8; 32], 60);
        assert!(
            !other.accepts(&first, 1_000),
            "another secret, other nonces"
        );
    }
}
