//! Forwarding one downstream request to an upstream connection: `_meta`
//! rewritten for the upstream's era, progress passed back, cancellation
//! passed on, errors mapped, and (for a legacy client of a 2026-07-28
//! server) the multi round-trip rounds turned into ordinary requests to the
//! client.

use std::future::Future;
use std::sync::Arc;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_proto::{CallError, RequestOptions, meta_keys};
use tessera_runtime::{PeerError, RawResult, Reply, Request};
use tessera_types::{Era, ErrorObject, JsonObject, RequestId, ResultType};
use tokio::sync::{mpsc, oneshot};

use crate::calls::Calls;
use crate::result_text::Stripped;
use crate::shapes::{self, Loose, WithMeta};
use crate::upstream::Upstream;

/// The most input rounds the proxy runs for a legacy client before giving up.
const MAX_ROUNDS: usize = 16;

/// The `_meta` keys only 2026-07-28 requests carry.
const MODERN_META: [&str; 4] = [
    meta_keys::PROTOCOL_VERSION,
    meta_keys::CLIENT_CAPABILITIES,
    meta_keys::CLIENT_INFO,
    meta_keys::LOG_LEVEL,
];

/// Rewrites a downstream request's params for the upstream connection,
/// with the call's `tag` ([`crate::calls::CallGuard::tag`]) in `_meta`: a
/// Tessera upstream echoes it on the logs, stream control and requests
/// about that request, so they reach the right client even with many
/// requests in flight on one connection.
pub(crate) fn prepare(
    params: Option<JsonObject>,
    r: &Request,
    upstream: Era,
    tag: Option<u64>,
) -> Option<JsonObject> {
    let mut p = WithMeta::split_option(params);
    // A `_meta` that is not an object is passed on as it is.
    if !matches!(p.meta, Loose::Malformed(_)) {
        let mut m = std::mem::take(&mut p.meta).into_valid().unwrap_or_default();
        // The upstream engine issues its own progress token when asked.
        m.remove(meta_keys::PROGRESS_TOKEN);
        match (r.context.era, upstream) {
            (_, Era::Legacy) => {
                for k in MODERN_META {
                    m.remove(k);
                }
            }
            (Era::Legacy, Era::Modern) => {
                // Tell the 2026-07-28 server what the legacy client declared.
                let mut caps: Capabilities = shapes::take(r.context.peer_capabilities.to_object());
                if r.extensions
                    .get::<tessera_http::http::HeaderMap>()
                    .is_some()
                {
                    // This client is on HTTP: the upstream may ask to close
                    // its request's SSE stream (SEP-1699 polling).
                    if !matches!(caps.experimental, Loose::Valid(_)) {
                        caps.experimental = Loose::Valid(JsonObject::new());
                    }
                    if let Loose::Valid(x) = &mut caps.experimental {
                        x.insert(
                            tessera_runtime::CLOSE_SSE_STREAM_CAPABILITY.into(),
                            Value::Object(JsonObject::new()),
                        );
                    }
                }
                if let Ok(caps) = shapes::write(&caps) {
                    m.insert(meta_keys::CLIENT_CAPABILITIES.into(), Value::Object(caps));
                }
                if let Some(info) = &r.context.peer_info {
                    m.insert(
                        meta_keys::CLIENT_INFO.into(),
                        Value::Object((**info).clone()),
                    );
                }
                if let Some(level) = &r.context.log_level {
                    m.insert(meta_keys::LOG_LEVEL.into(), Value::String(level.clone()));
                }
            }
            (Era::Modern, Era::Modern) => {}
        }
        if let Some(tag) = tag {
            m.insert(meta_keys::REQUEST_TAG.into(), Value::from(tag));
        }
        if !m.is_empty() {
            p.meta = Loose::Valid(m);
        }
    }
    Some(p.join()).filter(|p| !p.is_empty())
}

/// A client's capabilities: their `experimental` member, which the proxy
/// adds to, and the rest.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
struct Capabilities {
    #[serde(skip_serializing_if = "Loose::is_absent")]
    experimental: Loose<JsonObject>,
    #[serde(flatten)]
    rest: JsonObject,
}

/// The members of a progress notification the proxy passes back.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Progress {
    progress: Loose<f64>,
    total: Loose<f64>,
    message: Loose<String>,
}

/// A 2026-07-28 result asking for input: what the proxy asks the legacy
/// client, and the state it sends back.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct InputRound {
    input_requests: Loose<BTreeMap<String, Loose<AskClient>>>,
    request_state: Loose<Value>,
}

