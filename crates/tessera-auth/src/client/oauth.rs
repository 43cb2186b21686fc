//! [`OAuthClient`]: discovery, registration, the grants, refresh and
//! step-up for one MCP server, behind the transport's `HttpAuth` hook.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::assertion::ClientSigningKey;
use super::authorization::{AuthorizationParams, begin};
use super::config::{Config, Grant};
use super::discovery::{Discovery, discover_via};
use super::dpop::DpopKey;
use super::error::OAuthError;
use super::fetch;
use super::registration::{
    AuthMethod, ClientCredentials, RegistrationRequest, register, registration_auth_method,
};
use super::store::{StoredCredentials, TokenStore};
use super::token::{ErrorResponse, TokenEndpoint, TokenResponse, TokenSet, grant_type, pair};
use crate::challenge::BearerChallenge;

/// The token type URIs of RFC 8693 used by enterprise-managed authorization.
mod token_type {
    pub const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
    pub const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The mutable side of a client, behind one async lock so that only one
/// flow runs at a time.
#[derive(Default)]
pub(crate) struct State {
    /// Whether the store was read.
    pub loaded: bool,
    /// The current tokens and what they belong to.
    pub creds: Option<StoredCredentials>,
    /// What the last discovery found.
    pub discovery: Option<Discovery>,
    /// Client identities obtained by registration, per issuer.
    pub registrations: HashMap<String, ClientCredentials>,
    /// Scopes requested so far, in order (the union of every challenge).
    pub requested: Vec<String>,
    /// Authorization attempts per scope set.
    pub attempts: HashMap<String, u32>,
    /// When the current tokens were obtained.
    pub obtained_at: Option<Instant>,
    /// Whether the current tokens came from a refresh (no second refresh
    /// is tried when they are refused).
    pub refreshed: bool,
}

/// An OAuth 2.1 client for one MCP server. Install it on an HTTP client
/// transport (`HttpClientTransport::with_auth(Arc::new(client))`): it adds
/// the access token to every request, refreshes it before it expires, and
/// answers `401` (discovery, registration, a grant) and `403
/// insufficient_scope` (step-up, at most three attempts per scope set).
pub struct OAuthClient {
    pub(crate) config: Config,
    pub(crate) http: fetch::Http,
    pub(crate) state: tokio::sync::Mutex<State>,
    pub(crate) dpop_key: Mutex<Option<DpopKey>>,
    /// The authorization server's last `DPoP-Nonce`.
    pub(crate) as_nonce: Mutex<Option<String>>,
    /// The MCP server's last `DPoP-Nonce`.
    pub(crate) rs_nonce: Mutex<Option<String>>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("server_url", &self.config.server_url)
            .field("grant", &self.config.grant)
            .finish_non_exhaustive()
    }
}

/// Sets up an [`OAuthClient`].
pub struct OAuthClientBuilder {
    config: Config,
    observer: Option<Arc<dyn super::observe::OAuthObserver>>,
}

impl std::fmt::Debug for OAuthClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClientBuilder")
            .field("server_url", &self.config.server_url)
            .finish_non_exhaustive()
    }
}

