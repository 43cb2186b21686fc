//! [`ApiKeyLayer`]: callers named by API keys, a tower layer in front of
//! the proxy's HTTP endpoint.
//!
//! A caller presents its key in the `X-API-Key` header (or, when no other
//! authentication sits behind this layer, as `Authorization: Bearer KEY`).
//! A known key admits the request with its principal's claims
//! ([`CallerClaims`], which the gateway's policy reads) and a
//! [`tessera_runtime::Principal`] (`apikey:SUB`, to which sessions are
//! bound); an unknown key gets `401`. Without a key the request gets `401`
//! too, unless the layer was made [`ApiKeyLayer::or_pass_on`], which leaves
//! it to the layer behind (an OAuth bearer layer).

use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{Either, Full};
use tessera_runtime::{BoxFuture, Principal};
use tessera_types::JsonObject;

use crate::gateway::{ApiKey, digest};
use crate::shapes::{Subject, read};

/// The header that carries an API key.
pub const API_KEY_HEADER: &str = "x-api-key";

/// The claims of the caller of a request, as the front that admitted it
/// established them (an API key's principal). The gateway's policy reads
/// them, or else the claims of a verified OAuth token.
#[derive(Debug, Clone, Default)]
pub struct CallerClaims(pub JsonObject);

/// A tower layer that admits callers by API key (see the module docs).
/// Its clones share one key list, which [`ApiKeyLayer::set_keys`] replaces.
#[derive(Debug, Clone)]
pub struct ApiKeyLayer {
    keys: Arc<RwLock<Arc<Vec<ApiKey>>>>,
    pass_on: bool,
}

impl ApiKeyLayer {
    /// Admits the holders of `keys`, and nobody else. With no key at all
    /// there is nothing to check: every request passes, and its caller has
    /// no claims.
    pub fn new(keys: Vec<ApiKey>) -> Self {
        ApiKeyLayer {
            keys: Arc::new(RwLock::new(Arc::new(keys))),
            pass_on: false,
        }
    }

    /// Replaces the keys (a configuration reload); requests already
    /// admitted keep their caller.
    pub fn set_keys(&self, keys: Vec<ApiKey>) {
        *self.keys.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(keys);
    }

    /// Passes a request that carries no `X-API-Key` on to the service
    /// behind (which authenticates it some other way).
    pub fn or_pass_on(mut self) -> Self {
        self.pass_on = true;
        self
    }
}

impl<S> tower::Layer<S> for ApiKeyLayer {
    type Service = ApiKeyAuth<S>;

    fn layer(&self, inner: S) -> ApiKeyAuth<S> {
        ApiKeyAuth {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service made by [`ApiKeyLayer`].
#[derive(Debug, Clone)]
pub struct ApiKeyAuth<S> {
    inner: S,
    layer: ApiKeyLayer,
}

/// The body of a `401`.
#[derive(serde::Serialize)]
struct Refused<'a> {
    error: &'static str,
    error_description: &'a str,
}

/// A `401` with a one-line JSON reason.
fn refuse(why: &str) -> Response<Full<Bytes>> {
    let body = Refused {
        error: "unauthorized",
        error_description: why,
    };
    // Two strings: always serialised.
    let text = serde_json::to_string(&body).unwrap_or_default();
    let mut r = Response::new(Full::new(Bytes::from(text)));
    *r.status_mut() = StatusCode::UNAUTHORIZED;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("ApiKey header=\"X-API-Key\""),
    );
    r
}

impl ApiKeyLayer {
    /// The key a request presents, if any.
    fn presented<'a, B>(&self, req: &'a Request<B>) -> Option<&'a [u8]> {
        if let Some(v) = req.headers().get(API_KEY_HEADER) {
            return Some(v.as_bytes());
        }
        if self.pass_on {
            return None;
        }
        let auth = req.headers().get(header::AUTHORIZATION)?.as_bytes();
        let scheme = auth.get(..7)?;
        scheme
            .eq_ignore_ascii_case(b"bearer ")
            .then(|| auth[7..].trim_ascii())
    }

    /// Admits `req` (`true`: its extensions set; `false`: no key, passed
    /// on untouched) or says why not.
    fn admit<B>(&self, req: &mut Request<B>) -> Result<bool, &'static str> {
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner()).clone();
        if keys.is_empty() {
            return Ok(false);
        }
        let Some(key) = self.presented(req) else {
            return if self.pass_on {
                Ok(false)
            } else {
                Err("an API key is needed: send it in the X-API-Key header")
            };
        };
        let d = digest(key);
        // Digests are compared, so the time taken says nothing of the keys.
        let Some(k) = keys.iter().find(|k| k.digest == d) else {
            return Err("unknown API key");
        };
        let sub = read::<Subject>(&k.principal)
            .sub
            .into_valid()
            .unwrap_or_default();
        let principal = Principal(format!("apikey:{sub}"));
        let ext = req.extensions_mut();
        let mut carried = ext
            .remove::<tessera_runtime::Extensions>()
            .unwrap_or_default();
        carried.insert(principal.clone());
        carried.insert(CallerClaims(k.principal.clone()));
        ext.insert(carried);
        ext.insert(principal);
        Ok(true)
    }
}

impl<S, B, RB> tower::Service<Request<B>> for ApiKeyAuth<S>
where
    S: tower::Service<Request<B>, Response = Response<RB>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: Send + 'static,
    RB: Send + 'static,
{
    type Response = Response<Either<RB, Full<Bytes>>>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        // Use the service that was polled ready; leave a fresh clone behind.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let verdict = self.layer.admit(&mut req);
        Box::pin(async move {
            match verdict {
                Ok(_) => Ok(inner.call(req).await?.map(Either::Left)),
                Err(why) => Ok(refuse(why).map(Either::Right)),
            }
        })
    }
}
