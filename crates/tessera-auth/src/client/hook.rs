//! [`OAuthClient`] as the HTTP client transport's [`HttpAuth`] hook.

use std::time::Instant;

use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use tessera_http::{ChallengeOutcome, HttpAuth};

use super::dpop::{DPOP_HEADER, DPOP_NONCE_HEADER};
use super::error::OAuthError;
use super::oauth::{OAuthClient, State, lock, unix_now};
use crate::challenge::BearerChallenge;

/// The first `Bearer` or `DPoP` challenge of a response.
fn challenge_of(headers: &HeaderMap) -> Option<BearerChallenge> {
    headers
        .get_all(http::header::WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(BearerChallenge::parse)
}

impl OAuthClient {
    /// Adds the current token (refreshed first if it is about to expire).
    async fn add_credentials(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &mut HeaderMap,
    ) -> Result<(), OAuthError> {
        let mut st = self.state.lock().await;
        self.load(&mut st);
        let expiring = st.creds.as_ref().and_then(|c| {
            c.tokens
                .expires_within(unix_now(), self.config.refresh_skew_secs)
                .then_some(c.tokens.refresh_token.is_some())
        });
        match expiring {
            Some(true) => {
                if let Err(e) = self.refresh_locked(&mut st).await {
                    // The server will challenge the request; a new grant follows.
                    tracing::info!("refreshing the access token failed: {e}");
                }
            }
            Some(false) if self.renews_by_grant() => {
                if let Err(e) = self.renew_locked(&mut st).await {
                    tracing::info!("renewing the access token failed: {e}");
                }
            }
            _ => {}
        }
        let Some(creds) = &st.creds else {
            return Ok(());
        };
        let token = &creds.tokens.access_token;
        if creds.tokens.is_dpop() {
            let key = lock(&self.dpop_key).clone();
            let Some(key) = key else {
                return Ok(());
            };
            let nonce = lock(&self.rs_nonce).clone();
            let proof = key.proof(
                method.as_str(),
                &uri.to_string(),
                Some(token),
                nonce.as_deref(),
                unix_now(),
            )?;
            insert(
                headers,
                http::header::AUTHORIZATION,
                &format!("DPoP {token}"),
            )?;
            insert(headers, http::HeaderName::from_static(DPOP_HEADER), &proof)?;
        } else {
            insert(
                headers,
                http::header::AUTHORIZATION,
                &format!("Bearer {token}"),
            )?;
        }
        Ok(())
    }

    /// Decides what to do about a `401` or `403`.
    async fn answer(
        &self,
        status: StatusCode,
        headers: &HeaderMap,
    ) -> Result<ChallengeOutcome, OAuthError> {
        let entered = Instant::now();
        let challenge = challenge_of(headers);
        let nonce = headers
            .get(DPOP_NONCE_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let Some(n) = &nonce {
            *lock(&self.rs_nonce) = Some(n.clone());
        }
        let error = challenge.as_ref().and_then(|c| c.error.as_deref());
        if status == StatusCode::UNAUTHORIZED && error == Some("use_dpop_nonce") && nonce.is_some()
        {
            return Ok(ChallengeOutcome::Retry);
        }
        let mut st = self.state.lock().await;
        self.load(&mut st);
        if st.obtained_at.is_some_and(|t| t > entered) {
            // Another request renewed the tokens while this one waited.
            return Ok(ChallengeOutcome::Retry);
        }
        if status == StatusCode::FORBIDDEN {
            if error != Some("insufficient_scope") {
                return Ok(ChallengeOutcome::Pass);
            }
            self.authorize_locked(&mut st, challenge.as_ref()).await?;
            return Ok(ChallengeOutcome::Retry);
        }
        if status != StatusCode::UNAUTHORIZED {
            return Ok(ChallengeOutcome::Pass);
        }
        if self.refresh_first(&mut st).await {
            return Ok(ChallengeOutcome::Retry);
        }
        self.authorize_locked(&mut st, challenge.as_ref()).await?;
        Ok(ChallengeOutcome::Retry)
    }

    /// Tries a refresh after a `401`, unless the tokens just came from one.
    async fn refresh_first(&self, st: &mut State) -> bool {
        let can = st
            .creds
            .as_ref()
            .is_some_and(|c| c.tokens.refresh_token.is_some());
        if !can || st.refreshed {
            return false;
        }
        match self.refresh_locked(st).await {
            Ok(()) => true,
            Err(e) => {
                tracing::info!("refresh after 401 failed: {e}");
                false
            }
        }
    }
}

fn insert(headers: &mut HeaderMap, name: http::HeaderName, value: &str) -> Result<(), OAuthError> {
    let v = HeaderValue::from_str(value).map_err(|_| OAuthError::BadResponse {
        url: String::new(),
        why: format!("{name} value is not a valid header"),
    })?;
    headers.insert(name, v);
    Ok(())
}

impl HttpAuth for OAuthClient {
    async fn authorize(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &mut HeaderMap,
    ) -> Result<(), String> {
        self.add_credentials(method, uri, headers)
            .await
            .map_err(|e| e.to_string())
    }

    async fn challenge(
        &self,
        _uri: &Uri,
        status: StatusCode,
        headers: &HeaderMap,
    ) -> ChallengeOutcome {
        match self.answer(status, headers).await {
            Ok(o) => o,
            Err(e) => ChallengeOutcome::Fail(format!("authorization failed: {e}")),
        }
    }
}
