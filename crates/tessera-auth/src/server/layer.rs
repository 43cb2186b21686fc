//! [`BearerAuthLayer`]: the tower layer that protects an MCP endpoint.

use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Method, Request, Response};
use http_body::Body;
use http_body_util::{Either, Full};
use tower::{Layer, Service};

use super::auth_info::AuthInfo;
use super::bearer::{TokenScheme, access_token};
use super::challenges::ChallengeStyle;
use super::dpop::{self, DPOP_NONCE_HEADER, DpopMode, DpopSettings};
use super::error::{AuthError, http_answer};
use super::prm::{metadata_document, metadata_paths, metadata_url};
use super::resource::canonical_resource;
use super::scope_layer::ScopeLayer;
use super::scopes::ScopeRules;
use super::verifier::{HeldVerifier, TokenVerifier};
use crate::metadata::ProtectedResourceMetadata;
use tessera_runtime::middleware::RequestLayers;

/// The body type on both sides of a [`BearerAuth`] service: the original
/// body (`Left`) or one the layer made (`Right`): its own answer (a
/// refusal, the metadata).
pub type AuthBody<B> = Either<B, Full<Bytes>>;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

struct Config {
    metadata: ProtectedResourceMetadata,
    metadata_url: String,
    metadata_paths: Vec<String>,
    serve_metadata: bool,
    verifier: Arc<dyn HeldVerifier>,
    rules: ScopeRules,
    scope_layer: Option<Arc<ScopeLayer>>,
    dpop: DpopSettings,
    style: ChallengeStyle,
}

/// Protects an MCP endpoint with OAuth 2.1 bearer tokens (see the [module
/// documentation](super) for the whole picture).
///
/// For each request, in order:
///
/// 1. `GET` (or `HEAD`, `OPTIONS`) of one of the metadata paths
///    ([`metadata_paths`]): the RFC 9728 document, no token needed (unless
///    [`serve_metadata(false)`](BearerAuthLayerBuilder::serve_metadata)).
/// 2. `OPTIONS` (a CORS preflight, which carries no credentials): passed on.
/// 3. The access token is read from the `Authorization` header and
///    verified; a request without one gets `401` and a challenge naming the
///    metadata and the scopes every request needs, a bad one `401
///    error="invalid_token"`, a malformed request `400
///    error="invalid_request"`, and an unreachable authorization server
///    `503`. With DPoP (see [`dpop`](BearerAuthLayerBuilder::dpop); on in
///    mode `allowed` by default), `Authorization: DPoP <token>` needs a
///    valid proof (`401 error="invalid_dpop_proof"`, or `use_dpop_nonce`
///    with a `DPoP-Nonce` header) signed by the key the token is bound to
///    (`cnf.jkt`; `401 error="invalid_token"` otherwise), a DPoP-bound
///    token presented as `Bearer` is refused, and the challenges name the
///    `Bearer` scheme, the `DPoP` scheme with its `algs`, or both, per mode.
/// 4. The scopes every request needs: a token lacking one gets `403
///    error="insufficient_scope"` naming them.
/// 5. The request goes on with the [`AuthInfo`] and a
///    [`tessera_runtime::Principal`] in its extensions, plus a
///    [`tessera_runtime::Extensions`] carrying both, which
///    `tessera_http::McpHttp` hands to the MCP handlers. When the rules name
///    methods or tools, the carried extensions also hold a
///    [`ScopeLayer`] (as [`RequestLayers`]): the connection core checks each
///    decoded request with it, and `McpHttp` answers a refused one with the
///    same `403 insufficient_scope` challenge, naming every scope the request
///    needs (step-up). The body is parsed once, by the MCP endpoint.
///
/// The inner service never runs for a request refused here (steps 1–4).
#[derive(Clone)]
pub struct BearerAuthLayer {
    config: Arc<Config>,
}

impl std::fmt::Debug for BearerAuthLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuthLayer")
            .field("resource", &self.config.metadata.resource)
            .field("metadata_url", &self.config.metadata_url)
            .field("rules", &self.config.rules)
            .finish_non_exhaustive()
    }
}

/// Builds a [`BearerAuthLayer`].
pub struct BearerAuthLayerBuilder {
    metadata: ProtectedResourceMetadata,
    metadata_url: Option<String>,
    serve_metadata: bool,
    verifier: Arc<dyn HeldVerifier>,
    rules: ScopeRules,
    dpop: DpopSettings,
}

impl std::fmt::Debug for BearerAuthLayerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuthLayerBuilder")
            .field("metadata", &self.metadata)
            .field("rules", &self.rules)
            .finish_non_exhaustive()
    }
}

