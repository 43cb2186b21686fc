//! Asking the client for input with the same code in both eras.
//!
//! A handler calls [`RequestContext::elicit`](crate::RequestContext::elicit),
//! [`sample`](crate::RequestContext::sample) or
//! [`roots`](crate::RequestContext::roots) and awaits the answer:
//!
//! - **Legacy peer** (up to 2025-11-25): the server sends
//!   `elicitation/create`, `sampling/createMessage` or `roots/list` to the client
//!   and the call returns the client's result.
//! - **Modern peer** (2026-07-28, multi round-trip requests): the server cannot
//!   send requests. The first time the handler asks, the call never returns;
//!   the server stops the handler and answers the original request with an
//!   `InputRequiredResult` listing what it needs, plus a sealed `requestState`.
//!   The client fulfils the requests and retries with `inputResponses` and the
//!   state. The handler then runs again from the start: each question it asks
//!   again is answered at once, from the state (earlier rounds) or from the
//!   retry's `inputResponses` (this round), until it asks something new or
//!   finishes.
//!
//! So handler code is straight-line in both eras. Because the handler re-runs
//! in the modern era, work it does *before* its questions is done again on each
//! round: keep that work free of side effects, or do it after the questions.
//!
//! Each question has a key (the `inputRequests` key). By default keys are
//! numbered in the order the handler asks (`input-1`, `input-2`, …), which is
//! stable as long as the handler asks in the same order each time; the `*_as`
//! variants take an explicit key. Questions asked concurrently (with `join!`)
//! are all sent in one `InputRequiredResult`.
//!
//! `requestState` is an HMAC-SHA256-sealed record of the answers so far, bound
//! to the method, a digest of the request's parameters, an expiry and (when
//! authenticated) the principal. A tampered, expired or misapplied state is
//! refused with `-32602` before the handler runs. Keys come from a key ring:
//! the first key seals, every key opens, so keys can be rotated.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use rand::RngCore;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tessera_runtime::PeerError;
use tessera_types::{ErrorCode, ErrorObject, JsonObject};
use tokio::sync::Notify;

/// Why a question to the client got no answer.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The client did not declare the capability the question needs.
    #[error("the client did not declare the {0} capability")]
    MissingCapability(String),
    /// The request to the client failed (legacy era).
    #[error("the client could not answer: {0}")]
    Peer(#[from] PeerError),
    /// The client's answer does not have the expected shape.
    #[error("the client's answer is malformed: {0}")]
    Malformed(String),
}

/// Where a [`StateSealer`] reads its key ring, on every seal and open: a
/// shared ring that rotates (for example one kept in Redis, so that every
/// instance behind a load balancer seals and opens with the same keys).
///
/// [`ring`](StateKeySource::ring) is called once per seal and once per open,
/// so it must be cheap: hand out a ring refreshed in the background, never
/// wait for a network round trip.
pub trait StateKeySource: Send + Sync + 'static {
    /// The ring as it is now: the key that seals first, then every other key
    /// that still opens. An empty ring makes the sealer use a key of its own
    /// (valid on this process only) until keys appear.
    fn ring(&self) -> Arc<[[u8; 32]]>;
}

/// The keys of a [`StateSealer`].
#[derive(Clone)]
enum Keys {
    /// A ring given once (the default: one random key).
    Fixed(Arc<[[u8; 32]]>),
    /// A ring read from a source on every use, with a key of this process for
    /// when the source has none.
    Source {
        source: Arc<dyn StateKeySource>,
        fallback: [u8; 32],
    },
}

/// Seals and opens `requestState`.
#[derive(Clone)]
pub struct StateSealer {
    keys: Keys,
    ttl: Duration,
}

impl std::fmt::Debug for StateSealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys = match &self.keys {
            Keys::Fixed(k) => format!("{} fixed", k.len()),
            Keys::Source { .. } => "from a source".to_owned(),
        };
        f.debug_struct("StateSealer")
            .field("keys", &keys)
            .field("ttl", &self.ttl)
            .finish()
    }
}