impl OAuthClientBuilder {
    /// The client's name, sent at dynamic registration.
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.config.client_name = name.into();
        self
    }

    /// Pre-registered client credentials (used before any other way to get
    /// a client id). Bind them to an issuer with
    /// [`ClientCredentials::for_issuer`] to refuse other servers.
    pub fn client(mut self, creds: ClientCredentials) -> Self {
        self.config.client = Some(creds);
        self
    }

    /// The URL of this client's metadata document, used as `client_id`
    /// when the authorization server supports client ID metadata documents.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.config.client_metadata_url = Some(url.into());
        self
    }

    /// The private key for `private_key_jwt` client authentication.
    pub fn signing_key(mut self, key: ClientSigningKey) -> Self {
        self.config.signing_key = Some(key);
        self
    }

    /// Where tokens are kept (default: in memory).
    pub fn store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.config.store = store;
        self
    }

    /// Requests exactly these scopes instead of following the server.
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.config.scope = Some(scope.into());
        self
    }

    /// Whether to use DPoP when the authorization server offers it (default on).
    pub fn dpop(mut self, on: bool) -> Self {
        self.config.dpop = on;
        self
    }

    /// Insists on DPoP: proofs are sent even when neither server mentions
    /// DPoP, and a grant that yields a plain bearer token fails (default
    /// off). Implies [`dpop(true)`](Self::dpop).
    pub fn require_dpop(mut self, on: bool) -> Self {
        self.config.require_dpop = on;
        if on {
            self.config.dpop = true;
        }
        self
    }

    /// Refresh this many seconds before expiry (default 60).
    pub fn refresh_skew_secs(mut self, secs: u64) -> Self {
        self.config.refresh_skew_secs = secs;
        self
    }

    /// The most authorization attempts for one scope set (default 3).
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.config.max_attempts = n.max(1);
        self
    }

    /// Shows every exchange of the flow (discovery, registration, tokens)
    /// to `observer`.
    pub fn observer(mut self, observer: Arc<dyn super::observe::OAuthObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// The client.
    pub fn build(self) -> Result<OAuthClient, OAuthError> {
        url::Url::parse(&self.config.server_url).map_err(|e| OAuthError::BadUrl {
            url: self.config.server_url.clone(),
            why: e.to_string(),
        })?;
        let mut http = fetch::client()?;
        if let Some(o) = self.observer {
            http.observe(o);
        }
        Ok(OAuthClient {
            config: self.config,
            http,
            state: tokio::sync::Mutex::new(State::default()),
            dpop_key: Mutex::new(None),
            as_nonce: Mutex::new(None),
            rs_nonce: Mutex::new(None),
        })
    }
}

/// Adds `more` to `into`, keeping the order and dropping duplicates.
fn union(into: &mut Vec<String>, more: &[String]) {
    for s in more {
        if !into.contains(s) {
            into.push(s.clone());
        }
    }
}

fn split_scopes(s: &str) -> Vec<String> {
    s.split_ascii_whitespace().map(str::to_owned).collect()
}

impl OAuthClient {
    /// A client for the MCP server at `server_url`, obtaining tokens with `grant`.
    pub fn builder(server_url: impl Into<String>, grant: Grant) -> OAuthClientBuilder {
        OAuthClientBuilder {
            config: Config::new(server_url.into(), grant),
            observer: None,
        }
    }

    /// The MCP server URL.
    pub fn server_url(&self) -> &str {
        &self.config.server_url
    }

    /// The current credentials, if any (after reading the store).
    pub async fn credentials(&self) -> Result<Option<StoredCredentials>, OAuthError> {
        let mut st = self.state.lock().await;
        self.load(&mut st);
        Ok(st.creds.clone())
    }

    /// Forgets the tokens, in memory and in the store.
    pub async fn logout(&self) -> Result<(), OAuthError> {
        let mut st = self.state.lock().await;
        st.loaded = true;
        st.creds = None;
        self.config.store.remove(&self.config.server_url)
    }

    /// Runs discovery and the grant now, as after a `401` with `challenge`.
    pub async fn authorize_now(
        &self,
        challenge: Option<&BearerChallenge>,
    ) -> Result<(), OAuthError> {
        let mut st = self.state.lock().await;
        self.load(&mut st);
        self.authorize_locked(&mut st, challenge).await
    }

