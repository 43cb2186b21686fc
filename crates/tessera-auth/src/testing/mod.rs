//! [`TestAuthorizationServer`]: a small, real OAuth 2.1 authorization server
//! that runs in-process on a loopback port, for tests (feature `testing`).
//!
//! It serves:
//!
//! - `GET /.well-known/oauth-authorization-server` (RFC 8414 metadata;
//!   also at `/.well-known/openid-configuration`);
//! - `GET /jwks` (the published signing keys; requests are counted);
//! - `GET /authorize`: the authorization endpoint; issues a code bound to
//!   the PKCE `S256` challenge and redirects (with `state` and RFC 9207
//!   `iss`; see [`CodeFlowSettings`] to make it misbehave);
//! - `POST /register`: RFC 7591 dynamic client registration;
//! - `POST /token`: the `authorization_code` grant (PKCE checked) and the
//!   `refresh_token` grant, and the `client_credentials` grant for registered clients
//!   (`client_secret_basic` or `client_secret_post`), with `scope` and the
//!   RFC 8707 `resource` (which becomes the token's `aud`); the access token
//!   is a JWT signed with the current key;
//! - `POST /introspect` (RFC 7662, client authentication required): JWTs it
//!   signed and opaque tokens it minted, `active: false` for anything else,
//!   expired or revoked.
//!
//! - the RFC 8693 token exchange grant (a client trades a live token of
//!   this server for one whose `aud` is the requested `resource` and
//!   `audience`, with the subject's `sub` and an `act` claim naming the
//!   client; [`ExchangeSettings`] sets the lifetime or refuses); the client
//!   authenticates with its secret, with a `private_key_jwt` assertion
//!   ([`TestAuthorizationServer::register_key_client`]), or not at all
//!   when public ([`TestAuthorizationServer::register_public_client`]);
//! - the RFC 7523 `jwt-bearer` grant with a workload token (SEP-1933) of
//!   an issuer trusted with [`TestAuthorizationServer::trust_workload_issuer`]
//!   (keys found by discovery), which another `TestAuthorizationServer`
//!   can play: [`TestAuthorizationServer::workload_token`] mints one.
//!
//! With [`CodeFlowSettings::dpop`], token requests with a DPoP proof get
//! tokens bound to its key (`cnf.jkt`), optionally after a nonce round.
//! [`TestDpopKey`] signs DPoP proofs, good and bad, for resource-server
//! tests.
//!
//! Tests can also mint tokens directly ([`TestAuthorizationServer::token`],
//! [`claims`](TestAuthorizationServer::claims) to start from valid claims),
//! add unpublished keys and publish them later (key rotation), and revoke
//! tokens.

mod code_flow;
mod dpop;
mod dpop_grant;
mod exchange;
mod http;
mod keys;
mod workload;

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::Algorithm;
use serde_json::{Map, Value, json};

pub use code_flow::{CodeFlowSettings, IssMode};
pub use dpop::{TestDpopKey, ath, signing_input};
pub use exchange::ExchangeSettings;
pub use keys::TestKey;

/// The state shared by the server's handlers and its handle.
pub(crate) struct State {
    pub issuer: String,
    pub keys: Mutex<Keys>,
    pub clients: Mutex<HashMap<String, String>>,
    pub opaque: Mutex<HashMap<String, Map<String, Value>>>,
    pub revoked: Mutex<HashSet<String>>,
    pub jwks_requests: AtomicU64,
    pub introspections: AtomicU64,
    pub next: AtomicU64,
    pub settings: Mutex<CodeFlowSettings>,
    pub public_clients: Mutex<HashSet<String>>,
    /// The public keys (SPKI PEM, ES256) of `private_key_jwt` clients.
    pub key_clients: Mutex<HashMap<String, String>>,
    pub codes: Mutex<HashMap<String, code_flow::CodeGrant>>,
    pub refresh: Mutex<HashMap<String, code_flow::RefreshGrant>>,
    pub authorization_requests: Mutex<Vec<HashMap<String, String>>>,
    pub token_requests: Mutex<HashMap<String, u64>>,
    pub registrations: Mutex<Vec<Value>>,
    pub workload: Mutex<workload::WorkloadTrust>,
    pub exchange: Mutex<ExchangeSettings>,
    pub exchanges: Mutex<Vec<Map<String, Value>>>,
}

