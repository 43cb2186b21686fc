//! [`BearerAuthLayer`]: the tower layer that protects an MCP endpoint.

use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{HeaderValue, Method, Request, Response, header};
use http_body::Body;
use http_body_util::{BodyExt, Either, Full, Limited};
use tower::{Layer, Service};

use super::auth_info::AuthInfo;
use super::bearer::bearer_token;
use super::error::AuthError;
use super::prm::{metadata_document, metadata_paths, metadata_url};
use super::resource::canonical_resource;
use super::scopes::ScopeRules;
use super::verifier::TokenVerifier;
use crate::metadata::ProtectedResourceMetadata;

/// The body type on both sides of a [`BearerAuth`] service: the original
/// body (`Left`) or one the layer made (`Right`): a request body it read to
/// find the request's scopes, or its own answer (a refusal, the metadata).
pub type AuthBody<B> = Either<B, Full<Bytes>>;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

struct Config {
    metadata: ProtectedResourceMetadata,
    metadata_url: String,
    metadata_paths: Vec<String>,
    serve_metadata: bool,
    verifier: Arc<dyn TokenVerifier>,
    rules: ScopeRules,
    max_body: usize,
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
/// 3. The bearer token is read from the `Authorization` header and verified;
///    a request without one gets `401` and a challenge naming the metadata
///    and the scopes every request needs, a bad one `401
///    error="invalid_token"`, a malformed request `400
///    error="invalid_request"`, and an unreachable authorization server
///    `503`.
/// 4. The scopes: those every request needs, then (if the rules name methods
///    or tools) those of the JSON-RPC messages in a `POST` body, which is
///    read for that (up to a size limit). A token lacking any gets `403
///    error="insufficient_scope"` with every scope the request needs.
/// 5. The request goes on with the [`AuthInfo`] and a
///    [`tessera_runtime::Principal`] in its extensions, plus a
///    [`tessera_runtime::Extensions`] carrying both, which
///    `tessera_http::McpHttp` hands to the MCP handlers.
///
/// The inner service never runs for a refused request.
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
    verifier: Arc<dyn TokenVerifier>,
    rules: ScopeRules,
    max_body: usize,
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
            max_body: 4 * 1024 * 1024,
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

    /// The largest request body read to find the request's scopes (default
    /// 4 MiB; larger gets `413`).
    pub fn max_body_bytes(mut self, n: usize) -> Self {
        self.max_body = n;
        self
    }

    /// The layer.
    pub fn build(self) -> BearerAuthLayer {
        let resource = self.metadata.resource.clone();
        let metadata_url = self
            .metadata_url
            .or_else(|| metadata_url(&resource))
            .unwrap_or_else(|| super::prm::METADATA_WELL_KNOWN.to_owned());
        BearerAuthLayer {
            config: Arc::new(Config {
                metadata_paths: metadata_paths(&resource),
                metadata: self.metadata,
                metadata_url,
                serve_metadata: self.serve_metadata,
                verifier: self.verifier,
                rules: self.rules,
                max_body: self.max_body,
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
                Ok(req) => inner.call(req).await.map(|r| r.map(Either::Left)),
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
    let token = bearer_token(req.headers(), req.uri()).map_err(|e| refuse(config, &e))?;
    let info = config
        .verifier
        .verify(&token.0)
        .await
        .map_err(|e| refuse(config, &e.into()))?;
    let rules = &config.rules;
    if !rules.satisfied(&info.scopes, rules.required()) {
        let e = AuthError::InsufficientScope {
            required: rules.required().to_vec(),
        };
        return Err(refuse(config, &e));
    }
    let mut req = if rules.inspects_body() && req.method() == Method::POST {
        let (parts, body) = req.into_parts();
        let bytes = match Limited::new(body, config.max_body).collect().await {
            Ok(c) => c.to_bytes(),
            Err(e) => {
                let too_big = e
                    .downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some();
                return Err(plain(
                    if too_big {
                        http::StatusCode::PAYLOAD_TOO_LARGE
                    } else {
                        http::StatusCode::BAD_REQUEST
                    },
                    if too_big {
                        "Payload Too Large"
                    } else {
                        "Bad Request: the body could not be read"
                    },
                ));
            }
        };
        let needed = rules.needed_for_body(&bytes);
        if !rules.satisfied(&info.scopes, &needed) {
            return Err(refuse(
                config,
                &AuthError::InsufficientScope { required: needed },
            ));
        }
        Request::from_parts(parts, Either::Right(Full::new(bytes)))
    } else {
        req.map(Either::Left)
    };
    attach(&mut req, info);
    Ok(req)
}

/// Puts the verified claims where handlers find them.
fn attach<B>(req: &mut Request<B>, info: AuthInfo) {
    let ext = req.extensions_mut();
    let mut carried = ext
        .remove::<tessera_runtime::Extensions>()
        .unwrap_or_default();
    if let Some(p) = info.principal() {
        carried.insert(p.clone());
        ext.insert(p);
    }
    carried.insert(info.clone());
    ext.insert(carried);
    ext.insert(info);
}

/// The answer to a refused request.
fn refuse(config: &Config, e: &AuthError) -> Response<Full<Bytes>> {
    tracing::debug!(error = %e, "request refused by the bearer auth layer");
    let scope = config.rules.required();
    let (code, description) = match e {
        AuthError::MissingToken => ("unauthorized", e.to_string()),
        AuthError::InvalidRequest(d) => ("invalid_request", d.clone()),
        AuthError::InvalidToken(d) => ("invalid_token", d.clone()),
        AuthError::InsufficientScope { .. } => ("insufficient_scope", e.to_string()),
        AuthError::Unavailable(_) => (
            "temporarily_unavailable",
            "the access token cannot be verified now; try again later".to_owned(),
        ),
    };
    let body = serde_json::json!({ "error": code, "error_description": description });
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = e.status();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(c) = e.challenge(&config.metadata_url, scope) {
        if let Ok(v) = HeaderValue::from_str(&c.to_string()) {
            h.insert(header::WWW_AUTHENTICATE, v);
        }
        // Let browser-based clients read the challenge.
        h.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("WWW-Authenticate"),
        );
    } else {
        h.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    }
    r
}

fn plain(status: http::StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}
