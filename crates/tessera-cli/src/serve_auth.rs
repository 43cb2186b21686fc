//! `tessera serve --http … --auth-issuer URL`: OAuth 2.1 protection of the
//! HTTP endpoint (the resource-server half of MCP authorization).
//!
//! The options become a `tessera_auth::server::BearerAuthLayer` in front of
//! the MCP service: protected resource metadata (RFC 9728) at the
//! well-known paths, bearer tokens checked either as JWTs against the
//! authorization server's keys or by RFC 7662 introspection, with the
//! audience (RFC 8707 resource) and the scopes given here; DPoP-bound
//! tokens (RFC 9449) are checked with their proofs per `--auth-dpop`.

use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::Args;
use tessera_auth::server::dpop::{
    DEFAULT_NONCE_PERIOD_SECS, DEFAULT_REPLAY_ENTRIES, ENTRY_BYTES, MemoryReplayCache,
};
use tessera_auth::server::{
    BearerAuthLayer, ClientAuth, DpopMode, DpopNonces, DpopSettings, IntrospectionVerifier,
    JwtVerifier,
};

use crate::Failure;

/// The authorization options of `tessera serve`.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Authorization (OAuth 2.1 resource server, needs --http)")]
pub struct AuthArgs {
    /// Require OAuth 2.1 bearer tokens issued by this authorization server
    /// (its issuer identifier). Its RFC 8414 / OpenID Connect metadata is
    /// fetched at startup (for the JWK Set URL) unless --auth-jwks or
    /// --auth-introspect say where to go.
    #[arg(long, value_name = "URL", requires = "http")]
    pub auth_issuer: Option<String>,

    /// The resource tokens must be issued for (RFC 8707; the JWT `aud`), also
    /// the `resource` of the protected resource metadata [default: this
    /// server's own endpoint URL, e.g. http://127.0.0.1:8001/mcp]. Set it to
    /// the public URL when clients reach the server under another name.
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    pub auth_audience: Option<String>,

    /// Verify JWT access tokens with the JWK Set at this URL instead of the
    /// `jwks_uri` of the issuer's metadata (no discovery).
    #[arg(
        long,
        value_name = "URL",
        requires = "auth_issuer",
        conflicts_with = "auth_introspect"
    )]
    pub auth_jwks: Option<String>,

    /// Check tokens by RFC 7662 introspection at this endpoint instead of as
    /// JWTs (for opaque tokens); needs --auth-client-id and
    /// --auth-client-secret.
    #[arg(
        long,
        value_name = "URL",
        requires = "auth_issuer",
        requires = "auth_client_id",
        requires = "auth_client_secret"
    )]
    pub auth_introspect: Option<String>,

    /// This server's client id at the introspection endpoint (HTTP Basic).
    #[arg(long, value_name = "ID", requires = "auth_introspect")]
    pub auth_client_id: Option<String>,

    /// This server's client secret at the introspection endpoint (or set
    /// TESSERA_AUTH_CLIENT_SECRET, which keeps it out of the process list).
    #[arg(
        long,
        value_name = "SECRET",
        env = "TESSERA_AUTH_CLIENT_SECRET",
        hide_env_values = true,
        requires = "auth_introspect"
    )]
    pub auth_client_secret: Option<String>,

    /// Scopes, comma separated: announced as `scopes_supported` in the
    /// metadata and required of every request (a token lacking one gets 403
    /// insufficient_scope).
    #[arg(
        long,
        value_name = "SCOPE,...",
        value_delimiter = ',',
        requires = "auth_issuer"
    )]
    pub auth_scopes: Vec<String>,

    /// DPoP-bound tokens (RFC 9449): `allowed` checks a token presented as
    /// `Authorization: DPoP` with its proof and still takes plain bearer
    /// tokens; `required` takes DPoP-bound tokens only; `off` takes bearer
    /// tokens only. In every mode a DPoP-bound token presented as `Bearer`
    /// is refused.
    #[arg(
        long,
        value_name = "MODE",
        default_value = "allowed",
        value_parser = ["required", "allowed", "off"],
        requires = "auth_issuer"
    )]
    pub auth_dpop: Option<String>,

    /// Require a server nonce in DPoP proofs (RFC 9449 §9): a proof without
    /// the current (or previous) one gets 401 use_dpop_nonce with a
    /// DPoP-Nonce header.
    #[arg(long, requires = "auth_issuer")]
    pub auth_dpop_nonce: bool,

    /// How often the DPoP nonce rotates, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_NONCE_PERIOD_SECS, requires = "auth_dpop_nonce")]
    pub auth_dpop_nonce_period: u64,

    /// How far a DPoP proof's `iat` may be from the server's clock, either
    /// way, in seconds.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 60,
        requires = "auth_issuer"
    )]
    pub auth_dpop_iat_window: u64,

    /// The origin (scheme://host[:port]) clients reach this server under,
    /// which DPoP proofs name in `htu` [default: the origin of
    /// --auth-audience, else of this server's endpoint URL]. Set it behind a
    /// proxy that changes the host.
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    pub auth_dpop_origin: Option<String>,

    /// The most DPoP proofs remembered at once (per instance; with --redis
    /// they are kept in Redis instead, each until its `iat` window ends).
    /// When full, new proofs get 503 until old ones expire.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_REPLAY_ENTRIES, requires = "auth_issuer")]
    pub auth_dpop_replay_entries: usize,
}