    pub(crate) fn load(&self, st: &mut State) {
        if st.loaded {
            return;
        }
        st.loaded = true;
        match self.config.store.load(&self.config.server_url) {
            // A DPoP-bound token is useless without its key, kept beside it.
            Ok(Some(c)) if self.adopt_key(&c) => {
                union(&mut st.requested, &c.scopes);
                st.creds = Some(c);
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("ignoring the token store: {e}"),
        }
    }

    /// Whether stored credentials are usable: plain ones are; DPoP-bound
    /// ones when their key was stored with them, which then becomes this
    /// client's key.
    fn adopt_key(&self, c: &StoredCredentials) -> bool {
        if !c.tokens.is_dpop() {
            return true;
        }
        match c.dpop_key.as_deref().map(DpopKey::from_stored) {
            Some(Ok(key)) => {
                *lock(&self.dpop_key) = Some(key);
                true
            }
            Some(Err(e)) => {
                tracing::warn!("ignoring DPoP-bound tokens in the store: {e}");
                false
            }
            None => false,
        }
    }

    fn save(&self, st: &mut State, mut creds: StoredCredentials) {
        if creds.tokens.is_dpop() {
            creds.dpop_key = lock(&self.dpop_key).as_ref().map(DpopKey::to_stored);
        }
        if let Err(e) = self.config.store.save(&self.config.server_url, &creds) {
            tracing::warn!("could not store the tokens: {e}");
        }
        st.creds = Some(creds);
        st.obtained_at = Some(Instant::now());
    }

    fn dpop_key(&self) -> Result<DpopKey, OAuthError> {
        let mut k = lock(&self.dpop_key);
        if let Some(key) = k.as_ref() {
            return Ok(key.clone());
        }
        let key = DpopKey::generate()?;
        *k = Some(key.clone());
        Ok(key)
    }

    /// Refreshes the current tokens, once for every process sharing the
    /// store: under the store's lock, tokens another process stored since
    /// these were read are used as they are (or their refresh token is the
    /// one spent), and the new tokens are stored with a compare-and-swap
    /// against the refresh token spent. On failure the tokens are dropped
    /// (from the store too, unless newer ones are there).
    pub(crate) async fn refresh_locked(&self, st: &mut State) -> Result<(), OAuthError> {
        if st.creds.is_none() {
            return Err(OAuthError::Unsupported("no tokens to refresh".into()));
        }
        let _held = self.store_lock().await?;
        if self.adopt_stored(st) {
            return Ok(());
        }
        let Some(creds) = st.creds.clone() else {
            return Err(OAuthError::Unsupported("no tokens to refresh".into()));
        };
        let (Some(refresh), Some(endpoint)) = (&creds.tokens.refresh_token, &creds.token_endpoint)
        else {
            return Err(OAuthError::Unsupported("no refresh token".into()));
        };
        let dpop = if creds.tokens.is_dpop() {
            Some(self.dpop_key()?)
        } else {
            None
        };
        let method = creds
            .client
            .auth_method
            .unwrap_or(if creds.client.client_secret.is_some() {
                AuthMethod::ClientSecretBasic
            } else {
                AuthMethod::None
            });
        let ep = TokenEndpoint {
            http: &self.http,
            url: endpoint,
            issuer: &creds.issuer,
            client: &creds.client,
            method,
            signing_key: self.config.signing_key.as_ref(),
            dpop: dpop.as_ref(),
            nonce: &self.as_nonce,
        };
        let params = [
            pair("grant_type", grant_type::REFRESH_TOKEN),
            pair("refresh_token", refresh.clone()),
            pair("resource", creds.resource.clone()),
        ];
        let store = &self.config.store;
        let url = &self.config.server_url;
        match ep.request(&params, unix_now).await {
            Ok(mut tokens) => {
                if tokens.refresh_token.is_none() {
                    tokens.refresh_token = Some(refresh.clone());
                }
                let mut next = creds.clone();
                next.tokens = tokens;
                match store.compare_and_swap(url, Some(refresh), &next) {
                    Ok(true) => {}
                    Ok(false) => tracing::warn!(
                        "the token store changed during a refresh: keeping the new tokens in memory only"
                    ),
                    Err(e) => tracing::warn!("could not store the tokens: {e}"),
                }
                st.creds = Some(next);
                st.obtained_at = Some(Instant::now());
                st.refreshed = true;
                Ok(())
            }
            Err(e) => {
                st.creds = None;
                let _ = store.remove_if(url, Some(refresh));
                Err(e)
            }
        }
    }

    /// Takes the store's refresh lock (on a blocking thread: it may wait for
    /// another process).
    async fn store_lock(&self) -> Result<super::store::StoreLock, OAuthError> {
        let store = self.config.store.clone();
        let url = self.config.server_url.clone();
        tokio::task::spawn_blocking(move || store.lock(&url))
            .await
            .map_err(|e| OAuthError::Store(format!("taking the token store's lock: {e}")))?
    }

    /// Uses the stored tokens instead of refreshing when another process
    /// refreshed since ours were read: `true` when they are fresh enough;
    /// otherwise ours are replaced by them (their refresh token is the live
    /// one) and `false` is returned.
    fn adopt_stored(&self, st: &mut State) -> bool {
        let stored = match self.config.store.load(&self.config.server_url) {
            Ok(Some(c)) if self.adopt_key(&c) => c,
            _ => return false,
        };
        let ours = st.creds.as_ref().map(|c| &c.tokens);
        let same = ours.is_some_and(|t| {
            t.refresh_token == stored.tokens.refresh_token
                && t.access_token == stored.tokens.access_token
        });
        if same {
            return false;
        }
        let fresh = !stored
            .tokens
            .expires_within(unix_now(), self.config.refresh_skew_secs);
        st.creds = Some(stored);
        if fresh {
            st.obtained_at = Some(Instant::now());
            st.refreshed = true;
        }
        fresh
    }

    /// The scopes to ask for: the configured ones, else the challenge's,
    /// else the resource's `scopes_supported`; plus everything asked before.
    fn select_scopes(
        &self,
        st: &State,
        d: &Discovery,
        challenge: Option<&BearerChallenge>,
    ) -> Vec<String> {
        let fresh = if let Some(s) = &self.config.scope {
            split_scopes(s)
        } else if let Some(s) = challenge.and_then(|c| c.scope.as_deref()) {
            split_scopes(s)
        } else {
            d.resource_metadata
                .as_ref()
                .and_then(|m| m.scopes_supported.clone())
                .unwrap_or_default()
        };
        let mut out = st.requested.clone();
        union(&mut out, &fresh);
        out
    }

    /// The client identity to use at the discovered server.
    async fn client_for(
        &self,
        st: &mut State,
        d: &Discovery,
    ) -> Result<ClientCredentials, OAuthError> {
        if let Some(c) = &self.config.client {
            if let Some(bound) = c.issuer.as_ref().filter(|b| **b != d.issuer) {
                return Err(OAuthError::CredentialsForOtherIssuer {
                    bound: bound.clone(),
                    current: d.issuer.clone(),
                });
            }
            return Ok(c.clone());
        }
        if let Some(c) = st.registrations.get(&d.issuer) {
            return Ok(c.clone());
        }
        if let Some(c) = st.creds.as_ref().filter(|c| c.issuer == d.issuer) {
            return Ok(c.client.clone());
        }
        if matches!(self.config.grant, Grant::Workload(_)) {
            // SEP-1933: the workload token is the credential; no client id.
            return Ok(ClientCredentials::public(String::new()).with_auth_method(AuthMethod::None));
        }
        let user_agent = match &self.config.grant {
            Grant::AuthorizationCode(ua) => Some(ua.clone()),
            _ => None,
        };
        if let (Some(url), Some(_)) = (&self.config.client_metadata_url, &user_agent) {
            if d.metadata.client_id_metadata_document_supported == Some(true) {
                return Ok(
                    ClientCredentials::public(url.clone()).with_auth_method(AuthMethod::None)
                );
            }
        }
        let Some(endpoint) = d.metadata.registration_endpoint.clone() else {
            return Err(OAuthError::Registration(format!(
                "{} offers no registration endpoint and no client is configured",
                d.issuer
            )));
        };
        let mut grant_types = Vec::new();
        match &self.config.grant {
            Grant::AuthorizationCode(_) => {
                grant_types.push(grant_type::AUTHORIZATION_CODE.to_owned());
                if d.metadata.supports_grant(grant_type::REFRESH_TOKEN)
                    || d.metadata.supports_scope("offline_access")
                {
                    grant_types.push(grant_type::REFRESH_TOKEN.to_owned());
                }
            }
            Grant::ClientCredentials => grant_types.push(grant_type::CLIENT_CREDENTIALS.into()),
            Grant::JwtBearer { .. } | Grant::Workload(_) | Grant::IdentityAssertion(_) => {
                grant_types.push(grant_type::JWT_BEARER.into())
            }
        }
        let req = RegistrationRequest {
            client_name: self.config.client_name.clone(),
            redirect_uris: user_agent.iter().map(|u| u.redirect_uri_dyn()).collect(),
            grant_types,
            auth_method: registration_auth_method(&d.metadata),
            scope: None,
        };
        let c = register(&self.http, &endpoint, &d.issuer, &req).await?;
        st.registrations.insert(d.issuer.clone(), c.clone());
        Ok(c)
    }

    /// Discovery, client identity and the grant; the tokens end up in `st`.
    /// Counts against the attempts per scope set.
    pub(crate) async fn authorize_locked(
        &self,
        st: &mut State,
        challenge: Option<&BearerChallenge>,
    ) -> Result<(), OAuthError> {
        self.grant_locked(st, challenge, true).await
    }

    /// Replaces tokens about to expire by a new grant when that needs no
    /// one (workload identity), without counting it as an attempt: a
    /// long-running workload renews its token every lifetime.
    pub(crate) async fn renew_locked(&self, st: &mut State) -> Result<(), OAuthError> {
        self.grant_locked(st, None, false).await
    }

    /// Whether tokens are renewed by running the grant again.
    pub(crate) fn renews_by_grant(&self) -> bool {
        matches!(self.config.grant, Grant::Workload(_))
    }

    async fn grant_locked(
        &self,
        st: &mut State,
        challenge: Option<&BearerChallenge>,
        counted: bool,
    ) -> Result<(), OAuthError> {
        let d = discover_via(
            &self.http,
            &self.config.server_url,
            challenge.and_then(|c| c.resource_metadata.as_deref()),
        )
        .await?;
        let scopes = self.select_scopes(st, &d, challenge);
        let mut key: Vec<&str> = scopes.iter().map(String::as_str).collect();
        key.sort_unstable();
        if counted {
            let count = st.attempts.entry(key.join(" ")).or_insert(0);
            if *count >= self.config.max_attempts {
                return Err(OAuthError::TooManyAttempts(*count));
            }
            *count += 1;
        }
        if st.creds.as_ref().is_some_and(|c| c.issuer != d.issuer) {
            // Another authorization server now: nothing of the old one is reused.
            st.creds = None;
        }
        let client = self.client_for(st, &d).await?;
        let wants_dpop = self.config.require_dpop
            || self.config.dpop
                && (d
                    .metadata
                    .dpop_signing_alg_values_supported
                    .as_ref()
                    .is_some_and(|a| a.iter().any(|x| x == "ES256"))
                    || d.resource_metadata
                        .as_ref()
                        .and_then(|m| m.dpop_bound_access_tokens_required)
                        == Some(true)
                    || challenge.is_some_and(|c| c.scheme.eq_ignore_ascii_case("dpop")));
        let dpop = if wants_dpop {
            Some(self.dpop_key()?)
        } else {
            None
        };
        let token_url = d.metadata.token_endpoint.clone().ok_or_else(|| {
            OAuthError::Unsupported(format!("{} has no token endpoint", d.issuer))
        })?;
        let ep = TokenEndpoint {
            http: &self.http,
            url: &token_url,
            issuer: &d.issuer,
            client: &client,
            method: client.method_for(&d.metadata, self.config.signing_key.is_some()),
            signing_key: self.config.signing_key.as_ref(),
            dpop: dpop.as_ref(),
            nonce: &self.as_nonce,
        };
        let tokens = self.run_grant(&d, &ep, &scopes).await?;
        if self.config.require_dpop && !tokens.is_dpop() {
            return Err(OAuthError::Unsupported(format!(
                "{} issued a {} token, not a DPoP-bound one, and DPoP is required",
                d.issuer, tokens.token_type
            )));
        }
        st.requested = scopes.clone();
        st.refreshed = false;
        let mut creds =
            StoredCredentials::new(d.resource.clone(), d.issuer.clone(), client, tokens);
        creds.token_endpoint = Some(token_url.clone());
        creds.scopes = scopes;
        self.save(st, creds);
        st.discovery = Some(d);
        Ok(())
    }

    async fn run_grant(
        &self,
        d: &Discovery,
        ep: &TokenEndpoint<'_>,
        scopes: &[String],
    ) -> Result<TokenSet, OAuthError> {
        let scope = (!scopes.is_empty()).then(|| scopes.join(" "));
        let resource = pair("resource", d.resource.clone());
        match &self.config.grant {
            Grant::AuthorizationCode(ua) => {
                let endpoint = d.metadata.authorization_endpoint.clone().ok_or_else(|| {
                    OAuthError::Unsupported(format!("{} has no authorization endpoint", d.issuer))
                })?;
                if !d.legacy && !d.metadata.supports_s256() {
                    return Err(OAuthError::Unsupported(format!(
                        "{} does not advertise PKCE S256",
                        d.issuer
                    )));
                }
                let mut scope = scope;
                if d.metadata.supports_scope("offline_access")
                    && !scopes.iter().any(|s| s == "offline_access")
                {
                    scope = Some(match scope {
                        Some(s) => format!("{s} offline_access"),
                        None => "offline_access".into(),
                    });
                }
                let redirect_uri = ua.redirect_uri_dyn();
                let pending = begin(&AuthorizationParams {
                    endpoint: &endpoint,
                    client_id: &ep.client.client_id,
                    redirect_uri: &redirect_uri,
                    scope: scope.as_deref(),
                    resource: &d.resource,
                    issuer: &d.issuer,
                    iss_required: d.metadata.authorization_response_iss_parameter_supported
                        == Some(true),
                })?;
                let params = ua.authorize_boxed(&pending.url).await?;
                let code = pending.validate(&params)?;
                let form = [
                    pair("grant_type", grant_type::AUTHORIZATION_CODE),
                    pair("code", code),
                    pair("redirect_uri", pending.redirect_uri.clone()),
                    pair("code_verifier", pending.pkce.verifier.clone()),
                    resource,
                ];
                ep.request(&form, unix_now).await
            }
            Grant::ClientCredentials => {
                let mut form = vec![pair("grant_type", grant_type::CLIENT_CREDENTIALS), resource];
                form.extend(scope.map(|s| pair("scope", s)));
                ep.request(&form, unix_now).await
            }
            Grant::JwtBearer { assertion } => {
                let mut form = vec![
                    pair("grant_type", grant_type::JWT_BEARER),
                    pair("assertion", assertion.clone()),
                    resource,
                ];
                form.extend(scope.map(|s| pair("scope", s)));
                ep.request(&form, unix_now).await
            }
            Grant::Workload(source) => {
                // Read now: the platform may have rotated it since the last grant.
                let mut form = vec![
                    pair("grant_type", grant_type::JWT_BEARER),
                    pair("assertion", source.read()?),
                    resource,
                ];
                form.extend(scope.map(|s| pair("scope", s)));
                ep.request(&form, unix_now).await
            }
            Grant::IdentityAssertion(idp) => {
                let jag = self.exchange_for_id_jag(idp, d, scope.as_deref()).await?;
                let mut form = vec![
                    pair("grant_type", grant_type::JWT_BEARER),
                    pair("assertion", jag),
                    resource,
                ];
                form.extend(scope.map(|s| pair("scope", s)));
                ep.request(&form, unix_now).await
            }
        }
    }

    /// RFC 8693 at the IdP: the ID token for an identity assertion grant
    /// (ID-JAG) addressed to the authorization server, for the resource.
    async fn exchange_for_id_jag(
        &self,
        idp: &super::config::IdentityAssertion,
        d: &Discovery,
        scope: Option<&str>,
    ) -> Result<String, OAuthError> {
        let client = match &idp.idp_client_id {
            Some(id) => ClientCredentials {
                client_id: id.clone(),
                client_secret: idp.idp_client_secret.clone(),
                auth_method: Some(if idp.idp_client_secret.is_some() {
                    AuthMethod::ClientSecretPost
                } else {
                    AuthMethod::None
                }),
                issuer: None,
            },
            None => ClientCredentials::public(String::new()),
        };
        let mut form = vec![
            pair("grant_type", grant_type::TOKEN_EXCHANGE),
            pair("requested_token_type", token_type::ID_JAG),
            pair("subject_token", idp.id_token.clone()),
            pair("subject_token_type", token_type::ID_TOKEN),
            pair("audience", d.issuer.clone()),
            pair("resource", d.resource.clone()),
        ];
        form.extend(scope.map(|s| pair("scope", s)));
        let no_nonce = Mutex::new(None);
        let ep = TokenEndpoint {
            http: &self.http,
            url: &idp.idp_token_endpoint,
            issuer: &idp.idp_token_endpoint,
            client: &client,
            method: client.auth_method.unwrap_or(AuthMethod::None),
            signing_key: None,
            dpop: None,
            nonce: &no_nonce,
        };
        if idp.idp_client_id.is_none() {
            // Nothing to authenticate with: send the grant alone.
            let a = fetch::post_form(
                &self.http,
                &idp.idp_token_endpoint,
                &form,
                Default::default(),
            )
            .await?;
            let doc = a.json().unwrap_or_default();
            if !a.status.is_success() {
                let refused: ErrorResponse = tessera_types::loose::view_or_default(&doc);
                return Err(OAuthError::Token {
                    error: refused
                        .error
                        .unwrap_or_else(|| "token_exchange_failed".into()),
                    description: refused.error_description,
                });
            }
            let answer: TokenResponse = tessera_types::loose::view_or_default(&doc);
            return answer.access_token.ok_or_else(|| OAuthError::BadResponse {
                url: idp.idp_token_endpoint.clone(),
                why: "no access_token in the token exchange response".into(),
            });
        }
        let t = ep.request(&form, unix_now).await?;
        Ok(t.access_token)
    }
}
