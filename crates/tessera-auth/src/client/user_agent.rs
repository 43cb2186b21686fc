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

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use url::Url;

use super::error::OAuthError;
use super::fetch::error_chain;

/// A boxed future of [`DynUserAgent::authorize_boxed`].
type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The query parameters of an authorization response.
pub type CallbackParams = Vec<(String, String)>;

/// Takes the user through the authorization endpoint.
///
/// [`authorize`](UserAgent::authorize) is an `async fn` in an
/// implementation:
///
/// ```
/// use std::sync::Arc;
/// use tessera_auth::client::{CallbackParams, Grant, OAuthError, UserAgent};
///
/// /// Asks the user to paste the redirect URL back.
/// struct Paste;
///
/// impl UserAgent for Paste {
///     fn redirect_uri(&self) -> String {
///         "http://127.0.0.1:8976/callback".into()
///     }
///
///     async fn authorize(&self, authorization_url: &str) -> Result<CallbackParams, OAuthError> {
///         println!("open {authorization_url}, then paste where it took you");
///         let mut line = String::new();
///         std::io::stdin()
///             .read_line(&mut line)
///             .map_err(|e| OAuthError::UserAgent(e.to_string()))?;
///         let url = url::Url::parse(line.trim()).map_err(|e| OAuthError::UserAgent(e.to_string()))?;
///         Ok(url.query_pairs().into_owned().collect())
///     }
/// }
///
/// let grant = Grant::AuthorizationCode(Arc::new(Paste));
/// # let _ = grant;
/// ```
pub trait UserAgent: Send + Sync + 'static {
    /// The redirect URI to register and send (`redirect_uri`).
    fn redirect_uri(&self) -> String;

    /// Sends the user to `authorization_url` and returns the parameters of
    /// the redirect back to [`redirect_uri`](UserAgent::redirect_uri).
    fn authorize(
        &self,
        authorization_url: &str,
    ) -> impl Future<Output = Result<CallbackParams, OAuthError>> + Send;
}

/// The object-safe form of [`UserAgent`] that [`Grant::AuthorizationCode`]
/// holds (`Arc::new(agent)` makes one of any `UserAgent`). Not for
/// implementing or naming in user code; implement [`UserAgent`].
///
/// [`Grant::AuthorizationCode`]: super::Grant::AuthorizationCode
#[doc(hidden)]
pub trait DynUserAgent: Send + Sync + 'static {
    /// [`UserAgent::redirect_uri`].
    fn redirect_uri_dyn(&self) -> String;
    /// [`UserAgent::authorize`], boxed.
    fn authorize_boxed<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> BoxFuture<'a, Result<CallbackParams, OAuthError>>;
}

impl<T: UserAgent> DynUserAgent for T {
    fn redirect_uri_dyn(&self) -> String {
        self.redirect_uri()
    }
    fn authorize_boxed<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> BoxFuture<'a, Result<CallbackParams, OAuthError>> {
        Box::pin(self.authorize(authorization_url))
    }
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

    async fn authorize(&self, authorization_url: &str) -> Result<CallbackParams, OAuthError> {
        let r = self
            .http
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

/// The largest request head the callback listener accepts.
const MAX_HEAD: usize = 16 * 1024;

/// How long one browser connection may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// The page shown in the browser once the redirect has arrived.
const RECEIVED_PAGE: &str = "<!doctype html><title>tessera</title><p>Authorization received. \
You can close this tab and return to the terminal.</p>";

impl LoopbackBrowser {
    /// Listens on `127.0.0.1:port` (`0` picks a free port). The URL is
    /// logged (see [`on_url`](Self::on_url)), no browser is opened, and the
    /// user has five minutes.
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
                tracing::info!(url, "open this URL in a browser to authorize");
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

    /// How the URL is shown to the user (default: an `info` event of
    /// `tracing`; a CLI prints it instead).
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
            tracing::warn!(error = %e, "could not open a browser; open the URL by hand");
        }
    }

    /// Serves HTTP/1.1 on the loopback listener until one request to
    /// `/callback` arrives; anything else gets `404`. Connections run
    /// concurrently (a browser may open several), each bounded by
    /// [`HEAD_TIMEOUT`] and [`MAX_HEAD`], and all end with this call.
    async fn receive(&self) -> Result<CallbackParams, OAuthError> {
        let listener = self.listener.lock().await;
        let (found_tx, mut found) = mpsc::channel::<CallbackParams>(1);
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let (stream, _) = accepted.map_err(|e| OAuthError::UserAgent(e.to_string()))?;
                    let found_tx = found_tx.clone();
                    let port = self.port;
                    let service = hyper::service::service_fn(move |req| {
                        let found_tx = found_tx.clone();
                        async move { Ok::<_, std::convert::Infallible>(callback(req, port, &found_tx).await) }
                    });
                    connections.spawn(
                        hyper::server::conn::http1::Builder::new()
                            .timer(hyper_util::rt::TokioTimer::new())
                            .header_read_timeout(HEAD_TIMEOUT)
                            .max_buf_size(MAX_HEAD)
                            .keep_alive(false)
                            .serve_connection(TokioIo::new(stream), service),
                    );
                }
                Some(params) = found.recv() => {
                    // Let the browser's connection finish writing the page.
                    while let Ok(Some(_)) = tokio::time::timeout(
                        Duration::from_secs(1),
                        connections.join_next(),
                    ).await {}
                    return Ok(params);
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
    }
}