impl AuthArgs {
    /// The DPoP mode asked for.
    pub fn dpop_mode(&self) -> DpopMode {
        self.auth_dpop
            .as_deref()
            .and_then(|m| m.parse().ok())
            .unwrap_or_default()
    }
}

/// How tokens are checked, as decided from the options.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Check {
    /// JWTs, with the keys at this JWK Set URL.
    Jwt { jwks_uri: String },
    /// Introspection at this endpoint.
    Introspect { endpoint: String },
}

/// What the server announces at startup about its protection.
#[derive(Debug, Clone)]
pub struct Protection {
    /// The layer to put in front of the MCP service.
    pub layer: BearerAuthLayer,
    /// One line for the startup banner.
    pub summary: String,
}

/// An HTTP client for the authorization server: bounded time, no redirects.
fn as_client() -> anyhow::Result<reqwest::Client> {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .context("building the HTTP client for the authorization server")
}

/// Checks that `s` is an absolute http(s) URL; names the option otherwise.
fn absolute_url(option: &str, s: &str) -> Result<url::Url, Failure> {
    let u = url::Url::parse(s)
        .map_err(|e| Failure::Usage(format!("{option} must be an absolute URL ({e}): {s:?}")))?;
    if !matches!(u.scheme(), "http" | "https") || u.host().is_none() {
        return Err(Failure::Usage(format!(
            "{option} must be an http:// or https:// URL: {s:?}"
        )));
    }
    Ok(u)
}

/// Validates the options that need no network: URLs and scope syntax.
fn validate(a: &AuthArgs, issuer: &str) -> Result<(), Failure> {
    absolute_url("--auth-issuer", issuer)?;
    for (option, value) in [
        ("--auth-dpop-origin", &a.auth_dpop_origin),
        ("--auth-audience", &a.auth_audience),
        ("--auth-jwks", &a.auth_jwks),
        ("--auth-introspect", &a.auth_introspect),
    ] {
        if let Some(v) = value {
            absolute_url(option, v)?;
        }
    }
    for s in &a.auth_scopes {
        // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
        let ok = !s.is_empty()
            && s.bytes()
                .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b));
        if !ok {
            return Err(Failure::Usage(format!(
                "--auth-scopes: {s:?} is not a valid scope (printable ASCII, no spaces, quotes or backslashes; separate scopes with commas)"
            )));
        }
    }
    if a.auth_introspect.is_some()
        && (a.auth_client_id.as_deref().unwrap_or("").is_empty()
            || a.auth_client_secret.as_deref().unwrap_or("").is_empty())
    {
        return Err(Failure::Usage(
            "--auth-introspect needs a non-empty --auth-client-id and --auth-client-secret".into(),
        ));
    }
    Ok(())
}

