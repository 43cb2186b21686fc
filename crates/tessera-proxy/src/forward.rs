//! Forwarding one downstream request to an upstream connection: `_meta`
//! rewritten for the upstream's era, progress passed back, cancellation
//! passed on, errors mapped, and (for a legacy client of a 2026-07-28
//! server) the multi round-trip rounds turned into ordinary requests to the
//! client.

use std::future::Future;
use std::sync::Arc;

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_proto::{CallError, RequestOptions, meta_keys};
use tessera_runtime::{PeerError, RawResult, Reply, Request};
use tessera_types::{
    Era, ErrorObject, JsonObject, MetaChanges, MetaEdit, NotObject, Params, RequestId, ResultType,
    edit_meta_of,
};
use tokio::sync::{mpsc, oneshot};

use crate::calls::Calls;
use crate::result_text::Stripped;
use crate::shapes::{self, Loose};
use crate::upstream::Upstream;

/// The most input rounds the proxy runs for a legacy client before giving up.
const MAX_ROUNDS: usize = 16;

/// Rewrites a downstream request's params for the upstream connection,
/// with the call's `tag` ([`crate::calls::CallGuard::tag`]) in `_meta`: a
/// Tessera upstream echoes it on the logs, stream control and requests
/// about that request, so they reach the right client even with many
/// requests in flight on one connection. A tree in, a tree out (see
/// [`prepare_params`]).
pub(crate) fn prepare(
    params: Option<JsonObject>,
    r: &Request,
    upstream: Era,
    tag: Option<u64>,
) -> Option<JsonObject> {
    prepare_params(params.map(Params::from), r, upstream, tag).map(Params::into_object)
}

/// [`prepare`] on params that may be the JSON text the client sent: only
/// `_meta` is read and written again (the progress token the upstream
/// engine issues anew taken out, the 2026-07-28 members dropped for a
/// legacy upstream or added for a legacy client of a 2026-07-28 one, the
/// tag added); the other members are passed on as the text they are. A
/// `_meta` that is not an object is passed on as it is; one left empty, and
/// params left empty, are left out.
pub(crate) fn prepare_params(
    params: Option<Params>,
    r: &Request,
    upstream: Era,
    tag: Option<u64>,
) -> Option<Params> {
    let changes = changes_for(r, upstream, tag);
    let set: Vec<(&str, Cow<'_, Value>)> = changes
        .set
        .iter()
        .map(|(k, v)| (*k, Cow::Borrowed(v)))
        .collect();
    rewrite(params, changes.remove, &set)
}

/// What [`prepare_params`] changes in `_meta`, to hand to the upstream
/// connection's engine with the request ([`RequestOptions::meta`]): it makes
/// them in the same edit of the params' text as its own members.
fn changes_for(r: &Request, upstream: Era, tag: Option<u64>) -> MetaChanges {
    let mut set = Vec::new();
    let remove: &'static [&'static str] = match (r.context.era, upstream) {
        (_, Era::Legacy) => &LEGACY_UPSTREAM_DROPS,
        (Era::Legacy, Era::Modern) => {
            declare_client(r, &mut set);
            &[meta_keys::PROGRESS_TOKEN]
        }
        (Era::Modern, Era::Modern) => &[meta_keys::PROGRESS_TOKEN],
    };
    if let Some(tag) = tag {
        set.push((meta_keys::REQUEST_TAG, Value::from(tag)));
    }
    MetaChanges { remove, set }
}

