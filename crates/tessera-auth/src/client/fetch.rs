//! The HTTP exchanges of the client flow (metadata, registration, tokens),
//! on reqwest with rustls.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;

use super::error::OAuthError;

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

/// The client used for every exchange (redirects followed up to 5 times).
pub(crate) fn client() -> Result<reqwest::Client, OAuthError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::limited(5))
        .timeout(EXCHANGE_TIMEOUT)
        .user_agent(concat!("tessera-auth/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| OAuthError::Http {
            url: String::new(),
            why: e.to_string(),
        })
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
pub(crate) async fn get(http: &reqwest::Client, url: &str) -> Result<Answer, OAuthError> {
    send(url, http.get(url)).await
}

/// GET `url` and parse a JSON object, or `None` when the server has no
/// such document (any non-success status or a body that is not an object).
pub(crate) async fn get_document(
    http: &reqwest::Client,
    url: &str,
) -> Result<Option<Value>, OAuthError> {
    let a = get(http, url).await?;
    if !a.status.is_success() {
        return Ok(None);
    }
    Ok(a.json().filter(Value::is_object))
}

/// POST a form to `url` with extra `headers`.
pub(crate) async fn post_form(
    http: &reqwest::Client,
    url: &str,
    form: &[(String, String)],
    headers: HeaderMap,
) -> Result<Answer, OAuthError> {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .finish();
    let request = http.post(url).headers(headers).header(
        reqwest::header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-www-form-urlencoded"),
    );
    send(url, request.body(body)).await
}

/// POST a JSON body to `url`.
pub(crate) async fn post_json(
    http: &reqwest::Client,
    url: &str,
    body: &Value,
) -> Result<Answer, OAuthError> {
    send(url, http.post(url).json(body)).await
}

/// Sends `request` (to `url`) asking for JSON, and reads the answer.
async fn send(url: &str, request: reqwest::RequestBuilder) -> Result<Answer, OAuthError> {
    let r = request
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| OAuthError::Http {
            url: url.to_owned(),
            why: error_chain(&e),
        })?;
    finish(url, r).await
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