/// What a sealed state says.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenedState {
    /// The answers of earlier rounds, by key.
    pub answers: BTreeMap<String, Value>,
}

impl StateSealer {
    /// A sealer with a fresh random key (state does not survive a restart, and
    /// is not shared between instances: give every instance the same keys with
    /// [`StateSealer::with_keys`] behind a load balancer).
    pub fn random(ttl: Duration) -> Self {
        StateSealer {
            keys: Keys::Fixed(Arc::new([random_key()])),
            ttl,
        }
    }

    /// A sealer with a key ring: the first key seals, any key opens.
    pub fn with_keys(keys: Vec<[u8; 32]>, ttl: Duration) -> Option<Self> {
        (!keys.is_empty()).then(|| StateSealer {
            keys: Keys::Fixed(keys.into()),
            ttl,
        })
    }

    /// A sealer that reads its ring from `source` on every seal and open
    /// (a ring shared by several instances, rotated elsewhere).
    pub fn from_source(source: Arc<dyn StateKeySource>, ttl: Duration) -> Self {
        StateSealer {
            keys: Keys::Source {
                source,
                fallback: random_key(),
            },
            ttl,
        }
    }

    /// How long a sealed state stays valid.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Runs `f` on the current ring (never empty).
    fn with_ring<R>(&self, f: impl FnOnce(&[[u8; 32]]) -> R) -> R {
        match &self.keys {
            Keys::Fixed(keys) => f(keys),
            Keys::Source { source, fallback } => {
                let ring = source.ring();
                if ring.is_empty() {
                    f(std::slice::from_ref(fallback))
                } else {
                    f(&ring)
                }
            }
        }
    }

    fn mac(key: &[u8; 32], data: &[u8]) -> Hmac<Sha256> {
        // HMAC takes keys of any length: this cannot fail.
        let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("any key length");
        m.update(data);
        m
    }

    /// Seals the answers so far for a request.
    pub fn seal(
        &self,
        method: &str,
        digest: &str,
        principal: Option<&str>,
        answers: &BTreeMap<String, Value>,
        now: SystemTime,
    ) -> String {
        let exp = now
            .checked_add(self.ttl)
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(u64::MAX, |d| {
                u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
            });
        let payload = Sealed {
            version: Sealed::VERSION,
            method: method.into(),
            digest: digest.into(),
            expires_ms: exp,
            principal: principal.map(Into::into),
            answers: std::borrow::Cow::Borrowed(answers),
        };
        // A struct of strings, numbers and JSON values always serializes.
        let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&payload).unwrap_or_default());
        let tag = self.with_ring(|keys| {
            // `with_ring` never hands out an empty ring.
            let key = keys.first().copied().unwrap_or_default();
            Self::mac(&key, body.as_bytes()).finalize().into_bytes()
        });
        format!("{body}.{}", URL_SAFE_NO_PAD.encode(tag))
    }

    /// Opens a state presented with a request, checking its seal, expiry,
    /// method, parameter digest and principal.
    pub fn open(
        &self,
        state: &str,
        method: &str,
        digest: &str,
        principal: Option<&str>,
        now: SystemTime,
    ) -> Result<OpenedState, ErrorObject> {
        let bad = |why: &str| {
            ErrorObject::invalid_params(format!("Invalid params: requestState rejected ({why})"))
        };
        let (body, tag) = state.split_once('.').ok_or_else(|| bad("malformed"))?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| bad("malformed"))?;
        let sealed_by_us = self.with_ring(|keys| {
            keys.iter()
                .any(|k| Self::mac(k, body.as_bytes()).verify_slice(&tag).is_ok())
        });
        if !sealed_by_us {
            return Err(bad("integrity check failed"));
        }
        let payload = URL_SAFE_NO_PAD.decode(body).map_err(|_| bad("malformed"))?;
        let v: Sealed<'_> = serde_json::from_slice(&payload).map_err(|_| bad("malformed"))?;
        if v.version != Sealed::VERSION {
            return Err(bad("unknown format"));
        }
        let now_ms = now
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        if v.expires_ms < now_ms {
            return Err(bad("expired"));
        }
        if v.method != method {
            return Err(bad("issued for another method"));
        }
        if v.digest != digest {
            return Err(bad("issued for other parameters"));
        }
        if v.principal.as_deref() != principal {
            return Err(bad("issued to another principal"));
        }
        Ok(OpenedState {
            answers: v.answers.into_owned(),
        })
    }
}

