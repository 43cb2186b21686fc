//! Where the upstream server's own traffic goes: its requests (sampling,
//! elicitation, roots), its logs, and its other notifications.
//!
//! Every forwarded request carries a tag in its `_meta`
//! ([`tessera_proto::meta_keys::REQUEST_TAG`]) that a Tessera upstream
//! echoes on the traffic about that request: such traffic goes to that
//! request's client, on its stream. Untagged traffic (other servers):
//!
//! - A legacy downstream session with an upstream session of its own
//!   ([`SessionSink`]): everything goes to that one client, tied to its
//!   oldest request in flight when there is one (so it travels on that
//!   request's SSE stream) and on the session otherwise.
//! - A shared upstream connection ([`SharedSink`]) serves many clients
//!   (2026-07-28 ones, and legacy sessions that keep no state upstream): a
//!   request or log is passed on only when exactly one request is in flight
//!   (anything else would guess), and change notifications go to the
//!   `subscriptions/listen` streams that asked for them (the proxy's own
//!   among them, for those legacy sessions).

use std::sync::Arc;
use tessera_types::methods;

use serde_json::Value;
use tessera_proto::RequestOptions;
use tessera_runtime::{BoxFuture, HandlerResult, Peer};
use tessera_types::{Era, ErrorObject, JsonObject};

use crate::calls::{Call, Calls};
use crate::forward::peer_error;
use crate::listen::Listeners;
use crate::shapes::{Loose, MetaOf, WithMeta, read};
use crate::upstream::Sink;

/// The members of a `notifications/message` the proxy passes on.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct LogMessage {
    level: Loose<String>,
    logger: Loose<String>,
    data: Option<Value>,
}

/// The notification a Tessera server sends a client that declared
/// [`tessera_runtime::CLOSE_SSE_STREAM_CAPABILITY`] to close a request's SSE
/// stream (SEP-1699 polling): the proxy closes the stream of the downstream
/// request through its [`StreamControl`](tessera_runtime::StreamControl).
const CLOSE_SSE_STREAM: &str = tessera_runtime::CLOSE_SSE_STREAM_NOTIFICATION;

/// The request in flight that upstream traffic with these params is about,
/// by the tag a Tessera upstream echoes ([`crate::forward::prepare`]).
fn tagged(calls: &Calls, params: Option<&JsonObject>) -> Option<Call> {
    let meta = read::<MetaOf<JsonObject>>(params?).meta.into_valid()?;
    let tag = meta.get(tessera_proto::meta_keys::REQUEST_TAG)?.as_u64()?;
    calls.tagged(tag)
}

/// `params` without the proxy's tag (what the client gets).
fn untagged(params: Option<JsonObject>) -> Option<JsonObject> {
    let mut p = WithMeta::split(params?);
    if let Loose::Valid(m) = &mut p.meta {
        m.remove(tessera_proto::meta_keys::REQUEST_TAG);
        if m.is_empty() {
            p.meta = Loose::Absent;
        }
    }
    Some(p.join())
}

/// Hands a server-to-client request on a connection that several clients
/// share (`kind` names it in the error) to the client of the one request in
/// progress; with several in progress nothing says whose it is, so it is
/// refused.
pub(crate) fn ask_sole(
    calls: &Calls,
    kind: &'static str,
    method: String,
    params: Option<JsonObject>,
) -> BoxFuture<'static, HandlerResult> {
    if let Some(c) = tagged(calls, params.as_ref()) {
        return ask(Some(c), None, method, untagged(params));
    }
    match calls.sole() {
        Ok(c) => ask(Some(c), None, method, untagged(params)),
        Err(n) => Box::pin(async move {
            Err(ErrorObject::internal(format!(
                "cannot pass {method} to a client: {n} requests are in progress on this \
                 {kind} connection and nothing says which one it belongs to"
            )))
        }),
    }
}

/// Hands a server-to-client request to `call`'s client (legacy era only).
pub(crate) fn ask(
    call: Option<Call>,
    fallback: Option<Peer>,
    method: String,
    params: Option<JsonObject>,
) -> BoxFuture<'static, HandlerResult> {
    let (peer, related) = match call {
        Some(c) if c.era == Era::Modern => {
            return Box::pin(async move {
                Err(ErrorObject::internal(format!(
                    "cannot pass {method} to the client: it speaks 2026-07-28, where a server \
                     asks for input in its result, and this upstream server speaks an older version"
                )))
            });
        }
        Some(c) => (c.peer, Some(c.id)),
        None => match fallback {
            Some(p) => (p, None),
            None => {
                return Box::pin(async move {
                    Err(ErrorObject::internal(format!(
                        "cannot pass {method} to a client: no request is in progress"
                    )))
                });
            }
        },
    };
    Box::pin(async move {
        let options = RequestOptions {
            related,
            ..RequestOptions::default()
        };
        peer.request(method.clone(), params, options)
            .await
            .map_err(|e| peer_error(&method, e))
    })
}

