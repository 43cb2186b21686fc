//! The `auth/*` conformance scenarios (OAuth 2.1 client flows).
//!
//! Every scenario runs the same client: an [`OAuthClient`] installed on the
//! HTTP transport, then `tools/list` and a call of each listed tool. Only
//! the grant and the client identity are chosen here, from the scenario's
//! family and `MCP_CONFORMANCE_CONTEXT`; everything else (discovery, scope
//! selection, registration, step-up, DPoP, `iss` checks, refusals) is the
//! library's ordinary behaviour.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use tessera::client::ClientError;
use tessera::http::HttpClientTransport;
use tessera_auth::client::{
    AuthMethod, ClientCredentials, ClientSigningKey, Grant, HeadlessUserAgent, IdentityAssertion,
    OAuthClient,
};

use crate::scenarios::{NoArguments, builder};

/// The URL of this client's metadata document (its client ID where the
/// authorization server supports client ID metadata documents).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// The redirect URI registered and sent; never contacted (the headless
/// user agent reads the code from `Location`).
const REDIRECT_URI: &str = "http://127.0.0.1:3334/callback";

/// What the suite tells an `auth/*` scenario in `MCP_CONFORMANCE_CONTEXT`
/// (each member as sent; used when it is a string).
#[derive(Debug, Default, Deserialize)]
struct AuthContext {
    #[serde(default)]
    client_id: Option<Value>,
    #[serde(default)]
    client_secret: Option<Value>,
    #[serde(default)]
    issuer: Option<Value>,
    #[serde(default)]
    private_key_pem: Option<Value>,
    #[serde(default)]
    signing_algorithm: Option<Value>,
    #[serde(default)]
    idp_id_token: Option<Value>,
    #[serde(default)]
    idp_token_endpoint: Option<Value>,
    #[serde(default)]
    idp_client_id: Option<Value>,
    #[serde(default)]
    idp_client_secret: Option<Value>,
    #[serde(default)]
    valid_jwt: Option<Value>,
}

/// A member as text, when it is a string.
fn text(v: &Option<Value>) -> Option<String> {
    v.as_ref().and_then(Value::as_str).map(str::to_owned)
}

/// The grant, and the pre-registered client if the context names one.
fn plan(
    scenario: &str,
    ctx: &AuthContext,
) -> Result<(Grant, Option<ClientCredentials>, Option<ClientSigningKey>), String> {
    let client = text(&ctx.client_id).map(|id| {
        let c = match text(&ctx.client_secret) {
            Some(s) => ClientCredentials::confidential(id, s),
            None => ClientCredentials::public(id),
        };
        match text(&ctx.issuer) {
            Some(i) => c.for_issuer(i),
            None => c,
        }
    });
    let key = match text(&ctx.private_key_pem) {
        Some(pem) => {
            let alg = text(&ctx.signing_algorithm).unwrap_or_else(|| "ES256".into());
            Some(ClientSigningKey::from_pem(&pem, &alg).map_err(|e| e.to_string())?)
        }
        None => None,
    };
    let client = match (client, &key) {
        (Some(c), Some(_)) => Some(c.with_auth_method(AuthMethod::PrivateKeyJwt)),
        (c, _) => c,
    };
    let grant = if let Some(id_token) = text(&ctx.idp_id_token) {
        let endpoint = text(&ctx.idp_token_endpoint).ok_or("idp_token_endpoint missing")?;
        let mut ia = IdentityAssertion::new(endpoint, id_token);
        if let Some(id) = text(&ctx.idp_client_id) {
            ia = ia.idp_client(id, text(&ctx.idp_client_secret));
        }
        Grant::IdentityAssertion(ia)
    } else if let Some(jwt) = text(&ctx.valid_jwt) {
        Grant::JwtBearer { assertion: jwt }
    } else if scenario.starts_with("auth/client-credentials") {
        Grant::ClientCredentials
    } else {
        let ua = HeadlessUserAgent::new(REDIRECT_URI).map_err(|e| e.to_string())?;
        Grant::AuthorizationCode(Arc::new(ua))
    };
    Ok((grant, client, key))
}

/// Runs one `auth/*` scenario against the mock server at `url`.
pub(crate) async fn run(url: &str, scenario: &str) -> Result<(), String> {
    let ctx: AuthContext = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .filter(Value::is_object)
        .and_then(|v| AuthContext::deserialize(v).ok())
        .unwrap_or_default();
    let (grant, client, key) = plan(scenario, &ctx)?;
    let mut b = OAuthClient::builder(url, grant)
        .client_name("tessera-conformance-client")
        .client_metadata_url(CLIENT_METADATA_URL);
    if let Some(c) = client {
        b = b.client(c);
    }
    if let Some(k) = key {
        b = b.signing_key(k);
    }
    let oauth = b.build().map_err(|e| e.to_string())?;
    let transport = HttpClientTransport::new(url)
        .map_err(|e| e.to_string())?
        .with_auth(Arc::new(oauth));
    let client = builder()?
        .connect_transport(transport)
        .await
        .map_err(|e: ClientError| format!("connect: {e}"))?;
    let outcome = async {
        let tools = client.list_tools().await.map_err(|e| e.to_string())?;
        for t in &tools {
            client
                .call_tool(&t.name, NoArguments {})
                .await
                .map_err(|e| e.to_string())?;
        }
        Ok::<_, String>(())
    }
    .await;
    client.close().await;
    outcome
}
