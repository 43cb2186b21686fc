//! The HTTP exchanges of the client flow (metadata, registration, tokens),
//! on reqwest with rustls.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;

use super::error::OAuthError;
use super::observe::{OAuthExchange, OAuthObserver, OAuthPhase};

/// How long one exchange with a metadata, registration or token endpoint may take.
pub(crate) const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);

/// An HTTP answer, read whole.
#[derive(Debug)]
pub(crate) struct Answer {
    pub status: reqwest::StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON, if it is JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// The HTTP client of the flow, and who watches its exchanges.
#[derive(Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    observer: Option<Arc<dyn OAuthObserver>>,
}

impl Http {
    /// `client`, watched by nobody.
    pub fn plain(client: reqwest::Client) -> Http {
        Http {
            client,
            observer: None,
        }
    }

    /// Shows every exchange to `observer` from now on.
    pub fn observe(&mut self, observer: Arc<dyn OAuthObserver>) {
        self.observer = Some(observer);
    }
}

/// The client used for every exchange (redirects followed up to 5 times).
pub(crate) fn client() -> Result<Http, OAuthError> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::limited(5))
        .timeout(EXCHANGE_TIMEOUT)
        .user_agent(concat!("tessera-auth/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| OAuthError::Http {
            url: String::new(),
            why: e.to_string(),
        })?;
    Ok(Http::plain(client))
}

async fn finish(url: &str, r: reqwest::Response) -> Result<Answer, OAuthError> {
    let status = r.status();
    let headers = r.headers().clone();
    let body = r
        .bytes()
        .await
        .map_err(|e| OAuthError::Http {
            url: url.to_owned(),
            why: e.to_string(),
        })?
        .to_vec();
    Ok(Answer {
        status,
        headers,
        body,
    })
}

/// GET `url` asking for JSON.
pub(crate) async fn get(http: &Http, url: &str) -> Result<Answer, OAuthError> {
    send(http, OAuthPhase::Discovery, url, http.client.get(url), &[]).await
}

/// GET `url` and parse a JSON object, or `None` when the server has no
/// such document (any non-success status or a body that is not an object).
pub(crate) async fn get_document(http: &Http, url: &str) -> Result<Option<Value>, OAuthError> {
    let a = get(http, url).await?;
    if !a.status.is_success() {
        return Ok(None);
    }
    Ok(a.json().filter(Value::is_object))
}

/// POST a form to `url` with extra `headers`.
pub(crate) async fn post_form(
    http: &Http,
    url: &str,
    form: &[(String, String)],
    headers: HeaderMap,
) -> Result<Answer, OAuthError> {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .finish();
    let request = http.client.post(url).headers(headers).header(
        reqwest::header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-www-form-urlencoded"),
    );
    send(http, OAuthPhase::Token, url, request.body(body), form).await
}

/// POST a JSON body to `url`.
pub(crate) async fn post_json(http: &Http, url: &str, body: &Value) -> Result<Answer, OAuthError> {
    let form = [("json".to_owned(), body.to_string())];
    send(
        http,
        OAuthPhase::Registration,
        url,
        http.client.post(url).json(body),
        &form,
    )
    .await
}

/// Sends `request` (to `url`) asking for JSON, and reads the answer; the
/// observer, if any, sees it as a step of `phase` (`sent`: the form or
/// JSON body sent).
async fn send(
    http: &Http,
    phase: OAuthPhase,
    url: &str,
    request: reqwest::RequestBuilder,
    sent: &[(String, String)],
) -> Result<Answer, OAuthError> {
    let request = request.header(reqwest::header::ACCEPT, "application/json");
    let seen = http.observer.as_ref().and_then(|o| {
        let copy = request.try_clone()?.build().ok()?;
        Some((o, copy, Instant::now()))
    });
    let answer = async {
        let r = request.send().await.map_err(|e| OAuthError::Http {
            url: url.to_owned(),
            why: error_chain(&e),
        })?;
        finish(url, r).await
    }
    .await;
    if let Some((observer, req, started)) = seen {
        observer.exchange(&OAuthExchange {
            phase,
            method: req.method().as_str(),
            url,
            request_headers: req.headers(),
            request_body: sent,
            outcome: match &answer {
                Ok(a) => Ok((a.status.as_u16(), &a.headers, &a.body)),
                Err(e) => Err(e.to_string()),
            },
            elapsed: started.elapsed(),
        });
    }
    answer
}

/// An error and its sources, on one line.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}
