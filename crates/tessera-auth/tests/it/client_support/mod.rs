//! A scriptable protected resource for the OAuth client tests, and a small
//! driver that plays the HTTP transport's part (authorize, send, answer
//! challenges, at most four sends).
#![allow(dead_code)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tessera_auth::client::OAuthClient;
use tessera_auth::testing::TestAuthorizationServer;
use tessera_http::{ChallengeOutcome, HttpAuth};

/// Every test gets this long, then fails.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// How the resource behaves.
#[derive(Debug, Clone)]
pub struct RsConfig {
    /// Paths where the protected resource metadata is served.
    pub prm_paths: Vec<String>,
    /// The metadata document.
    pub prm: Value,
    /// The `WWW-Authenticate` of a `401`.
    pub challenge: String,
    /// Answer every authorized request with `403 insufficient_scope`.
    pub always_forbidden: bool,
}

/// A protected resource at `http://127.0.0.1:PORT/mcp`.
pub struct Resource {
    pub addr: SocketAddr,
    pub url: String,
    pub gets: Arc<Mutex<Vec<String>>>,
    pub tokens_seen: Arc<Mutex<Vec<String>>>,
    pub config: Arc<Mutex<RsConfig>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Resource {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn answer(status: StatusCode, www: Option<String>, body: &str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_owned())));
    *r.status_mut() = status;
    if let Some(w) = www {
        r.headers_mut()
            .insert(http::header::WWW_AUTHENTICATE, w.parse().unwrap());
    }
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        "application/json".parse().unwrap(),
    );
    r
}

/// The `scope` and `exp` claims of a JWT (signature not checked: the
/// issuer is the in-process test server).
fn claims(token: &str) -> Option<Value> {
    let payload = token.split('.').nth(1)?;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()?;
    serde_json::from_slice(&raw).ok()
}

impl Resource {
    /// Starts a resource protected by `asrv`, metadata at the path-aware
    /// well-known URL, and a challenge naming it.
    pub async fn start(asrv: &TestAuthorizationServer) -> Resource {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let url = format!("http://{addr}/mcp");
        let prm_url = format!("http://{addr}/.well-known/oauth-protected-resource/mcp");
        let config = Arc::new(Mutex::new(RsConfig {
            prm_paths: vec!["/.well-known/oauth-protected-resource/mcp".into()],
            prm: json!({"resource": url, "authorization_servers": [asrv.issuer()]}),
            challenge: format!("Bearer resource_metadata=\"{prm_url}\""),
            always_forbidden: false,
        }));
        let gets = Arc::new(Mutex::new(Vec::new()));
        let tokens_seen = Arc::new(Mutex::new(Vec::new()));
        let (c, g, t, me) = (config.clone(), gets.clone(), tokens_seen.clone(), prm_url);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let (c, g, t, me) = (c.clone(), g.clone(), t.clone(), me.clone());
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                        let (c, g, t, me) = (c.clone(), g.clone(), t.clone(), me.clone());
                        async move { Ok::<_, Infallible>(serve(req, &c, &g, &t, &me).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        Resource {
            addr,
            url,
            gets,
            tokens_seen,
            config,
            task,
        }
    }

    /// Changes the behaviour.
    pub fn configure(&self, f: impl FnOnce(&mut RsConfig)) {
        f(&mut self.config.lock().unwrap());
    }

    /// The paths of every GET so far.
    pub fn gets(&self) -> Vec<String> {
        self.gets.lock().unwrap().clone()
    }
}

async fn serve(
    req: Request<Incoming>,
    config: &Mutex<RsConfig>,
    gets: &Mutex<Vec<String>>,
    tokens: &Mutex<Vec<String>>,
    prm_url: &str,
) -> Response<Full<Bytes>> {
    let cfg = config.lock().unwrap().clone();
    let path = req.uri().path().to_owned();
    if req.method() == Method::GET {
        gets.lock().unwrap().push(path.clone());
        return if cfg.prm_paths.contains(&path) {
            answer(StatusCode::OK, None, &cfg.prm.to_string())
        } else {
            answer(StatusCode::NOT_FOUND, None, "{}")
        };
    }
    let token = req
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let Some(token) = token else {
        return answer(StatusCode::UNAUTHORIZED, Some(cfg.challenge), "{}");
    };
    tokens.lock().unwrap().push(token.clone());
    let Some(c) = claims(&token) else {
        return answer(StatusCode::UNAUTHORIZED, Some(cfg.challenge), "{}");
    };
    let now = tessera_auth::testing::now();
    if c["exp"].as_u64().is_none_or(|e| e <= now) {
        return answer(StatusCode::UNAUTHORIZED, Some(cfg.challenge), "{}");
    }
    let scopes: Vec<&str> = c["scope"].as_str().unwrap_or("").split(' ').collect();
    let wants_write = body.as_ref() == b"write";
    if cfg.always_forbidden || (wants_write && !scopes.contains(&"files:write")) {
        let www = format!(
            "Bearer error=\"insufficient_scope\", scope=\"files:write\", resource_metadata=\"{prm_url}\""
        );
        return answer(StatusCode::FORBIDDEN, Some(www), "{}");
    }
    answer(StatusCode::OK, None, "{\"ok\":true}")
}

/// Sends `body` to the resource the way the HTTP transport does: with the
/// client's credentials, answering challenges, at most four sends.
pub async fn send(oauth: &OAuthClient, url: &str, body: &str) -> Result<StatusCode, String> {
    let http = reqwest::Client::new();
    let uri: Uri = url.parse().unwrap();
    let mut status = StatusCode::OK;
    for _ in 0..4 {
        let mut headers = HeaderMap::new();
        oauth.authorize(&Method::POST, &uri, &mut headers).await?;
        let r = http
            .post(url)
            .headers(headers)
            .body(body.to_owned())
            .send()
            .await
            .map_err(|e| e.to_string())?;
        status = r.status();
        if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
            return Ok(status);
        }
        match oauth.challenge(&uri, status, r.headers()).await {
            ChallengeOutcome::Retry => continue,
            ChallengeOutcome::Pass => return Ok(status),
            ChallengeOutcome::Fail(why) => return Err(why),
            _ => return Err("unknown outcome".into()),
        }
    }
    Ok(status)
}
