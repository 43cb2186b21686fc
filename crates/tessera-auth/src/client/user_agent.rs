//! The user-agent step of the authorization code flow: sending the user to
//! the authorization URL and receiving the redirect.
//!
//! - [`LoopbackBrowser`]: for a CLI. It listens on `127.0.0.1`, prints the
//!   URL (and opens a browser only when asked), and waits for the redirect
//!   to `http://127.0.0.1:PORT/callback` (RFC 8252 §7.3).
//! - [`HeadlessUserAgent`]: for tests and the conformance suite. It GETs the
//!   authorization URL without following redirects and reads the response
//!   parameters from the `Location` header.

use std::time::Duration;

use tessera_http::AuthFuture;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;
use url::Url;

use super::error::OAuthError;
use super::fetch::error_chain;

/// The query parameters of an authorization response.
pub type CallbackParams = Vec<(String, String)>;

/// Takes the user through the authorization endpoint.
pub trait UserAgent: Send + Sync + 'static {
    /// The redirect URI to register and send (`redirect_uri`).
    fn redirect_uri(&self) -> String;

    /// Sends the user to `authorization_url` and returns the parameters of
    /// the redirect back to [`redirect_uri`](UserAgent::redirect_uri).
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> AuthFuture<'a, Result<CallbackParams, OAuthError>>;
}

fn query_params(u: &Url) -> CallbackParams {
    u.query_pairs().into_owned().collect()
}

/// GETs the authorization URL and reads the redirect (no browser).
#[derive(Debug, Clone)]
pub struct HeadlessUserAgent {
    redirect_uri: String,
    http: reqwest::Client,
}

impl HeadlessUserAgent {
    /// A user agent that asks the server to redirect to `redirect_uri`
    /// (never contacted: the parameters are read from `Location`).
    pub fn new(redirect_uri: impl Into<String>) -> Result<Self, OAuthError> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(super::fetch::EXCHANGE_TIMEOUT)
            .build()
            .map_err(|e| OAuthError::UserAgent(e.to_string()))?;
        Ok(HeadlessUserAgent {
            redirect_uri: redirect_uri.into(),
            http,
        })
    }
}

impl UserAgent for HeadlessUserAgent {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> AuthFuture<'a, Result<CallbackParams, OAuthError>> {
        Box::pin(async move {
            let r =
                self.http
                    .get(authorization_url)
                    .send()
                    .await
                    .map_err(|e| OAuthError::Http {
                        url: authorization_url.to_owned(),
                        why: error_chain(&e),
                    })?;
            if !r.status().is_redirection() {
                return Err(OAuthError::UserAgent(format!(
                    "the authorization endpoint answered {} instead of a redirect",
                    r.status()
                )));
            }
            let location = r
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| OAuthError::UserAgent("redirect without Location".into()))?;
            let base = Url::parse(authorization_url).map_err(|e| OAuthError::BadUrl {
                url: authorization_url.to_owned(),
                why: e.to_string(),
            })?;
            let target = base.join(location).map_err(|e| OAuthError::BadUrl {
                url: location.to_owned(),
                why: e.to_string(),
            })?;
            Ok(query_params(&target))
        })
    }
}

/// Receives the redirect on a loopback port, for a user with a browser.
pub struct LoopbackBrowser {
    listener: tokio::sync::Mutex<TcpListener>,
    port: u16,
    open: bool,
    timeout: Duration,
    announce: Box<dyn Fn(&str) + Send + Sync>,
}

impl std::fmt::Debug for LoopbackBrowser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackBrowser")
            .field("port", &self.port)
            .field("open", &self.open)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// The largest request head the callback listener reads.
const MAX_HEAD: usize = 16 * 1024;

impl LoopbackBrowser {
    /// Listens on `127.0.0.1:port` (`0` picks a free port). The URL is
    /// printed to stderr, no browser is opened, and the user has five
    /// minutes.
    pub async fn bind(port: u16) -> Result<LoopbackBrowser, OAuthError> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(|e| {
            OAuthError::UserAgent(format!("cannot listen on 127.0.0.1:{port}: {e}"))
        })?;
        let port = listener
            .local_addr()
            .map_err(|e| OAuthError::UserAgent(e.to_string()))?
            .port();
        Ok(LoopbackBrowser {
            listener: tokio::sync::Mutex::new(listener),
            port,
            open: false,
            timeout: Duration::from_secs(300),
            announce: Box::new(|url| {
                eprintln!("Open this URL in a browser to authorize:\n\n  {url}\n");
            }),
        })
    }

    /// Also tries to open the URL in the system browser.
    pub fn open_browser(mut self, open: bool) -> Self {
        self.open = open;
        self
    }

    /// How long to wait for the redirect.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }

    /// How the URL is shown to the user (default: printed to stderr).
    pub fn on_url(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.announce = Box::new(f);
        self
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    fn open_system_browser(url: &str) {
        let attempt = if cfg!(target_os = "macos") {
            std::process::Command::new("open").arg(url).spawn()
        } else if cfg!(windows) {
            std::process::Command::new("explorer").arg(url).spawn()
        } else {
            std::process::Command::new("xdg-open").arg(url).spawn()
        };
        if let Err(e) = attempt {
            eprintln!("(could not open a browser: {e}; open the URL by hand)");
        }
    }

    /// Waits for one request to `/callback` and answers it.
    async fn receive(&self) -> Result<CallbackParams, OAuthError> {
        let listener = self.listener.lock().await;
        loop {
            let (mut stream, _) = listener
                .accept()
                .await
                .map_err(|e| OAuthError::UserAgent(e.to_string()))?;
            let mut head = Vec::new();
            let mut buf = [0u8; 2048];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let text = String::from_utf8_lossy(&head);
            let target = text
                .lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .unwrap_or("/");
            let url = Url::parse(&format!("http://127.0.0.1:{}{target}", self.port)).ok();
            let Some(url) = url.filter(|u| u.path() == "/callback") else {
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            };
            let page = "<!doctype html><title>tessera</title><p>Authorization received. You can close this tab and return to the terminal.</p>";
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
            return Ok(query_params(&url));
        }
    }
}

impl UserAgent for LoopbackBrowser {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> AuthFuture<'a, Result<CallbackParams, OAuthError>> {
        Box::pin(async move {
            (self.announce)(authorization_url);
            if self.open {
                Self::open_system_browser(authorization_url);
            }
            tokio::time::timeout(self.timeout, self.receive())
                .await
                .map_err(|_| {
                    OAuthError::Timeout(format!(
                        "no authorization redirect within {} s",
                        self.timeout.as_secs()
                    ))
                })?
        })
    }
}
