//! `tessera login URL`: the OAuth authorization code flow in the user's
//! browser, with a loopback redirect, and the stored token it leaves for
//! the other client verbs (which refresh it when it expires).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use tessera::client::Client;
use tessera_auth::client::{
    CallbackParams, ClientCredentials, FileTokenStore, Grant, LoopbackBrowser, OAuthClient,
    OAuthError, OAuthObserver, TokenStore, UserAgent,
};
use tessera_http::{HttpClientTransport, HttpObserver};

use crate::Failure;

/// `tessera login`.
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The MCP server (an http(s) URL).
    #[arg(value_name = "URL")]
    url: String,
    /// Also open the authorization URL in the system browser (it is always printed).
    #[arg(long)]
    open: bool,
    /// The loopback port for the redirect (default: a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Seconds to wait for the browser to come back.
    #[arg(long, default_value_t = 300, value_name = "SECS")]
    timeout: u64,
    /// Request these scopes (space separated) instead of the server's.
    #[arg(long)]
    scope: Option<String>,
    /// A pre-registered client id (else: registration or a metadata document).
    #[arg(long, value_name = "ID")]
    client_id: Option<String>,
    /// The pre-registered client's secret (or set TESSERA_CLIENT_SECRET).
    #[arg(long, value_name = "SECRET")]
    client_secret: Option<String>,
    /// The token file (default: $TESSERA_TOKEN_FILE, else tessera/tokens.json
    /// under the user's configuration directory).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Do not use DPoP (RFC 9449). By default, when the authorization server
    /// offers DPoP or the MCP server asks for it, the token is bound to a
    /// new P-256 key, stored with the token (the token file is private, mode
    /// 0600) and used by the other verbs for every request and refresh.
    #[arg(long, conflicts_with = "dpop")]
    no_dpop: bool,
    /// Insist on DPoP: fail unless the authorization server issues a
    /// DPoP-bound token (sender-constrained: useless without the stored key).
    #[arg(long)]
    dpop: bool,
}

/// Where tokens are kept: `explicit`, else `$TESSERA_TOKEN_FILE`, else the
/// user's configuration directory.
fn token_file(explicit: Option<PathBuf>) -> Option<PathBuf> {
    explicit
        .or_else(|| std::env::var_os("TESSERA_TOKEN_FILE").map(PathBuf::from))
        .or_else(FileTokenStore::default_path)
}

/// What one sign-in needs: the flow of `tessera login`, also started from
/// the inspector's page.
pub struct SignIn {
    /// The MCP server (an http(s) URL).
    pub url: String,
    /// Where the token is stored.
    pub token_file: PathBuf,
    /// The loopback port of the redirect (0: a free one).
    pub port: u16,
    /// Also open the authorization URL in the system browser.
    pub open: bool,
    /// How long to wait for the browser to come back.
    pub timeout: Duration,
    /// Scopes to request instead of the server's.
    pub scope: Option<String>,
    /// A pre-registered client.
    pub client: Option<ClientCredentials>,
    /// Never bind the token to a DPoP key.
    pub no_dpop: bool,
    /// Insist on a DPoP-bound token.
    pub require_dpop: bool,
    /// Sees each exchange of the flow (the inspector's OAuth debugger).
    pub observer: Option<Arc<dyn OAuthObserver>>,
    /// Sees each exchange of the first call made with the new token.
    pub first_call: Option<Arc<dyn HttpObserver>>,
}

/// How a sign-in ended.
pub struct SignedIn {
    /// How many tools the server listed with the new authorization.
    pub tools: usize,
    /// `None` when the server asked for no authorization (nothing stored);
    /// else whether the token is DPoP-bound and when it expires (Unix time).
    pub stored: Option<(bool, Option<u64>)>,
}