impl BearerAuthLayer {
    /// Starts a layer for the MCP endpoint at `resource` (its canonical URL,
    /// e.g. `https://mcp.example.com/mcp`, which is also the audience tokens
    /// must name), checking tokens with `verifier`.
    pub fn builder(
        resource: impl Into<String>,
        verifier: impl TokenVerifier,
    ) -> BearerAuthLayerBuilder {
        let resource = canonical_resource(&resource.into());
        BearerAuthLayerBuilder {
            metadata: ProtectedResourceMetadata {
                resource,
                bearer_methods_supported: Some(vec!["header".to_owned()]),
                ..ProtectedResourceMetadata::default()
            },
            metadata_url: None,
            serve_metadata: true,
            verifier: Arc::new(verifier),
            rules: ScopeRules::new(),
            dpop: DpopSettings::default(),
        }
    }

    /// The protected resource metadata served.
    pub fn metadata(&self) -> &ProtectedResourceMetadata {
        &self.config.metadata
    }

    /// The URL of the metadata, as given in challenges.
    pub fn metadata_url(&self) -> &str {
        &self.config.metadata_url
    }
}

impl BearerAuthLayerBuilder {
    /// Names an authorization server (its issuer identifier) in the metadata.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.metadata.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes clients may request (`scopes_supported` in the metadata).
    pub fn scopes_supported<I: IntoIterator<Item = T>, T: Into<String>>(mut self, s: I) -> Self {
        self.metadata.scopes_supported = Some(s.into_iter().map(Into::into).collect());
        self
    }

    /// A human-readable name (`resource_name` in the metadata).
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.metadata.resource_name = Some(name.into());
        self
    }

    /// Edits the metadata document directly.
    pub fn edit_metadata(mut self, f: impl FnOnce(&mut ProtectedResourceMetadata)) -> Self {
        f(&mut self.metadata);
        self
    }

    /// Replaces the scope rules.
    pub fn rules(mut self, rules: ScopeRules) -> Self {
        self.rules = rules;
        self
    }

    /// Every request needs these scopes ([`ScopeRules::require`]).
    pub fn require_scopes<I: IntoIterator<Item = T>, T: Into<String>>(mut self, s: I) -> Self {
        self.rules = self.rules.require(s);
        self
    }

    /// Requests of this JSON-RPC method need these scopes ([`ScopeRules::method`]).
    pub fn method_scopes<I: IntoIterator<Item = T>, T: Into<String>>(
        mut self,
        method: impl Into<String>,
        s: I,
    ) -> Self {
        self.rules = self.rules.method(method, s);
        self
    }

    /// Scopes per tool ([`ScopeRules::tool_scopes`]); with a tessera server,
    /// `move |name| server.tool_scopes(name)`.
    pub fn tool_scopes<F>(mut self, f: F) -> Self
    where
        F: Fn(&str) -> Option<Vec<String>> + Send + Sync + 'static,
    {
        self.rules = self.rules.tool_scopes(f);
        self
    }

    /// A broad scope implies narrower ones ([`ScopeRules::implies`]).
    pub fn scope_implies<I: IntoIterator<Item = T>, T: Into<String>>(
        mut self,
        broad: impl Into<String>,
        narrower: I,
    ) -> Self {
        self.rules = self.rules.implies(broad, narrower);
        self
    }

    /// The metadata URL announced in challenges (default: the path-aware
    /// well-known URL of the resource, [`metadata_url`]); set it when a proxy
    /// serves the document elsewhere.
    pub fn metadata_url(mut self, url: impl Into<String>) -> Self {
        self.metadata_url = Some(url.into());
        self
    }

    /// Whether the layer answers the well-known metadata paths itself
    /// (default `true`); turn off to serve [`metadata_document`] elsewhere.
    pub fn serve_metadata(mut self, on: bool) -> Self {
        self.serve_metadata = on;
        self
    }

    /// How DPoP-bound tokens are handled (default:
    /// [`DpopSettings::default`], mode [`DpopMode::Allowed`]); the metadata
    /// then announces `dpop_signing_alg_values_supported` and
    /// `dpop_bound_access_tokens_required`.
    pub fn dpop(mut self, settings: DpopSettings) -> Self {
        self.dpop = settings;
        self
    }

    /// The layer.
    pub fn build(mut self) -> BearerAuthLayer {
        let resource = self.metadata.resource.clone();
        if self.dpop.origin.is_none() {
            self.dpop.origin = url::Url::parse(&resource).ok().map(|mut u| {
                u.set_path("/");
                u.set_query(None);
                u.set_fragment(None);
                u
            });
        }
        if self.dpop.mode != DpopMode::Off {
            self.metadata.dpop_signing_alg_values_supported = Some(self.dpop.alg_names());
            self.metadata.dpop_bound_access_tokens_required =
                Some(self.dpop.mode == DpopMode::Required);
        }
        let metadata_url = self
            .metadata_url
            .or_else(|| metadata_url(&resource))
            .unwrap_or_else(|| super::prm::METADATA_WELL_KNOWN.to_owned());
        let style = ChallengeStyle {
            metadata_url: metadata_url.clone(),
            mode: self.dpop.mode,
            algs: self.dpop.algs_text(),
        };
        let scope_layer = self
            .rules
            .per_request()
            .then(|| Arc::new(ScopeLayer::with_style(self.rules.clone(), style.clone())));
        BearerAuthLayer {
            config: Arc::new(Config {
                scope_layer,
                metadata_paths: metadata_paths(&resource),
                metadata: self.metadata,
                metadata_url,
                serve_metadata: self.serve_metadata,
                verifier: self.verifier,
                rules: self.rules,
                dpop: self.dpop,
                style,
            }),
        }
    }
}