/// Decides where keys or introspection come from, discovering the issuer's
/// metadata when no URL was given.
async fn resolve(a: &AuthArgs, issuer: &str, client: &reqwest::Client) -> anyhow::Result<Check> {
    if let Some(endpoint) = &a.auth_introspect {
        return Ok(Check::Introspect {
            endpoint: endpoint.clone(),
        });
    }
    if let Some(jwks_uri) = &a.auth_jwks {
        return Ok(Check::Jwt {
            jwks_uri: jwks_uri.clone(),
        });
    }
    let meta = tessera_auth::server::discover(client, issuer)
        .await
        .map_err(|e| {
            anyhow::anyhow!(
                "cannot read the authorization server metadata of {issuer}: {e} \
                 (is --auth-issuer the exact issuer identifier? --auth-jwks URL skips discovery)"
            )
        })?;
    match meta.jwks_uri {
        Some(jwks_uri) => Ok(Check::Jwt { jwks_uri }),
        None => bail!(
            "the metadata of {issuer} has no jwks_uri, so JWT access tokens cannot be \
             verified: give --auth-jwks URL, or --auth-introspect URL with a client id and secret"
        ),
    }
}

/// What the instances of one endpoint share for DPoP (through Redis).
pub struct SharedDpop {
    /// The replay cache.
    pub replay: tessera_redis::RedisReplayCache,
    /// The secret nonces are derived from, when nonces are on.
    pub nonce_secret: Option<[u8; 32]>,
}

/// The DPoP settings asked for; `shared` is what the instances share
/// (Redis), if anything.
fn dpop_settings(
    a: &AuthArgs,
    audience: &str,
    shared: Option<SharedDpop>,
) -> Result<DpopSettings, Failure> {
    let mut d =
        DpopSettings::new(a.dpop_mode()).iat_window(Duration::from_secs(a.auth_dpop_iat_window));
    let origin = a.auth_dpop_origin.as_deref().unwrap_or(audience);
    let mut origin = absolute_url("--auth-dpop-origin", origin)?;
    origin.set_path("/");
    origin.set_query(None);
    origin.set_fragment(None);
    d = d.origin(origin);
    let (replay, secret) = match shared {
        Some(s) => (Some(s.replay), s.nonce_secret),
        None => (None, None),
    };
    if a.auth_dpop_nonce {
        d = d.nonces(match secret {
            Some(s) => DpopNonces::with_secret(s, a.auth_dpop_nonce_period),
            None => DpopNonces::random(a.auth_dpop_nonce_period),
        });
    }
    match replay {
        Some(cache) => d = d.replay_cache(cache),
        None => {
            let n = a.auth_dpop_replay_entries;
            d = d.replay_cache(MemoryReplayCache::new(n, n.saturating_mul(ENTRY_BYTES)));
        }
    }
    Ok(d)
}

