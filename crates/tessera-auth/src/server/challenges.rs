//! Which `WWW-Authenticate` challenges a refusal carries: `Bearer`, `DPoP`
//! or both, per DPoP mode, the error on the scheme the token came with.

use super::bearer::TokenScheme;
use super::dpop::DpopMode;
use super::error::AuthError;
use crate::challenge::BearerChallenge;

/// How a protected resource challenges: its metadata URL, and the DPoP mode
/// with its algorithms.
#[derive(Debug, Clone)]
pub(crate) struct ChallengeStyle {
    /// The RFC 9728 metadata URL.
    pub metadata_url: String,
    /// The DPoP mode.
    pub mode: DpopMode,
    /// The DPoP algorithms, space separated (`algs="…"`).
    pub algs: String,
}

impl ChallengeStyle {
    /// The challenges of refusal `e` of a request whose token came with
    /// `scheme`, announcing `scope`: `Bearer` alone (DPoP off), `DPoP` alone
    /// (required), or both (allowed), the error on the scheme used.
    pub fn challenges(
        &self,
        e: &AuthError,
        scope: &[String],
        scheme: TokenScheme,
    ) -> Vec<BearerChallenge> {
        let Some(main) = e.challenge(&self.metadata_url, scope) else {
            return Vec::new();
        };
        let plain = || {
            AuthError::MissingToken
                .challenge(&self.metadata_url, scope)
                .unwrap_or_else(BearerChallenge::bearer)
        };
        let as_dpop = |mut c: BearerChallenge| {
            c.scheme = "DPoP".to_owned();
            c.other.push(("algs".to_owned(), self.algs.clone()));
            c
        };
        match (self.mode, scheme) {
            (DpopMode::Required, _) => vec![as_dpop(main)],
            (DpopMode::Allowed, TokenScheme::Dpop) => vec![plain(), as_dpop(main)],
            (DpopMode::Allowed, _) => vec![main, as_dpop(plain())],
            _ => vec![main],
        }
    }
}