/// Passes on a `notifications/message`.
pub(crate) fn log(call: Option<&Call>, fallback: Option<&Peer>, params: Option<&JsonObject>) {
    let Some(p) = params else { return };
    let p: LogMessage = read(p);
    let level = p.level.into_valid().unwrap_or_else(|| "info".to_owned());
    let logger = p.logger.into_valid();
    let data = p.data.unwrap_or(Value::Null);
    match (call, fallback) {
        (Some(c), _) => c.peer.log(level, logger, data, Some(c.id.clone())),
        (None, Some(peer)) => peer.log(level, logger, data, None),
        (None, None) => tracing::debug!("log message from upstream with no client to send it to"),
    }
}

/// Closes the SSE stream of `call`, as the upstream's stream-control
/// notification (with `params`) asks.
fn close_stream(call: Option<Call>, params: Option<&JsonObject>) {
    if let Some(c) = call {
        c.stream
            .close_sse_stream(tessera_runtime::close_retry(params));
    }
}

/// The upstream traffic of one legacy downstream session's own upstream
/// session.
pub(crate) struct SessionSink {
    pub calls: Arc<Calls>,
    pub session: Peer,
    /// Also told of notifications that go to the session (the proxy's caches).
    pub on_change: Option<Unsolicited>,
}

impl SessionSink {
    /// The request upstream traffic with `params` is about: the one its tag
    /// names, else the oldest in flight.
    fn call_for(&self, params: Option<&JsonObject>) -> Option<Call> {
        tagged(&self.calls, params).or_else(|| self.calls.oldest())
    }
}

impl Sink for SessionSink {
    fn request(
        &self,
        method: String,
        params: Option<JsonObject>,
    ) -> BoxFuture<'static, HandlerResult> {
        let call = self.call_for(params.as_ref());
        ask(call, Some(self.session.clone()), method, untagged(params))
    }

    fn notification(&self, method: String, params: Option<JsonObject>) {
        match method.as_str() {
            methods::NOTIFICATIONS_MESSAGE => log(
                self.call_for(params.as_ref()).as_ref(),
                Some(&self.session),
                params.as_ref(),
            ),
            CLOSE_SSE_STREAM => close_stream(self.call_for(params.as_ref()), params.as_ref()),
            // The engine handles these itself.
            methods::NOTIFICATIONS_PROGRESS | methods::NOTIFICATIONS_CANCELLED => {}
            _ => {
                if let Some(u) = &self.on_change {
                    u(&method, params.as_ref());
                }
                let _ = self.session.notify(method, untagged(params), None);
            }
        }
    }
}

/// What a shared connection does with notifications that belong to no
/// request and no listen stream (an aggregator announces them to its
/// sessions).
pub(crate) type Unsolicited = Arc<dyn Fn(&str, Option<&JsonObject>) + Send + Sync>;

/// The upstream traffic of a connection shared by many clients.
pub(crate) struct SharedSink {
    pub calls: Arc<Calls>,
    pub listeners: Arc<Listeners>,
    pub unsolicited: Option<Unsolicited>,
}

impl SharedSink {
    /// The request upstream traffic with `params` is about: the one its tag
    /// names, else the only one in flight (with several, nothing says whose).
    fn call_for(&self, params: Option<&JsonObject>) -> Option<Call> {
        tagged(&self.calls, params).or_else(|| self.calls.sole().ok())
    }
}

impl Sink for SharedSink {
    fn request(
        &self,
        method: String,
        params: Option<JsonObject>,
    ) -> BoxFuture<'static, HandlerResult> {
        ask_sole(&self.calls, "shared", method, params)
    }

    fn notification(&self, method: String, params: Option<JsonObject>) {
        if self.listeners.route_tagged(&method, params.as_ref()) {
            return;
        }
        match method.as_str() {
            methods::NOTIFICATIONS_MESSAGE => log(
                self.call_for(params.as_ref()).as_ref(),
                None,
                params.as_ref(),
            ),
            CLOSE_SSE_STREAM => close_stream(self.call_for(params.as_ref()), params.as_ref()),
            methods::NOTIFICATIONS_PROGRESS | methods::NOTIFICATIONS_CANCELLED => {}
            _ => {
                self.listeners.broadcast(&method, params.as_ref());
                if let Some(u) = &self.unsolicited {
                    u(&method, params.as_ref());
                }
            }
        }
    }
}