/// The protection asked for by `a`, or `None` when `--auth-issuer` is not
/// given. `own_url` is this server's endpoint URL (the default audience);
/// `resource_name` names it in the protected resource metadata;
/// `tool_scopes` gives the scopes a tool declares; `shared` is the DPoP
/// state shared between instances (Redis), else it stays in memory.
/// `tessera serve` and `tessera proxy` both protect their endpoint with it:
/// one verifier, the same checks.
pub async fn protection<F>(
    a: &AuthArgs,
    own_url: &str,
    resource_name: &str,
    tool_scopes: F,
    shared: Option<SharedDpop>,
) -> Result<Option<Protection>, Failure>
where
    F: Fn(&str) -> Option<Vec<String>> + Send + Sync + 'static,
{
    let Some(issuer) = a.auth_issuer.as_deref() else {
        return Ok(None);
    };
    validate(a, issuer)?;
    let audience = a
        .auth_audience
        .clone()
        .unwrap_or_else(|| own_url.to_owned());
    let shared_replay = shared.is_some();
    let dpop = dpop_settings(a, &audience, shared)?;
    let client = as_client()?;
    let check = resolve(a, issuer, &client).await?;
    let (layer, how) = match &check {
        Check::Jwt { jwks_uri } => {
            let verifier = JwtVerifier::builder(issuer, &audience)
                .jwks_uri(jwks_uri)
                .http_client(client)
                .build();
            (
                layer_builder(a, issuer, &audience, resource_name, verifier),
                format!("JWT, keys from {jwks_uri}"),
            )
        }
        Check::Introspect { endpoint } => {
            let auth = ClientAuth::Basic {
                client_id: a.auth_client_id.clone().unwrap_or_default(),
                client_secret: a.auth_client_secret.clone().unwrap_or_default(),
            };
            let verifier = IntrospectionVerifier::builder(&audience, auth)
                .endpoint(endpoint)
                .issuer(issuer)
                .http_client(client)
                .build()
                .map_err(|e| anyhow::anyhow!("setting up introspection: {e}"))?;
            (
                layer_builder(a, issuer, &audience, resource_name, verifier),
                format!("introspection at {endpoint}"),
            )
        }
    };
    let layer = layer.tool_scopes(tool_scopes).dpop(dpop).build();
    let scopes = if a.auth_scopes.is_empty() {
        String::new()
    } else {
        format!(", scopes {}", a.auth_scopes.join(" "))
    };
    let dpop = match a.dpop_mode() {
        DpopMode::Off => "DPoP off".to_owned(),
        mode => format!(
            "DPoP {}{}{}",
            mode.as_str(),
            if a.auth_dpop_nonce { ", nonces" } else { "" },
            if shared_replay {
                ", replay cache and nonces in Redis"
            } else {
                ""
            }
        ),
    };
    let summary = format!(
        "bearer tokens of {issuer} for {} ({how}{scopes}; {dpop}); metadata at {}",
        layer.metadata().resource,
        layer.metadata_url()
    );
    Ok(Some(Protection { layer, summary }))
}

fn layer_builder(
    a: &AuthArgs,
    issuer: &str,
    audience: &str,
    resource_name: &str,
    verifier: impl tessera_auth::server::TokenVerifier,
) -> tessera_auth::server::BearerAuthLayerBuilder {
    let mut b = BearerAuthLayer::builder(audience, verifier)
        .authorization_server(issuer)
        .resource_name(resource_name);
    if !a.auth_scopes.is_empty() {
        b = b
            .scopes_supported(a.auth_scopes.iter().cloned())
            .require_scopes(a.auth_scopes.iter().cloned());
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(issuer: &str) -> AuthArgs {
        AuthArgs {
            auth_issuer: Some(issuer.into()),
            ..AuthArgs::default()
        }
    }

    #[test]
    fn rejects_bad_urls_and_scopes() {
        assert!(validate(&args("https://as.example.com"), "https://as.example.com").is_ok());
        assert!(matches!(
            validate(&args("as.example.com"), "as.example.com"),
            Err(Failure::Usage(m)) if m.contains("--auth-issuer")
        ));
        let mut a = args("https://as.example.com");
        a.auth_jwks = Some("ftp://as.example.com/jwks".into());
        assert!(matches!(
            validate(&a, "https://as.example.com"),
            Err(Failure::Usage(m)) if m.contains("--auth-jwks")
        ));
        let mut a = args("https://as.example.com");
        a.auth_scopes = vec!["mcp".into(), "bad scope".into()];
        assert!(matches!(
            validate(&a, "https://as.example.com"),
            Err(Failure::Usage(m)) if m.contains("bad scope")
        ));
        let mut a = args("https://as.example.com");
        a.auth_introspect = Some("https://as.example.com/introspect".into());
        a.auth_client_id = Some("rs".into());
        a.auth_client_secret = Some(String::new());
        assert!(matches!(
            validate(&a, "https://as.example.com"),
            Err(Failure::Usage(m)) if m.contains("--auth-client-secret")
        ));
    }

    #[tokio::test]
    async fn explicit_urls_skip_discovery() {
        let client = as_client().unwrap();
        let mut a = args("http://127.0.0.1:1");
        a.auth_jwks = Some("http://127.0.0.1:1/jwks".into());
        assert_eq!(
            resolve(&a, "http://127.0.0.1:1", &client).await.unwrap(),
            Check::Jwt {
                jwks_uri: "http://127.0.0.1:1/jwks".into()
            }
        );
    }
}