/// One request of an input round, as the client is asked it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct AskClient {
    method: Loose<String>,
    params: Loose<JsonObject>,
    #[serde(flatten)]
    _others: JsonObject,
}

/// The members added to the original params to answer an input round.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct InputAnswers {
    #[serde(skip_serializing_if = "Option::is_none")]
    input_responses: Option<JsonObject>,
    #[serde(skip_serializing_if = "Loose::is_absent")]
    request_state: Loose<Value>,
}

/// A 2026-07-28 result: its `resultType`, and the rest.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Stamped {
    result_type: Loose<ResultType>,
    #[serde(flatten)]
    rest: JsonObject,
}

/// A proxy-side failure as the JSON-RPC error the client gets.
pub(crate) fn peer_error(method: &str, e: PeerError) -> ErrorObject {
    match e {
        PeerError::Call(CallError::Remote(e)) => e,
        PeerError::Call(CallError::Timeout(d)) => ErrorObject::internal(format!(
            "the upstream server did not answer {method} within {} s",
            d.as_secs_f64()
        )),
        PeerError::Call(CallError::Cancelled) => {
            ErrorObject::internal(format!("{method} was cancelled"))
        }
        PeerError::Call(CallError::Closed) | PeerError::Closed => ErrorObject::internal(format!(
            "the upstream server closed the connection before answering {method}"
        )),
        PeerError::Send(s) => ErrorObject::internal(format!("cannot send {method} upstream: {s}")),
        other => ErrorObject::internal(format!("{method} failed upstream: {other}")),
    }
}

/// Whether `error`, an error answer, was made up by the HTTP client because
/// the upstream could not be reached or failed (no HTTP answer, or a 5xx
/// status) rather than answered by it (a JSON-RPC error, or a 4xx status:
/// the upstream is up, and refused).
pub(crate) fn unreachable(error: &ErrorObject) -> bool {
    tessera_http::TransportFailure::of(error).is_some_and(|f| f.status.is_none_or(|s| s >= 500))
}

/// How a forwarded request ended, as the circuit breaker and the retry of
/// an aggregating proxy see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    /// The upstream answered (a result or a JSON-RPC error): it is alive.
    Answered,
    /// Never handed to the connection, so nothing of it was written:
    /// sending it again on another connection cannot run it twice.
    Unsent,
    /// Sent, or perhaps sent, and not answered: a timeout, or the
    /// connection ended first. It may have run.
    Lost,
    /// Given up because the client cancelled.
    Cancelled,
}

/// A forwarded request that failed: the error the client gets, and how the
/// request ended.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    /// The JSON-RPC error for the client.
    pub error: ErrorObject,
    /// How it ended upstream.
    pub fate: Fate,
}

impl Failure {
    /// A failure of the proxy's own making, after the upstream answered
    /// (an answer it cannot use).
    fn answered(error: ErrorObject) -> Failure {
        Failure {
            error,
            fate: Fate::Answered,
        }
    }

    /// The same failure, for a request of which an earlier part (an input
    /// round) was already sent: never "unsent" as a whole.
    fn after_first(mut self) -> Failure {
        if self.fate == Fate::Unsent {
            self.fate = Fate::Lost;
        }
        self
    }
}

impl From<Failure> for ErrorObject {
    fn from(f: Failure) -> ErrorObject {
        f.error
    }
}

/// Sends one request upstream and waits for its answer, passing progress
/// back and giving up (which cancels it upstream) when the client cancels.
pub(crate) async fn send(
    up: &Upstream,
    r: &Request,
    method: &str,
    params: Option<JsonObject>,
) -> Result<JsonObject, Failure> {
    let reply = request(up, r, method, params, false).await?;
    reply.into_object().map_err(unreadable)
}

/// [`send`], with the answer's result kept as the JSON text the upstream
/// wrote.
async fn send_raw(
    up: &Upstream,
    r: &Request,
    method: &str,
    params: Option<JsonObject>,
) -> Result<RawResult, Failure> {
    let reply = request(up, r, method, params, true).await?;
    reply.into_raw().map_err(unreadable)
}

/// One request upstream through [`exchange`], its result kept as text
/// when `raw`.
async fn request(
    up: &Upstream,
    r: &Request,
    method: &str,
    params: Option<JsonObject>,
    raw: bool,
) -> Result<Reply, Failure> {
    exchange(r, method, raw, |progress, assigned, raw| {
        up.peer.request_tracked(
            method,
            params,
            RequestOptions::default(),
            progress,
            assigned,
            raw,
        )
    })
    .await
}

/// An answer the proxy cannot read.
fn unreadable(e: serde_json::Error) -> Failure {
    Failure::answered(ErrorObject::internal(format!(
        "the upstream's result cannot be read: {e}"
    )))
}