/// The sealed record of a `requestState`: short member names, since the
/// state travels in every retry.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sealed<'a> {
    /// The format, [`Sealed::VERSION`].
    #[serde(rename = "v")]
    version: u64,
    /// The method the state was issued for.
    #[serde(rename = "m", borrow)]
    method: std::borrow::Cow<'a, str>,
    /// The digest of the request's params ([`params_digest`]).
    #[serde(rename = "d", borrow)]
    digest: std::borrow::Cow<'a, str>,
    /// Expiry, milliseconds since the Unix epoch.
    #[serde(rename = "e")]
    expires_ms: u64,
    /// The principal it was issued to, if the request was authenticated.
    #[serde(rename = "p", borrow)]
    principal: Option<std::borrow::Cow<'a, str>>,
    /// The answers so far, by input key.
    #[serde(rename = "a")]
    answers: std::borrow::Cow<'a, BTreeMap<String, Value>>,
}

impl Sealed<'_> {
    /// The only format there is.
    const VERSION: u64 = 1;
}

/// 32 random bytes.
fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    rand::rng().fill_bytes(&mut key);
    key
}

/// The digest a state is bound to: the request's params without `_meta`,
/// `inputResponses` and `requestState` (keys sorted, so it is canonical).
pub fn params_digest(params: Option<&JsonObject>) -> String {
    let kept: BTreeMap<&String, &Value> = params
        .into_iter()
        .flatten()
        .filter(|(k, _)| !is_round_field(k) && k.as_str() != "_meta")
        .collect();
    // A map of JSON values always serializes.
    let text = serde_json::to_vec(&kept).unwrap_or_default();
    let d = Sha256::digest(&text);
    URL_SAFE_NO_PAD.encode(&d[..16])
}

/// The members a retried 2026-07-28 request adds to its params
/// ([`tessera_types::InputResponseRequestParams`], less `_meta`).
fn is_round_field(name: &str) -> bool {
    matches!(name, "inputResponses" | "requestState")
}