impl<S> Layer<S> for BearerAuthLayer {
    type Service = BearerAuth<S>;

    fn layer(&self, inner: S) -> BearerAuth<S> {
        BearerAuth {
            inner,
            config: self.config.clone(),
        }
    }
}

/// The service made by [`BearerAuthLayer`].
#[derive(Clone)]
pub struct BearerAuth<S> {
    inner: S,
    config: Arc<Config>,
}

impl<S: std::fmt::Debug> std::fmt::Debug for BearerAuth<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuth")
            .field("inner", &self.inner)
            .field("resource", &self.config.metadata.resource)
            .finish_non_exhaustive()
    }
}

impl<S, B, RB> Service<Request<B>> for BearerAuth<S>
where
    S: Service<Request<AuthBody<B>>, Response = Response<RB>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
    RB: Send + 'static,
{
    type Response = Response<AuthBody<RB>>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        // Use the service that was polled ready; leave a fresh clone behind.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let config = self.config.clone();
        Box::pin(async move {
            match admit(&config, req).await {
                Ok(req) => {
                    let fresh = req.extensions().get::<FreshNonce>().is_some();
                    let mut r = inner.call(req).await?.map(Either::Left);
                    if let (true, Some(nonces)) = (fresh, &config.dpop.nonces) {
                        let now = config.dpop.clock.now();
                        if let Ok(v) = http::HeaderValue::from_str(&nonces.current(now)) {
                            let h = r.headers_mut();
                            h.insert(DPOP_NONCE_HEADER, v);
                            // Let browser-based clients read it.
                            h.append(
                                http::header::ACCESS_CONTROL_EXPOSE_HEADERS,
                                http::HeaderValue::from_static("DPoP-Nonce"),
                            );
                        }
                    }
                    Ok(r)
                }
                Err(answer) => Ok(answer.map(Either::Right)),
            }
        })
    }
}

/// Decides on a request: `Ok` with the request to pass on (extensions set),
/// or `Err` with the layer's own answer.
async fn admit<B>(
    config: &Config,
    req: Request<B>,
) -> Result<Request<AuthBody<B>>, Response<Full<Bytes>>>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    if config.serve_metadata && config.metadata_paths.iter().any(|p| p == req.uri().path()) {
        return Err(metadata_document(&config.metadata, req.method()));
    }
    if req.method() == Method::OPTIONS {
        return Ok(req.map(Either::Left));
    }
    let dpop_on = config.dpop.mode != DpopMode::Off;
    let (scheme, token) = access_token(req.headers(), req.uri(), dpop_on)
        .map_err(|e| refuse(config, &e, TokenScheme::Bearer))?;
    let (info, send_nonce) = match scheme {
        TokenScheme::Bearer => (admit_bearer(config, &token.0).await?, false),
        _ => {
            admit_dpop(
                config,
                req.headers(),
                req.method(),
                req.uri().path(),
                &token.0,
            )
            .await?
        }
    };
    let rules = &config.rules;
    if !rules.satisfied(&info.scopes, rules.required()) {
        let e = AuthError::InsufficientScope {
            required: rules.required().to_vec(),
        };
        return Err(refuse(config, &e, scheme));
    }
    let mut req = req.map(Either::Left);
    attach(&mut req, info, scheme, config.scope_layer.as_ref());
    if send_nonce {
        req.extensions_mut().insert(FreshNonce);
    }
    Ok(req)
}

/// Verifies a token presented as `Bearer`: refused if DPoP-bound, or if
/// the mode requires DPoP.
async fn admit_bearer(config: &Config, token: &str) -> Result<AuthInfo, Response<Full<Bytes>>> {
    let scheme = TokenScheme::Bearer;
    let info = config
        .verifier
        .verify_boxed(token)
        .await
        .map_err(|e| refuse(config, &e.into(), scheme))?;
    let refusal = if info.dpop_jkt().is_some() {
        "the token is bound to a DPoP key (cnf.jkt): present it as \
         `Authorization: DPoP <token>` with a DPoP proof"
    } else if config.dpop.mode == DpopMode::Required {
        "this server accepts DPoP-bound tokens only: get a DPoP-bound token and \
         present it as `Authorization: DPoP <token>` with a DPoP proof"
    } else {
        return Ok(info);
    };
    Err(refuse(
        config,
        &AuthError::InvalidToken(refusal.into()),
        scheme,
    ))
}