/// Runs one upstream call made by `call` (given where progress goes when
/// the client asked for it, where the engine tells the request's id, and
/// whether to keep the result as text), passing progress back and giving
/// up when the client cancels (dropping the call cancels it upstream).
async fn exchange<F, Fut>(r: &Request, method: &str, raw: bool, call: F) -> Result<Reply, Failure>
where
    F: FnOnce(Option<mpsc::UnboundedSender<JsonObject>>, oneshot::Sender<RequestId>, bool) -> Fut,
    Fut: Future<Output = Result<Reply, PeerError>>,
{
    let cancel = r.cancel.clone();
    let (assigned, mut id) = oneshot::channel();
    let cancelled = || Failure {
        error: ErrorObject::internal("cancelled by the client"),
        fate: Fate::Cancelled,
    };
    let out = if r.context.progress_token.is_none() {
        let call = call(None, assigned, raw);
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(cancelled()),
            out = call => out,
        }
    } else {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let call = call(Some(tx), assigned, raw);
        tokio::pin!(call);
        let out = loop {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(cancelled()),
                Some(p) = rx.recv() => pass_progress(r, &p),
                out = &mut call => break out,
            }
        };
        while let Ok(p) = rx.try_recv() {
            pass_progress(r, &p);
        }
        out
    };
    out.map_err(|e| {
        let fate = match (&e, id.try_recv()) {
            // The HTTP client's own answer: the upstream failed to answer.
            (PeerError::Call(CallError::Remote(o)), _) if unreachable(o) => Fate::Lost,
            (PeerError::Call(CallError::Remote(_)), _) => Fate::Answered,
            // The engine never took it: the sender was dropped unused.
            (_, Err(oneshot::error::TryRecvError::Closed)) => Fate::Unsent,
            _ => Fate::Lost,
        };
        Failure {
            error: peer_error(method, e),
            fate,
        }
    })
}

fn pass_progress(r: &Request, p: &JsonObject) {
    let p: Progress = shapes::read(p);
    let Loose::Valid(progress) = p.progress else {
        return;
    };
    r.progress(progress, p.total.into_valid(), p.message.into_valid());
}

/// Forwards `r` (as `method` with `params`) like [`forward`], answering with
/// the upstream's result as the JSON text it wrote when the proxy has
/// nothing to change in it but the 2026-07-28 `resultType` (taken off for a
/// legacy client): no input rounds to run for a legacy client of a
/// 2026-07-28 upstream, no caching hints to complete for a 2026-07-28
/// client. The server-role engine writes that text as it is, adding a
/// missing `resultType` and server identity for a 2026-07-28 client (see
/// [`tessera_proto::Engine::respond_raw`]).
pub(crate) async fn forward_reply(
    up: &Upstream,
    calls: &Arc<Calls>,
    r: &Request,
    method: &str,
    params: Option<JsonObject>,
) -> Result<Reply, Failure> {
    let era = r.context.era;
    if era == Era::Modern && crate::hints::completes(method) {
        return forward(up, calls, r, method, params)
            .await
            .map(Reply::Object);
    }
    let guard = calls.enter(r);
    if era == Era::Legacy && up.era() == Era::Modern {
        let base = prepare(params, r, Era::Modern, Some(guard.tag()));
        let first = send_raw(up, r, method, base.clone()).await?;
        return match for_legacy(first) {
            Ok(text) => Ok(Reply::Raw(text)),
            Err(first) => {
                let first = first.to_object().map_err(unreadable)?;
                rounds(up, r, method, base, first).await.map(Reply::Object)
            }
        };
    }
    let params = prepare(params, r, up.era(), Some(guard.tag()));
    send_raw(up, r, method, params).await.map(Reply::Raw)
}

/// A 2026-07-28 result as the JSON text a legacy client gets (without
/// `resultType`); given back as it is when it asks for input (or anything
/// but a complete result), or cannot be read shallowly, so that the caller
/// reads it whole.
fn for_legacy(result: RawResult) -> Result<RawResult, RawResult> {
    match crate::result_text::strip_complete(result.get()) {
        Stripped::Unchanged => Ok(result),
        Stripped::Text(text) => RawResult::new(text).ok_or(result),
        Stripped::ReadWhole => Err(result),
    }
}

