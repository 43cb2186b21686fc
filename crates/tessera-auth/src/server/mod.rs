//! The resource-server half of MCP authorization: an MCP server that only
//! answers requests carrying a valid OAuth 2.1 access token issued for it.
//!
//! - [`BearerAuthLayer`]: a tower layer in front of the MCP endpoint (any
//!   tower service, typically `tessera_http::McpHttp`). It serves the RFC 9728
//!   protected resource metadata ([`metadata_document`]) at
//!   `/.well-known/oauth-protected-resource/<endpoint path>` and at
//!   `/.well-known/oauth-protected-resource`, reads the bearer token from the
//!   `Authorization` header only (RFC 6750 §2.1; a token in the query string
//!   is refused), verifies it, checks scopes, and answers a refused request
//!   itself: `401` with `WWW-Authenticate: Bearer resource_metadata="…",
//!   scope="…"` (plus `error="invalid_token"` for a bad token), `403` with
//!   `error="insufficient_scope"` and the scopes needed (step-up), `400`
//!   `invalid_request` for a malformed request. The inner service never sees
//!   a request refused there. Scopes per method and per tool are checked by
//!   the [`ScopeLayer`], MCP middleware the bearer layer attaches to the
//!   requests it admits: the connection core runs it on each decoded request
//!   (the body is parsed once), and `tessera_http::McpHttp` answers a refusal
//!   with the same `403 insufficient_scope` challenge.
//! - [`TokenVerifier`]: how a token is checked. [`JwtVerifier`] verifies a
//!   JWT access token with the authorization server's keys ([`JwksCache`]:
//!   fetched over HTTP, cached, refetched for an unknown `kid` no more often
//!   than a minimum interval), checking issuer, audience (the RFC 8707
//!   resource: this server's canonical URL, so tokens minted for other
//!   resources are refused, never passed through), `exp`/`nbf` with a small
//!   leeway, and an allow-list of asymmetric algorithms (no `none`, no HMAC).
//!   [`IntrospectionVerifier`] asks the authorization server (RFC 7662), with
//!   client authentication, and applies the same checks to its answer.
//!   Either one may find its endpoints in the issuer's RFC 8414 metadata
//!   ([`discover`]).
//! - [`AuthInfo`]: what a verified token says (subject, client, scopes,
//!   expiry, every claim). The layer puts it, with a
//!   [`tessera_runtime::Principal`], in the HTTP request's extensions and in
//!   a carried [`tessera_runtime::Extensions`] that `tessera-http` hands to
//!   the MCP handlers: a tool reads it with
//!   `ctx.extension::<AuthInfo>()` or the `Extension<AuthInfo>` extractor.
//! - [`dpop`]: DPoP (RFC 9449) sender-constrained tokens: with
//!   [`DpopSettings`] (mode [`DpopMode::Allowed`] by default), a token
//!   presented as `Authorization: DPoP <token>` must come with a valid proof
//!   signed by the key it is bound to (`cnf.jkt`), a DPoP-bound token
//!   presented as `Bearer` is refused, and challenges name the `DPoP`
//!   scheme with its `algs`.
//! - [`ScopeRules`]: the scopes each request needs: some for every request,
//!   some per JSON-RPC method, some per tool (declared with
//!   `tessera_server::tool("x").scopes(["files:write"])` and looked up through
//!   [`ScopeRules::tool_scopes`]), with scope hierarchies (a broad scope
//!   implying narrower ones).

mod auth_info;
mod bearer;
mod challenges;
mod discovery;
pub mod dpop;
mod error;
mod introspection;
mod jwks;
mod jwt;
mod layer;
mod prm;
mod resource;
mod scope_layer;
mod scopes;
mod verifier;

pub use auth_info::AuthInfo;
pub use bearer::{BearerToken, TokenScheme, access_token, bearer_token};
pub use discovery::{discover, metadata_urls};
pub use dpop::{DpopMode, DpopNonces, DpopSettings};
pub use error::{AuthError, VerifyError};
pub use introspection::{ClientAuth, IntrospectionVerifier, IntrospectionVerifierBuilder};
pub use jsonwebtoken::Algorithm;
pub use jwks::{JwksCache, JwksSource};
pub use jwt::{DEFAULT_ALGORITHMS, JwtVerifier, JwtVerifierBuilder};
pub use layer::{AuthBody, BearerAuth, BearerAuthLayer, BearerAuthLayerBuilder};
pub use prm::{METADATA_WELL_KNOWN, metadata_document, metadata_paths, metadata_url};
pub use resource::{canonical_resource, same_resource};
pub use scope_layer::ScopeLayer;
pub use scopes::ScopeRules;
pub use verifier::TokenVerifier;
