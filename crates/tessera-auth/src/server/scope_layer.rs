//! [`ScopeLayer`]: the per-method and per-tool scope rules, checked as MCP
//! middleware on the request the connection core already decoded.

use std::sync::Arc;

use std::task::{Context, Poll};

use tessera_runtime::middleware::{BoxError, McpService, Refusal};
use tessera_runtime::{BoxFuture, Message, Reply, Request};
use tessera_types::{ErrorCode, ErrorObject};

use super::auth_info::AuthInfo;
use super::bearer::TokenScheme;
use super::challenges::ChallengeStyle;
use super::dpop::DpopMode;
use super::error::{AuthError, http_answer};
use super::scopes::ScopeRules;

/// Checks the scopes a request needs ([`ScopeRules::needed_for`], plus the
/// base scopes) against the [`AuthInfo`] of the request's verified token.
///
/// A request whose token lacks one is refused with a [`Refusal`] that an
/// HTTP transport answers with `403` and `WWW-Authenticate: Bearer
/// error="insufficient_scope", scope="…", resource_metadata="…"` naming
/// every scope the request needs (step-up authorization), and that other
/// transports answer with a JSON-RPC error (`-32600`, the same text). In a
/// JSON-RPC batch the needs add up: a refusal names the scopes of every
/// request of the batch so far, and once one request is refused the later
/// ones are refused too (the POST is answered with the `403`).
///
/// [`BearerAuthLayer`](super::BearerAuthLayer) attaches this layer to the
/// requests it admits when its rules name methods or tools; build one
/// yourself to check scopes that another layer established.
#[derive(Clone)]
pub struct ScopeLayer {
    rules: Arc<ScopeRules>,
    style: Arc<ChallengeStyle>,
}

impl std::fmt::Debug for ScopeLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopeLayer")
            .field("rules", &self.rules)
            .field("metadata_url", &self.style.metadata_url)
            .finish()
    }
}

/// The scopes the requests of one frame have needed so far, in order.
#[derive(Default)]
struct FrameNeeds(Vec<String>);

/// What a refusal of this layer carries, to be combined with later ones of
/// the same frame.
struct ScopeRefusal;

impl ScopeLayer {
    /// A layer checking `rules`, announcing `metadata_url` (the RFC 9728
    /// metadata) in its challenges.
    pub fn new(rules: ScopeRules, metadata_url: impl Into<String>) -> Self {
        ScopeLayer::with_style(
            rules,
            ChallengeStyle {
                metadata_url: metadata_url.into(),
                mode: DpopMode::Off,
                algs: String::new(),
            },
        )
    }

    /// A layer challenging as the bearer layer does (with its DPoP mode).
    pub(crate) fn with_style(rules: ScopeRules, style: ChallengeStyle) -> Self {
        ScopeLayer {
            rules: Arc::new(rules),
            style: Arc::new(style),
        }
    }

    /// The rules checked.
    pub fn rules(&self) -> &ScopeRules {
        &self.rules
    }

    /// Every scope `needed` (the base ones first), with the scopes other
    /// requests of the same frame needed before it.
    fn needs(&self, request: &Request, extra: Vec<String>) -> Vec<String> {
        let mut all = self.rules.required().to_vec();
        let mut add = |scopes: &[String]| {
            for s in scopes {
                if !all.contains(s) {
                    all.push(s.clone());
                }
            }
        };
        match request.message_scope() {
            Some(frame) => frame.note(|n: &mut FrameNeeds| {
                for s in extra {
                    if !n.0.contains(&s) {
                        n.0.push(s);
                    }
                }
                add(&n.0);
            }),
            None => add(&extra),
        }
        all
    }

    fn refusal(&self, needed: Vec<String>, scheme: TokenScheme) -> Refusal {
        let e = AuthError::InsufficientScope { required: needed };
        tracing::debug!(error = %e, "request refused by the scope layer");
        let challenges = self.style.challenges(&e, self.rules.required(), scheme);
        let (status, headers, body) = http_answer(&e, &challenges);
        let mut r = Refusal::new(ErrorObject::new(
            ErrorCode::INVALID_REQUEST,
            format!("Forbidden: {e}; ask for a token with these scopes"),
        ))
        .http_status(status)
        .with_detail(ScopeRefusal);
        for (name, value) in &headers {
            if let Ok(v) = value.to_str() {
                r = r.http_header(name.clone(), v);
            }
        }
        r.http_body("application/json", body)
    }
}

impl tower::Layer<McpService> for ScopeLayer {
    type Service = ScopeService;

    fn layer(&self, inner: McpService) -> ScopeService {
        ScopeService {
            layer: self.clone(),
            inner,
        }
    }
}

/// The service of a [`ScopeLayer`] over the rest of a middleware stack.
#[derive(Clone, Debug)]
pub struct ScopeService {
    layer: ScopeLayer,
    inner: McpService,
}

impl ScopeService {
    /// The refusal of `request`, if the layer refuses it.
    fn check(&self, request: &Request) -> Option<ErrorObject> {
        let rules = &self.layer.rules;
        let extra = rules.needed_for(
            &request.method,
            request.params.as_ref().map(tessera_types::Params::object),
        );
        let earlier = request.message_scope().and_then(|f| f.refusal());
        let ours = earlier
            .as_ref()
            .is_some_and(|r| r.detail::<ScopeRefusal>().is_some());
        if extra.is_empty() && earlier.is_none() {
            return None;
        }
        if let (Some(earlier), false) = (&earlier, ours) {
            // Another layer refused the frame: its answer stands.
            return Some(earlier.error().clone());
        }
        let needed = self.layer.needs(request, extra);
        let granted = request
            .extension::<AuthInfo>()
            .map(|a| a.scopes.as_slice())
            .unwrap_or_default();
        if !ours && rules.satisfied(granted, &needed) {
            return None;
        }
        let scheme = request
            .extension::<TokenScheme>()
            .copied()
            .unwrap_or(TokenScheme::Bearer);
        self.layer
            .refusal(needed, scheme)
            .reject::<()>(request)
            .err()
    }
}

impl tower::Service<Message> for ScopeService {
    type Response = Reply;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Reply, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    /// Checks requests; notifications pass (scopes guard what a request
    /// asks for, and a notification asks for nothing).
    fn call(&mut self, message: Message) -> Self::Future {
        let refused = match &message {
            Message::Request(request) => self.check(request),
            Message::Notification(_) => None,
        };
        match refused {
            Some(refused) => Box::pin(std::future::ready(Err(BoxError::from(refused)))),
            None => Box::pin(self.inner.call(message)),
        }
    }
}