/// Verifies a token presented as `DPoP` with its proof: the proof, the
/// token, the binding between them, then the replay cache. Answers the
/// token's claims and whether the proof's nonce was the previous one (so
/// the answer hands out the current one).
async fn admit_dpop(
    config: &Config,
    headers: &http::HeaderMap,
    method: &Method,
    path: &str,
    token: &str,
) -> Result<(AuthInfo, bool), Response<Full<Bytes>>> {
    let (dpop, scheme) = (&config.dpop, TokenScheme::Dpop);
    let now = dpop.clock.now();
    let proof = dpop::check(dpop, headers, method.as_str(), path, token, now).map_err(|e| {
        let e = match e {
            dpop::ProofError::Invalid(why) => AuthError::InvalidDpopProof(why),
            dpop::ProofError::UseNonce(why) => AuthError::UseDpopNonce(why),
        };
        refuse(config, &e, scheme)
    })?;
    let info = config
        .verifier
        .verify_boxed(token)
        .await
        .map_err(|e| refuse(config, &e.into(), scheme))?;
    bind(&info, &proof).map_err(|e| refuse(config, &e, scheme))?;
    let e = match dpop
        .replay
        .first_use_boxed(&proof.replay_key, proof.expires_at, now)
        .await
    {
        Ok(true) => return Ok((info, !proof.current_nonce)),
        Ok(false) => AuthError::InvalidDpopProof(
            "the DPoP proof was already used (jti replayed): make a fresh proof for each request"
                .into(),
        ),
        Err(e @ dpop::ReplayError::Full(_)) => AuthError::Busy(e.to_string()),
        Err(e) => AuthError::Unavailable(e.to_string()),
    };
    Err(refuse(config, &e, scheme))
}

/// Marks a request whose proof carried the previous nonce: its answer
/// carries the current one.
#[derive(Debug, Clone, Copy)]
struct FreshNonce;

/// The token must be bound to the proof's key (RFC 9449 §7.1: `cnf.jkt`).
fn bind(info: &AuthInfo, proof: &dpop::CheckedProof) -> Result<(), AuthError> {
    match info.dpop_jkt() {
        None => Err(AuthError::InvalidToken(
            "the token is not DPoP-bound (no cnf.jkt): present it as `Authorization: Bearer <token>`, \
             or get a DPoP-bound token"
                .into(),
        )),
        Some(jkt) if jkt != proof.jkt => Err(AuthError::InvalidToken(
            "the DPoP proof is signed with another key than the one the token is bound to (cnf.jkt)"
                .into(),
        )),
        Some(_) => Ok(()),
    }
}

/// Puts the verified claims where handlers find them, and the scope layer
/// (when the rules name methods or tools) where the connection core runs it.
fn attach<B>(
    req: &mut Request<B>,
    info: AuthInfo,
    scheme: TokenScheme,
    scopes: Option<&Arc<ScopeLayer>>,
) {
    let ext = req.extensions_mut();
    let mut carried = ext
        .remove::<tessera_runtime::Extensions>()
        .unwrap_or_default();
    if let Some(layer) = scopes {
        let stack = carried
            .get::<RequestLayers>()
            .map(|l| l.0.clone())
            .unwrap_or_default()
            .layer(ScopeLayer::clone(layer));
        carried.insert(RequestLayers(stack));
    }
    if let Some(p) = info.principal() {
        carried.insert(p.clone());
        ext.insert(p);
    }
    carried.insert(info.clone());
    carried.insert(scheme);
    ext.insert(carried);
    ext.insert(info);
    ext.insert(scheme);
}

/// The answer to a refused request.
fn refuse(config: &Config, e: &AuthError, scheme: TokenScheme) -> Response<Full<Bytes>> {
    tracing::debug!(error = %e, "request refused by the bearer auth layer");
    let challenges = config.style.challenges(e, config.rules.required(), scheme);
    let (status, headers, body) = http_answer(e, &challenges);
    let mut r = Response::new(Full::new(body));
    *r.status_mut() = status;
    *r.headers_mut() = headers;
    if let (Some(nonces), true) = (&config.dpop.nonces, config.dpop.mode != DpopMode::Off) {
        // Every refusal hands out the current nonce, so the next proof can
        // carry it (RFC 9449 §9).
        if let Ok(v) = http::HeaderValue::from_str(&nonces.current(config.dpop.clock.now())) {
            r.headers_mut().insert(DPOP_NONCE_HEADER, v);
        }
    }
    r
}