/// Answers one request to the loopback listener: the redirect to
/// `/callback` is handed over through `found`.
async fn callback(
    req: http::Request<Incoming>,
    port: u16,
    found: &mpsc::Sender<CallbackParams>,
) -> http::Response<Full<Bytes>> {
    let target = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let url = Url::parse(&format!("http://127.0.0.1:{port}{target}")).ok();
    let Some(url) = url.filter(|u| u.path() == "/callback") else {
        let mut r = http::Response::new(Full::new(Bytes::new()));
        *r.status_mut() = http::StatusCode::NOT_FOUND;
        return r;
    };
    let _ = found.try_send(query_params(&url));
    let mut r = http::Response::new(Full::new(Bytes::from_static(RECEIVED_PAGE.as_bytes())));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/html; charset=utf-8"),
    );
    r
}

impl UserAgent for LoopbackBrowser {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    async fn authorize(&self, authorization_url: &str) -> Result<CallbackParams, OAuthError> {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn loopback_browser_receives_the_redirect_and_ignores_other_paths() {
        let (shown_tx, shown) = std::sync::mpsc::channel::<String>();
        let browser = LoopbackBrowser::bind(0)
            .await
            .unwrap()
            .timeout(Duration::from_secs(30))
            .on_url(move |url| shown_tx.send(url.to_owned()).unwrap());
        let redirect = browser.redirect_uri();
        assert_eq!(
            redirect,
            format!("http://127.0.0.1:{}/callback", browser.port())
        );
        let waiting =
            tokio::spawn(
                async move { browser.authorize("https://as.example/authorize?x=1").await },
            );
        let http = reqwest::Client::new();
        let base = redirect.trim_end_matches("/callback");
        // A stray request (a favicon, say) is answered 404 and changes nothing.
        let stray = http
            .get(format!("{base}/favicon.ico"))
            .send()
            .await
            .unwrap();
        assert_eq!(stray.status(), reqwest::StatusCode::NOT_FOUND);
        let page = http
            .get(format!("{redirect}?code=abc&state=s%201"))
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), reqwest::StatusCode::OK);
        assert!(
            page.text()
                .await
                .unwrap()
                .contains("Authorization received")
        );
        let params = waiting.await.unwrap().unwrap();
        assert_eq!(
            params,
            vec![
                ("code".to_owned(), "abc".to_owned()),
                ("state".to_owned(), "s 1".to_owned())
            ]
        );
        assert_eq!(shown.recv().unwrap(), "https://as.example/authorize?x=1");
    }

    #[tokio::test(start_paused = true)]
    async fn loopback_browser_gives_up_after_its_timeout() {
        let browser = LoopbackBrowser::bind(0)
            .await
            .unwrap()
            .timeout(Duration::from_secs(5))
            .on_url(|_| {});
        let err = browser.authorize("https://as.example/a").await.unwrap_err();
        assert!(matches!(err, OAuthError::Timeout(_)), "{err:?}");
    }
}