/// The params without the multi round-trip fields (`inputResponses`,
/// `requestState`), which [`crate::Server::prepare_input`] reads on its own:
/// typed decoding of the rest must not fail on answers the server does not
/// recognise (the spec says to ignore those).
pub(crate) fn without_round_fields(
    params: Option<&tessera_types::Params>,
) -> Option<tessera_types::Params> {
    params.map(|p| {
        // Only params that may have a round field need a copy without it.
        if !p.may_have("inputResponses") && !p.may_have("requestState") {
            return p.clone();
        }
        let kept: JsonObject = p
            .object()
            .iter()
            .filter(|(k, _)| !is_round_field(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        tessera_types::Params::from(kept)
    })
}

/// The questions and answers of one request.
#[derive(Debug)]
pub(crate) struct InputState {
    pub modern: bool,
    pub answers: BTreeMap<String, Value>,
    pending: Mutex<BTreeMap<String, Value>>,
    missing: Mutex<BTreeSet<String>>,
    pub needed: Notify,
    next: AtomicU64,
}

/// What the handler left unanswered when it stopped (modern era).
#[derive(Debug, Default)]
pub(crate) struct Unanswered {
    pub requests: BTreeMap<String, Value>,
    pub missing_capabilities: BTreeSet<String>,
}

impl InputState {
    pub fn new(modern: bool, answers: BTreeMap<String, Value>) -> Self {
        InputState {
            modern,
            answers,
            pending: Mutex::new(BTreeMap::new()),
            missing: Mutex::new(BTreeSet::new()),
            needed: Notify::new(),
            next: AtomicU64::new(0),
        }
    }

    pub fn next_key(&self) -> String {
        format!("input-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Records a question the client must answer in the next round.
    pub fn ask(&self, key: String, request: Value) {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key, request);
        self.needed.notify_one();
    }

    /// Records a capability the handler needed and the client lacks.
    pub fn lacks(&self, capability: &str) {
        self.missing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(capability.to_owned());
        self.needed.notify_one();
    }

    pub fn take_unanswered(&self) -> Unanswered {
        Unanswered {
            requests: std::mem::take(
                &mut *self
                    .pending
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            ),
            missing_capabilities: std::mem::take(
                &mut *self
                    .missing
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            ),
        }
    }
}

/// The `-32021` error for capabilities a modern client did not declare.
pub(crate) fn missing_capability_error(caps: &BTreeSet<String>) -> ErrorObject {
    let required: JsonObject = caps
        .iter()
        .map(|c| (c.clone(), Value::Object(JsonObject::new())))
        .collect();
    ErrorObject::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "Missing required client capability: {}",
            caps.iter().cloned().collect::<Vec<_>>().join(", ")
        ),
    )
    .with_data(json!({ "requiredCapabilities": required }))
}

impl<S: Send + Sync + 'static> crate::Server<S> {
    /// Reads the answers a request brings (modern era: the sealed
    /// `requestState` and the `inputResponses`), refusing bad state with
    /// `-32602` before any handler runs.
    pub(crate) fn prepare_input(
        &self,
        r: &tessera_runtime::Request,
    ) -> Result<std::sync::Arc<InputState>, ErrorObject> {
        if r.context.era != tessera_types::Era::Modern {
            return Ok(std::sync::Arc::new(InputState::new(false, BTreeMap::new())));
        }
        let params = r.params.as_ref();
        // Params that cannot have a round field are not read.
        let names = |key: &str| params.is_some_and(|p| p.may_have(key));
        if !names("requestState") && !names("inputResponses") {
            return Ok(std::sync::Arc::new(InputState::new(true, BTreeMap::new())));
        }
        let mut answers = match params.and_then(|p| p.get("requestState")) {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::String(s)) => {
                self.inner
                    .sealer
                    .open(
                        s,
                        &r.method,
                        &params_digest(params.map(tessera_types::Params::object)),
                        principal(r).as_deref(),
                        SystemTime::now(),
                    )?
                    .answers
            }
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "Invalid params: requestState must be a string",
                ));
            }
        };
        match params.and_then(|p| p.get("inputResponses")) {
            None | Some(Value::Null) => {}
            Some(Value::Object(responses)) => {
                for (k, v) in responses {
                    if !v.is_object() {
                        return Err(ErrorObject::invalid_params(format!(
                            "Invalid params: inputResponses.{k} must be an object"
                        )));
                    }
                    answers.insert(k.clone(), v.clone());
                }
            }
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "Invalid params: inputResponses must be an object",
                ));
            }
        }
        Ok(std::sync::Arc::new(InputState::new(true, answers)))
    }

    /// Runs a handler that may ask for input. When it stops for input (modern
    /// era), answers with an `InputRequiredResult` (or `-32021` when it needed
    /// a capability the client lacks).
    pub(crate) async fn run_with_input<F, T>(
        &self,
        method: &str,
        params: Option<&tessera_types::Params>,
        principal: Option<String>,
        input: std::sync::Arc<InputState>,
        handler: F,
    ) -> Result<T, ErrorObject>
    where
        F: std::future::Future<Output = Result<T, ErrorObject>>,
        T: From<JsonObject>,
    {
        tokio::pin!(handler);
        tokio::select! {
            biased;
            out = &mut handler => out,
            _ = input.needed.notified() => {
                let un = input.take_unanswered();
                self.input_required_result(method, params, principal, &input, un).map(T::from)
            }
        }
    }

    /// The answer for a handler that stopped to ask: an `InputRequiredResult`
    /// with the sealed state, or `-32021` when it needed a capability the
    /// client lacks.
    pub(crate) fn input_required_result(
        &self,
        method: &str,
        params: Option<&tessera_types::Params>,
        principal: Option<String>,
        input: &InputState,
        un: Unanswered,
    ) -> Result<JsonObject, ErrorObject> {
        if !un.missing_capabilities.is_empty() {
            return Err(missing_capability_error(&un.missing_capabilities));
        }
        let state = self.inner.sealer.seal(
            method,
            &params_digest(params.map(tessera_types::Params::object)),
            principal.as_deref(),
            &input.answers,
            SystemTime::now(),
        );
        let mut r = JsonObject::new();
        r.insert("resultType".into(), json!("input_required"));
        r.insert(
            "inputRequests".into(),
            Value::Object(un.requests.into_iter().collect()),
        );
        r.insert("requestState".into(), json!(state));
        Ok(r)
    }
}