/// The RFC 7523 JWT bearer grant type.
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

pub(crate) struct Keys {
    /// Every key, in creation order.
    pub all: Vec<TestKey>,
    /// The kids in the published JWK Set.
    pub published: Vec<String>,
    /// The kid that signs issued tokens.
    pub current: String,
}

/// A running test authorization server; stops when dropped.
pub struct TestAuthorizationServer {
    state: Arc<State>,
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for TestAuthorizationServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestAuthorizationServer")
            .field("issuer", &self.state.issuer)
            .finish_non_exhaustive()
    }
}

impl Drop for TestAuthorizationServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

impl TestAuthorizationServer {
    /// Starts a server on `127.0.0.1:0` with one published `RS256` key
    /// (`rs-1`, the current one) and one published `ES256` key (`es-1`), and
    /// the clients `mcp-client` / `client-secret` and (for introspection)
    /// `mcp-server` / `server-secret`.
    pub async fn start() -> std::io::Result<TestAuthorizationServer> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let rs = TestKey::generate("rs-1", Algorithm::RS256, 0);
        let es = TestKey::generate("es-1", Algorithm::ES256, 0);
        let state = Arc::new(State {
            issuer: format!("http://{addr}"),
            keys: Mutex::new(Keys {
                published: vec![rs.kid.clone(), es.kid.clone()],
                current: rs.kid.clone(),
                all: vec![rs, es],
            }),
            clients: Mutex::new(HashMap::from([
                ("mcp-client".to_owned(), "client-secret".to_owned()),
                ("mcp-server".to_owned(), "server-secret".to_owned()),
            ])),
            opaque: Mutex::new(HashMap::new()),
            revoked: Mutex::new(HashSet::new()),
            jwks_requests: AtomicU64::new(0),
            introspections: AtomicU64::new(0),
            next: AtomicU64::new(1),
            settings: Mutex::new(CodeFlowSettings::default()),
            public_clients: Mutex::new(HashSet::new()),
            key_clients: Mutex::new(HashMap::new()),
            codes: Mutex::new(HashMap::new()),
            refresh: Mutex::new(HashMap::new()),
            authorization_requests: Mutex::new(Vec::new()),
            token_requests: Mutex::new(HashMap::new()),
            registrations: Mutex::new(Vec::new()),
            workload: Mutex::new(workload::WorkloadTrust::default()),
            exchange: Mutex::new(ExchangeSettings::default()),
            exchanges: Mutex::new(Vec::new()),
        });
        let task = tokio::spawn(http::run(listener, state.clone()));
        Ok(TestAuthorizationServer { state, addr, task })
    }

    /// The issuer identifier (`http://127.0.0.1:PORT`).
    pub fn issuer(&self) -> String {
        self.state.issuer.clone()
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The JWK Set URL.
    pub fn jwks_uri(&self) -> String {
        format!("{}/jwks", self.state.issuer)
    }

    /// The token endpoint.
    pub fn token_endpoint(&self) -> String {
        format!("{}/token", self.state.issuer)
    }

    /// The introspection endpoint.
    pub fn introspection_endpoint(&self) -> String {
        format!("{}/introspect", self.state.issuer)
    }

    /// How many times the JWK Set was requested.
    pub fn jwks_requests(&self) -> u64 {
        self.state.jwks_requests.load(Ordering::Relaxed)
    }

    /// How many introspection requests were answered.
    pub fn introspections(&self) -> u64 {
        self.state.introspections.load(Ordering::Relaxed)
    }

    /// Changes how the code flow behaves (token lifetime, `iss`, …).
    pub fn configure(&self, f: impl FnOnce(&mut CodeFlowSettings)) {
        f(&mut lock(&self.state.settings));
    }

    /// The query of every authorization request so far.
    pub fn authorization_requests(&self) -> Vec<HashMap<String, String>> {
        lock(&self.state.authorization_requests).clone()
    }

    /// How many token requests with `grant_type` arrived (every grant).
    pub fn token_requests(&self, grant_type: &str) -> u64 {
        lock(&self.state.token_requests)
            .get(grant_type)
            .copied()
            .unwrap_or(0)
    }

    /// The client metadata of every dynamic registration so far.
    pub fn registrations(&self) -> Vec<Value> {
        lock(&self.state.registrations).clone()
    }

    /// Issues a refresh token for `client_id` (as the code grant would), for
    /// tests that start from stored credentials. Refresh tokens rotate: each
    /// one is accepted once; spending it again gets `invalid_grant`.
    pub fn issue_refresh_token(&self, client_id: &str, scope: &str, resource: &str) -> String {
        let n = self.state.next.fetch_add(1, Ordering::Relaxed);
        let rt = format!("refresh-seeded-{n}");
        lock(&self.state.refresh).insert(
            rt.clone(),
            code_flow::RefreshGrant {
                client_id: client_id.to_owned(),
                scope: scope.to_owned(),
                resource: resource.to_owned(),
                jkt: None,
            },
        );
        rt
    }

    /// Whether `refresh_token` is live (issued and not yet spent).
    pub fn is_live_refresh_token(&self, refresh_token: &str) -> bool {
        lock(&self.state.refresh).contains_key(refresh_token)
    }

    /// Registers a public client (token endpoint authentication `none`).
    pub fn register_public_client(&self, id: impl Into<String>) {
        lock(&self.state.public_clients).insert(id.into());
    }

    /// Registers (or replaces) a client that authenticates with
    /// `private_key_jwt` (RFC 7523 §2.2) with a new ES256 key; returns the
    /// private key (PKCS#8 PEM) for the client to sign with.
    pub fn register_key_client(&self, id: impl Into<String>) -> String {
        use p256::pkcs8::{EncodePrivateKey, EncodePublicKey};
        let key = p256::SecretKey::random(&mut rsa::rand_core::OsRng);
        let private = key
            .to_pkcs8_pem(p256::pkcs8::LineEnding::LF)
            .expect("PKCS#8 encoding")
            .to_string();
        let public = key
            .public_key()
            .to_public_key_pem(p256::pkcs8::LineEnding::LF)
            .expect("SPKI encoding");
        lock(&self.state.key_clients).insert(id.into(), public);
        private
    }

    /// Registers (or replaces) a confidential client.
    pub fn register_client(&self, id: impl Into<String>, secret: impl Into<String>) {
        lock(&self.state.clients).insert(id.into(), secret.into());
    }

    /// Valid access-token claims for `audience` with `scopes`: this issuer,
    /// subject `user-1`, client `mcp-client`, issued now, expiring in an hour.
    pub fn claims(&self, audience: &str, scopes: &[&str]) -> Map<String, Value> {
        let t = now();
        let n = self.state.next.fetch_add(1, Ordering::Relaxed);
        let Value::Object(m) = json!({
            "iss": self.state.issuer,
            "sub": "user-1",
            "client_id": "mcp-client",
            "aud": audience,
            "scope": scopes.join(" "),
            "iat": t,
            "exp": t + 3600,
            "jti": format!("jti-{n}"),
        }) else {
            unreachable!("a JSON object literal")
        };
        m
    }

    /// Signs `claims` with the current key.
    pub fn token(&self, claims: &Map<String, Value>) -> String {
        let key = {
            let k = lock(&self.state.keys);
            k.all.iter().find(|x| x.kid == k.current).cloned()
        };
        key.expect("the current key exists").sign(claims)
    }

    /// Signs `claims` with the key `kid`.
    pub fn token_with(&self, kid: &str, claims: &Map<String, Value>) -> String {
        self.key(kid).expect("no such key").sign(claims)
    }

    /// Mints an opaque token (only introspection can tell what it is).
    pub fn opaque_token(&self, claims: &Map<String, Value>) -> String {
        let n = self.state.next.fetch_add(1, Ordering::Relaxed);
        let token = format!("opaque-{n}-{}", now());
        lock(&self.state.opaque).insert(token.clone(), claims.clone());
        token
    }

    /// Introspection will call `token` inactive from now on.
    pub fn revoke(&self, token: &str) {
        lock(&self.state.revoked).insert(token.to_owned());
    }

    /// The key `kid`, if it exists.
    pub fn key(&self, kid: &str) -> Option<TestKey> {
        lock(&self.state.keys)
            .all
            .iter()
            .find(|k| k.kid == kid)
            .cloned()
    }

    /// Adds a key (`RS256` or `ES256`), published in the JWK Set or not.
    pub fn add_key(&self, kid: &str, alg: Algorithm, publish: bool) -> TestKey {
        let mut k = lock(&self.state.keys);
        let key = TestKey::generate(kid, alg, k.all.len());
        k.all.push(key.clone());
        if publish {
            k.published.push(kid.to_owned());
        }
        key
    }

    /// Publishes key `kid` in the JWK Set.
    pub fn publish(&self, kid: &str) {
        let mut k = lock(&self.state.keys);
        if !k.published.iter().any(|p| p == kid) {
            k.published.push(kid.to_owned());
        }
    }

    /// Trusts workload tokens (SEP-1933) issued by `issuer` in the
    /// `jwt-bearer` grant; its keys are found by discovery at first use.
    pub fn trust_workload_issuer(&self, issuer: &str) {
        lock(&self.state.workload)
            .issuers
            .entry(issuer.to_owned())
            .or_insert(None);
    }

    /// The claims of the workload assertions accepted so far, in order
    /// (the last 1,024).
    pub fn workload_grants(&self) -> Vec<Map<String, Value>> {
        lock(&self.state.workload).grants.clone()
    }

    /// A workload token of this server playing the platform's issuer (a
    /// Kubernetes service-account token, say): `typ: JWT`, subject `sub`,
    /// for `audience` (the authorization server it is presented to), valid
    /// for `ttl` seconds, with a fresh `jti`; signed with the current key.
    pub fn workload_token(&self, sub: &str, audience: &str, ttl: u64) -> String {
        let t = now();
        let n = self.state.next.fetch_add(1, Ordering::Relaxed);
        let Value::Object(claims) = json!({
            "iss": self.state.issuer, "sub": sub, "aud": audience,
            "iat": t, "exp": t + ttl, "jti": format!("workload-{n}"),
        }) else {
            unreachable!("a JSON object literal")
        };
        let key = {
            let k = lock(&self.state.keys);
            k.all.iter().find(|x| x.kid == k.current).cloned()
        };
        key.expect("the current key exists")
            .sign_typed(&claims, "JWT")
    }

    /// Changes how the token exchange grant behaves (the lifetime of the
    /// tokens it issues; refusing every exchange).
    pub fn configure_exchange(&self, f: impl FnOnce(&mut ExchangeSettings)) {
        f(&mut lock(&self.state.exchange));
    }

    /// The claims of the tokens the token exchange grant issued, in order
    /// (the last 1,024).
    pub fn exchanges(&self) -> Vec<Map<String, Value>> {
        lock(&self.state.exchanges).clone()
    }

    /// Makes `kid` the key that signs issued tokens.
    pub fn set_current(&self, kid: &str) {
        lock(&self.state.keys).current = kid.to_owned();
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
