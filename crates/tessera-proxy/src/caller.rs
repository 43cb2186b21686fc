//! What the caller of one request of an aggregating proxy may see and how
//! often it may ask: the gateway's policy and rate limits, applied to the
//! caller's claims (an API key's principal, else a verified OAuth token's).

use std::sync::{Arc, RwLock};

use tessera_runtime::Request;
use tessera_types::{ErrorObject, JsonObject};

use crate::apikey::CallerClaims;
use crate::policy::{ItemKind, Policy};
use crate::ratelimit::RateLimits;
use crate::shapes::{Subject, read};

/// What the caller of one request may see: the policy at its start and
/// the caller's claims.
pub(crate) struct Visible<'a> {
    policy: Arc<Policy>,
    limits: &'a RwLock<Arc<RateLimits>>,
    claims: std::borrow::Cow<'a, JsonObject>,
}

impl<'a> Visible<'a> {
    /// The caller of `r`: the claims an API key stands for, else those of a
    /// verified OAuth token, else none.
    pub(crate) fn of(
        policy: &RwLock<Arc<Policy>>,
        limits: &'a RwLock<Arc<RateLimits>>,
        r: &'a Request,
    ) -> Visible<'a> {
        let policy = policy.read().unwrap_or_else(|e| e.into_inner()).clone();
        let claims = match (
            r.extensions.get::<CallerClaims>(),
            r.extensions.get::<tessera_auth::server::AuthInfo>(),
        ) {
            (Some(c), _) => std::borrow::Cow::Borrowed(&c.0),
            (None, Some(info)) => std::borrow::Cow::Borrowed(&info.claims),
            (None, None) => std::borrow::Cow::Owned(JsonObject::new()),
        };
        Visible {
            policy,
            limits,
            claims,
        }
    }

    pub(crate) fn allows(&self, upstream: &str, kind: ItemKind, name: &str) -> bool {
        self.policy.allows(&self.claims, upstream, kind, name)
    }

    /// Takes a token of the caller's rate limit for `name` of `upstream`.
    pub(crate) async fn spend(
        &self,
        r: &Request,
        upstream: &str,
        kind: ItemKind,
        name: &str,
    ) -> Result<(), ErrorObject> {
        let limits = self
            .limits
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if limits.is_empty() {
            return Ok(());
        }
        // The subject, else the authenticated principal; callers named by
        // neither share one bucket.
        let who = match read::<Subject>(&self.claims).sub.into_valid() {
            Some(sub) => sub,
            None => r
                .extensions
                .get::<tessera_runtime::Principal>()
                .map_or_else(|| "anonymous".to_owned(), |p| p.0.clone()),
        };
        limits.spend(&who, &self.claims, upstream, kind, name).await
    }
}