/// Runs the authorization code flow for `s.url` (`on_url` is told the
/// authorization URL to open), stores the token, and lists the server's
/// tools with it.
pub async fn sign_in(
    s: SignIn,
    on_url: impl Fn(&str) + Send + Sync + 'static,
) -> anyhow::Result<SignedIn> {
    let browser = LoopbackBrowser::bind(s.port)
        .await
        .context("starting the redirect listener")?
        .open_browser(s.open)
        .timeout(s.timeout)
        .on_url(on_url);
    let store = Arc::new(FileTokenStore::new(&s.token_file));
    let mut b = OAuthClient::builder(&s.url, Grant::AuthorizationCode(Arc::new(browser)))
        .client_name("tessera-cli")
        .store(store);
    if let Some(c) = s.client {
        b = b.client(c);
    }
    if let Some(scope) = s.scope {
        b = b.scope(scope);
    }
    if s.no_dpop {
        b = b.dpop(false);
    }
    if s.require_dpop {
        b = b.require_dpop(true);
    }
    if let Some(o) = s.observer {
        b = b.observer(o);
    }
    let oauth = Arc::new(b.build().context("setting up OAuth")?);
    // A new login replaces whatever was stored for this server.
    oauth.logout().await.context("clearing the old token")?;
    let mut transport = HttpClientTransport::new(&s.url)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .with_auth(oauth.clone());
    if let Some(o) = s.first_call {
        transport = transport.with_observer(o);
    }
    let client = Client::builder("tessera-cli", env!("CARGO_PKG_VERSION"))
        .connect_transport(transport)
        .await
        .with_context(|| format!("connecting to {}", s.url))?;
    let listed = client.list_tools().await;
    client.close().await;
    let tools = listed.map_err(|e| anyhow::anyhow!("listing tools after login: {e}"))?;
    let stored = oauth
        .credentials()
        .await
        .context("reading the new token")?
        .map(|c| (c.tokens.is_dpop(), c.tokens.expires_at));
    Ok(SignedIn {
        tools: tools.len(),
        stored,
    })
}

/// The token file of the CLI (and of the inspector's sign-in): `$TESSERA_TOKEN_FILE`, else the
/// user's configuration directory.
pub fn default_token_file() -> Option<PathBuf> {
    token_file(None)
}

/// Runs `tessera login`.
pub async fn login(a: LoginArgs) -> Result<ExitCode, Failure> {
    if !(a.url.starts_with("http://") || a.url.starts_with("https://")) {
        return Err(Failure::Usage(format!("{:?} is not an http(s) URL", a.url)));
    }
    let path = token_file(a.token_file).ok_or_else(|| {
        Failure::Usage("no configuration directory: give --token-file FILE".into())
    })?;
    let client = a.client_id.map(|id| {
        let secret = a
            .client_secret
            .or_else(|| std::env::var("TESSERA_CLIENT_SECRET").ok());
        match secret {
            Some(s) => ClientCredentials::confidential(id, s),
            None => ClientCredentials::public(id),
        }
    });
    HttpClientTransport::new(&a.url).map_err(|e| Failure::Usage(e.to_string()))?;
    let done = sign_in(
        SignIn {
            url: a.url.clone(),
            token_file: path.clone(),
            port: a.port,
            open: a.open,
            timeout: Duration::from_secs(a.timeout),
            scope: a.scope,
            client,
            no_dpop: a.no_dpop,
            require_dpop: a.dpop,
            observer: None,
            first_call: None,
        },
        |url| {
            eprintln!(
                "Open this URL in a browser to authorize:\n\n  {}\n",
                crate::peer_text::line(url)
            )
        },
    )
    .await?;
    match done.stored {
        Some((dpop, expires_at)) => {
            let expiry = match expires_at {
                Some(t) => format!(", expires at {t} (Unix time)"),
                None => String::new(),
            };
            let kind = if dpop {
                "DPoP-bound token and its key"
            } else {
                "token"
            };
            eprintln!(
                "logged in to {} ({} tools); {kind} stored in {}{expiry}",
                a.url,
                done.tools,
                path.display()
            );
        }
        None => eprintln!(
            "{} did not ask for authorization ({} tools); nothing stored",
            a.url, done.tools
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// A user agent for the non-interactive verbs: a new authorization needs
/// `tessera login`.
struct LoginRequired(String);

impl UserAgent for LoginRequired {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1/callback".into()
    }

    async fn authorize(&self, _url: &str) -> Result<CallbackParams, OAuthError> {
        Err(OAuthError::UserAgent(format!(
            "the stored authorization is no longer valid: run `tessera login {}`",
            self.0
        )))
    }
}

/// Installs the stored token for `url` (if `tessera login` left one) on
/// `transport`; it is refreshed when it expires.
pub fn with_stored_auth(transport: HttpClientTransport, url: &str) -> HttpClientTransport {
    let Some(path) = token_file(None) else {
        return transport;
    };
    let store = FileTokenStore::new(path);
    match store.load(url) {
        Ok(Some(_)) => {}
        Ok(None) => return transport,
        Err(e) => {
            tracing::warn!("ignoring the token file: {e}");
            return transport;
        }
    }
    let oauth = OAuthClient::builder(
        url,
        Grant::AuthorizationCode(Arc::new(LoginRequired(url.into()))),
    )
    .client_name("tessera-cli")
    .store(Arc::new(store))
    .build();
    match oauth {
        Ok(o) => transport.with_auth(Arc::new(o)),
        Err(e) => {
            tracing::warn!("not using the stored token: {e}");
            transport
        }
    }
}