/// Forwards `r` (as `method` with `params`) and returns the answer for the
/// client, running the input rounds for a legacy client of a 2026-07-28
/// upstream.
pub(crate) async fn forward(
    up: &Upstream,
    calls: &Arc<Calls>,
    r: &Request,
    method: &str,
    params: Option<JsonObject>,
) -> Result<JsonObject, Failure> {
    let guard = calls.enter(r);
    let base = prepare(params, r, up.era(), Some(guard.tag()));
    if !(r.context.era == Era::Legacy && up.era() == Era::Modern) {
        let mut out = send(up, r, method, base).await?;
        if r.context.era == Era::Modern {
            crate::hints::complete(method, &mut out);
        }
        return Ok(out);
    }
    let first = send(up, r, method, base.clone()).await?;
    rounds(up, r, method, base, first).await
}

/// Runs the input rounds of a 2026-07-28 upstream's `result` (the answer to
/// `base`) with a legacy client, as ordinary requests to it, and returns
/// the final result as the client gets it.
async fn rounds(
    up: &Upstream,
    r: &Request,
    method: &str,
    base: Option<JsonObject>,
    mut result: JsonObject,
) -> Result<JsonObject, Failure> {
    for round in 1..=MAX_ROUNDS {
        let stamped: Stamped = shapes::take(result);
        if stamped.result_type.valid() != Some(&ResultType::InputRequired) {
            // A legacy client gets no `resultType`.
            return Ok(stamped.rest);
        }
        if round == MAX_ROUNDS {
            break;
        }
        let asked: InputRound = shapes::read(&stamped.rest);
        let mut next = base.clone().unwrap_or_default();
        let mut answers = None;
        match asked.input_requests {
            Loose::Absent => {}
            Loose::Malformed(_) => {
                return Err(Failure::answered(ErrorObject::internal(
                    "the upstream server sent an inputRequests that is not an object",
                )));
            }
            Loose::Valid(reqs) => {
                let mut answered = JsonObject::new();
                for (key, req) in reqs {
                    let req = req.into_valid().unwrap_or_default();
                    let Loose::Valid(m) = req.method else {
                        return Err(Failure::answered(ErrorObject::internal(
                            "the upstream server sent an input request without a method",
                        )));
                    };
                    let options = RequestOptions {
                        related: Some(r.id.clone()),
                        ..RequestOptions::default()
                    };
                    let answer = r
                        .peer
                        .request(&m, req.params.into_valid(), options)
                        .await
                        .map_err(|e| Failure::answered(peer_error(&m, e)))?;
                    answered.insert(key, Value::Object(answer));
                }
                answers = Some(answered);
            }
        }
        let added = InputAnswers {
            input_responses: answers,
            request_state: asked.request_state,
        };
        next.extend(shapes::write(&added).map_err(Failure::answered)?);
        result = send(up, r, method, Some(next))
            .await
            .map_err(Failure::after_first)?;
    }
    Err(Failure::answered(ErrorObject::internal(format!(
        "the upstream server asked for input more than {MAX_ROUNDS} times for one {method}"
    ))))
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_http_clients_own_failures_without_an_answer_are_unreachable() {
        let marked = |status: serde_json::Value| {
            ErrorObject::internal("x").with_data(serde_json::json!({
                tessera_http::TRANSPORT_FAILURE_KEY: {"status": status}
            }))
        };
        assert!(unreachable(&marked(serde_json::Value::Null)), "no answer");
        assert!(unreachable(&marked(502.into())), "a gateway error");
        assert!(!unreachable(&marked(401.into())), "a refusal it answered");
        assert!(!unreachable(&marked(404.into())));
        assert!(!unreachable(&ErrorObject::internal("the upstream's own")));
    }

    use super::*;

    fn raw(text: &str) -> RawResult {
        RawResult::new(serde_json::value::RawValue::from_string(text.into()).unwrap()).unwrap()
    }

    #[test]
    fn a_complete_result_reaches_a_legacy_client_without_its_result_type() {
        let out = for_legacy(raw(
            r#"{"content":[{"type":"text","text":"hi \u00e9"}],"resultType":"complete","isError":false}"#,
        ))
        .expect("passed as text");
        let v: Value = serde_json::from_str(out.get()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"content": [{"type": "text", "text": "hi é"}], "isError": false})
        );
        // Nothing to take off: the very text.
        let plain = r#"{"tools":[]}"#;
        assert_eq!(for_legacy(raw(plain)).expect("as it is").get(), plain);
    }

    #[test]
    fn input_rounds_and_other_results_are_read_whole() {
        let ask = r#"{"resultType":"input_required","inputRequests":{}}"#;
        assert_eq!(for_legacy(raw(ask)).expect_err("rounds to run").get(), ask);
        let task = r#"{"resultType":"task","task":{"taskId":"t"}}"#;
        assert_eq!(for_legacy(raw(task)).expect_err("read whole").get(), task);
    }
}