/// The authenticated principal of a request, when the transport established
/// one ([`tessera_runtime::Principal`]). Requests over stdio and
/// unauthenticated HTTP have none; the state is then bound to the method,
/// parameters and expiry only.
pub(crate) fn principal(r: &tessera_runtime::Request) -> Option<String> {
    r.extensions
        .get::<tessera_runtime::Principal>()
        .map(|p| p.0.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_types::methods;

    fn answers() -> BTreeMap<String, Value> {
        BTreeMap::from([("user_name".to_owned(), json!({"action": "accept"}))])
    }

    #[test]
    fn seals_and_opens() {
        let s = StateSealer::random(Duration::from_secs(60));
        let now = SystemTime::now();
        let st = s.seal(methods::TOOLS_CALL, "d1", None, &answers(), now);
        let o = s.open(&st, methods::TOOLS_CALL, "d1", None, now).unwrap();
        assert_eq!(o.answers, answers());
    }

    #[test]
    fn refuses_tampering_and_misuse() {
        let s = StateSealer::random(Duration::from_secs(60));
        let now = SystemTime::now();
        let st = s.seal(methods::TOOLS_CALL, "d1", Some("alice"), &answers(), now);
        let err = |r: Result<OpenedState, ErrorObject>| r.unwrap_err().code;
        assert_eq!(
            err(s.open(
                &format!("{st}-TAMPERED"),
                methods::TOOLS_CALL,
                "d1",
                Some("alice"),
                now
            )),
            -32602
        );
        assert_eq!(
            err(s.open(&st, methods::PROMPTS_GET, "d1", Some("alice"), now)),
            -32602
        );
        assert_eq!(
            err(s.open(&st, methods::TOOLS_CALL, "d2", Some("alice"), now)),
            -32602
        );
        assert_eq!(
            err(s.open(&st, methods::TOOLS_CALL, "d1", Some("bob"), now)),
            -32602
        );
        assert_eq!(
            err(s.open(&st, methods::TOOLS_CALL, "d1", None, now)),
            -32602
        );
        let later = now + Duration::from_secs(120);
        assert_eq!(
            err(s.open(&st, methods::TOOLS_CALL, "d1", Some("alice"), later)),
            -32602
        );
        // Another server's key.
        let other = StateSealer::random(Duration::from_secs(60));
        assert_eq!(
            err(other.open(&st, methods::TOOLS_CALL, "d1", Some("alice"), now)),
            -32602
        );
        // Flipping one byte of the body.
        let (body, tag) = st.split_once('.').unwrap();
        let mut raw = URL_SAFE_NO_PAD.decode(body).unwrap();
        raw[5] ^= 1;
        let forged = format!("{}.{tag}", URL_SAFE_NO_PAD.encode(raw));
        assert_eq!(
            err(s.open(&forged, methods::TOOLS_CALL, "d1", Some("alice"), now)),
            -32602
        );
    }

    #[test]
    fn key_rotation() {
        let old = [7u8; 32];
        let new = [9u8; 32];
        let before = StateSealer::with_keys(vec![old], Duration::from_secs(60)).unwrap();
        let after = StateSealer::with_keys(vec![new, old], Duration::from_secs(60)).unwrap();
        let now = SystemTime::now();
        let st = before.seal(methods::TOOLS_CALL, "d", None, &answers(), now);
        assert!(after.open(&st, methods::TOOLS_CALL, "d", None, now).is_ok());
        let retired = StateSealer::with_keys(vec![new], Duration::from_secs(60)).unwrap();
        assert!(
            retired
                .open(&st, methods::TOOLS_CALL, "d", None, now)
                .is_err()
        );
    }

    /// A ring that a test rotates by hand.
    struct Rotating(Mutex<Arc<[[u8; 32]]>>);

    impl StateKeySource for Rotating {
        fn ring(&self) -> Arc<[[u8; 32]]> {
            self.0.lock().unwrap().clone()
        }
    }

    #[test]
    fn keys_from_a_source() {
        let ttl = Duration::from_secs(60);
        let ring = Arc::new(Rotating(Mutex::new(Arc::new([[1u8; 32]]))));
        let a = StateSealer::from_source(ring.clone(), ttl);
        let b = StateSealer::from_source(ring.clone(), ttl);
        let now = SystemTime::now();
        let st = a.seal(methods::TOOLS_CALL, "d", None, &answers(), now);
        assert!(b.open(&st, methods::TOOLS_CALL, "d", None, now).is_ok());
        // Rotation: a new key seals, the old one still opens.
        *ring.0.lock().unwrap() = Arc::new([[2u8; 32], [1u8; 32]]);
        let st2 = a.seal(methods::TOOLS_CALL, "d", None, &answers(), now);
        assert!(b.open(&st, methods::TOOLS_CALL, "d", None, now).is_ok());
        let only_new = StateSealer::with_keys(vec![[2u8; 32]], ttl).unwrap();
        assert!(
            only_new
                .open(&st2, methods::TOOLS_CALL, "d", None, now)
                .is_ok()
        );
        // Retired: the old state no longer opens.
        *ring.0.lock().unwrap() = Arc::new([[2u8; 32]]);
        assert!(b.open(&st, methods::TOOLS_CALL, "d", None, now).is_err());
        // An empty ring falls back to a key of the sealer's own.
        *ring.0.lock().unwrap() = Arc::new([]);
        let st3 = a.seal(methods::TOOLS_CALL, "d", None, &answers(), now);
        assert!(a.open(&st3, methods::TOOLS_CALL, "d", None, now).is_ok());
        assert!(b.open(&st3, methods::TOOLS_CALL, "d", None, now).is_err());
    }

    #[test]
    fn digest_ignores_round_fields() {
        let a: JsonObject =
            serde_json::from_value(json!({"name": "t", "arguments": {"x": 1}})).unwrap();
        let mut b = a.clone();
        b.insert("requestState".into(), json!("s"));
        b.insert("inputResponses".into(), json!({}));
        b.insert("_meta".into(), json!({"k": 1}));
        assert_eq!(params_digest(Some(&a)), params_digest(Some(&b)));
        let mut c = a.clone();
        c.insert("arguments".into(), json!({"x": 2}));
        assert_ne!(params_digest(Some(&a)), params_digest(Some(&c)));
    }
}