/// Takes the keys `remove` out of `_meta` and sets the members `set`, on
/// the text when the params are text; a `_meta` that is not an object is
/// left as it is, and an emptied `_meta` or empty params are left out.
fn rewrite(
    mut params: Option<Params>,
    remove: &[&str],
    set: &[(&str, Cow<'_, Value>)],
) -> Option<Params> {
    edit_meta_of(
        &mut params,
        &MetaEdit {
            remove,
            set_if_object: &[],
            set,
            fill: &[],
            not_object: NotObject::Keep,
            drop_empty: true,
        },
    );
    params.filter(|p| !p.is_empty_object())
}

/// The `_meta` keys a request to a legacy upstream loses: the progress
/// token (the upstream engine issues its own) and the members only
/// 2026-07-28 requests carry.
const LEGACY_UPSTREAM_DROPS: [&str; 5] = [
    meta_keys::PROGRESS_TOKEN,
    meta_keys::PROTOCOL_VERSION,
    meta_keys::CLIENT_CAPABILITIES,
    meta_keys::CLIENT_INFO,
    meta_keys::LOG_LEVEL,
];

/// The members that tell a 2026-07-28 server what a legacy client declared
/// in its handshake: its capabilities (with the SSE stream closing of an
/// HTTP client), identity and log level.
fn declare_client(r: &Request, set: &mut Vec<(&'static str, Value)>) {
    let http = r
        .extensions
        .get::<tessera_http::http::HeaderMap>()
        .is_some();
    if let Some(caps) = declared(r, http) {
        set.push((meta_keys::CLIENT_CAPABILITIES, caps));
    }
    if let Some(info) = &r.context.peer_info {
        set.push((meta_keys::CLIENT_INFO, Value::Object((**info).clone())));
    }
    if let Some(level) = &r.context.log_level {
        set.push((meta_keys::LOG_LEVEL, Value::String(level.clone())));
    }
}

/// The most distinct (capabilities, transport) pairs [`declared`] keeps.
const DECLARED_KEPT: usize = 16;

/// What [`declared_anew`] made of a legacy session's capabilities, kept:
/// it depends only on them (which a session never changes, and which most
/// clients declare alike) and on whether the client is on HTTP, and a
/// legacy client's every request to a 2026-07-28 upstream carries it.
static DECLARED: std::sync::Mutex<Vec<(tessera_types::ClientCapabilities, bool, Value)>> =
    std::sync::Mutex::new(Vec::new());

/// [`declared_anew`], from [`DECLARED`] when it was made before.
fn declared(r: &Request, http: bool) -> Option<Value> {
    // A legacy session's capabilities are typed from its handshake, and
    // written from that type: the member depends on nothing else.
    let typed = match r.context.peer_capabilities.client() {
        Some(typed) if r.context.era == Era::Legacy => typed,
        _ => return declared_anew(r, http),
    };
    kept_or_made(&DECLARED, typed, http, || declared_anew(r, http))
}

/// The value `kept` holds for (`typed`, `http`), else `make`'s, then kept
/// (the oldest of [`DECLARED_KEPT`] let go).
fn kept_or_made(
    kept: &std::sync::Mutex<Vec<(tessera_types::ClientCapabilities, bool, Value)>>,
    typed: &tessera_types::ClientCapabilities,
    http: bool,
    make: impl FnOnce() -> Option<Value>,
) -> Option<Value> {
    if let Ok(kept) = kept.lock() {
        if let Some((_, _, v)) = kept.iter().find(|(c, h, _)| *h == http && c == typed) {
            return Some(v.clone());
        }
    }
    let made = make()?;
    if let Ok(mut kept) = kept.lock() {
        if kept.len() >= DECLARED_KEPT {
            kept.remove(0);
        }
        kept.push((typed.clone(), http, made.clone()));
    }
    Some(made)
}

/// A legacy client's capabilities as the member that tells a 2026-07-28
/// server about them (with the SSE stream closing of an HTTP client).
fn declared_anew(r: &Request, http: bool) -> Option<Value> {
    let mut caps: Capabilities = shapes::take(r.context.peer_capabilities.to_object());
    if http {
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
    shapes::write(&caps).ok().map(Value::Object)
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
    let reply = request(up, r, method, params.map(Params::from), None, false).await?;
    reply.into_object().map_err(unreadable)
}

/// [`send`] with params that may be text, and the `_meta` `changes` the
/// upstream engine makes in them, the answer's result kept as the JSON text
/// the upstream wrote.
async fn send_raw(
    up: &Upstream,
    r: &Request,
    method: &str,
    params: Option<Params>,
    changes: MetaChanges,
) -> Result<RawResult, Failure> {
    let reply = request(up, r, method, params, Some(changes), true).await?;
    reply.into_raw().map_err(unreadable)
}

/// One request upstream through [`exchange`], its result kept as text
/// when `raw`.
async fn request(
    up: &Upstream,
    r: &Request,
    method: &str,
    params: Option<Params>,
    changes: Option<MetaChanges>,
    raw: bool,
) -> Result<Reply, Failure> {
    exchange(r, method, raw, |progress, assigned, raw| {
        up.peer.request_tracked(
            method,
            params,
            RequestOptions {
                meta: changes,
                ..RequestOptions::default()
            },
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
    params: Option<Params>,
) -> Result<Reply, Failure> {
    let era = r.context.era;
    if era == Era::Modern && crate::hints::completes(method) {
        let params = params.map(Params::into_object);
        return forward(up, calls, r, method, params)
            .await
            .map(Reply::Object);
    }
    let guard = calls.enter(r);
    // The params go on as their text; the `_meta` changes are made by the
    // upstream engine together with its own members.
    let changes = changes_for(r, up.era(), Some(guard.tag()));
    if era == Era::Legacy && up.era() == Era::Modern {
        // Kept (as text) for the input rounds, which are rare.
        let kept = params.as_ref().map(Params::to_raw);
        let first = send_raw(up, r, method, params, changes).await?;
        return match for_legacy(first) {
            Ok(text) => Ok(Reply::Raw(text)),
            Err(first) => {
                let first = first.to_object().map_err(unreadable)?;
                let params = kept.and_then(Params::from_checked_raw);
                let base = prepare_params(params, r, Era::Modern, Some(guard.tag()));
                let base = base.map(Params::into_object);
                rounds(up, r, method, base, first).await.map(Reply::Object)
            }
        };
    }
    send_raw(up, r, method, params, changes)
        .await
        .map(Reply::Raw)
}

/// A 2026-07-28 result as the JSON text a legacy client gets (without
/// `resultType`); given back as it is when it asks for input (or anything
/// but a complete result), or cannot be read shallowly, so that the caller
/// reads it whole.
fn for_legacy(result: RawResult) -> Result<RawResult, RawResult> {
    match crate::result_text::strip_complete_raw(result.as_raw()) {
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

    fn text(s: &str) -> Option<Params> {
        Params::from_raw(serde_json::value::RawValue::from_string(s.into()).unwrap())
    }

    fn written(p: &Option<Params>) -> Option<String> {
        p.as_ref().map(|p| serde_json::to_string(p).unwrap())
    }

    #[test]
    fn a_legacy_upstream_gets_the_callers_text_without_modern_meta_and_with_the_tag() {
        let tag = [(meta_keys::REQUEST_TAG, Cow::Owned(Value::from(9u64)))];
        let p = text(
            r#"{"name":"ec\u0068o \"x\"","arguments":{"text":"\u00e9"},"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c"},"k":true}}"#,
        );
        let out = rewrite(p, &LEGACY_UPSTREAM_DROPS, &tag);
        assert_eq!(
            written(&out).unwrap(),
            format!(
                r#"{{"name":"ec\u0068o \"x\"","arguments":{{"text":"\u00e9"}},"_meta":{{"k":true,"{}":9}}}}"#,
                meta_keys::REQUEST_TAG
            ),
            "the name and arguments as the caller wrote them"
        );
    }

    #[test]
    fn absent_empty_and_odd_params() {
        let drops = [meta_keys::PROGRESS_TOKEN];
        // Nothing in, nothing to add: nothing out; `{}` and an emptied
        // `_meta` are left out.
        assert!(rewrite(None, &drops, &[]).is_none());
        assert!(rewrite(text("{ }"), &drops, &[]).is_none());
        assert!(rewrite(text(r#"{"_meta":{"progressToken":"p"}}"#), &drops, &[]).is_none());
        // The tag alone makes params.
        let tag = [(meta_keys::REQUEST_TAG, Cow::Owned(Value::from(1u64)))];
        let out = rewrite(None, &drops, &tag);
        assert_eq!(
            serde_json::to_value(out.unwrap()).unwrap(),
            serde_json::json!({"_meta": {(meta_keys::REQUEST_TAG): 1}})
        );
        // A `_meta` that is not an object goes on as it is, untagged.
        let odd = r#"{"_meta":"x","a":[]}"#;
        assert_eq!(written(&rewrite(text(odd), &drops, &tag)).unwrap(), odd);
        // A tree is edited the same way.
        let tree: JsonObject =
            serde_json::from_str(r#"{"a":1,"_meta":{"progressToken":2}}"#).unwrap();
        let out = rewrite(Some(Params::from(tree)), &drops, &tag).unwrap();
        assert_eq!(
            out.into_object(),
            serde_json::from_value::<JsonObject>(
                serde_json::json!({"a": 1, "_meta": {(meta_keys::REQUEST_TAG): 1}})
            )
            .unwrap()
        );
    }

    #[test]
    fn declared_capabilities_are_kept_per_capabilities_and_transport() {
        let kept = std::sync::Mutex::new(Vec::new());
        let plain = tessera_types::ClientCapabilities::default();
        let mut eliciting = plain.clone();
        eliciting.elicitation = Some(Default::default());
        let made = |v: &str| Some(Value::from(v));
        let get = |c: &tessera_types::ClientCapabilities, http: bool, v: &str| {
            kept_or_made(&kept, c, http, || made(v))
        };
        assert_eq!(get(&plain, false, "a"), made("a"));
        // The same capabilities over the same transport: made once.
        assert_eq!(get(&plain, false, "again"), made("a"));
        // Another transport, other capabilities: made for them.
        assert_eq!(get(&plain, true, "b"), made("b"));
        assert_eq!(get(&eliciting, false, "c"), made("c"));
        assert_eq!(get(&eliciting, false, "again"), made("c"));
        // Past the limit the oldest goes.
        for i in 0..DECLARED_KEPT {
            let mut other = plain.clone();
            other.experimental = Some([(i.to_string(), JsonObject::new())].into_iter().collect());
            get(&other, false, "x");
        }
        assert_eq!(get(&plain, false, "made again"), made("made again"));
    }

    #[test]
    fn input_rounds_and_other_results_are_read_whole() {
        let ask = r#"{"resultType":"input_required","inputRequests":{}}"#;
        assert_eq!(for_legacy(raw(ask)).expect_err("rounds to run").get(), ask);
        let task = r#"{"resultType":"task","task":{"taskId":"t"}}"#;
        assert_eq!(for_legacy(raw(task)).expect_err("read whole").get(), task);
    }
}
